//! `submit_travel_approval` through the gateway, on SQLite and PostgreSQL
//! (when TOOLGATE_TEST_PG_URL is set), at concurrency 1 and 16, against a
//! bare INSERT transaction of the same order row.
//!
//! Each submit is a new trip (unique purpose), so every call takes the full
//! path: idempotent insert (ON CONFLICT), approval insert, status update,
//! commit, read-back verification, plus the gateway's validation and
//! envelope. The bare baseline is `BEGIN; INSERT the order row; COMMIT` on a
//! pool with the same settings (size, no ping before acquire, SQLite
//! `BEGIN IMMEDIATE` and the same `synchronous`). After criterion's groups, a fixed-count run
//! prints calls/s and the ratio (goal: at most 2x).
//!
//! `cargo bench -p toolgate-travel --bench submit`; `TOOLGATE_BENCH_SQLITE_SYNC=normal` measures
//! SQLite with `synchronous=NORMAL` instead of the default FULL (the cost of FULL is the
//! difference of the two runs).

use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use sqlx::postgres::PgPool;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use toolgate_core::{Caller, ToolContext};
use toolgate_gateway::{CallOptions, Gateway};

const POOL: u32 = 16;

struct Bench {
    name: &'static str,
    gateway: Gateway,
    tool: Arc<dyn toolgate_core::Tool>,
    bare: Bare,
    user: String,
    counter: AtomicU64,
    _dir: Option<tempfile::TempDir>,
}

enum Bare {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

const BARE_INSERT: &str = "INSERT INTO travel_orders \
     (id, user_id, fingerprint, destination, departure_city, departure_date, return_date, purpose, status, created_at, updated_at) \
     VALUES ($9, $1, $2, $3, $4, $5, $6, $7, 'SUBMITTED', $8, $8)";

impl Bench {
    fn next(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::Relaxed)
    }

    async fn submit(&self, ctx: &ToolContext) {
        let n = self.next();
        let params = json!({
            "destination": "Shanghai",
            "departure_city": "Beijing",
            "departure_date": "2030-03-10",
            "return_date": "2030-03-14",
            "purpose": format!("benchmark trip {n}"),
        });
        let env = self.gateway.execute(ctx, "submit_travel_approval", params, &CallOptions::default()).await;
        assert!(env.success, "{env:?}");
    }

    async fn tool_submit(&self, ctx: &ToolContext) {
        let n = self.next();
        let params = json!({
            "destination": "Shanghai",
            "departure_city": "Beijing",
            "departure_date": "2030-03-10",
            "return_date": "2030-03-14",
            "purpose": format!("benchmark trip {n}"),
        });
        self.tool.call(ctx, params).await.unwrap();
    }

    async fn bare_insert(&self) {
        let n = self.next();
        let fingerprint = format!("bare-{n}");
        let purpose = format!("benchmark trip {n}");
        let (from, to) = (
            chrono::NaiveDate::from_ymd_opt(2030, 3, 10).unwrap(),
            chrono::NaiveDate::from_ymd_opt(2030, 3, 14).unwrap(),
        );
        let now = chrono::Utc::now();
        macro_rules! run {
            ($pool:expr, $begin:expr) => {{
                let mut tx = $begin.await.unwrap();
                sqlx::query(BARE_INSERT)
                    .bind(&self.user)
                    .bind(&fingerprint)
                    .bind("Shanghai")
                    .bind("Beijing")
                    .bind(from)
                    .bind(to)
                    .bind(&purpose)
                    .bind(now)
                    // Ids are supplied by the insert (no counter); 53 random bits never collide here.
                    .bind((rand::random::<u64>() >> 11) as i64)
                    .execute(&mut *tx)
                    .await
                    .unwrap();
                tx.commit().await.unwrap();
            }};
        }
        match &self.bare {
            Bare::Sqlite(pool) => run!(pool, pool.begin_with("BEGIN IMMEDIATE")),
            Bare::Postgres(pool) => run!(pool, pool.begin()),
        }
    }
}

fn sqlite_sync() -> toolgate_db::Synchronous {
    match std::env::var("TOOLGATE_BENCH_SQLITE_SYNC").as_deref() {
        Ok("normal") => toolgate_db::Synchronous::Normal,
        _ => toolgate_db::Synchronous::Full,
    }
}

async fn setup(name: &'static str, url: String, dir: Option<tempfile::TempDir>) -> Arc<Bench> {
    let config =
        toolgate_db::DbConfig::new(url.clone()).max_connections(POOL).with_sqlite_synchronous(sqlite_sync());
    let store = toolgate_travel::Store::open(toolgate_db::Db::connect(&config).await.unwrap()).await.unwrap();
    eprintln!("{name}: synchronous={:?}", sqlite_sync());
    let tools = toolgate_travel::tools(store, toolgate_travel::TravelConfig::default());
    let tool = tools.iter().find(|t| t.spec().name == "submit_travel_approval").unwrap().clone();
    let gateway = Gateway::builder().tools(tools).build().unwrap();
    let bare = if name == "sqlite" {
        let options = SqliteConnectOptions::from_str(&url)
            .unwrap()
            .synchronous(match sqlite_sync() {
                toolgate_db::Synchronous::Normal => SqliteSynchronous::Normal,
                toolgate_db::Synchronous::Full => SqliteSynchronous::Full,
            })
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        Bare::Sqlite(
            SqlitePoolOptions::new()
                .max_connections(POOL)
                .test_before_acquire(false)
                .connect_with(options)
                .await
                .unwrap(),
        )
    } else {
        Bare::Postgres(
            sqlx::postgres::PgPoolOptions::new()
                .max_connections(POOL)
                .test_before_acquire(false)
                .connect(&url)
                .await
                .unwrap(),
        )
    };
    Arc::new(Bench {
        name,
        gateway,
        tool,
        bare,
        user: format!("bench-{}", uuid::Uuid::new_v4().simple()),
        counter: AtomicU64::new(0),
        _dir: dir,
    })
}

#[derive(Clone, Copy)]
enum Variant {
    Gateway,
    Tool,
    Bare,
}

/// Run `calls` calls of a variant over `concurrency` tasks; the wall time.
async fn run(bench: &Arc<Bench>, variant: Variant, calls: u64, concurrency: u64) -> Duration {
    let start = Instant::now();
    let mut tasks = Vec::new();
    for t in 0..concurrency {
        let share = calls / concurrency + u64::from(t < calls % concurrency);
        let bench = bench.clone();
        tasks.push(tokio::spawn(async move {
            let ctx = ToolContext::new(Caller::new(bench.user.clone(), "member"));
            for _ in 0..share {
                match variant {
                    Variant::Gateway => bench.submit(&ctx).await,
                    Variant::Tool => bench.tool_submit(&ctx).await,
                    Variant::Bare => bench.bare_insert().await,
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    start.elapsed()
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
    let mut setups = Vec::new();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("bench.db").display());
    setups.push(rt.block_on(setup("sqlite", url, Some(dir))));
    match std::env::var("TOOLGATE_TEST_PG_URL").ok().filter(|u| !u.is_empty()) {
        Some(url) => setups.push(rt.block_on(setup("postgres", url, None))),
        None => eprintln!("PostgreSQL skipped: TOOLGATE_TEST_PG_URL is not set"),
    }

    for bench in &setups {
        for concurrency in [1u64, 16] {
            let mut group = c.benchmark_group(format!("submit/{}/c{concurrency}", bench.name));
            group
                .throughput(Throughput::Elements(1))
                .sample_size(10)
                .measurement_time(Duration::from_secs(4));
            for (label, variant) in [("gateway_submit", Variant::Gateway), ("bare_insert", Variant::Bare)] {
                group.bench_function(label, |b| {
                    b.iter_custom(|iters| rt.block_on(run(bench, variant, iters, concurrency)));
                });
            }
            group.finish();
        }
    }

    // The figures for the report: same work, fixed counts, side by side.
    // Interleaved rounds, best of three, so that a noisy neighbour hurts every variant alike.
    let calls: u64 = std::env::var("TRAVEL_BENCH_CALLS").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    println!(
        "\nbackend   conc  gateway submit/s  tool submit/s  bare insert/s  ratio bare/gateway  bare/tool"
    );
    for bench in &setups {
        for concurrency in [1u64, 16] {
            let mut best = [0f64; 3];
            for _ in 0..3 {
                for (i, variant) in [Variant::Gateway, Variant::Tool, Variant::Bare].into_iter().enumerate() {
                    let took = rt.block_on(run(bench, variant, calls, concurrency));
                    best[i] = best[i].max(calls as f64 / took.as_secs_f64());
                }
            }
            let [g, t, b] = best;
            println!(
                "{:<9} {:>4}  {:>16.0}  {:>13.0}  {:>13.0}  {:>17.2}x  {:>8.2}x",
                bench.name,
                concurrency,
                g,
                t,
                b,
                b / g,
                b / t
            );
        }
    }
}

criterion_group!(submit, benches);
criterion_main!(submit);
