//! # HookRunner: tool approve/deny, auto-replies, transforms, context rules
//! and script hooks
//!
//! Owns the hook configuration in force: the `hooks` section of config.json
//! (spec "Hooks (hooks.py)": `auto_approve_tools` / `auto_deny_tools`,
//! `auto_replies`, `transforms`, `context_rules`) and the script hooks of
//! `hooks.json` (spec "Script hooks", read in Claude Code's hook schema and
//! answering with its exit-code/JSON decision contract). Both reload when
//! their file changes.
//!
//! Who talks to it: the gateway API (`POST /api/hooks/tool-call`,
//! `POST /api/hooks/message`), the hooks config routes and `kirocrew hooks
//! list|test`, and the context builder (transforms and context rules with
//! every message). Every decision is a security event.
//!
//! Files: `rules.rs` (config rules, pure), `scripts.rs` (hooks.json parsing,
//! pure), `decision.rs` (what a script's exit and output mean, pure),
//! `process.rs` (running one script: process group, timeout, bounded
//! capture), `sandbox.rs` (the sandbox's layers, what this machine has,
//! the report) and `confine.rs` (setting one run up: parent preparation,
//! the async-signal-safe child steps), `evaluate.rs` (one event: rules then scripts),
//! `kiro_hooks.rs` (`agent.kiro_hooks` merge and validation, spec "User
//! kiro-cli Hooks"), and the actor files.

mod actor;
mod audit;
mod confine;
mod decision;
mod error;
mod evaluate;
mod handle;
mod kiro_hooks;
mod messages;
mod probe;
mod process;
mod rule_form;
mod rules;
mod sandbox;
mod scripts;
mod types;

pub use audit::command_hash;
pub use decision::{interpret, HookVerdict, Permission, ScriptOutcome};
pub use error::HookError;
pub use handle::{sample_event, HookRunnerHandle};
pub use kiro_hooks::{merge_kiro_hooks, MergedKiroHooks, MAX_KIRO_MATCHER_CHARS};
pub use probe::{capabilities, machine_report};
pub use process::{run_script, ScriptRun};
pub use rules::{
    pattern_matches, AutoReply, ContextRule, HookRules, MessageOutcome, ToolVerdict, Transform,
    DEFAULT_SCRIPT_OUTPUT_BYTES, DEFAULT_SCRIPT_TIMEOUT_SECS, MAX_RULES, MAX_RULE_TEXT_CHARS,
    MAX_SCRIPT_TIMEOUT_SECS,
};
pub use sandbox::{
    home_secrets, limits as sandbox_limits, plan as sandbox_plan, Capabilities, SandboxError,
    SandboxLayers, SandboxMode, SandboxReport,
};
pub use scripts::{parse_hooks_json, Matcher, ScriptHook, ScriptHookSet, TimeoutPolicy};
pub use types::{
    HookListing, HookRunnerConfig, HookSnapshot, MessageDecision, MessageEvent, RulesLoader,
    ScriptHookInfo, ScriptReport, ToolCall, ToolDecision,
};
