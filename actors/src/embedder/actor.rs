//! The `Embedder` actor: the backend in use, the factory that restores the
//! default after a swap, and the cache. Its protocol is in `messages.rs`.

use actix::prelude::*;

use super::backend::{BackendFactory, SharedBackend};
use super::cache::EmbedCache;

/// The actor.
pub(crate) struct Embedder {
    pub(super) backend: SharedBackend,
    pub(super) default_factory: BackendFactory,
    pub(super) cache: EmbedCache,
}

impl Actor for Embedder {
    type Context = Context<Self>;
}

impl Supervised for Embedder {}
