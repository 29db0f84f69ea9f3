//! The `HookRunner` actor: the hook configuration in force and the files it
//! came from. It reloads when config.json or hooks.json changed on disk
//! (checked on every request: two `stat` calls), so an edit takes effect
//! without a restart, and a broken edit keeps the last good configuration
//! (the error is reported in listings and logged).

use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use actix::prelude::*;
use serde_json::Value;

use super::audit::change_event;
use super::rules::{HookRules, MAX_SCRIPT_TIMEOUT_SECS};
use super::scripts::{parse_hooks_json, ScriptHookSet, TimeoutPolicy};
use super::types::{HookRunnerConfig, HookSnapshot};

/// Who a change of hooks.json found on disk is recorded as made by.
pub(super) const EDITED_ON_DISK: &str = "hooks.json";

/// A file's identity for change detection: modification time and size.
pub(super) type Stamp = Option<(SystemTime, u64)>;

/// The actor. Start it with `HookRunnerHandle::start`.
pub(crate) struct HookRunner {
    pub(super) config: HookRunnerConfig,
    pub(super) snapshot: Arc<HookSnapshot>,
    /// The hooks.json document as last read (for editing round trips).
    pub(super) hooks_json: Value,
    pub(super) stamps: (Stamp, Stamp),
}

impl Actor for HookRunner {
    type Context = Context<Self>;
}

pub(super) fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

impl HookRunner {
    /// Reloads whatever changed on disk since the last look.
    pub(super) fn refresh(&mut self) {
        let config = stamp(&self.config.config_file);
        let hooks = stamp(&self.config.hooks_file);
        if config != self.stamps.0 {
            self.reload_rules();
        }
        if hooks != self.stamps.1 {
            self.reload_scripts(Some(EDITED_ON_DISK));
        }
    }

    /// Reads both sources again; a change of script hooks is recorded as
    /// made by `actor`.
    pub(super) fn reload(&mut self, actor: &str) {
        self.reload_rules();
        self.reload_scripts(Some(actor));
    }

    /// Re-reads the rules; on failure the previous ones stay in force and
    /// the error is reported.
    pub(super) fn reload_rules(&mut self) {
        self.stamps.0 = stamp(&self.config.config_file);
        let mut next = (*self.snapshot).clone();
        next.load_errors.retain(|e| !e.starts_with("config.json"));
        match (self.config.load_rules)() {
            Ok(rules) => next.rules = rules,
            Err(e) => {
                tracing::error!(error = %e, "hook rules not reloaded; keeping the previous ones");
                next.load_errors.push(format!("config.json hooks: {e}"));
            }
        }
        self.snapshot = Arc::new(next);
    }

    /// Re-reads hooks.json; on failure the previous hooks stay in force and
    /// the error is reported. With `actor`, a change of the commands in
    /// force is a `hook_script_change` security event (not at start-up:
    /// nothing changed then).
    pub(super) fn reload_scripts(&mut self, actor: Option<&str>) {
        self.stamps.1 = stamp(&self.config.hooks_file);
        let mut next = (*self.snapshot).clone();
        next.load_errors.retain(|e| !e.starts_with("hooks.json"));
        match read_hooks_json(&self.config.hooks_file) {
            Ok(doc) => {
                next.scripts = parse_hooks_json(&doc, timeout_policy(&next.rules));
                for w in &next.scripts.warnings {
                    tracing::warn!(warning = %w, "hooks.json entry skipped or adjusted");
                }
                self.hooks_json = doc;
                let change = actor.and_then(|actor| {
                    change_event(actor, &self.snapshot.scripts.hooks, &next.scripts.hooks)
                });
                if let (Some(event), Some(log)) = (change, &self.config.security_log) {
                    log.record_later(event);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "hooks.json not reloaded; keeping the previous hooks");
                next.load_errors.push(format!("hooks.json: {e}"));
            }
        }
        self.snapshot = Arc::new(next);
    }
}

/// The time limits the rules set for script hooks.
pub(super) fn timeout_policy(rules: &HookRules) -> TimeoutPolicy {
    TimeoutPolicy {
        default: std::time::Duration::from_secs(rules.script_timeout_secs),
        max: std::time::Duration::from_secs(MAX_SCRIPT_TIMEOUT_SECS),
    }
}

/// hooks.json as JSON; a missing file is an empty configuration.
pub(super) fn read_hooks_json(path: &Path) -> Result<Value, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| format!("not valid JSON: {e}")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Value::Null),
        Err(e) => Err(e.to_string()),
    }
}

/// Parses for checking only (what `SaveScriptHooks` validates with).
pub(super) fn check_hooks_json(doc: &Value, rules: &HookRules) -> Result<ScriptHookSet, String> {
    if !doc.get("hooks").is_some_and(Value::is_object) {
        return Err("hooks.json must be an object with a \"hooks\" object".into());
    }
    Ok(parse_hooks_json(doc, timeout_policy(rules)))
}
