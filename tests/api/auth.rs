use crate::helpers::{on_both_databases, ADMIN_EMAIL, JWT_SECRET};
use base64::Engine;
use jsonwebtoken::{encode, EncodingKey, Header};
use reqwest::Method;
use serde_json::json;

fn forge(secret: &str, sub: &str, role: &str, iat: i64, exp: i64) -> String {
    encode(
        &Header::default(),
        &json!({"sub": sub, "role": role, "iat": iat, "exp": exp}),
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap()
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

on_both_databases! {
    async fn registering_logging_in_and_reading_me_works(app) {
        let r = app.post("/v1/auth/register", None, json!({
            "email": "Ada@Example.com", "password": "a very long password", "name": "Ada", "role": "buyer"
        })).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.body["email"], "ada@example.com");
        assert_eq!(r.body["role"], "buyer");
        let token = app.login("ada@example.com", "a very long password").await;
        let me = app.get("/v1/me", Some(&token)).await;
        assert_eq!(me.status, 200);
        assert_eq!(me.body["id"], r.body["id"]);
        assert_eq!(me.body["name"], "Ada");
    }

    async fn a_taken_email_is_refused_with_409(app) {
        let body = json!({"email": "dup@example.com", "password": "a very long password", "name": "A", "role": "provider"});
        assert_eq!(app.post("/v1/auth/register", None, body.clone()).await.status, 201);
        app.post("/v1/auth/register", None, body).await.assert_problem(409, None);
    }

    async fn registering_as_admin_is_refused(app) {
        app.post("/v1/auth/register", None, json!({
            "email": "x@example.com", "password": "a very long password", "name": "X", "role": "admin"
        })).await.assert_problem(422, Some("role"));
    }

    async fn a_wrong_password_gets_401(app) {
        let r = app.post("/v1/auth/login", None, json!({"email": ADMIN_EMAIL, "password": "not the password"})).await;
        r.assert_problem(401, None);
        let r = app.post("/v1/auth/login", None, json!({"email": "nobody@example.com", "password": "whatever it is"})).await;
        r.assert_problem(401, None);
    }

    async fn repeated_failed_logins_are_throttled_with_429(app) {
        for _ in 0..5 {
            let r = app.post("/v1/auth/login", None, json!({"email": ADMIN_EMAIL, "password": "wrong password!"})).await;
            r.assert_problem(401, None);
        }
        let r = app.post("/v1/auth/login", None, json!({"email": ADMIN_EMAIL, "password": "wrong password!"})).await;
        r.assert_code(429, "too_many_requests");
    }

    async fn an_expired_token_gets_401(app) {
        let (_, id) = app.user("buyer").await;
        let token = forge(JWT_SECRET, &id.to_string(), "buyer", now() - 7200, now() - 3600);
        app.get("/v1/me", Some(&token)).await.assert_problem(401, None);
        let valid = forge(JWT_SECRET, &id.to_string(), "buyer", now(), now() + 600);
        assert_eq!(app.get("/v1/me", Some(&valid)).await.status, 200);
    }

    async fn a_token_signed_with_another_key_gets_401(app) {
        let (_, id) = app.user("buyer").await;
        let token = forge("some-other-secret", &id.to_string(), "admin", now(), now() + 600);
        app.get("/v1/me", Some(&token)).await.assert_problem(401, None);
    }

    async fn an_unsigned_alg_none_token_gets_401(app) {
        let (_, id) = app.user("buyer").await;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let header = b64.encode(br#"{"alg":"none","typ":"JWT"}"#);
        let payload = b64.encode(json!({"sub": id, "role": "admin", "iat": now(), "exp": now() + 600}).to_string());
        let token = format!("{header}.{payload}.");
        app.get("/v1/me", Some(&token)).await.assert_problem(401, None);
        app.get("/v1/wallet", Some(&token)).await.assert_problem(401, None);
    }

    async fn a_missing_or_malformed_authorization_header_gets_401(app) {
        app.get("/v1/me", None).await.assert_problem(401, None);
        let r = app.client.get(format!("{}/v1/me", app.address)).header("authorization", "Basic abc").send().await.unwrap();
        crate::helpers::TestApp::reply(r).await.assert_problem(401, None);
        app.get("/v1/me", Some("gpx_not_a_key")).await.assert_problem(401, None);
    }

    async fn a_buyer_on_an_admin_endpoint_gets_403(app) {
        let (buyer, id) = app.user("buyer").await;
        app.post("/v1/admin/credits", Some(&buyer), json!({"user_id": id, "amount": "10"})).await.assert_problem(403, None);
        app.put("/v1/admin/prices", Some(&buyer), json!([])).await.assert_problem(403, None);
        app.put("/v1/admin/regions/eu", Some(&buyer), json!({"timezone": "UTC"})).await.assert_problem(403, None);
        let (provider, _) = app.user("provider").await;
        app.post("/v1/admin/credits", Some(&provider), json!({"user_id": id, "amount": "10"})).await.assert_problem(403, None);
    }

    async fn an_api_key_authenticates_until_it_is_revoked(app) {
        let (token, id) = app.user("buyer").await;
        let created = app.post("/v1/api-keys", Some(&token), json!({"name": "ci"})).await;
        assert_eq!(created.status, 201, "{}", created.body);
        let key = created.body["key"].as_str().unwrap().to_owned();
        assert!(key.starts_with("gpx_"));
        let me = app.get("/v1/me", Some(&key)).await;
        assert_eq!(me.status, 200);
        assert_eq!(me.body["id"], id.to_string());
        let listed = app.get("/v1/api-keys", Some(&token)).await;
        assert_eq!(listed.body.as_array().unwrap().len(), 1);
        assert!(listed.body[0].get("key").is_none(), "the key is shown only once");
        let key_id = created.body["id"].as_str().unwrap();
        let r = app.request(Method::DELETE, &format!("/v1/api-keys/{key_id}"), Some(&token), None).await;
        assert_eq!(r.status, 204);
        app.get("/v1/me", Some(&key)).await.assert_problem(401, None);
    }

    async fn another_users_api_key_is_404(app) {
        let (alice, _) = app.user("buyer").await;
        let (mallory, _) = app.user("buyer").await;
        let created = app.post("/v1/api-keys", Some(&alice), json!({"name": "mine"})).await;
        let key_id = created.body["id"].as_str().unwrap();
        let r = app.request(Method::DELETE, &format!("/v1/api-keys/{key_id}"), Some(&mallory), None).await;
        r.assert_problem(404, None);
        let still = app.get("/v1/api-keys", Some(&alice)).await;
        assert_eq!(still.body.as_array().unwrap().len(), 1);
        app.request(Method::DELETE, "/v1/api-keys/not-a-uuid", Some(&mallory), None).await.assert_problem(404, None);
    }

    async fn the_admin_bootstrap_is_idempotent_across_restarts(app) {
        let url = app.database_url.clone();
        let backend = app.backend;
        app.stop().await;
        let again = crate::helpers::TestApp::spawn_with(backend, |s| s.database_url = url).await;
        let token = again.admin().await;
        let me = again.get("/v1/me", Some(&token)).await;
        assert_eq!(me.body["role"], "admin");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rs256_tokens_are_issued_and_verified() {
    use crate::helpers::{Backend, TestApp};
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    let app = TestApp::spawn_with(Backend::Sqlite, |s| {
        s.jwt_algorithm = gpuex::config::JwtAlgorithm::Rs256;
        s.jwt_private_key = Some(format!("{fixtures}/jwt-rs256.pem").into());
        s.jwt_public_key = Some(format!("{fixtures}/jwt-rs256.pub.pem").into());
    })
    .await;
    let token = app.admin().await;
    let header = token.split('.').next().unwrap();
    let header = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header)
        .unwrap();
    assert!(String::from_utf8(header).unwrap().contains("RS256"));
    assert_eq!(app.get("/v1/me", Some(&token)).await.status, 200);
    let hs = forge(
        JWT_SECRET,
        &uuid::Uuid::new_v4().to_string(),
        "admin",
        now(),
        now() + 600,
    );
    app.get("/v1/me", Some(&hs)).await.assert_problem(401, None);
}

on_both_databases! {
    async fn a_token_of_a_demoted_or_deleted_account_gets_401_at_once(app) {
        let (provider, id) = app.user("provider").await;
        assert_eq!(app.get("/v1/nodes", Some(&provider)).await.status, 200);
        app.execute("UPDATE users SET role = 'buyer' WHERE id = $1", id).await;
        app.get("/v1/nodes", Some(&provider)).await.assert_code(401, "unauthorized");
        app.get("/v1/me", Some(&provider)).await.assert_code(401, "unauthorized");

        let (buyer, id) = app.user("buyer").await;
        for sql in [
            "DELETE FROM api_keys WHERE user_id = $1",
            "DELETE FROM accounts WHERE owner_id = $1",
            "DELETE FROM users WHERE id = $1",
        ] {
            app.execute(sql, id).await;
        }
        app.get("/v1/me", Some(&buyer)).await.assert_code(401, "unauthorized");
        app.get("/v1/wallet", Some(&buyer)).await.assert_code(401, "unauthorized");
        app.post("/v1/api-keys", Some(&buyer), json!({"name": "after"})).await.assert_code(401, "unauthorized");
    }

    async fn an_api_key_stops_working_when_its_accounts_role_changes(app) {
        let (token, id) = app.user("buyer").await;
        let created = app.post("/v1/api-keys", Some(&token), json!({"name": "ci"})).await;
        let key = created.body["key"].as_str().unwrap().to_owned();
        assert_eq!(app.get("/v1/me", Some(&key)).await.status, 200);
        app.execute("UPDATE users SET role = 'provider' WHERE id = $1", id).await;
        app.get("/v1/nodes", Some(&key)).await.assert_code(401, "unauthorized");
        app.get("/v1/me", Some(&key)).await.assert_code(401, "unauthorized");
    }

    async fn an_api_key_cannot_create_api_keys(app) {
        let (token, _) = app.user("buyer").await;
        let created = app.post("/v1/api-keys", Some(&token), json!({"name": "ci"})).await;
        let key = created.body["key"].as_str().unwrap().to_owned();
        app.post("/v1/api-keys", Some(&key), json!({"name": "child"})).await.assert_code(403, "forbidden");
        assert_eq!(app.get("/v1/api-keys", Some(&token)).await.body.as_array().unwrap().len(), 1);
    }

    async fn an_email_with_invisible_characters_is_refused(app) {
        let (_, _) = app.user("buyer").await;
        for email in ["ad\u{200b}a@example.com", "ada@exa\u{00ad}mple.com", "\u{202e}ada@example.com", "ada\u{2060}@example.com"] {
            app.post("/v1/auth/register", None, json!({
                "email": email, "password": "a very long password", "name": "Ada", "role": "buyer"
            })).await.assert_problem(422, Some("email"));
        }
    }

    async fn starting_with_an_admin_email_of_a_buyer_fails_and_promotes_no_one(mut_app) {
        let mut app = mut_app;
        let email = "ops@example.com";
        let r = app.post("/v1/auth/register", None, json!({
            "email": email, "password": "a very long password", "name": "Ops", "role": "buyer"
        })).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let token = app.login(email, "a very long password").await;
        let key = app.post("/v1/api-keys", Some(&token), json!({"name": "planted"})).await.body["key"].as_str().unwrap().to_owned();
        app.halt().await;

        let mut settings = gpuex::config::Settings::with_database(&app.database_url);
        settings.admin_email = Some(email.into());
        settings.admin_password = Some("the operator's password".into());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let err = gpuex::serve(listener, settings, async {}).await.expect_err("the server refuses to start");
        let message = format!("{err:#}");
        assert!(message.contains("ops@example.com belongs to an existing buyer account"), "{message}");

        app.resume().await;
        let me = app.get("/v1/me", Some(&key)).await;
        assert_eq!(me.body["role"], "buyer", "{}", me.body);
        app.post("/v1/admin/credits", Some(&key), json!({"user_id": me.body["id"], "amount": "10"})).await.assert_problem(403, None);
        app.login(email, "a very long password").await;
    }
}
