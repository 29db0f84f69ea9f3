//! The skills subsystem's plain data: catalog rows, bodies and pointers
//! for the context builder, search hits, budget rows, tool events and the
//! toggle's outcome.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::frontmatter::SkillMeta;
use super::triggers::CompiledTriggers;

/// Where a skill comes from (first match of a name wins, in this order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillSource {
    /// `$KIROCREW_PROJECT_DIR/skills/`.
    Project,
    /// A bundled skill as copied into the data home.
    Bundled,
    /// The data home's own skills, and `skills.extra_paths`.
    Kirocrew,
}

/// One discovered skill.
#[derive(Debug, Clone)]
pub struct CatalogEntry {
    /// The key: the directory's path from its skills root.
    pub name: String,
    /// Its SKILL.md.
    pub path: PathBuf,
    /// The skill's directory (auxiliary files live there).
    pub dir: PathBuf,
    /// Where it was found.
    pub source: SkillSource,
    /// Under the data home's skills directory (path comparison only).
    pub owned: bool,
    /// SKILL.md's size, from the stat the frontmatter cache needs anyway.
    pub size_bytes: u64,
    /// SKILL.md's modification time (seconds since the epoch).
    pub modified_secs: Option<i64>,
    /// Whether the skill's directory or SKILL.md is a symbolic link.
    pub symlinked: bool,
    /// The parsed frontmatter.
    pub meta: Arc<SkillMeta>,
    /// The triggers, tokenized once.
    pub(crate) triggers: Arc<CompiledTriggers>,
}

#[cfg(test)]
impl CatalogEntry {
    /// An owned entry at `/s/<name>/SKILL.md` for unit tests.
    pub(crate) fn for_test(name: &str, meta: SkillMeta) -> Self {
        Self {
            name: name.into(),
            path: format!("/s/{name}/SKILL.md").into(),
            dir: format!("/s/{name}").into(),
            source: SkillSource::Kirocrew,
            owned: true,
            size_bytes: 1,
            modified_secs: None,
            symlinked: false,
            meta: Arc::new(meta),
            triggers: Arc::new(CompiledTriggers::default()),
        }
    }
}

/// A row of `GET /api/skills` and `kirocrew skills list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillInfo {
    /// The key (path from the skills root).
    pub name: String,
    /// `name:` as the frontmatter declares it.
    pub declared_name: Option<String>,
    /// `description:`.
    pub description: Option<String>,
    /// Where it comes from.
    pub source: SkillSource,
    /// Injected in full into every new session.
    pub always: bool,
    /// Trigger words and phrases (`!x` excludes).
    pub triggers: Vec<String>,
    /// False: a trigger match yields a pointer line, not the body.
    pub inject_on_trigger: bool,
    /// SKILL.md's size.
    pub size_bytes: u64,
    /// Deliveries in the ledger window; `None` when untracked (not 0).
    pub deliveries: Option<u64>,
    /// Under the directory kirocrew owns (the toggle's precondition).
    pub owned: bool,
    /// The skill's directory.
    pub dir: String,
    /// Its SKILL.md.
    pub path: String,
    /// Which reader produced the fields (`yaml`, `lenient`, `none`).
    pub parsed_with: super::frontmatter::ParseMode,
    /// Why the frontmatter is not clean, if it is not.
    pub error: Option<String>,
}

/// One skill with its whole SKILL.md text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillDetail {
    /// The listing row.
    #[serde(flatten)]
    pub info: SkillInfo,
    /// SKILL.md as stored.
    pub content: String,
}

/// A skill body for a prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillBody {
    /// The key.
    pub name: String,
    /// SKILL.md.
    pub path: String,
    /// The skill's directory.
    pub dir: String,
    /// The Markdown after the frontmatter.
    pub body: String,
}

/// What a new session gets (spec: "Loading").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionSkills {
    /// `always: true` skills, in full.
    pub always: Vec<SkillBody>,
    /// The `## Available Skills` index block ("" when empty).
    pub index: String,
    /// The on-demand skills the index lists, in its order.
    pub listed: Vec<String>,
    /// On-demand skills left out (lazy load: past the budget).
    pub omitted: usize,
    /// Whether the usage ledger ranked the index (false: recency only).
    pub ledger_ranked: bool,
    /// The full, unranked index (`skills.lazy_load` off): the spec's
    /// untruncated dump, never cut to the skills cap.
    pub full_index: bool,
}

/// What one message asks for and matches, nothing recorded yet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageSkills {
    /// The bodies its `$name` tokens name, in order.
    pub dollar: Vec<SkillBody>,
    /// Its trigger matches.
    pub triggered: TriggeredSkills,
}

/// What a message's triggers yield (spec: `split_triggered`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TriggeredSkills {
    /// Matched skills that inject their body (each earned a hit).
    pub bodies: Vec<SkillBody>,
    /// Matched `inject_on_trigger: false` skills: one line each.
    pub pointers: Vec<String>,
    /// The `[Relevant skills for this message]` block ("" without
    /// pointers).
    pub hint: String,
}

/// A `skill_search` hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchHit {
    /// The key.
    pub name: String,
    /// `description:`.
    pub description: Option<String>,
    /// SKILL.md.
    pub path: String,
    /// `metadata` (name, description, triggers) or `body`.
    pub matched_in: &'static str,
    /// Query words found.
    pub score: usize,
    /// A line of the body around the first match (body hits only).
    pub snippet: Option<String>,
}

/// `GET /api/skills/-/budget`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetReport {
    /// The ledger's window (30 days).
    pub window_days: i64,
    /// Sum of every row's `chars`.
    pub total_chars: u64,
    /// One row per live canonical skill.
    pub rows: Vec<BudgetRow>,
}

/// One skill's injection cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetRow {
    /// The canonical ledger key.
    pub key: String,
    /// The declared name, else the key.
    pub name: String,
    /// SKILL.md's size.
    pub size_bytes: u64,
    /// Hits of the key and its aliases; `None` when none is tracked.
    pub deliveries: Option<u64>,
    /// `size_bytes × (deliveries or 0)`.
    pub chars: u64,
    /// The skill's toggle.
    pub inject_on_trigger: bool,
    /// Pinned.
    pub always: bool,
    /// Under the owned directory.
    pub owned: bool,
    /// Where it comes from.
    pub source: SkillSource,
    /// Whole days since the last delivery; `None` when untracked.
    pub idle_days: Option<i64>,
    /// Alias keys (same real SKILL.md) whose hits were summed in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folded_from: Option<Vec<String>>,
}

/// A gateway tool-call event (`POST /api/skills/-/tool-events`). Other
/// fields an ACP tool call carries (title, locations, content) are
/// ignored, so the gateway can forward its events as they are.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ToolEvent {
    /// The call's id (dedupe key; the initial call and its updates share it).
    pub tool_call_id: String,
    /// The tool's name as the provider spells it.
    #[serde(default)]
    pub tool_name: String,
    /// The ACP tool kind, when known (`read`, `execute`, …).
    #[serde(default)]
    pub kind: Option<String>,
    /// The raw tool input.
    #[serde(default)]
    pub raw_input: Option<Value>,
    /// A shell command, when the gateway has it separately.
    #[serde(default)]
    pub command: Option<String>,
    /// `pending`, `in_progress`, `completed`, `failed`, … (absent: a
    /// first observation).
    #[serde(default)]
    pub status: Option<String>,
}

/// What one tool event did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ToolEventOutcome {
    /// The call's id.
    pub tool_call_id: String,
    /// Skills this call would deliver (phase one, so far).
    pub candidates: Vec<String>,
    /// Skills credited by this event (phase two, on `completed`).
    pub credited: Vec<String>,
    /// A repeated completion of an already credited call.
    pub duplicate: bool,
}

/// Why the toggle refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToggleRefusal {
    /// No such skill.
    NotFound,
    /// The file resolves outside the owned skills directory.
    NotOwned,
    /// The file has no (terminated) frontmatter block.
    NoFrontmatter,
}

/// The toggle's outcome (every one is a security event).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToggleOutcome {
    /// The skill.
    pub name: String,
    /// What was asked.
    pub inject: bool,
    /// Whether the file now says what was asked.
    pub ok: bool,
    /// Whether the file was rewritten (false: it already said so).
    pub changed: bool,
    /// Why not, when refused.
    pub refused: Option<ToggleRefusal>,
}
