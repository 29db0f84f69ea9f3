//! # The context builder (spec "Context Builder (context.py)")
//!
//! Packs memory, lessons, skills, history and hooks into the text a chat
//! gateway sends with a session's first prompt ([`build_session_context`])
//! and with every message ([`build_message`]). It is not an actor and owns
//! no state: it asks the owners ([`ContextSources`]) concurrently and packs
//! their answers under the per-section caps ([`caps`], scaled to the model's
//! window), the switchable groups ([`groups`]), and the global ceiling.
//!
//! Every build also returns a [`Receipt`]: per section the chars used
//! (adding up to the context length) and its cap, per candidate whether it
//! went in and, if not, why — so "why did the agent not know X" has an
//! answer.
//!
//! Files: `caps.rs` (fractions and window scaling), `compress.rs`
//! (thread-history summaries), `models.rs` (model →
//! window), `groups.rs` (switchable groups, `[CONTEXT SCOPE]`),
//! `conduct.rs` (rules, date, runtime, language, workspace), `history.rs`
//! (thread history, other tabs, recent sessions), `project.rs`,
//! `lessons.rs` (the overflow rule), `skills.rs` (index, always-on,
//! `$name` and triggered skills), `assemble.rs` (joining and the
//! ceiling), `supersede.rs` (cross-layer conflicts), `session.rs`,
//! `message.rs`, `receipt.rs`, `sources.rs`.

mod assemble;
pub mod caps;
mod compress;
mod conduct;
pub mod groups;
mod history;
mod lessons;
mod message;
pub mod models;
mod project;
mod receipt;
mod session;
mod skills;
mod sources;
mod supersede;

pub(crate) use compress::{summarise, summary_request};
pub use compress::{NoSummary, ThreadCompressor};
pub use conduct::{CRITICAL_RULES, OPTIONS_HINT};
pub use groups::{ContextGroups, GroupError};
pub use history::HistoryMessage;
pub use lessons::{LESSONS_OVERFLOW_HEADER, LESSONS_TRUNCATED};
pub use message::{build_message, BuiltMessage, MessageRequest};
pub use receipt::{EpisodicReceipt, Receipt, SectionReceipt, ThreadHistoryReceipt};
pub use session::{build_session_context, BuiltContext, SessionRequest};
pub use sources::{ContextSettings, ContextSources};
