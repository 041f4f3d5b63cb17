//! Security headers on every answer (ARCHITECTURE.md §19, dashboard).
//!
//! The dashboard gets a Content-Security-Policy that lets scripts and
//! styles come from this origin only, and `frame-ancestors 'none'`; its
//! `index.html` adds a nonce of its own for the `<style>` elements the UI
//! library writes at run time ([`super::dashboard`]). The Swagger UI at
//! `/docs` sets inline styles on its elements, so its policy allows those
//! and nothing else beyond self. API answers are data, never a page: their
//! policy allows nothing. Every answer says `nosniff`, `no-referrer` and
//! `DENY`.

use axum::extract::Request;
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

/// The dashboard's files (`index.html` adds its style nonce to this).
pub const DASHBOARD_CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; \
     base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

/// The Swagger UI: its scripts and stylesheets from self, inline style
/// attributes, `data:` images for its icons.
pub const DOCS_CSP: &str =
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; \
     base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

/// Everything else: JSON and text that no browser should run anything from.
pub const API_CSP: &str =
    "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Adds the headers; a Content-Security-Policy the handler set (the
/// dashboard's `index.html`, with its nonce) is kept.
pub async fn security_headers(request: Request, next: Next) -> Response {
    let policy = policy_for(request.uri().path());
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(policy),
        );
    }
    response
}

fn policy_for(path: &str) -> &'static str {
    if path == "/docs" || path.starts_with("/docs/") {
        DOCS_CSP
    } else if super::dashboard::belongs_to_server(path) {
        API_CSP
    } else {
        DASHBOARD_CSP
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_path_gets_its_policy() {
        assert_eq!(policy_for("/"), DASHBOARD_CSP);
        assert_eq!(policy_for("/leases/abc"), DASHBOARD_CSP);
        assert_eq!(policy_for("/assets/index.js"), DASHBOARD_CSP);
        assert_eq!(policy_for("/docs"), DOCS_CSP);
        assert_eq!(policy_for("/docs/swagger-ui.css"), DOCS_CSP);
        assert_eq!(policy_for("/v1/orders"), API_CSP);
        assert_eq!(policy_for("/openapi.json"), API_CSP);
        assert_eq!(policy_for("/internal/market/command"), API_CSP);
        for policy in [DASHBOARD_CSP, DOCS_CSP, API_CSP] {
            assert!(policy.contains("frame-ancestors 'none'"));
            assert!(!policy.contains("unsafe-eval"));
        }
        assert!(!DASHBOARD_CSP.contains("unsafe-inline"));
    }
}
