//! A deadline for receiving the request body (`server.body_timeout_secs`).
//!
//! actix-web's `client_request_timeout` bounds only the request head, so a
//! client sending its body at 1 byte/s would hold a connection (and a
//! worker's attention) for as long as it likes. This middleware wraps the
//! body stream: once the deadline passes while the handler is still waiting
//! for bytes, the stream fails with a `TimedOut` I/O error, which the JSON
//! extractor answers as 408 `request_timeout` ([`super::extract`]).
//!
//! Closing the connection afterwards: when a response is sent, actix-http
//! closes a connection whose body was not read to the end, except a chunked
//! body whose reader is gone, which it keeps draining to reuse the
//! connection (a trickling client could hold it forever). So a body left
//! unfinished is kept alive by the response body until the response is
//! written; actix then sees an unread body, answers with `Connection: close`
//! and stops reading after `client_disconnect_timeout`.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::web::{Bytes, Data};
use actix_web::HttpMessage;
use futures_util::Stream;
use tokio::time::Sleep;

use crate::app::request_rules::has_body;

/// How long a request body may take to arrive (app data for the middleware).
#[derive(Debug, Clone, Copy)]
pub struct BodyTimeout(pub Duration);

/// Whether a body error is this module's deadline.
pub fn is_body_timeout(err: &PayloadError) -> bool {
    matches!(err, PayloadError::Io(e) if e.kind() == std::io::ErrorKind::TimedOut)
}

/// The middleware function (wrap with `actix_web::middleware::from_fn`).
pub async fn limit_body_time(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let timeout = req.app_data::<Data<BodyTimeout>>().map(|t| t.0);
    let headers = req.headers();
    let announced = has_body(
        headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()),
        headers
            .get(header::TRANSFER_ENCODING)
            .and_then(|v| v.to_str().ok()),
    );
    let (Some(timeout), true) = (timeout, announced) else {
        return Ok(next.call(req).await?.map_into_left_body());
    };
    let shared = Rc::new(RefCell::new(Body {
        inner: Some(req.take_payload()),
        finished: false,
    }));
    let stream = TimedBody {
        shared: Rc::clone(&shared),
        deadline: Box::pin(tokio::time::sleep(timeout)),
        timed_out: false,
    };
    req.set_payload(Payload::Stream {
        payload: Box::pin(stream),
    });
    let response = next.call(req).await?;
    let unfinished = {
        let mut body = shared.borrow_mut();
        if body.finished {
            None
        } else {
            body.inner.take()
        }
    };
    Ok(match unfinished {
        None => response.map_into_left_body(),
        Some(payload) => response
            .map_body(|_, body| HoldingBody {
                body: body.boxed(),
                _unread: payload,
            })
            .map_into_right_body(),
    })
}

/// A response body that also holds the request body nobody read to its
/// end, so actix-http sees it unread until the response is written.
struct HoldingBody {
    body: BoxBody,
    _unread: Payload,
}

impl MessageBody for HoldingBody {
    type Error = <BoxBody as MessageBody>::Error;

    fn size(&self) -> BodySize {
        self.body.size()
    }

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        Pin::new(&mut self.body).poll_next(cx)
    }
}

struct Body {
    inner: Option<Payload>,
    finished: bool,
}

struct TimedBody {
    shared: Rc<RefCell<Body>>,
    deadline: Pin<Box<Sleep>>,
    timed_out: bool,
}

impl Stream for TimedBody {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.timed_out {
            return Poll::Ready(None);
        }
        let polled = {
            let mut body = this.shared.borrow_mut();
            let Some(inner) = body.inner.as_mut() else {
                return Poll::Ready(None);
            };
            let polled = Pin::new(inner).poll_next(cx);
            if let Poll::Ready(None) = polled {
                body.finished = true;
            }
            polled
        };
        match polled {
            Poll::Pending if this.deadline.as_mut().poll(cx).is_ready() => {
                this.timed_out = true;
                Poll::Ready(Some(Err(PayloadError::Io(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the request body did not arrive in time",
                )))))
            }
            other => other,
        }
    }
}
