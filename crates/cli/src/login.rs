//! `gpuex login` and `gpuex logout`: the kept credential.

use super::http::Api;
use super::render::print_json;
use super::{session, Output};
use super::{store, usage, CliError, Exit, Result};
use gpuex_api::auth::ApiKeyCreated;
use gpuex_api::auth::TokenResponse;
use reqwest::Method;
use serde_json::json;
use std::io::{BufRead, IsTerminal, Write};

pub(super) async fn login(
    server: &str,
    output: Output,
    mut stored: store::Credentials,
    email: Option<String>,
    password_stdin: bool,
    session: bool,
) -> Result<()> {
    let stdin = std::io::stdin();
    let email = match email {
        Some(e) => e,
        None if !password_stdin && stdin.is_terminal() => {
            eprint!("Email: ");
            let _ = std::io::stderr().flush();
            read_line(&mut stdin.lock())?
        }
        None => {
            return Err(usage(
                "--email is required when the password comes from stdin",
            ));
        }
    };
    let password = if password_stdin {
        read_line(&mut stdin.lock())?
    } else if stdin.is_terminal() {
        rpassword::prompt_password("Password: ")
            .map_err(|e| CliError::io(format!("cannot read the password: {e}")))?
    } else {
        return Err(usage(
            "stdin is not a terminal: pass the password with --password-stdin",
        ));
    };
    let anonymous = Api::new(server, None)?;
    let tokens = anonymous
        .post(
            "/v1/auth/login",
            &json!({"email": email, "password": password}),
        )
        .await?;
    let tokens: TokenResponse = serde_json::from_value(tokens).map_err(|e| {
        CliError::new(
            Exit::Server,
            format!("the login answer is not a token pair: {e}"),
        )
    })?;
    let access = tokens.access_token.clone();
    let mut credential = store::Credential {
        email: email.clone(),
        api_key: None,
        api_key_id: None,
        access_token: None,
        expires_at: None,
        refresh_token: None,
        refresh_expires_at: None,
    };
    // A key minted at an earlier login would otherwise be left behind.
    if let Some(old) = stored.servers.get(server).cloned() {
        revoke(server, &old).await;
    }
    if session {
        stored.servers.insert(server.to_owned(), credential);
        session::keep_pair(server, &mut stored, &tokens);
    } else {
        // A key named for this machine lasts until `gpuex logout` revokes
        // it; the login's own session is not kept, so it is ended now.
        let api = Api::new(server, Some(access))?;
        let host = std::env::var("HOSTNAME")
            .ok()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "this machine".into());
        let name: String = format!("gpuex CLI on {host}").chars().take(100).collect();
        let key = api.post("/v1/api-keys", &json!({"name": name})).await?;
        let key: ApiKeyCreated = serde_json::from_value(key).map_err(|e| {
            CliError::new(
                Exit::Server,
                format!("the API key answer is not a key: {e}"),
            )
        })?;
        credential.api_key = Some(key.key);
        credential.api_key_id = Some(key.id.to_string());
        session::log_out(server, &tokens.refresh_token).await;
        stored.servers.insert(server.to_owned(), credential);
    }
    stored.default_server = Some(server.to_owned());
    let path = store::save(&stored)?;
    if output == Output::Json {
        print_json(&json!({"server": server, "email": email, "credentials": path}));
    } else {
        println!(
            "logged in to {server} as {email} (credential kept in {})",
            path.display()
        );
    }
    Ok(())
}

/// Best effort: the key or session may already be gone.
pub(super) async fn revoke(server: &str, cred: &store::Credential) {
    if let Some(refresh) = &cred.refresh_token {
        session::log_out(server, refresh).await;
    }
    if let (Some(key), Some(id)) = (&cred.api_key, &cred.api_key_id) {
        if let Ok(api) = Api::new(server, Some(key.clone())) {
            let _ = api
                .send(api.request(Method::DELETE, &format!("/v1/api-keys/{id}")))
                .await;
        }
    }
}

pub(super) async fn logout(server: &str, mut stored: store::Credentials) -> Result<()> {
    let Some(cred) = stored.servers.remove(server) else {
        println!("not logged in to {server}");
        return Ok(());
    };
    revoke(server, &cred).await;
    if stored.default_server.as_deref() == Some(server) {
        stored.default_server = stored.servers.keys().next().cloned();
    }
    store::save(&stored)?;
    println!("logged out of {server}");
    Ok(())
}

pub(super) fn read_line(input: &mut impl BufRead) -> Result<String> {
    let mut line = String::new();
    input
        .read_line(&mut line)
        .map_err(|e| CliError::io(format!("cannot read stdin: {e}")))?;
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}
