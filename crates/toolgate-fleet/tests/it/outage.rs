//! A Redis rate store that stops answering: the outage is logged once, not once per call,
//! every failed check is counted in `toolgate_rate_store_errors_total`, and the store
//! answering again is logged once. Redis "goes away" behind a TCP forwarder on 127.0.0.1
//! that the test starts only after the outage (nothing listens on its port until then).

use std::io::Write;
use std::sync::{Arc, Mutex};

use serde_json::json;
use toolgate_core::Caller;
use toolgate_fleet::RedisRateStore;
use toolgate_gateway::{RateLimits, RateRule};
use toolgate_test_support::unique;

use crate::common::{builder, call};

/// Everything the test's subscriber wrote.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Lines {
    type Writer = Lines;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

impl Lines {
    fn count(&self, needle: &str) -> usize {
        String::from_utf8_lossy(&self.0.lock().unwrap()).lines().filter(|l| l.contains(needle)).count()
    }

    fn warnings_about_the_store(&self) -> usize {
        String::from_utf8_lossy(&self.0.lock().unwrap())
            .lines()
            .filter(|l| l.contains("WARN") && l.contains("rate-limit store"))
            .count()
    }
}

/// Forward every connection to `addr` on to `redis`, from now on.
async fn forward(addr: std::net::SocketAddr, redis: std::net::SocketAddr) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_reuseaddr(true).unwrap();
    socket.bind(addr).unwrap();
    let listener = socket.listen(64).unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut client, _)) = listener.accept().await else { return };
            tokio::spawn(async move {
                let Ok(mut server) = tokio::net::TcpStream::connect(redis).await else { return };
                let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
            });
        }
    });
}

fn metric(gateway: &toolgate_gateway::Gateway) -> String {
    let mut out = String::new();
    gateway.render_metrics(&mut out);
    out.lines().find(|l| l.starts_with("toolgate_rate_store_errors_total ")).unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_redis_outage_is_logged_once_counted_per_call_and_its_end_logged_once() {
    let Some(url) = toolgate_test_support::redis::url() else { return };
    let redis: std::net::SocketAddr = {
        let host_port = url.trim_start_matches("redis://").split('/').next().unwrap().to_owned();
        tokio::net::lookup_host(host_port).await.unwrap().next().unwrap()
    };
    let lines = Lines::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(lines.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .finish();
    let _logging = tracing::subscriber::set_default(subscriber);

    // A port nobody listens on yet: Redis, as far as the store knows, is down.
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let store = RedisRateStore::new(&format!("redis://{addr}/0")).unwrap().with_prefix(unique("tg-outage"));
    let limits =
        RateLimits::default().with_per_key(RateRule::default().with_requests(1000).with_interval_s(60));
    let gateway = builder().rate_limits(limits, Arc::new(store)).build().unwrap();
    assert_eq!(metric(&gateway), "toolgate_rate_store_errors_total 0");
    let frank = Caller::new("frank", "member").with_key_id("k-frank");

    const N: usize = 25;
    for _ in 0..N {
        assert!(call(&gateway, &frank, "read_thing", json!({})).await.success, "a limit is no outage");
    }
    assert_eq!(lines.warnings_about_the_store(), 1, "one warning for the outage, not one per call");
    assert_eq!(lines.count("does not answer"), 1);
    assert_eq!(metric(&gateway), format!("toolgate_rate_store_errors_total {N}"));

    // Redis answers again: one line says so, the counter stops, limits count again.
    forward(addr, redis).await;
    for _ in 0..5 {
        assert!(call(&gateway, &frank, "read_thing", json!({})).await.success);
    }
    assert_eq!(lines.count("answers again"), 1, "{}", String::from_utf8_lossy(&lines.0.lock().unwrap()));
    assert_eq!(lines.warnings_about_the_store(), 1);
    assert_eq!(metric(&gateway), format!("toolgate_rate_store_errors_total {N}"));
}
