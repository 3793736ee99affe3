//! Rate limits through the gateway: exact counts per window, cost weights,
//! concurrency slots, and one budget shared by two gateways over Redis.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolgate_core::{Caller, ErrorCode};
use toolgate_fleet::RedisRateStore;
use toolgate_gateway::{MemoryRateStore, RateLimits, RateRule, RateStore, ToolRate};
use toolgate_test_support::unique;

use crate::common::{builder, call};

fn limits(requests: u64) -> RateLimits {
    RateLimits::default()
        .with_per_key(RateRule::default().with_requests(requests).with_interval_s(60))
        .with_tool("plan_big_thing", ToolRate::default().with_cost(5))
        .with_tool("wait_a_moment", ToolRate::default().with_concurrent(2).with_requests(100))
}

#[tokio::test]
async fn a_key_gets_exactly_its_requests_then_rate_limited_with_a_wait() {
    let gateway = builder().rate_limits(limits(10), Arc::new(MemoryRateStore::new())).build().unwrap();
    let alice = Caller::new("alice", "member").with_key_id("k-alice");
    let mut ok = 0;
    let mut refused = Vec::new();
    for _ in 0..15 {
        let envelope = call(&gateway, &alice, "read_thing", json!({})).await;
        if envelope.success {
            ok += 1;
        } else {
            refused.push(envelope);
        }
    }
    assert_eq!(ok, 10);
    assert_eq!(refused.len(), 5);
    let error = refused[0].error.as_ref().unwrap();
    assert_eq!(error.code, ErrorCode::RateLimited);
    let wait = error.details.as_ref().unwrap()["retry_after_ms"].as_u64().unwrap();
    assert!(wait > 0 && wait <= 60_000, "{wait}");
    assert!(error.message.contains("10 requests per 60 s"), "{}", error.message);

    // Another key has its own budget; the same user with another key too.
    let bob = Caller::new("bob", "member").with_key_id("k-bob");
    assert!(call(&gateway, &bob, "read_thing", json!({})).await.success);
    let mut metrics = String::new();
    gateway.render_metrics(&mut metrics);
    assert!(metrics.contains("toolgate_rate_limited_total 5\n"), "{metrics}");
}

#[tokio::test]
async fn an_expensive_tool_spends_its_cost_weight() {
    let gateway = builder().rate_limits(limits(10), Arc::new(MemoryRateStore::new())).build().unwrap();
    let carol = Caller::new("carol", "member").with_key_id("k-carol");
    assert!(call(&gateway, &carol, "plan_big_thing", json!({})).await.success);
    assert!(call(&gateway, &carol, "plan_big_thing", json!({})).await.success);
    let third = call(&gateway, &carol, "plan_big_thing", json!({})).await;
    assert_eq!(third.code(), Some(ErrorCode::RateLimited));
    // 10 of 10 spent by two calls of cost 5: a cheap call is refused too.
    assert_eq!(call(&gateway, &carol, "read_thing", json!({})).await.code(), Some(ErrorCode::RateLimited));
}

async fn concurrency_holds(store: Arc<dyn RateStore>) {
    let gateway = builder().rate_limits(limits(1000), store).build().unwrap();
    let dave = Caller::new("dave", "member").with_key_id(unique("k-dave"));
    let calls = (0..5).map(|_| call(&gateway, &dave, "wait_a_moment", json!({"ms": 300})));
    let answers = futures::future::join_all(calls).await;
    let ok = answers.iter().filter(|e| e.success).count();
    assert_eq!(ok, 2, "{answers:?}");
    for refused in answers.iter().filter(|e| !e.success) {
        assert_eq!(refused.code(), Some(ErrorCode::RateLimited));
    }
    // The slots are given back when the calls end.
    let mut freed = false;
    for _ in 0..50 {
        if call(&gateway, &dave, "wait_a_moment", json!({"ms": 0})).await.success {
            freed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(freed, "a concurrency slot was never given back");
}

#[tokio::test]
async fn concurrent_calls_are_capped_in_memory() {
    concurrency_holds(Arc::new(MemoryRateStore::new())).await;
}

#[tokio::test]
async fn concurrent_calls_are_capped_in_redis() {
    let Some(url) = toolgate_test_support::redis::url() else { return };
    concurrency_holds(Arc::new(RedisRateStore::new(&url).unwrap().with_prefix(unique("tg-test")))).await;
}

/// Two instances (two gateways, one Redis) racing 64 calls against a limit
/// of 25: exactly 25 pass, whoever serves them.
#[tokio::test]
async fn two_instances_share_one_budget_in_redis() {
    let Some(url) = toolgate_test_support::redis::url() else { return };
    let prefix = unique("tg-test");
    let one = builder()
        .rate_limits(limits(25), Arc::new(RedisRateStore::new(&url).unwrap().with_prefix(prefix.clone())))
        .build()
        .unwrap();
    let two = builder()
        .rate_limits(limits(25), Arc::new(RedisRateStore::new(&url).unwrap().with_prefix(prefix)))
        .build()
        .unwrap();
    let erin = Caller::new("erin", "member").with_key_id("k-erin");
    let calls = (0..64).map(|i| {
        let gateway = if i % 2 == 0 { one.clone() } else { two.clone() };
        let erin = erin.clone();
        async move { call(&gateway, &erin, "read_thing", json!({})).await }
    });
    let answers = futures::future::join_all(calls).await;
    let ok = answers.iter().filter(|e| e.success).count();
    eprintln!("rate-limit accuracy over Redis: {ok} allowed of 64 racing calls, limit 25");
    assert_eq!(ok, 25);
    assert!(answers.iter().filter(|e| !e.success).all(|e| e.code() == Some(ErrorCode::RateLimited)));
}

#[tokio::test]
async fn an_unreachable_redis_lets_calls_through() {
    // Port 1 on loopback refuses at once; a limit must not become an outage.
    let store = RedisRateStore::new("redis://127.0.0.1:1/0").unwrap();
    let gateway = builder().rate_limits(limits(1), Arc::new(store)).build().unwrap();
    let frank = Caller::new("frank", "member").with_key_id("k-frank");
    for _ in 0..3 {
        assert!(call(&gateway, &frank, "read_thing", json!({})).await.success);
    }
    assert!(RedisRateStore::new("not a url").is_err());
}
