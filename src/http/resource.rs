//! Resources that answer in JSON when nothing matches: a 405 body for a
//! method a resource does not have, a 404 body for a path no route has
//! (actix's defaults are empty bodies).

use actix_web::{web, HttpRequest, HttpResponse, Resource};

use crate::error::ApiError;

/// A resource whose unsupported methods answer a JSON 405 (actix's default
/// is an empty body).
pub fn resource(path: &str) -> Resource {
    web::resource(path).default_service(web::to(method_not_allowed))
}

async fn method_not_allowed(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    Err(ApiError::MethodNotAllowed(req.method().to_string()))
}

/// The JSON 404 for paths no route matches.
pub async fn not_found(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotFound {
        code: "route_not_found",
        message: format!("no route for {} {}", req.method(), req.path()),
    })
}
