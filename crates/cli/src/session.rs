//! The credential a command runs with, and a `login --session`'s refresh:
//! the CLI keeps the short-lived access token and the rotating refresh token
//! in its 0600 file, and swaps the refresh token for a new pair (saved at
//! once, since the old one is used up) when the access token has expired.

use super::http::Api;
use super::{store, CliError, Exit, Result};
use gpuex_api::auth::TokenResponse;
use serde_json::json;

/// Refresh this long before the access token expires, so that it does not
/// expire on its way to the server.
const EXPIRY_MARGIN_S: i64 = 30;

/// The credential for `server`: `GPUEX_TOKEN` (an access token or API key)
/// first, then the one `gpuex login` kept, refreshed when it has expired.
pub async fn token_for(server: &str, stored: &mut store::Credentials) -> Result<String> {
    if let Ok(t) = std::env::var("GPUEX_TOKEN") {
        if !t.is_empty() {
            return Ok(t);
        }
    }
    let Some(cred) = stored.servers.get(server) else {
        return Err(not_logged_in(server));
    };
    if let Some(key) = &cred.api_key {
        return Ok(key.clone());
    }
    let now = chrono::Utc::now();
    match (&cred.access_token, cred.expires_at) {
        (Some(t), Some(exp)) if exp > now + chrono::Duration::seconds(EXPIRY_MARGIN_S) => {
            return Ok(t.clone())
        }
        (Some(_), _) => {}
        _ => return Err(not_logged_in(server)),
    }
    let Some(refresh_token) = cred.refresh_token.clone() else {
        return Err(expired(server));
    };
    let anonymous = Api::new(server, None)?;
    let pair = match anonymous
        .post(
            "/v1/auth/refresh",
            &json!({ "refresh_token": refresh_token }),
        )
        .await
    {
        Ok(pair) => pair,
        // Expired, revoked or used elsewhere: only a new login helps.
        Err(e) if e.status == Some(401) => {
            forget(server, stored)?;
            return Err(expired(server));
        }
        Err(e) => return Err(e),
    };
    let pair: TokenResponse = serde_json::from_value(pair)
        .map_err(|e| CliError::new(Exit::Server, format!("the answer is not a token pair: {e}")))?;
    let access = keep_pair(server, stored, &pair);
    store::save(stored)?;
    Ok(access)
}

/// Stores a token pair from login or refresh in `server`'s credential.
pub fn keep_pair(server: &str, stored: &mut store::Credentials, pair: &TokenResponse) -> String {
    if let Some(cred) = stored.servers.get_mut(server) {
        cred.access_token = Some(pair.access_token.clone());
        cred.expires_at = Some(pair.expires_at);
        cred.refresh_token = Some(pair.refresh_token.clone());
        cred.refresh_expires_at = Some(pair.refresh_expires_at);
    }
    pair.access_token.clone()
}

/// Ends the session a refresh token belongs to; best effort (it may be over).
pub async fn log_out(server: &str, refresh_token: &str) {
    if let Ok(api) = Api::new(server, None) {
        let _ = api
            .post(
                "/v1/auth/logout",
                &json!({ "refresh_token": refresh_token }),
            )
            .await;
    }
}

/// Drops a session that can no longer be refreshed from the file.
fn forget(server: &str, stored: &mut store::Credentials) -> Result<()> {
    if let Some(cred) = stored.servers.get_mut(server) {
        cred.access_token = None;
        cred.expires_at = None;
        cred.refresh_token = None;
        cred.refresh_expires_at = None;
    }
    store::save(stored)?;
    Ok(())
}

fn expired(server: &str) -> CliError {
    let mut e = CliError::new(Exit::Auth, format!("your session on {server} has expired"));
    e.hint = Some("log in again with `gpuex login`".into());
    e
}

fn not_logged_in(server: &str) -> CliError {
    let mut e = CliError::new(Exit::Auth, format!("not logged in to {server}"));
    e.hint = Some("run `gpuex login` (or set GPUEX_TOKEN)".into());
    e
}
