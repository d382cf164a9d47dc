//! The page's files, embedded in the binary (plain HTML, CSS and
//! JavaScript under `serve/assets/`: no build step, nothing fetched from
//! elsewhere at run time), served with headers that keep the page to its
//! own origin.

use axum::http::header;
use axum::response::IntoResponse;

/// The page.
pub const INDEX_HTML: &str = include_str!("../assets/index.html");
/// Its script.
pub const APP_JS: &str = include_str!("../assets/app.js");
/// Its style sheet.
pub const STYLE_CSS: &str = include_str!("../assets/style.css");

/// Scripts, styles and requests only from this server; images also inline
/// (the board's SVG graph is drawn by the script).
const CSP: &str = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

fn file(content_type: &'static str, body: &'static str) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
}

/// `GET /`: the page.
pub async fn index() -> impl IntoResponse {
    file("text/html; charset=utf-8", INDEX_HTML)
}

/// `GET /app.js`.
pub async fn script() -> impl IntoResponse {
    file("text/javascript; charset=utf-8", APP_JS)
}

/// `GET /style.css`.
pub async fn style() -> impl IntoResponse {
    file("text/css; charset=utf-8", STYLE_CSS)
}
