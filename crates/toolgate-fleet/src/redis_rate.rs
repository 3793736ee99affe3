//! Rate-limit counters in Redis, shared by every instance of a fleet. Each
//! operation is one Lua script, so counting and expiring are atomic
//! however many instances race.

use std::time::Duration;

use redis::aio::MultiplexedConnection;
use tokio::sync::Mutex;
use toolgate_gateway::{RateStore, RateStoreError};

use crate::{Error, Result};

/// A call must not wait long for a limit: past this, the store is "not answering".
const TIMEOUT: Duration = Duration::from_millis(500);

/// `INCRBY` a fixed window; the first hit starts its expiry.
const HIT: &str = r"
local n = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {n, ttl}
";

/// Take a slot unless `limit` are taken; the lease frees slots of a dead process.
const ENTER: &str = r"
local n = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if n > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  return 0
end
return 1
";

const LEAVE: &str = r"
local n = redis.call('DECR', KEYS[1])
if n <= 0 then redis.call('DEL', KEYS[1]) end
return n
";

/// Counters in Redis (one connection, multiplexed, made again after a failure).
#[derive(Debug)]
pub struct RedisRateStore {
    client: redis::Client,
    prefix: String,
    conn: Mutex<Option<MultiplexedConnection>>,
}

impl RedisRateStore {
    /// A store on `url` (`redis://host:port/db`); keys start with `toolgate:rl:`.
    /// Nothing is contacted until the first call.
    pub fn new(url: &str) -> Result<Self> {
        Self::with_ca(url, None)
    }

    /// A store on `url` whose `rediss://` server's certificate must chain to `ca_pem` (the
    /// PEM text of `[tls] ca_file`), as every TLS client of toolgate trusts that file.
    pub fn with_ca(url: &str, ca_pem: Option<&str>) -> Result<Self> {
        let client = toolgate_db::redis_client(url, ca_pem).map_err(|e| Error::RedisUrl(e.to_string()))?;
        Ok(Self { client, prefix: "toolgate:rl:".into(), conn: Mutex::new(None) })
    }

    /// Use another key prefix (e.g. one per deployment sharing a Redis).
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    async fn connection(&self) -> Result<MultiplexedConnection, RateStoreError> {
        let mut guard = self.conn.lock().await;
        if let Some(conn) = guard.as_ref() {
            return Ok(conn.clone());
        }
        let conn = tokio::time::timeout(TIMEOUT, self.client.get_multiplexed_async_connection())
            .await
            .map_err(|_| RateStoreError("Redis did not answer in time".into()))?
            .map_err(|e| {
                RateStoreError(
                    toolgate_db::redis_certificate_problem(&e)
                        .unwrap_or_else(|| format!("connecting to Redis: {}", e.kind_name())),
                )
            })?;
        *guard = Some(conn.clone());
        Ok(conn)
    }

    /// Whether Redis answers (for `/readyz`).
    pub async fn ping(&self) -> Result<(), RateStoreError> {
        let mut conn = self.connection().await?;
        match tokio::time::timeout(TIMEOUT, redis::cmd("PING").query_async::<String>(&mut conn)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => {
                *self.conn.lock().await = None;
                Err(RateStoreError(format!("Redis: {}", e.kind_name())))
            }
            Err(_) => Err(RateStoreError("Redis did not answer in time".into())),
        }
    }

    async fn eval<T: redis::FromRedisValue>(
        &self,
        script: &str,
        key: &str,
        args: &[u64],
    ) -> Result<T, RateStoreError> {
        let mut conn = self.connection().await?;
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(script).arg(1).arg(format!("{}{key}", self.prefix));
        for a in args {
            cmd.arg(*a);
        }
        match tokio::time::timeout(TIMEOUT, cmd.query_async::<T>(&mut conn)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => {
                // A broken connection is made again on the next call.
                *self.conn.lock().await = None;
                Err(RateStoreError(format!("Redis: {}", e.kind_name())))
            }
            Err(_) => {
                *self.conn.lock().await = None;
                Err(RateStoreError("Redis did not answer in time".into()))
            }
        }
    }
}

trait KindName {
    fn kind_name(&self) -> String;
}

impl KindName for redis::RedisError {
    /// The kind of failure, never the URL (which may hold a password).
    fn kind_name(&self) -> String {
        format!("{:?}", self.kind())
    }
}

#[async_trait::async_trait]
impl RateStore for RedisRateStore {
    async fn hit(&self, key: &str, cost: u64, window: Duration) -> Result<(u64, u64), RateStoreError> {
        let window_ms = window.as_millis().max(1) as u64;
        let (count, left): (u64, i64) = self.eval(HIT, key, &[cost, window_ms]).await?;
        Ok((count, left.max(1) as u64))
    }

    async fn enter(&self, key: &str, limit: u64, lease: Duration) -> Result<bool, RateStoreError> {
        let taken: i64 = self.eval(ENTER, key, &[limit, lease.as_millis().max(1) as u64]).await?;
        Ok(taken == 1)
    }

    async fn leave(&self, key: &str) {
        if let Err(error) = self.eval::<i64>(LEAVE, key, &[]).await {
            tracing::warn!(%error, "a concurrency slot was not given back; its lease frees it");
        }
    }
}
