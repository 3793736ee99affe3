//! Unit tests of the session guard's stream handling.

use std::time::{Duration, Instant};

use futures::StreamExt;

use super::{COALESCE, first_events};

/// Events that arrive after these delays, then the end.
fn events(delays: &[u64]) -> impl futures::Stream<Item = u64> + Unpin {
    let delays = delays.to_vec();
    Box::pin(futures::stream::iter(delays).then(|ms| async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        ms
    }))
}

#[tokio::test]
async fn the_priming_event_waits_briefly_for_the_answer_and_no_longer() {
    // A fast answer joins the priming event: one write.
    let mut fast = events(&[0, 1, 0]);
    assert_eq!(first_events(&mut fast).await, [0, 1]);
    assert_eq!(fast.next().await, Some(0), "what follows is left for the stream");

    // A slow one does not hold the headers longer than COALESCE.
    let started = Instant::now();
    let mut slow = events(&[0, 300]);
    assert_eq!(first_events(&mut slow).await, [0]);
    let waited = started.elapsed();
    assert!(waited >= COALESCE && waited < Duration::from_millis(200), "{waited:?}");
    assert_eq!(slow.next().await, Some(300), "the late event is not lost");

    // A stream that ends at once.
    let mut empty = events(&[]);
    assert!(first_events(&mut empty).await.is_empty());
    let mut one = events(&[0]);
    assert_eq!(first_events(&mut one).await, [0]);
}
