//! The security log's protocol: one struct per request, each with its thin
//! handler.

use actix::prelude::*;

use super::actor::SecurityLog;
use super::error::SecurityLogError;
use super::file::read_recent;
use super::types::{SecurityEvent, SecurityRecord};

/// Appends one event (flushed to disk first when it is `durable`).
#[derive(Debug, Message)]
#[rtype(result = "Result<SecurityRecord, SecurityLogError>")]
pub(crate) struct RecordSecurityEvent(pub SecurityEvent);

/// The newest events, newest first, optionally of one category.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<SecurityRecord>, SecurityLogError>")]
pub(crate) struct ListSecurityEvents {
    pub limit: usize,
    pub category: Option<String>,
}

impl Handler<RecordSecurityEvent> for SecurityLog {
    type Result = Result<SecurityRecord, SecurityLogError>;

    fn handle(&mut self, msg: RecordSecurityEvent, _: &mut Context<Self>) -> Self::Result {
        let category = msg.0.category.clone();
        self.record(msg.0).inspect_err(|e| {
            tracing::error!(error = %e, %category, "security event not recorded");
        })
    }
}

impl Handler<ListSecurityEvents> for SecurityLog {
    type Result = Result<Vec<SecurityRecord>, SecurityLogError>;

    fn handle(&mut self, msg: ListSecurityEvents, _: &mut Context<Self>) -> Self::Result {
        // Served by the owner so a read never sees a rotation half-done.
        read_recent(
            &self.config.path,
            self.config.keep,
            msg.limit,
            msg.category.as_deref(),
        )
    }
}
