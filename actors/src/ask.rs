//! The one way a handle talks to its actor.
//!
//! Every actor's handle sends a message and waits for the answer; the only
//! thing that differs is how a dead mailbox reads in that actor's error
//! type. Each error enum implements `From<MailboxError>` (its
//! `Unavailable` variant), and every message answers a `Result` in that
//! error, so one function serves every handle and `MailboxError` never
//! leaves this crate.

use actix::dev::ToEnvelope;
use actix::prelude::*;

/// Sends `msg` to `addr` and waits for the reply. A mailbox that is closed
/// or full becomes `E`'s "unavailable" error.
pub(crate) async fn ask<A, M, T, E>(addr: &Addr<A>, msg: M) -> Result<T, E>
where
    A: Actor + Handler<M>,
    A::Context: ToEnvelope<A, M>,
    M: Message<Result = Result<T, E>> + Send + 'static,
    T: Send + 'static,
    E: From<MailboxError> + Send + 'static,
{
    addr.send(msg).await.map_err(E::from)?
}
