//! One function per `kirocrew memory` subcommand, each writing its output
//! to `&mut impl Write`: the CLI passes standard output, the operator
//! console (`/api/console`) its websocket stream, so both print the same.
//!
//! Each goes through the store handle, so the rules (validation,
//! screening, ladder, audit) are the daemon's.

use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;

use super::{CommandError, CommandResult};
use kirocrew_actors::sensitive_paths::SafeReader;
use kirocrew_actors::vector_store::episodic::{EpisodicQuery, SearchMode};
use kirocrew_actors::vector_store::{
    SemanticEntry, SemanticWrite, VectorStoreError, VectorStoreHandle,
};

/// Largest export document `memory import` reads from a file (an export
/// of a large store is well past the guarded reader's default bound).
const MAX_IMPORT_BYTES: u64 = 256 * 1024 * 1024;

/// `memory list`: semantic entries, newest first.
pub(crate) async fn list(
    store: &VectorStoreHandle,
    prefix: Option<String>,
    limit: u32,
    json: bool,
    out: &mut impl Write,
) -> CommandResult {
    let entries = store.list_semantic(prefix, limit).await?;
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&entries)?)?;
    } else {
        print_entries(out, entries.iter().map(|e| (e, None)))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `memory search --episodic`: ranked fragments with their score parts, or
/// the `[Episodic Memory]` block within `context` characters.
pub(crate) async fn search_episodic(
    store: &VectorStoreHandle,
    query: &str,
    mode: SearchMode,
    limit: usize,
    json: bool,
    context: Option<usize>,
    out: &mut impl Write,
) -> CommandResult {
    if let Some(cap) = context {
        writeln!(out, "{}", store.episodic_context(query, cap).await?.block)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut q = EpisodicQuery::new(query, limit);
    q.mode = mode;
    let hits = store.search_episodic(q).await?;
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&hits)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    for h in hits {
        let cosine = h.cosine.map_or("-".to_owned(), |c| format!("{c:.3}"));
        writeln!(
            out,
            "#{:<6} score {:.3}  cosine {cosine}  decay {:.3}  {}  {}",
            h.entry.id,
            h.score,
            h.decay,
            h.entry.created_at.get(..10).unwrap_or(&h.entry.created_at),
            h.entry.text.replace('\n', " ")
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `memory search`: semantic entries by relevance, or the `[Semantic
/// Memory]` block within `context` characters.
pub(crate) async fn search_semantic(
    store: &VectorStoreHandle,
    query: &str,
    limit: usize,
    json: bool,
    context: Option<usize>,
    out: &mut impl Write,
) -> CommandResult {
    if let Some(cap) = context {
        writeln!(out, "{}", store.semantic_context(query, cap).await?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let found = store.search_semantic(query, limit).await?;
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&found)?)?;
    } else {
        print_entries(out, found.iter().map(|s| (&s.entry, Some(s.score))))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `memory stats`: counts and sizes as JSON.
pub(crate) async fn stats(store: &VectorStoreHandle, out: &mut impl Write) -> CommandResult {
    writeln!(
        out,
        "{}",
        serde_json::to_string_pretty(&store.stats().await?)?
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `memory audit`: the audit trail, newest first.
pub(crate) async fn audit(
    store: &VectorStoreHandle,
    limit: u32,
    json: bool,
    out: &mut impl Write,
) -> CommandResult {
    let events = store.list_events(limit).await?;
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&events)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    for e in events {
        writeln!(
            out,
            "{}  {:<17} {:<9} {:<32} {} -> {}  ({})",
            e.ts,
            e.event_type,
            e.memory_type,
            e.key,
            e.old_value.as_deref().unwrap_or("-"),
            e.new_value.as_deref().unwrap_or("-"),
            e.source
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `memory export`: the export document to `output` (written atomically)
/// or to `out`.
pub(crate) async fn export(
    store: &VectorStoreHandle,
    output: Option<&Path>,
    out: &mut impl Write,
) -> CommandResult {
    let doc = serde_json::to_string_pretty(&store.export().await?)?;
    match output {
        Some(path) => {
            write_file_atomically(path, doc.as_bytes())?;
            eprintln!("exported to {}", path.display());
        }
        None => writeln!(out, "{doc}")?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `memory import`: restores an export document (`-` reads standard
/// input; a file is read through `reader`, the sensitive-path policy);
/// fails when any entry was rejected.
pub(crate) async fn import(
    store: &VectorStoreHandle,
    reader: &SafeReader,
    file: &Path,
    out: &mut impl Write,
) -> CommandResult {
    let text = read_input(reader, file).await?;
    // Syntax first (without building anything, so no depth limit), so a
    // file that is not JSON at all says so; entries are decoded by the store.
    serde_json::from_str::<&serde_json::value::RawValue>(&text)
        .map_err(|e| CommandError::Usage(format!("{} is not valid JSON: {e}", file.display())))?;
    let report = store.import_json(&text).await?;
    writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    if report.rejected > 0 {
        eprintln!("{} entries were rejected (see details)", report.rejected);
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// `memory set`: one write through the ordinary writer; `value` is JSON
/// when it parses as JSON, else a string.
pub(crate) async fn set(
    store: &VectorStoreHandle,
    key: String,
    value: String,
    confidence: Option<f64>,
    source: String,
    out: &mut impl Write,
) -> CommandResult {
    let value = serde_json::from_str(&value).unwrap_or(Value::String(value));
    let write =
        SemanticWrite::stated(key, value, confidence, Some(source)).map_err(|e| match e {
            // The CLI names its option.
            VectorStoreError::InvalidConfidence(why) => CommandError::Usage(format!("--{why}")),
            other => other.into(),
        })?;
    let (outcome, entry) = match store.write_semantic(write).await {
        Err(VectorStoreError::Quarantined { id, rule, .. }) => {
            return super::quarantine::report_held(out, id, rule);
        }
        written => written?,
    };
    writeln!(out, "{}: {}", serde_json::to_value(outcome)?, entry.key)?;
    Ok(ExitCode::SUCCESS)
}

/// `memory delete`: tombstones one entry.
pub(crate) async fn delete(
    store: &VectorStoreHandle,
    key: &str,
    out: &mut impl Write,
) -> CommandResult {
    store.delete_semantic(key, "cli").await?;
    writeln!(out, "deleted: {key}")?;
    Ok(ExitCode::SUCCESS)
}

fn print_entries<'a>(
    out: &mut impl Write,
    entries: impl Iterator<Item = (&'a SemanticEntry, Option<f64>)>,
) -> std::io::Result<()> {
    let mut any = false;
    for (entry, score) in entries {
        any = true;
        let score = score.map(|s| format!(" score={s:.3}")).unwrap_or_default();
        writeln!(
            out,
            "{}: {}  [{} {:.2} {}{}]",
            entry.key, entry.value, entry.source, entry.confidence, entry.updated_at, score
        )?;
    }
    if !any {
        writeln!(out, "(no entries)")?;
    }
    Ok(())
}

async fn read_input(reader: &SafeReader, path: &Path) -> Result<String, CommandError> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(CommandError::file("reading standard input"))?;
        Ok(text)
    } else {
        let reader = reader.clone().with_max_bytes(MAX_IMPORT_BYTES);
        Ok(reader.safe_read_to_string(path).await?)
    }
}

fn write_file_atomically(path: &std::path::Path, bytes: &[u8]) -> Result<(), CommandError> {
    // The folder is the user's choice: never created here.
    kirocrew_actors::atomic_file::replace_atomic(path, bytes)
        .map_err(CommandError::file(format!("writing {}", path.display())))
}
