//! The id of the request being served, kept where the error answer that
//! names it is built, so it needs no face: the HTTP middleware
//! (`crate::http::request_id`) runs each request in [`scope`].

use std::future::Future;

tokio::task_local! {
    static REQUEST_ID: String;
}

/// The id of the request being handled, when called inside one.
pub fn current() -> Option<String> {
    REQUEST_ID.try_with(Clone::clone).ok()
}

/// Runs `fut` as the handling of request `id`.
pub async fn scope<F: Future>(id: String, fut: F) -> F::Output {
    REQUEST_ID.scope(id, fut).await
}
