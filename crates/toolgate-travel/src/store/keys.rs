//! Encrypted provider API keys: the store only ever sees nonce and ciphertext.

use chrono::Utc;

use super::{BeginWrite, Store, dispatch};
use crate::error::Result;

/// A stored, encrypted API key.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub(crate) struct SealedKey {
    pub(crate) nonce: Vec<u8>,
    pub(crate) ciphertext: Vec<u8>,
}

impl Store {
    /// Insert or replace the sealed key of (user, provider); returns whether one was replaced.
    pub(crate) async fn upsert_api_key(
        &self,
        user_id: &str,
        provider: &str,
        sealed: &SealedKey,
    ) -> Result<bool> {
        const EXISTS: &str = "SELECT COUNT(*) FROM travel_api_keys WHERE user_id = $1 AND provider = $2";
        const UPSERT: &str = "INSERT INTO travel_api_keys (user_id, provider, nonce, ciphertext, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (user_id, provider) DO UPDATE \
             SET nonce = excluded.nonce, ciphertext = excluded.ciphertext, updated_at = excluded.updated_at";
        let now = Utc::now();
        let replaced = dispatch!(self, |pool| {
            let mut tx = pool.begin_write().await?;
            let existing: i64 =
                sqlx::query_scalar(EXISTS).bind(user_id).bind(provider).fetch_one(&mut *tx).await?;
            sqlx::query(UPSERT)
                .bind(user_id)
                .bind(provider)
                .bind(&sealed.nonce)
                .bind(&sealed.ciphertext)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            existing > 0
        });
        Ok(replaced)
    }

    /// The sealed key of (user, provider).
    pub(crate) async fn sealed_api_key(&self, user_id: &str, provider: &str) -> Result<Option<SealedKey>> {
        const SQL: &str =
            "SELECT nonce, ciphertext FROM travel_api_keys WHERE user_id = $1 AND provider = $2";
        let row = dispatch!(self, |pool| sqlx::query_as::<_, SealedKey>(SQL)
            .bind(user_id)
            .bind(provider)
            .fetch_optional(pool)
            .await?);
        Ok(row)
    }
}
