//! [`HookRunnerHandle`]: the hook runner's cloneable, actix-free interface.
//! Decisions are made here, in the caller's task, from the snapshot the
//! actor hands out (see `evaluate.rs`).

use std::sync::Arc;

use actix::prelude::*;
use serde_json::{json, Value};
use tokio::sync::Semaphore;

use super::actor::{stamp, HookRunner};
use super::audit::{refusal_events, test_event};
use super::error::HookError;
use super::evaluate::{decide_message, decide_tool_call, run_one, RunContext};
use super::messages::{GetHookSnapshot, ReloadHooks, SaveScriptHooks};
use super::rules::HookRules;
use super::types::{
    HookListing, HookRunnerConfig, HookSnapshot, MessageDecision, MessageEvent, ScriptHookInfo,
    ScriptReport, ToolCall, ToolDecision,
};
use crate::ask::ask;
use crate::security_log::SecurityEvent;

/// Longest tool name accepted.
const MAX_TOOL_NAME_CHARS: usize = 200;

/// Longest message accepted for hook evaluation, in chars.
const MAX_MESSAGE_CHARS: usize = 100_000;

/// A cloneable reference to the running hook runner.
#[derive(Clone)]
pub struct HookRunnerHandle {
    addr: Addr<HookRunner>,
    ctx: Arc<RunContext>,
    config: HookRunnerConfig,
}

impl std::fmt::Debug for HookRunnerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookRunnerHandle")
            .field("connected", &self.addr.connected())
            .finish()
    }
}

impl HookRunnerHandle {
    /// Starts the runner with the rules already loaded at start-up (they
    /// are re-read through `config.load_rules` once config.json changes)
    /// and reads hooks.json. Must run inside an actix `System`.
    pub fn start(config: HookRunnerConfig, rules: HookRules) -> Self {
        let mut runner = HookRunner {
            config: config.clone(),
            snapshot: Arc::new(HookSnapshot {
                rules,
                ..HookSnapshot::default()
            }),
            hooks_json: Value::Null,
            stamps: (stamp(&config.config_file), None),
        };
        runner.reload_scripts(None);
        let ctx = Arc::new(RunContext {
            limit: Arc::new(Semaphore::new(config.max_concurrent_scripts.max(1))),
            data_home: config
                .config_file
                .parent()
                .map(std::path::Path::to_path_buf),
        });
        Self {
            addr: runner.start(),
            ctx,
            config,
        }
    }

    async fn snapshot(&self) -> Result<(Arc<HookSnapshot>, Value), HookError> {
        ask(&self.addr, GetHookSnapshot).await
    }

    /// Decides a tool call (and records the decision in the security log).
    pub async fn decide_tool_call(&self, call: ToolCall) -> Result<ToolDecision, HookError> {
        let name = call.tool_name.trim();
        if name.is_empty()
            || name.chars().count() > MAX_TOOL_NAME_CHARS
            || name.chars().any(char::is_control)
        {
            return Err(HookError::InvalidRequest(format!(
                "tool_name must be 1-{MAX_TOOL_NAME_CHARS} characters without control characters"
            )));
        }
        let (snapshot, _) = self.snapshot().await?;
        let decision = decide_tool_call(&snapshot, &call, &self.ctx).await;
        self.record_refusals(&call.actor, "PreToolUse", &decision.scripts);
        self.record(SecurityEvent::new(
            "hook_decision",
            &call.actor,
            &format!("{:?}", decision.decision).to_lowercase(),
            json!({
                "event": "PreToolUse",
                "tool": call.tool_name,
                "reason": decision.reason,
                "matched": decision.matched,
            }),
        ));
        Ok(decision)
    }

    /// Decides what happens to a message (recorded when a rule or script
    /// fired).
    pub async fn decide_message(&self, event: MessageEvent) -> Result<MessageDecision, HookError> {
        if event.text.chars().count() > MAX_MESSAGE_CHARS {
            return Err(HookError::InvalidRequest(format!(
                "text longer than {MAX_MESSAGE_CHARS} characters"
            )));
        }
        let (snapshot, _) = self.snapshot().await?;
        let decision = decide_message(&snapshot, &event, &self.ctx).await;
        self.record_refusals(&event.actor, "UserPromptSubmit", &decision.scripts);
        if !decision.matched.is_empty() {
            let outcome = if decision.blocked {
                "blocked"
            } else if decision.auto_reply.is_some() {
                "auto_reply"
            } else {
                "modified"
            };
            self.record(SecurityEvent::new(
                "hook_decision",
                &event.actor,
                outcome,
                json!({
                    "event": "UserPromptSubmit",
                    "session_key": event.session_key,
                    "matched": decision.matched,
                    "reason": decision.reason,
                }),
            ));
        }
        Ok(decision)
    }

    /// Everything configured, plus the raw hooks.json document.
    pub async fn list(&self) -> Result<(HookListing, Value), HookError> {
        let (snapshot, raw) = self.snapshot().await?;
        let mut counters = std::collections::HashMap::<&str, usize>::new();
        let scripts = snapshot
            .scripts
            .hooks
            .iter()
            .map(|h| {
                let index = counters.entry(h.event.as_str()).or_default();
                let info = ScriptHookInfo {
                    event: h.event.clone(),
                    index: *index,
                    matcher: h.matcher.describe(),
                    command: h.command.clone(),
                    timeout_secs: h.timeout.as_secs_f64(),
                };
                *index += 1;
                info
            })
            .collect();
        let listing = HookListing {
            rules: snapshot.rules.clone(),
            scripts,
            warnings: snapshot.scripts.warnings.clone(),
            load_errors: snapshot.load_errors.clone(),
        };
        Ok((listing, raw))
    }

    /// Replaces hooks.json (validated; written atomically); answers the
    /// warnings of the new file. A change of the commands in force is a
    /// `hook_script_change` security event by `actor`.
    pub async fn save_scripts(&self, doc: Value, actor: &str) -> Result<Vec<String>, HookError> {
        let actor = actor.to_owned();
        ask(&self.addr, SaveScriptHooks { doc, actor }).await
    }

    /// Re-reads config.json and hooks.json now.
    pub async fn reload(&self) -> Result<(), HookError> {
        ask(&self.addr, ReloadHooks).await.map(|_| ())
    }

    /// Runs script hook `index` of `event` once with `payload` (or a sample
    /// event), whatever its matcher says; the run is a `hook_script_test`
    /// security event by `actor`.
    pub async fn test_hook(
        &self,
        event: &str,
        index: usize,
        payload: Option<Value>,
        actor: &str,
    ) -> Result<ScriptReport, HookError> {
        let (snapshot, _) = self.snapshot().await?;
        let hook = snapshot
            .scripts
            .hooks
            .iter()
            .filter(|h| h.event == event)
            .nth(index)
            .ok_or_else(|| HookError::NoSuchHook {
                event: event.to_owned(),
                index,
            })?;
        let payload = payload.unwrap_or_else(|| sample_event(event));
        let report = run_one(
            hook,
            event,
            &payload,
            Vec::new(),
            &snapshot.rules,
            &self.ctx,
        )
        .await;
        self.record(test_event(actor, event, index, &report));
        self.record_refusals(actor, event, std::slice::from_ref(&report));
        Ok(report)
    }

    /// One `hook_sandbox_refused` event per hook the sandbox refused.
    fn record_refusals(&self, actor: &str, event: &str, reports: &[ScriptReport]) {
        for e in refusal_events(actor, event, reports) {
            self.record(e);
        }
    }

    fn record(&self, event: SecurityEvent) {
        if let Some(log) = &self.config.security_log {
            log.record_later(event);
        }
    }
}

/// A representative payload for `event` (Claude Code's stdin shape).
pub fn sample_event(event: &str) -> Value {
    match event {
        "PreToolUse" | "PostToolUse" => json!({
            "hook_event_name": event,
            "session_id": "test-session",
            "tool_name": "Bash",
            "tool_input": {"command": "echo hello", "description": "sample"},
        }),
        "UserPromptSubmit" => json!({
            "hook_event_name": event,
            "session_id": "test-session",
            "prompt": "hello",
        }),
        other => json!({"hook_event_name": other, "session_id": "test-session"}),
    }
}
