//! Deciding one event: the config rules first, then the script hooks that
//! apply, run concurrently (bounded by the runner's semaphore) in the
//! caller's task, never on the actor's mailbox, so a slow hook holds up only
//! the request that triggered it.

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::join_all;
use serde_json::{json, Value};
use tokio::sync::Semaphore;

use super::decision::{interpret, strongest, Permission};
use super::process::{run_script, ScriptRun};
use super::rules::{HookRules, ToolVerdict};
use super::scripts::ScriptHook;
use super::types::{
    HookSnapshot, MessageDecision, MessageEvent, ScriptReport, ToolCall, ToolDecision,
};

/// Longest tool input passed in `TOOL_INPUT` (the full input is on stdin).
const MAX_ENV_INPUT_BYTES: usize = 32 * 1024;

/// What every run of a runner shares: the concurrency bound and the data
/// home (whose secrets a sandboxed hook must not read).
#[derive(Debug)]
pub(crate) struct RunContext {
    /// Script hooks running at once.
    pub(crate) limit: Arc<Semaphore>,
    /// The data home.
    pub(crate) data_home: Option<PathBuf>,
}

/// Decides a tool call: a deny pattern ends it; otherwise the `PreToolUse`
/// script hooks run and the strongest answer wins (deny > defer > ask >
/// allow), an approve pattern counting as one more `allow`. Nothing
/// deciding means `ask`.
pub(crate) async fn decide_tool_call(
    snapshot: &HookSnapshot,
    call: &ToolCall,
    ctx: &RunContext,
) -> ToolDecision {
    let config = snapshot.rules.evaluate_tool(&call.tool_name, &call.input);
    if let ToolVerdict::Deny(pattern) = &config {
        return ToolDecision {
            decision: Permission::Deny,
            reason: format!(
                "tool {} matches auto_deny_tools pattern {pattern:?}",
                super::rule_form::rule_form(&call.tool_name, &call.input)
                    .unwrap_or_else(|| call.tool_name.clone())
            ),
            matched: vec![format!("auto_deny_tools:{pattern}")],
            updated_input: None,
            context: Vec::new(),
            scripts: Vec::new(),
        };
    }
    let payload = json!({
        "hook_event_name": "PreToolUse",
        "session_id": call.session_key,
        "tool_name": call.tool_name,
        "tool_input": call.input,
    });
    let mut env = vec![("TOOL_NAME".to_owned(), call.tool_name.clone())];
    let input = call.input.to_string();
    if input.len() <= MAX_ENV_INPUT_BYTES {
        env.push(("TOOL_INPUT".to_owned(), input));
    }
    let reports = run_matching(
        snapshot,
        "PreToolUse",
        Some(&call.tool_name),
        &payload,
        env,
        ctx,
    )
    .await;
    let mut matched = Vec::new();
    let mut decision = None;
    if let ToolVerdict::Allow(pattern) = &config {
        matched.push(format!("auto_approve_tools:{pattern}"));
        decision = Some((
            Permission::Allow,
            format!(
                "tool {} matches auto_approve_tools pattern {pattern:?}",
                call.tool_name
            ),
        ));
    }
    if let Some((p, reason)) = strongest(reports.iter().map(|r| &r.verdict)) {
        if decision.as_ref().is_none_or(|(d, _)| p >= *d) {
            let by = reports
                .iter()
                .find(|r| r.verdict.permission == Some(p))
                .map(|r| r.command.clone())
                .unwrap_or_default();
            decision = Some((
                p,
                reason.unwrap_or_else(|| format!("script hook {by} answered {p:?}")),
            ));
        }
    }
    for r in reports.iter().filter(|r| r.verdict.permission.is_some()) {
        matched.push(format!("script:{}", r.command));
    }
    let (decision, reason) =
        decision.unwrap_or((Permission::Ask, "no hook decided; ask the user".to_owned()));
    let updated_input = (decision == Permission::Allow)
        .then(|| {
            reports
                .iter()
                .rev()
                .find_map(|r| r.verdict.updated_input.clone())
        })
        .flatten();
    ToolDecision {
        decision,
        reason,
        matched,
        updated_input,
        context: reports
            .iter()
            .filter_map(|r| r.verdict.context.clone())
            .collect(),
        scripts: reports,
    }
}

/// Decides a message: auto-reply → transform → context rules, then the
/// `UserPromptSubmit` script hooks (unless an auto-reply already answered:
/// the message then never reaches the agent).
pub(crate) async fn decide_message(
    snapshot: &HookSnapshot,
    event: &MessageEvent,
    ctx: &RunContext,
) -> MessageDecision {
    let rules = snapshot.rules.evaluate_message(&event.text);
    let mut out = MessageDecision {
        auto_reply: rules.auto_reply,
        blocked: false,
        reason: None,
        text: rules.text,
        context: rules.context,
        matched: rules.matched,
        scripts: Vec::new(),
    };
    if out.auto_reply.is_some() {
        return out;
    }
    let payload = json!({
        "hook_event_name": "UserPromptSubmit",
        "session_id": event.session_key,
        "prompt": event.text,
    });
    let reports = run_matching(
        snapshot,
        "UserPromptSubmit",
        None,
        &payload,
        Vec::new(),
        ctx,
    )
    .await;
    for r in &reports {
        if r.verdict.block && !out.blocked {
            out.blocked = true;
            out.reason = r.verdict.reason.clone();
            out.matched.push(format!("script:{}", r.command));
        }
        if let Some(c) = &r.verdict.context {
            if !out.context.contains(c) {
                out.context.push(c.clone());
            }
        }
    }
    out.scripts = reports;
    out
}

/// Runs every script hook of `event` that applies to `target`,
/// concurrently, and reports each.
async fn run_matching(
    snapshot: &HookSnapshot,
    event: &str,
    target: Option<&str>,
    payload: &Value,
    env: Vec<(String, String)>,
    ctx: &RunContext,
) -> Vec<ScriptReport> {
    let hooks: Vec<&ScriptHook> = snapshot
        .scripts
        .hooks
        .iter()
        .filter(|h| h.applies(event, target))
        .collect();
    let runs = hooks
        .into_iter()
        .map(|hook| run_one(hook, event, payload, env.clone(), &snapshot.rules, ctx));
    join_all(runs).await
}

/// Runs one hook under the concurrency limit.
pub(crate) async fn run_one(
    hook: &ScriptHook,
    event: &str,
    payload: &Value,
    env: Vec<(String, String)>,
    rules: &HookRules,
    ctx: &RunContext,
) -> ScriptReport {
    let _permit = Arc::clone(&ctx.limit).acquire_owned().await.ok();
    let context = json!({
        "event": event,
        "tool_name": payload.get("tool_name"),
        "session_id": payload.get("session_id"),
    });
    let outcome = run_script(ScriptRun {
        command: hook.command.clone(),
        event: event.to_owned(),
        context: context.to_string(),
        stdin: payload.to_string().into_bytes(),
        timeout: hook.timeout,
        max_output: rules.script_max_output_bytes,
        env,
        sandbox: rules.sandbox,
        data_home: ctx.data_home.clone(),
    })
    .await;
    let verdict = interpret(event, &outcome);
    ScriptReport {
        command: hook.command.clone(),
        outcome,
        verdict,
    }
}
