//! `kirocrew memory quarantine list|release|drop` (issue 41), for the CLI
//! and the operator console alike: the writes the screen held for review.
//! Both faces are people's, so both may release and drop; the agent's
//! surfaces (MCP, hooks) have no such command.

use std::io::Write;
use std::process::ExitCode;

use clap::Subcommand;

use super::CommandResult;
use kirocrew_actors::vector_store::{QuarantineItem, VectorStoreHandle};

/// Who the audit trail names for a release or drop from these faces.
const REVIEWER: &str = "cli";

/// The exit status of a write the screen held for review (`memory set`,
/// `skills new|edit`).
pub(crate) const QUARANTINED_EXIT: u8 = 4;

/// Tells that a write was held as item `id` (by `rule`) and how to release
/// it; answers exit 4.
pub(crate) fn report_held(out: &mut impl Write, id: i64, rule: &str) -> CommandResult {
    writeln!(
        out,
        "quarantined: held for review as item {id} (rule {rule}); \
         `kirocrew memory quarantine release {id}` stores it"
    )?;
    Ok(ExitCode::from(QUARANTINED_EXIT))
}

/// Characters of an item's text shown in the list.
const PREVIEW_CHARS: usize = 160;

/// `kirocrew memory quarantine …`
#[derive(Debug, Subcommand)]
pub enum QuarantineCommand {
    /// List held writes, newest first.
    List {
        /// At most N items.
        #[arg(long, default_value_t = 100)]
        limit: u32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Store a held write after all (its writer's rules still apply).
    Release {
        /// The item id (from `list`).
        id: i64,
    },
    /// Delete a held write for good.
    Drop {
        /// The item id (from `list`).
        id: i64,
    },
}

/// Runs one quarantine command against an open store.
pub(crate) async fn execute(
    store: &VectorStoreHandle,
    cmd: QuarantineCommand,
    out: &mut impl Write,
) -> CommandResult {
    match cmd {
        QuarantineCommand::List { limit, json } => {
            let (items, total) = store.list_quarantine(limit).await?;
            if json {
                let doc = serde_json::json!({ "items": items, "total": total });
                writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
            } else if items.is_empty() {
                writeln!(out, "(quarantine empty)")?;
            } else {
                for item in &items {
                    print_item(out, item)?;
                }
                writeln!(out, "{} of {total} held", items.len())?;
            }
        }
        QuarantineCommand::Release { id } => {
            let released = store.release_quarantined(id, REVIEWER).await?;
            let what = match (released.layer.as_str(), &released.key, released.episode_id) {
                ("skill", Some(name), _) => format!("skill {name}"),
                (_, Some(key), _) => format!("semantic {key}"),
                (_, None, Some(episode)) => format!("episodic fragment {episode}"),
                (layer, None, None) => layer.to_owned(),
            };
            writeln!(out, "released: item {id} stored as {what}")?;
        }
        QuarantineCommand::Drop { id } => {
            store.drop_quarantined(id, REVIEWER).await?;
            writeln!(out, "dropped: item {id}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_item(out: &mut impl Write, item: &QuarantineItem) -> std::io::Result<()> {
    let mut text: String = item.text.chars().take(PREVIEW_CHARS).collect();
    if item.text.chars().count() > PREVIEW_CHARS {
        text.push('…');
    }
    let text = text.replace('\n', " ");
    let key = item
        .key
        .as_deref()
        .map(|k| format!(" {k}"))
        .unwrap_or_default();
    writeln!(
        out,
        "#{} {}{key} [{}] {} from {}: {text}",
        item.id, item.layer, item.rule, item.created_at, item.source
    )
}
