//! `GET /`: the dashboard page (`static/index.html`).
//!
//! The page is compiled into the binary rather than served from disk, so an
//! installed daemon (systemd, any working directory) always serves the page
//! that matches its API. It holds no data: its script calls `/api/*` with
//! the token the operator pastes in, so serving it needs no auth. Live
//! updates come from the operator console's websocket (`/api/console`,
//! subscriptions `audit`, `security`, `progress`), not from polling.

use actix_web::{web, HttpRequest, HttpResponse};

use super::resource::resource;

const INDEX_HTML: &str = include_str!("../../static/index.html");

/// Registers the dashboard page.
pub fn config_dashboard(cfg: &mut web::ServiceConfig) {
    cfg.service(resource("/").route(web::get().to(index)));
}

async fn index(req: HttpRequest) -> HttpResponse {
    // The page's live updates come over the console websocket of this very
    // daemon; older browsers do not count ws: as 'self', so it is named.
    // The Host was checked against the daemon's names by the guard.
    let host = req.connection_info().host().to_owned();
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header((
            "Content-Security-Policy",
            format!(
                "default-src 'self'; connect-src 'self' ws://{host}; script-src 'unsafe-inline'; style-src 'unsafe-inline'"
            ),
        ))
        .insert_header(("X-Frame-Options", "DENY"))
        .body(INDEX_HTML)
}
