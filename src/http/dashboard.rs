//! `GET /`: the dashboard page (`static/index.html`).
//!
//! The page is compiled into the binary rather than served from disk, so an
//! installed daemon (systemd, any working directory) always serves the page
//! that matches its API. It holds no data: its script calls `/api/*` with
//! the token the operator pastes in, so serving it needs no auth.

use actix_web::{web, HttpResponse};

use super::resource;

const INDEX_HTML: &str = include_str!("../../static/index.html");

/// Registers the dashboard page.
pub fn config_dashboard(cfg: &mut web::ServiceConfig) {
    cfg.service(resource("/").route(web::get().to(index)));
}

async fn index() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header((
            "Content-Security-Policy",
            "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'",
        ))
        .insert_header(("X-Frame-Options", "DENY"))
        .body(INDEX_HTML)
}
