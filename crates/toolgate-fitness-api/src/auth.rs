//! Users and bearer tokens: issuing them, and the `User` extractor that turns
//! `Authorization: Bearer <token>` into the user every query is scoped to.

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;
use sha2::{Digest, Sha256};

use crate::db::{Db, on_pool};
use crate::error::{ApiError, Error, Result};
use crate::routes::AppState;
use sqlx::Connection as _;
use toolgate_db::NoFlush as _;

/// Longest accepted user id.
const MAX_USER_ID: usize = 128;

/// The authenticated caller. Handlers take it first, so a request without a valid token
/// is answered 401 before its input is even looked at.
#[derive(Debug, Clone)]
pub(crate) struct User {
    pub(crate) id: String,
}

fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

fn new_token() -> String {
    let bytes: [u8; 32] = rand::random();
    format!("fit_{}", hex::encode(bytes))
}

fn check_user_id(user_id: &str) -> Result<()> {
    let ok = !user_id.is_empty()
        && user_id.len() <= MAX_USER_ID
        && user_id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.@:".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(Error::Invalid {
            field: "user_id",
            message: format!("1 to {MAX_USER_ID} characters of A-Z a-z 0-9 - _ . @ :"),
        })
    }
}

/// Creates the user `user_id` and returns a fresh bearer token for it.
/// A user id that already exists is a [`Error::Conflict`]; use [`issue_token`] for more tokens.
pub async fn create_user(db: &Db, user_id: &str) -> Result<String> {
    check_user_id(user_id)?;
    let inserted = on_pool!(db, |pool| {
        sqlx::query("INSERT INTO fit_users (user_id) VALUES ($1) ON CONFLICT (user_id) DO NOTHING")
            .bind(user_id)
            .execute(pool)
            .await?
            .rows_affected()
    });
    if inserted == 0 {
        return Err(Error::Conflict(format!("user {user_id:?} already exists")));
    }
    issue_token(db, user_id).await
}

/// Issues one more bearer token for an existing user. Only its hash is stored: keep the
/// returned token, it cannot be read back.
pub async fn issue_token(db: &Db, user_id: &str) -> Result<String> {
    check_user_id(user_id)?;
    let token = new_token();
    let inserted = on_pool!(db, |pool| {
        sqlx::query(
            "INSERT INTO fit_tokens (token_sha256, user_id) SELECT $1, user_id FROM fit_users WHERE user_id = $2",
        )
        .bind(token_hash(&token))
        .bind(user_id)
        .execute(pool)
        .await?
        .rows_affected()
    });
    if inserted == 0 {
        return Err(Error::Invalid {
            field: "user_id",
            message: format!("no user {user_id:?}; create it first"),
        });
    }
    Ok(token)
}

/// A token from [`issue_expiring_token`] and when it stops working.
#[derive(Debug, Clone)]
pub struct ExpiringToken {
    /// The bearer token (shown once; only its hash is stored).
    pub token: String,
    /// When the API stops accepting it.
    pub expires_at: chrono::DateTime<chrono::Utc>,
}

/// Issues a token for `user_id` that stops working after `ttl`, creating
/// the user when missing. Tokens (of any user) that have expired are deleted
/// on the way, so a gateway that mints one token per user and refreshes it
/// before it expires leaves about one row per user behind.
pub async fn issue_expiring_token(db: &Db, user_id: &str, ttl: std::time::Duration) -> Result<ExpiringToken> {
    check_user_id(user_id)?;
    let now = chrono::Utc::now();
    let ttl =
        chrono::Duration::from_std(ttl).unwrap_or(chrono::Duration::MAX).max(chrono::Duration::seconds(1));
    let expires_at = now.checked_add_signed(ttl).unwrap_or(chrono::DateTime::<chrono::Utc>::MAX_UTC);
    let token = new_token();
    let hash = token_hash(&token);
    // A token is cached by its holder and made again when lost, so its
    // commit does not wait for the disk (it is the first call's largest cost).
    on_pool!(db, |pool| {
        let mut conn = pool.acquire().await?;
        let lowered = conn.no_flush().await?;
        let mut tx = conn.begin().await?;
        sqlx::query("DELETE FROM fit_tokens WHERE expires_at IS NOT NULL AND expires_at <= $1")
            .bind(now.timestamp())
            .execute(&mut *tx)
            .await?;
        sqlx::query("INSERT INTO fit_users (user_id) VALUES ($1) ON CONFLICT (user_id) DO NOTHING")
            .bind(user_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("INSERT INTO fit_tokens (token_sha256, user_id, expires_at) VALUES ($1, $2, $3)")
            .bind(&hash)
            .bind(user_id)
            .bind(expires_at.timestamp())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        conn.restore_flush(lowered).await?;
    });
    Ok(ExpiringToken { token, expires_at })
}

/// Revokes a token; true when it existed.
pub async fn revoke_token(db: &Db, token: &str) -> Result<bool> {
    let deleted = on_pool!(db, |pool| {
        sqlx::query("DELETE FROM fit_tokens WHERE token_sha256 = $1")
            .bind(token_hash(token))
            .execute(pool)
            .await?
            .rows_affected()
    });
    Ok(deleted > 0)
}

pub(crate) async fn user_for_token(db: &Db, token: &str) -> Result<Option<String>, sqlx::Error> {
    Ok(on_pool!(db, |pool| {
        sqlx::query_scalar::<_, String>(
            "SELECT user_id FROM fit_tokens WHERE token_sha256 = $1 AND (expires_at IS NULL OR expires_at > $2)",
        )
        .bind(token_hash(token))
        .bind(chrono::Utc::now().timestamp())
        .fetch_optional(pool)
        .await?
    }))
}

/// The token of an `Authorization: Bearer <token>` header (scheme case-insensitive).
fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

impl FromRequestParts<AppState> for User {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let Some(token) = bearer(parts) else {
            return Err(ApiError::unauthorized("missing bearer token: send `Authorization: Bearer <token>`"));
        };
        match user_for_token(&state.db, token).await? {
            Some(id) => Ok(User { id }),
            None => Err(ApiError::unauthorized("invalid or revoked bearer token")),
        }
    }
}
