//! A read through gateway + HTTP executor + fitness-api (SQLite, loopback), at concurrency 1
//! and 16, against the same request made with a bare reqwest client, to see what the executor
//! (and the gateway) add to the round trip.
//!
//! Each iteration is one call per worker (1 or 16 workers, each a closed loop), so criterion's
//! element throughput is calls per second. Variants:
//! - `gateway`: `Gateway::execute` (lookup, authz, validation, timeout, envelope) -> executor -> API
//! - `executor`: `RouteHandler::handle` on the executor directly -> API
//! - `reqwest`: a bare GET of the same URL with the same token, body parsed as JSON
//!
//! The executor's share of the round trip is (executor - reqwest) / gateway; the whole
//! toolgate share is (gateway - reqwest) / gateway. `prepare` is the executor's CPU work
//! before any I/O (path filling, URL building).
//!
//! After the criterion groups, `cargo bench` prints a paired summary: the variants interleaved
//! round by round at concurrency 16 (plus a bare reqwest GET with a per-request timeout, the
//! one timer the executor adds), with shares by wall time (medians, IQR) and by CPU time of the
//! whole process. On a loaded machine the CPU-time shares are the steadier figure.
//! `cargo bench -p toolgate-fitness --bench read -- paired` prints the summary alone.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use serde_json::{Value, json};
use toolgate_core::{Caller, ToolContext};
use toolgate_gateway::{CallOptions, Gateway, RouteHandler};
use toolgate_http::{HttpExecutor, HttpOptions};

const DAY: &str = "2026-03-14";

struct Setup {
    rt: tokio::runtime::Runtime,
    gateway: Gateway,
    executor: Arc<HttpExecutor>,
    route: toolgate_schema::Route,
    client: reqwest::Client,
    url: String,
    token: String,
    ctx: ToolContext,
    _server: toolgate_fitness_api::Server,
    _dir: tempfile::TempDir,
}

fn setup() -> Setup {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (server, token) = rt.block_on(async {
        let db = toolgate_fitness_api::connect(&format!("sqlite:{}", dir.path().join("bench.db").display()))
            .await
            .unwrap();
        let token = toolgate_fitness_api::create_user(&db, "bench").await.unwrap();
        let today = chrono::NaiveDate::parse_from_str(DAY, "%Y-%m-%d").unwrap();
        toolgate_fitness_api::seed_demo(&db, "bench", today).await.unwrap();
        (toolgate_fitness_api::spawn("127.0.0.1:0", db).await.unwrap(), token)
    });
    let options =
        HttpOptions::default().backend_name("the fitness API").backend_id(toolgate_fitness::BACKEND_ID);
    let executor = Arc::new(HttpExecutor::new(&server.url(), options).unwrap());
    let tools = rt.block_on(async { toolgate_fitness::tools_with(&executor).unwrap() });
    let gateway = Gateway::builder().tools(tools).build().unwrap();
    let table =
        toolgate_fitness::tables().unwrap().into_iter().find(|t| t.tool == "query_nutrition").unwrap();
    let route = table.route("day_summary").unwrap().clone();
    let client = reqwest::Client::builder().no_proxy().tcp_nodelay(true).build().unwrap();
    let url = format!("{}/nutrition/days/{DAY}/summary", server.url());
    let ctx = ToolContext::new(
        Caller::new("bench", "member").with_credential(toolgate_fitness::BACKEND_ID, token.clone()),
    );
    Setup { rt, gateway, executor, route, client, url, token, ctx, _server: server, _dir: dir }
}

fn params() -> Value {
    json!({"op": "day_summary", "date": DAY})
}

/// `iters` rounds of one call on each of `workers` concurrent closed loops; the wall time.
fn run<F, Fut>(rt: &tokio::runtime::Handle, workers: usize, iters: u64, call: F) -> Duration
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    rt.block_on(async move {
        let started = Instant::now();
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..workers {
            let call = call.clone();
            set.spawn(async move {
                for _ in 0..iters {
                    call().await;
                }
            });
        }
        while set.join_next().await.is_some() {}
        started.elapsed()
    })
}

fn bench_read(c: &mut Criterion) {
    let s = Arc::new(setup());
    // Sanity: every variant answers the same day.
    let env = s.rt.block_on(s.gateway.execute(&s.ctx, "query_nutrition", params(), &CallOptions::default()));
    assert!(env.success, "{env:?}");
    assert!(env.result.as_ref().unwrap()["payload"]["meal_count"].as_u64().unwrap() > 0);

    for workers in [1usize, 16] {
        let mut group = c.benchmark_group(format!("read_day_summary_c{workers}"));
        group.throughput(Throughput::Elements(workers as u64));
        group.bench_function("gateway", |b| {
            b.iter_custom(|iters| {
                let s = s.clone();
                run(&s.rt.handle().clone(), workers, iters, move || {
                    let s = s.clone();
                    async move {
                        let env = s
                            .gateway
                            .execute(&s.ctx, "query_nutrition", params(), &CallOptions::default())
                            .await;
                        assert!(env.success);
                        black_box(env);
                    }
                })
            })
        });
        group.bench_function("executor", |b| {
            b.iter_custom(|iters| {
                let s = s.clone();
                run(&s.rt.handle().clone(), workers, iters, move || {
                    let s = s.clone();
                    async move {
                        let out = s.executor.handle(&s.ctx, &s.route, params()).await;
                        black_box(out.unwrap());
                    }
                })
            })
        });
        group.bench_function("reqwest", |b| {
            b.iter_custom(|iters| {
                let s = s.clone();
                run(&s.rt.handle().clone(), workers, iters, move || {
                    let s = s.clone();
                    async move {
                        let response = s.client.get(&s.url).bearer_auth(&s.token).send().await.unwrap();
                        assert!(response.status().is_success());
                        let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
                        black_box(body);
                    }
                })
            })
        });
        group.finish();
    }

    c.bench_function("executor_prepare_day_summary", |b| {
        let p = params();
        b.iter(|| black_box(s.executor.prepare(&s.route, black_box(&p)).unwrap()))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4)).sample_size(20);
    targets = bench_read
}

/// CPU time of this process so far (every thread, user and kernel), in ns, from
/// `/proc/self/task/*/schedstat`; `None` where that is not available. Server and client run in
/// this process, so a difference between variants is the client side's extra work, and unlike
/// wall time it hardly moves when other processes load the machine.
fn cpu_ns() -> Option<u64> {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let text = std::fs::read_to_string(task.ok()?.path().join("schedstat")).unwrap_or_default();
        total += text.split_whitespace().next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(0);
    }
    Some(total)
}

/// The variants interleaved round by round (rotating which goes first), so that load from
/// elsewhere on the machine hits them alike; wall-time shares are medians over the rounds,
/// CPU-time shares use the CPU time of all rounds.
fn paired_summary() {
    const ROUNDS: usize = 60;
    const WORKERS: usize = 16;
    const ITERS: u64 = 8;
    let s = Arc::new(setup());
    let calls = (WORKERS as u64 * ITERS) as f64;
    let variant = |which: usize| -> Duration {
        let s2 = s.clone();
        let handle = s.rt.handle().clone();
        match which {
            0 => run(&handle, WORKERS, ITERS, move || {
                let s = s2.clone();
                async move {
                    let env =
                        s.gateway.execute(&s.ctx, "query_nutrition", params(), &CallOptions::default()).await;
                    assert!(env.success);
                }
            }),
            1 => run(&handle, WORKERS, ITERS, move || {
                let s = s2.clone();
                async move {
                    s.executor.handle(&s.ctx, &s.route, params()).await.unwrap();
                }
            }),
            2 => run(&handle, WORKERS, ITERS, move || {
                let s = s2.clone();
                async move {
                    let response = s.client.get(&s.url).bearer_auth(&s.token).send().await.unwrap();
                    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
                    black_box(body);
                }
            }),
            _ => run(&handle, WORKERS, ITERS, move || {
                let s = s2.clone();
                async move {
                    let request = s.client.get(&s.url).bearer_auth(&s.token).timeout(Duration::from_secs(10));
                    let response = request.send().await.unwrap();
                    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
                    black_box(body);
                }
            }),
        }
    };
    const VARIANTS: usize = 4;
    for which in 0..VARIANTS {
        variant(which); // warm-up
    }
    let mut per_call: [Vec<f64>; VARIANTS] = Default::default();
    let mut cpu_per_call = [0.0f64; VARIANTS];
    let mut total_share = Vec::with_capacity(ROUNDS);
    let mut executor_share = Vec::with_capacity(ROUNDS);
    let mut timer_share = Vec::with_capacity(ROUNDS);
    for round in 0..ROUNDS {
        let mut t = [0.0f64; VARIANTS];
        for k in 0..VARIANTS {
            let which = (round + k) % VARIANTS;
            let cpu_before = cpu_ns();
            t[which] = variant(which).as_secs_f64() / calls;
            if let (Some(before), Some(after)) = (cpu_before, cpu_ns()) {
                cpu_per_call[which] += (after - before) as f64 / 1e9 / calls / ROUNDS as f64;
            }
        }
        for (which, v) in t.iter().enumerate() {
            per_call[which].push(*v);
        }
        total_share.push((t[0] - t[2]) / t[0]);
        executor_share.push((t[1] - t[2]) / t[0]);
        timer_share.push((t[3] - t[2]) / t[0]);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 4], v[v.len() / 2], v[v.len() * 3 / 4])
    };
    println!(
        "\npaired summary: day_summary read at concurrency {WORKERS}, {ROUNDS} interleaved rounds of {calls} calls"
    );
    let names = ["gateway+executor", "executor only", "bare reqwest", "reqwest + timeout"];
    for (which, name) in names.iter().enumerate() {
        let (_, m, _) = median(&mut per_call[which]);
        println!(
            "  {name:<18} {:>8.0} calls/s  ({:.1} µs wall per call; {:.1} µs CPU per call, server included)",
            1.0 / m,
            m * 1e6,
            cpu_per_call[which] * 1e6
        );
    }
    let c = cpu_per_call;
    if c[0] > 0.0 {
        println!(
            "  by CPU time: toolgate share {:.1}%, executor share {:.1}% (of which reqwest's timeout {:.1}%), gateway {:.1}%",
            (c[0] - c[2]) / c[0] * 100.0,
            (c[1] - c[2]) / c[0] * 100.0,
            (c[3] - c[2]) / c[0] * 100.0,
            (c[0] - c[1]) / c[0] * 100.0
        );
    }
    let (q1, m, q3) = median(&mut total_share);
    println!(
        "  toolgate share (gateway+executor - reqwest) / gateway+executor: median {:.1}% (IQR {:.1}% .. {:.1}%)",
        m * 100.0,
        q1 * 100.0,
        q3 * 100.0
    );
    let (q1, m, q3) = median(&mut executor_share);
    println!(
        "  executor share (executor - reqwest) / gateway+executor:          median {:.1}% (IQR {:.1}% .. {:.1}%)",
        m * 100.0,
        q1 * 100.0,
        q3 * 100.0
    );
    let (q1, m, q3) = median(&mut timer_share);
    println!(
        "    of which reqwest's per-request timeout (reqwest+timeout - reqwest): median {:.1}% (IQR {:.1}% .. {:.1}%)",
        m * 100.0,
        q1 * 100.0,
        q3 * 100.0
    );
}

fn main() {
    benches();
    // Only when benchmarking (`cargo bench`), not when `cargo test --benches` runs each bench once.
    if std::env::args().any(|a| a == "--bench") {
        paired_summary();
    }
    Criterion::default().configure_from_args().final_summary();
}
