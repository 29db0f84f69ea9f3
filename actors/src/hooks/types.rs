//! The hook runner's requests, answers and configuration.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::decision::{HookVerdict, Permission, ScriptOutcome};
use super::rules::HookRules;
use super::scripts::ScriptHookSet;
use crate::security_log::SecurityLogHandle;

/// Loads the `hooks` section of the effective configuration (defaults ←
/// config.json ← environment); supplied by the service shell, which owns
/// configuration layering.
pub type RulesLoader = Arc<dyn Fn() -> Result<HookRules, String> + Send + Sync>;

/// How the runner is set up.
#[derive(Clone)]
pub struct HookRunnerConfig {
    /// `config.json` (its change triggers a rules reload).
    pub config_file: PathBuf,
    /// `hooks.json` (script hooks).
    pub hooks_file: PathBuf,
    /// Reads the rules.
    pub load_rules: RulesLoader,
    /// Script hooks running at once, at most (more wait their turn).
    pub max_concurrent_scripts: usize,
    /// Where every decision is recorded.
    pub security_log: Option<SecurityLogHandle>,
}

impl std::fmt::Debug for HookRunnerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookRunnerConfig")
            .field("config_file", &self.config_file)
            .field("hooks_file", &self.hooks_file)
            .field("max_concurrent_scripts", &self.max_concurrent_scripts)
            .finish()
    }
}

/// The configuration in force, shared read-only with callers.
#[derive(Debug, Clone, Default)]
pub struct HookSnapshot {
    /// config.json `hooks`.
    pub rules: HookRules,
    /// hooks.json.
    pub scripts: ScriptHookSet,
    /// Why the last reload of either file failed (the previous good
    /// configuration stays in force).
    pub load_errors: Vec<String>,
}

/// A tool call the gateway is about to make.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// Tool name as the agent calls it.
    pub tool_name: String,
    /// The tool's input.
    pub input: Value,
    /// Session, if known (passed to script hooks as `session_id`).
    pub session_key: Option<String>,
    /// Who asks (`http`, `cli`, `mcp:<client>`), for the security log.
    pub actor: String,
}

/// The answer for a tool call.
#[derive(Debug, Clone, Serialize)]
pub struct ToolDecision {
    /// `allow`, `deny` or `ask` (`defer` when a script hook said so).
    pub decision: Permission,
    /// Why.
    pub reason: String,
    /// The config patterns and script commands that decided.
    pub matched: Vec<String>,
    /// A replacement input from a script hook (`updatedInput`), if any.
    pub updated_input: Option<Value>,
    /// Context script hooks added.
    pub context: Vec<String>,
    /// Each script hook run.
    pub scripts: Vec<ScriptReport>,
}

/// A message on its way to the agent.
#[derive(Debug, Clone)]
pub struct MessageEvent {
    /// The user's text.
    pub text: String,
    /// Session, if known.
    pub session_key: Option<String>,
    /// Who asks, for the security log.
    pub actor: String,
}

/// What happens to a message.
#[derive(Debug, Clone, Serialize)]
pub struct MessageDecision {
    /// Reply directly with this and skip the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_reply: Option<String>,
    /// A script hook rejected the message (exit 2, `decision: block`).
    pub blocked: bool,
    /// Why it was blocked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The message as the agent should see it.
    pub text: String,
    /// Context to inject with it.
    pub context: Vec<String>,
    /// Rules and scripts that fired.
    pub matched: Vec<String>,
    /// Each script hook run.
    pub scripts: Vec<ScriptReport>,
}

/// One script hook run, for callers and the hooks test endpoint.
#[derive(Debug, Clone, Serialize)]
pub struct ScriptReport {
    /// The command line.
    pub command: String,
    /// How it ended.
    pub outcome: ScriptOutcome,
    /// What it decided.
    pub verdict: HookVerdict,
}

/// A configured script hook, for listings.
#[derive(Debug, Clone, Serialize)]
pub struct ScriptHookInfo {
    /// Event.
    pub event: String,
    /// Index among that event's hooks (what `hooks test` takes).
    pub index: usize,
    /// Matcher as configured.
    pub matcher: String,
    /// Command line.
    pub command: String,
    /// Time limit in seconds.
    pub timeout_secs: f64,
}

/// Everything configured, for `GET /api/hooks` and `hooks list`.
#[derive(Debug, Clone, Serialize)]
pub struct HookListing {
    /// config.json `hooks`.
    pub rules: HookRules,
    /// hooks.json, parsed.
    pub scripts: Vec<ScriptHookInfo>,
    /// Skipped or adjusted entries of hooks.json.
    pub warnings: Vec<String>,
    /// Reload failures (the previous configuration stays in force).
    pub load_errors: Vec<String>,
}
