//! The `SecurityLog` actor: the open log file, its size, and the live
//! subscribers. Its handle is in `handle.rs`.

use std::fs::File;

use actix::prelude::*;
use tokio::sync::broadcast;

use super::error::SecurityLogError;
use super::file::{append, encode_line, open_append, rotate};
use super::types::{SecurityEvent, SecurityLogConfig, SecurityRecord};
use crate::clock::format_ts;

/// The actor. Start it with `SecurityLogHandle::start`.
pub(crate) struct SecurityLog {
    pub(super) config: SecurityLogConfig,
    /// The open live file and its size; `None` until the first write, and
    /// again after a failed write (the next one reopens it).
    pub(super) file: Option<(File, u64)>,
    /// Live subscribers (the operator console); lagging ones lose the
    /// oldest records and are told how many.
    pub(super) live: broadcast::Sender<SecurityRecord>,
}

impl Actor for SecurityLog {
    type Context = Context<Self>;
}

impl SecurityLog {
    /// Stamps, bounds, rotates if needed, appends, and publishes one event.
    pub(super) fn record(
        &mut self,
        event: SecurityEvent,
    ) -> Result<SecurityRecord, SecurityLogError> {
        let record = SecurityRecord {
            ts: format_ts(self.config.clock.now()),
            event,
        };
        let line = encode_line(&record)?;
        let outcome = self.write_line(&line, record.event.durable);
        if outcome.is_err() {
            // Reopen on the next event rather than keep a handle in an
            // unknown state (file removed, disk full).
            self.file = None;
        }
        outcome?;
        // No subscriber is not an error.
        let _ = self.live.send(record.clone());
        Ok(record)
    }

    fn write_line(&mut self, line: &[u8], durable: bool) -> Result<(), SecurityLogError> {
        let len = line.len() as u64;
        let size = match &self.file {
            Some((_, size)) => *size,
            None => {
                let file = open_append(&self.config.path)?;
                let size = file.metadata()?.len();
                self.file = Some((file, size));
                size
            }
        };
        if size > 0 && size + len > self.config.max_bytes {
            self.file = None;
            rotate(&self.config.path, self.config.keep)?;
            self.file = Some((open_append(&self.config.path)?, 0));
        }
        let Some((file, size)) = self.file.as_mut() else {
            return Err(SecurityLogError::Io("log file not open".into()));
        };
        append(file, line, durable)?;
        *size += len;
        Ok(())
    }
}
