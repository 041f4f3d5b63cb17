//! The web dashboard (ARCHITECTURE.md §16): the committed build in `frontend/dist`,
//! embedded in the binary so a fresh checkout serves it without Node. Every
//! GET that is not the API, the docs or an ops endpoint gets a file from the
//! build or, for the single-page app's own routes, its `index.html`.

use crate::error::ApiError;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use rust_embed::RustEmbed;

/// `debug-embed` embeds in debug builds too, so tests see what release serves.
#[derive(RustEmbed)]
#[folder = "frontend/dist"]
struct Dist;

/// Paths that belong to the server, not the dashboard: an unknown one there
/// stays a problem+json 404.
const SERVER_PREFIXES: [&str; 7] = [
    "/v1",
    "/internal",
    "/docs",
    "/openapi.json",
    "/metrics",
    "/healthz",
    "/readyz",
];

/// Hashed build output never changes under its name; `index.html` names the
/// current hashes, so it is checked every time.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";
const REVALIDATE: &str = "no-cache";

pub(super) fn belongs_to_server(path: &str) -> bool {
    SERVER_PREFIXES.iter().any(|prefix| {
        path.strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("json" | "map") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("woff2") => "font/woff2",
        Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// Whether `Accept-Encoding` takes gzip (and does not refuse it with `q=0`).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            let name = parts.next().unwrap_or("");
            let refused = parts
                .filter_map(|p| p.replace(' ', "").strip_prefix("q=").map(str::to_owned))
                .any(|q| q.parse::<f32>().is_ok_and(|q| q <= 0.0));
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
        })
}

/// A file of the build; scripts and styles as the `.gz` the build wrote beside
/// them when the client takes gzip (compressing 600 KB on every request
/// costs a debug build a quarter of a second).
fn file(path: &str, cache: &'static str, gzip: bool) -> Option<Response> {
    let precompressed = Dist::get(&format!("{path}.gz"));
    let has_gzip = precompressed.is_some();
    let (body, encoded) = match precompressed.filter(|_| gzip) {
        Some(found) => (found.data, true),
        None => (Dist::get(path)?.data, false),
    };
    let mut response = (StatusCode::OK, body.into_owned()).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type(path)),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    if encoded {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    if has_gzip {
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    Some(response)
}

/// The router's fallback: a dashboard file, the dashboard's `index.html` for
/// its client-side routes, or the API's 404.
pub async fn fallback(method: Method, uri: Uri, request_headers: HeaderMap) -> Response {
    let path = uri.path();
    if !(method == Method::GET || method == Method::HEAD) || belongs_to_server(path) {
        return ApiError::NotFound("no such endpoint".into()).into_response();
    }
    let gzip = accepts_gzip(&request_headers);
    let relative = path.trim_start_matches('/');
    if !relative.is_empty() && relative != "index.html" {
        let cache = if relative.starts_with("assets/") {
            IMMUTABLE
        } else {
            REVALIDATE
        };
        if let Some(response) = file(relative, cache, gzip) {
            return response;
        }
        // A missing hashed asset is a stale page asking for an old build:
        // answering index.html there would hand it HTML for a script.
        if relative.starts_with("assets/") {
            return ApiError::NotFound("no such dashboard asset".into()).into_response();
        }
    }
    index().unwrap_or_else(|| {
        ApiError::NotFound("the dashboard is not built into this binary".into()).into_response()
    })
}

/// Where `index.html` gets its per-answer nonce: the build writes this
/// placeholder (`html.cspNonce` in vite.config.ts) into a `csp-nonce` meta
/// tag and onto its own tags, and the UI library reads the meta tag for the
/// `<style>` elements it writes.
const NONCE_PLACEHOLDER: &str = "GPUEX_CSP_NONCE";

/// The dashboard's `index.html`, with a fresh style nonce in it and in its
/// Content-Security-Policy. Checked every time, like the file it was.
fn index() -> Option<Response> {
    let html = Dist::get("index.html")?;
    let nonce = crate::auth::tokens::random_hex(16);
    let page = String::from_utf8_lossy(&html.data).replace(NONCE_PLACEHOLDER, &nonce);
    let policy = super::headers::DASHBOARD_CSP.replace(
        "style-src 'self'",
        &format!("style-src 'self' 'nonce-{nonce}'"),
    );
    let mut response = (StatusCode::OK, page).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type("index.html")),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(REVALIDATE));
    if let Ok(policy) = HeaderValue::from_str(&policy) {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    Some(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_paths_are_told_from_dashboard_routes() {
        for path in [
            "/v1",
            "/v1/nope",
            "/docs",
            "/docs/",
            "/openapi.json",
            "/metrics",
            "/healthz",
            "/readyz",
            "/internal",
            "/internal/market/command/x",
        ] {
            assert!(belongs_to_server(path), "{path}");
        }
        for path in [
            "/",
            "/leases",
            "/v1x",
            "/docsearch",
            "/assets/index.js",
            "/market",
        ] {
            assert!(!belongs_to_server(path), "{path}");
        }
    }

    #[test]
    fn gzip_is_sent_only_where_accepted() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::ACCEPT_ENCODING,
                HeaderValue::from_str(value).unwrap(),
            );
            accepts_gzip(&headers)
        };
        assert!(with("gzip, deflate, br"));
        assert!(with("br;q=1.0, gzip;q=0.8"));
        assert!(with("*"));
        assert!(!with("br"));
        assert!(!with("gzip;q=0"));
        assert!(!with("gzip; q=0.000"));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    #[test]
    fn the_build_is_embedded() {
        assert!(Dist::get("index.html").is_some());
        assert!(Dist::iter().any(|f| f.starts_with("assets/") && f.ends_with(".js")));
    }
}
