//! The hook runner's protocol: one struct per request, each with its thin
//! handler.

use std::sync::Arc;

use actix::prelude::*;
use serde_json::Value;

use super::actor::{check_hooks_json, HookRunner, EDITED_ON_DISK};
use super::error::HookError;
use super::types::HookSnapshot;

/// The configuration in force (reloaded first if a file changed).
#[derive(Debug, Message)]
#[rtype(result = "Result<(Arc<HookSnapshot>, Value), HookError>")]
pub(crate) struct GetHookSnapshot;

/// Re-reads both files now (after config.json was rewritten).
#[derive(Debug, Message)]
#[rtype(result = "Result<Arc<HookSnapshot>, HookError>")]
pub(crate) struct ReloadHooks;

/// Validates and atomically replaces hooks.json; answers the warnings of
/// the new file. The change is recorded as made by `actor`.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<String>, HookError>")]
pub(crate) struct SaveScriptHooks {
    /// The new hooks.json document.
    pub doc: Value,
    /// Who asked (`http`, `cli`, …).
    pub actor: String,
}

impl Handler<GetHookSnapshot> for HookRunner {
    type Result = Result<(Arc<HookSnapshot>, Value), HookError>;

    fn handle(&mut self, _: GetHookSnapshot, _: &mut Context<Self>) -> Self::Result {
        self.refresh();
        Ok((Arc::clone(&self.snapshot), self.hooks_json.clone()))
    }
}

impl Handler<ReloadHooks> for HookRunner {
    type Result = Result<Arc<HookSnapshot>, HookError>;

    fn handle(&mut self, _: ReloadHooks, _: &mut Context<Self>) -> Self::Result {
        self.reload(EDITED_ON_DISK);
        Ok(Arc::clone(&self.snapshot))
    }
}

impl Handler<SaveScriptHooks> for HookRunner {
    type Result = Result<Vec<String>, HookError>;

    fn handle(&mut self, msg: SaveScriptHooks, _: &mut Context<Self>) -> Self::Result {
        let set =
            check_hooks_json(&msg.doc, &self.snapshot.rules).map_err(HookError::InvalidConfig)?;
        write_atomically(&self.config.hooks_file, &msg.doc)?;
        // Only hooks.json changed: the rules in force stay as they are.
        self.reload_scripts(Some(&msg.actor));
        Ok(set.warnings)
    }
}

fn write_atomically(path: &std::path::Path, doc: &Value) -> Result<(), HookError> {
    let text = serde_json::to_string_pretty(doc).map_err(|e| HookError::Io(e.to_string()))? + "\n";
    crate::atomic_file::write_atomic(path, text.as_bytes())
        .map_err(|e| HookError::Io(e.to_string()))
}
