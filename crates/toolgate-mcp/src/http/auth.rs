//! Step 2: who the request proves to be (every route but `/`), asked of the
//! [`Authenticator`]s in order: API keys, then whatever the state adds
//! (OAuth access tokens), then the opt-in anonymous caller.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use super::{Shared, error_response};
use crate::handler::Authenticated;
use crate::identity::{Authenticator, Bearer, Challenge, Refusal, bearer};

/// The `WWW-Authenticate` of a `401`: where to sign in when a way to is
/// configured (RFC 9728 §5.1), else the realm.
fn challenge_header(challenge: Option<&Challenge>, error: Option<&str>) -> HeaderValue {
    let Some(challenge) = challenge else {
        return HeaderValue::from_static("Bearer realm=\"toolgate\"");
    };
    // Quoted strings may not hold `"` or `\`; configured URLs and scopes never should.
    let clean = |s: &str| s.chars().filter(|c| *c != '"' && *c != '\\').collect::<String>();
    let mut value = String::from("Bearer ");
    if let Some(error) = error {
        value.push_str(&format!("error=\"{error}\", "));
    }
    value.push_str(&format!("resource_metadata=\"{}\"", clean(&challenge.resource_metadata)));
    if !challenge.scopes.is_empty() {
        value.push_str(&format!(", scope=\"{}\"", clean(&challenge.scopes.join(" "))));
    }
    HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static("Bearer realm=\"toolgate\""))
}

pub(super) fn unauthorized(message: &str) -> Response {
    unauthorized_with(None, message)
}

fn unauthorized_with(challenge: Option<&Challenge>, message: &str) -> Response {
    let mut response = error_response(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", message);
    response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge_header(challenge, None));
    response
}

/// The answer to a refused credential.
fn refused(challenge: Option<&Challenge>, refusal: &Refusal) -> Response {
    match refusal {
        Refusal::Unauthorized(why) => unauthorized_with(challenge, why),
        Refusal::Forbidden { message, insufficient_scope } => {
            let mut response = error_response(StatusCode::FORBIDDEN, "PERMISSION_DENIED", message);
            // Only a missing scope says so: any other 403 would send clients
            // through sign-in again in a loop.
            if *insufficient_scope && challenge.is_some() {
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    challenge_header(challenge, Some("insufficient_scope")),
                );
            }
            response
        }
        Refusal::Unavailable(why) => error_response(StatusCode::SERVICE_UNAVAILABLE, "UNAVAILABLE", why),
    }
}

/// The authenticators of a router, in the order they are asked, and the
/// sign-in it advertises.
#[derive(Debug)]
pub(super) struct Chain {
    pub(super) authenticators: Vec<Arc<dyn Authenticator>>,
    pub(super) challenge: Option<Challenge>,
}

impl Chain {
    pub(super) fn new(authenticators: Vec<Arc<dyn Authenticator>>) -> Self {
        let challenge = authenticators.iter().find_map(|a| a.challenge());
        Self { authenticators, challenge }
    }
}

/// Step 2: the identity the request proves goes into its extensions;
/// `Err` is the `401`/`403`/`503` answer.
pub(super) async fn check(shared: &Shared, request: &mut Request) -> Result<(), Response> {
    let chain = &shared.auth;
    let mut answer = None;
    for authenticator in &chain.authenticators {
        if let Some(found) = authenticator.authenticate(request.headers(), request.extensions()).await {
            answer = Some(found);
            break;
        }
    }
    let identity = match answer {
        Some(Ok(identity)) => identity,
        Some(Err(refusal)) => return Err(refused(chain.challenge.as_ref(), &refusal)),
        None => {
            let what = if chain.challenge.is_some() { "API key or access token" } else { "API key" };
            let why = match bearer(request.headers()) {
                Bearer::Missing => format!("send `Authorization: Bearer <{what}>`"),
                Bearer::Malformed => format!("the Authorization header is not `Bearer <{what}>`"),
                Bearer::Token(_) => "the API key is not valid (unknown, revoked or malformed)".to_owned(),
            };
            return Err(unauthorized_with(chain.challenge.as_ref(), &why));
        }
    };
    if identity.proof != crate::identity::Proof::Anonymous
        && let Some(ticket) = request.extensions().get::<super::admission::Ticket>()
    {
        // The connection carried a valid credential: it leaves the unauthenticated ones' cap.
        ticket.proven();
    }
    // The credential itself stays in the Authorization header, which no
    // handler reads; backend credentials, if any, come from the
    // deployment's credential hook.
    let caller = match &shared.state.credentials {
        Some(hook) => hook.credentials(identity.caller).await,
        None => identity.caller,
    };
    request.extensions_mut().insert(Authenticated {
        caller,
        principal: identity.principal,
        proof: identity.proof,
    });
    Ok(())
}
