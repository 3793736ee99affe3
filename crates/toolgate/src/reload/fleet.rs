//! Several instances: a reload asked of one (`SIGHUP`, `toolgate reload`) is announced to all
//! the others through PostgreSQL `NOTIFY`, as key changes are, and each of them then reads its
//! own `toolgate.toml` again and applies it the same way (checked whole; a bad one is refused
//! there too, and said so there). Instances on one database share one configuration file (or
//! files kept the same): the announcement carries no configuration, only "read yours again".
//! Without PostgreSQL (SQLite: one instance) nothing is announced.

use std::sync::Arc;
use std::time::Duration;

use super::{ConfigReloader, Origin};

/// The channel reloads are announced on.
pub const CONFIG_CHANNEL: &str = "toolgate_config_reloaded";

/// How long to wait before listening again after the listener's connection was lost.
const RELISTEN: Duration = Duration::from_secs(1);

/// This instance on the fleet's database.
#[derive(Debug, Clone)]
pub struct Fleet {
    pool: sqlx::PgPool,
    /// `<random id> <instance name>`: the id tells this process's own announcements apart.
    me: String,
}

impl Fleet {
    /// `None` unless `db` is PostgreSQL.
    pub fn new(db: toolgate_db::Db, instance: String) -> Option<Self> {
        match db.pool() {
            toolgate_db::Pool::Postgres(pool) => {
                Some(Self { pool: pool.clone(), me: format!("{} {instance}", uuid::Uuid::new_v4().simple()) })
            }
            _ => None,
        }
    }

    /// Tell the other instances to read their configuration again.
    pub async fn announce(&self) {
        if let Err(error) = sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CONFIG_CHANNEL)
            .bind(&self.me)
            .execute(&self.pool)
            .await
        {
            tracing::warn!(%error, "could not announce the reload to the other instances; reload each of them (SIGHUP or toolgate reload)");
        }
    }

    fn is_mine(&self, payload: &str) -> bool {
        payload.split(' ').next() == self.me.split(' ').next()
    }
}

impl ConfigReloader {
    /// Hear the reloads other instances announce and do the same here, for as long as the
    /// process serves (spawn it). When the listener's connection was lost (and announcements
    /// with it), the configuration is read again once it listens again, so a reload missed
    /// meanwhile is made up for.
    pub async fn watch_fleet(self: Arc<Self>) {
        let Some(fleet) = self.fleet.clone() else { return };
        let mut lost = false;
        loop {
            let mut listener = match sqlx::postgres::PgListener::connect_with(&fleet.pool).await {
                Ok(mut listener) => match listener.listen(CONFIG_CHANNEL).await {
                    Ok(()) => listener,
                    Err(error) => {
                        tracing::debug!(%error, "cannot listen for the fleet's reloads yet");
                        lost = true;
                        tokio::time::sleep(RELISTEN).await;
                        continue;
                    }
                },
                Err(error) => {
                    tracing::debug!(%error, "cannot listen for the fleet's reloads yet");
                    lost = true;
                    tokio::time::sleep(RELISTEN).await;
                    continue;
                }
            };
            if lost {
                let _ = self.reload_as(Origin::Fleet("(missed while not listening)".into())).await;
            }
            loop {
                match listener.try_recv().await {
                    Ok(Some(notification)) if !fleet.is_mine(notification.payload()) => {
                        let from = notification.payload().split_once(' ').map_or("", |(_, name)| name);
                        let _ = self.reload_as(Origin::Fleet(from.to_owned())).await;
                    }
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_) => {
                        tracing::warn!("lost the fleet's reload announcements; listening again");
                        break;
                    }
                }
            }
            // Whatever was announced until the next listen is read then.
            lost = true;
            tokio::time::sleep(RELISTEN).await;
        }
    }
}
