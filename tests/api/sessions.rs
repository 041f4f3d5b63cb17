//! Sessions (ARCHITECTURE.md §19 "Tokens"): a login answers an access token and a
//! refresh token; `POST /v1/auth/refresh` rotates the refresh token, a
//! rotated one used again revokes the whole session, and logout revokes it.

use crate::helpers::{on_both_databases, on_both_databases_with, TestApp};
use gpuex::config::Settings;
use reqwest::StatusCode;
use serde_json::{json, Value};

async fn login(app: &TestApp) -> Value {
    let email = format!("s-{}@example.com", uuid::Uuid::new_v4().simple());
    let r = app
        .post(
            "/v1/auth/register",
            None,
            json!({"email": email, "password": "correct horse battery",
            "name": "S", "role": "buyer"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let r = app
        .post(
            "/v1/auth/login",
            None,
            json!({"email": email, "password": "correct horse battery"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body
}

async fn refresh(app: &TestApp, pair: &Value) -> crate::helpers::Reply {
    app.post(
        "/v1/auth/refresh",
        None,
        json!({"refresh_token": pair["refresh_token"]}),
    )
    .await
}

fn access(pair: &Value) -> &str {
    pair["access_token"].as_str().unwrap()
}

fn expiring_at_once(settings: &mut Settings) {
    settings.refresh_token_ttl_s = 0;
}

on_both_databases! {
    async fn a_refresh_token_swaps_once_for_a_new_pair_in_the_same_session(app) {
        let first = login(&app).await;
        let token = first["refresh_token"].as_str().unwrap();
        assert!(token.starts_with("gpr_") && token.len() > 40, "{first}");
        assert_eq!(first["token_type"], "Bearer");
        let r = refresh(&app, &first).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        let second = r.body;
        assert_ne!(second["refresh_token"], first["refresh_token"]);
        assert_ne!(second["access_token"], first["access_token"]);
        let me = app.get("/v1/me", Some(access(&second))).await;
        assert_eq!(me.status, StatusCode::OK, "{}", me.body);
        // The first access token lasts until it expires, as the session does.
        assert_eq!(app.get("/v1/me", Some(access(&first))).await.status, StatusCode::OK);
        let r = refresh(&app, &second).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }

    async fn a_rotated_refresh_token_used_again_revokes_the_whole_session(app) {
        let first = login(&app).await;
        let second = refresh(&app, &first).await.body;
        // A stolen copy of the first token, shown after its owner rotated it.
        refresh(&app, &first).await.assert_code(401, "unauthorized");
        // Every token of the session is dead: the rotated refresh token and
        // the access tokens alike.
        refresh(&app, &second).await.assert_code(401, "unauthorized");
        app.get("/v1/me", Some(access(&second))).await.assert_code(401, "unauthorized");
        app.get("/v1/me", Some(access(&first))).await.assert_code(401, "unauthorized");
        // Another session of the same account is untouched.
        let other = login(&app).await;
        assert_eq!(refresh(&app, &other).await.status, StatusCode::OK);
    }

    async fn logout_revokes_the_session_and_answers_204_again(app) {
        let pair = login(&app).await;
        let body = json!({"refresh_token": pair["refresh_token"]});
        let r = app.post("/v1/auth/logout", None, body.clone()).await;
        assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
        app.get("/v1/me", Some(access(&pair))).await.assert_code(401, "unauthorized");
        refresh(&app, &pair).await.assert_code(401, "unauthorized");
        assert_eq!(app.post("/v1/auth/logout", None, body).await.status, StatusCode::NO_CONTENT);
    }

    async fn refresh_and_logout_name_a_bad_refresh_token_field(app) {
        for path in ["/v1/auth/refresh", "/v1/auth/logout"] {
            app.post(path, None, json!({})).await.assert_problem(422, Some("refresh_token"));
            app.post(path, None, json!({"refresh_token": "gpx_not_a_refresh_token"}))
                .await
                .assert_problem(422, Some("refresh_token"));
            app.post(path, None, json!({"refresh_token": "gpr_"})).await.assert_problem(422, Some("refresh_token"));
            app.post(path, None, json!({"refresh_token": 7})).await.assert_problem(422, Some("refresh_token"));
            app.post(path, None, json!({"refresh_token": "gpr_x", "extra": 1})).await.assert_problem(422, None);
        }
        app.post("/v1/auth/refresh", None, json!({"refresh_token": "gpr_0123456789abcdef"}))
            .await
            .assert_code(401, "unauthorized");
    }

    async fn a_role_change_ends_the_accounts_sessions(app) {
        let admin = app.admin().await;
        let pair = login(&app).await;
        let id = app.get("/v1/me", Some(access(&pair))).await.body["id"].as_str().unwrap().to_owned();
        let r = app.put(&format!("/v1/admin/users/{id}/role"), Some(&admin), json!({"role": "provider"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        refresh(&app, &pair).await.assert_code(401, "unauthorized");
    }
}

on_both_databases_with! { expiring_at_once =>
    async fn an_expired_refresh_token_is_refused(app) {
        let pair = login(&app).await;
        refresh(&app, &pair).await.assert_code(401, "unauthorized");
    }
}
