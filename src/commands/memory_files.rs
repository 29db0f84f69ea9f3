//! `kirocrew memory search --files` and `kirocrew memory migrate`.
//!
//! `search --files` opens memory_index.db through the same `MemoryFiles`
//! actor the daemon uses. While a daemon runs (daemon.json exists) it keeps
//! the index current and the command only reads it (an index that is
//! missing, empty or damaged is still built first); without a daemon the
//! index is rebuilt from the files before searching, so hand edits count.
//!
//! `migrate` runs the Markdown migration in the foreground (same rules as
//! the daemon's boot migration), sets `memory.migrated` and records the
//! `migration` audit event with source `cli`.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;

use crate::home::DataHome;
use crate::migration::MigrationService;
use kirocrew_actors::clock::system_clock;
use kirocrew_actors::memory_files::{MemoryFilesConfig, MemoryFilesHandle};
use kirocrew_actors::vector_store::VectorStoreHandle;

/// Searches the Markdown memory files and prints the hits.
pub(crate) fn search(
    home: &DataHome,
    query: &str,
    limit: u32,
    json: bool,
) -> anyhow::Result<ExitCode> {
    if !(1..=100).contains(&limit) {
        anyhow::bail!("--limit must be between 1 and 100 with --files");
    }
    home.ensure()?;
    let files = MemoryFilesConfig {
        memory_dir: home.memory_dir(),
        index_path: home.memory_index_db(),
        clock: system_clock(),
        // With no daemon running, files may have changed since the index
        // was last built: rebuild it. With one, leave its index alone.
        rebuild_on_start: !home.daemon_file().exists(),
    };
    actix_rt::System::new().block_on(async move {
        let files = MemoryFilesHandle::start(files);
        let found = files.search(query, limit).await;
        let _ = files.close().await;
        let hits = found?;
        let mut out = std::io::stdout().lock();
        if json {
            writeln!(out, "{}", serde_json::to_string_pretty(&hits)?)?;
        } else if hits.is_empty() {
            writeln!(out, "(no matches)")?;
        } else {
            for hit in hits {
                let section = if hit.section.is_empty() {
                    String::new()
                } else {
                    format!(" § {}", hit.section)
                };
                writeln!(out, "{}{section}", hit.file)?;
                writeln!(out, "    {}", hit.snippet.replace('\n', " "))?;
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// Runs the migration into `store` and prints its report.
pub(crate) async fn migrate(
    home: &DataHome,
    store: &VectorStoreHandle,
    json: bool,
) -> anyhow::Result<ExitCode> {
    // A by-hand run migrates whatever the flag says.
    let service = MigrationService::new(home.clone(), store.clone(), false);
    let present = service.legacy_present();
    let report = service.run("cli").await.context("migration failed")?;
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if !present {
        writeln!(out, "no legacy memory found; memory.migrated is now true")?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{:<16} {:>8} {:>8} {:>8}",
        "", "migrated", "skipped", "rejected"
    )?;
    for (name, c) in [
        ("preferences", report.preferences),
        ("projects", report.projects),
        ("project details", report.project_details),
        ("history", report.history),
        ("lessons", report.lessons),
    ] {
        writeln!(
            out,
            "{name:<16} {:>8} {:>8} {:>8}",
            c.migrated, c.skipped, c.rejected
        )?;
    }
    for message in &report.messages {
        eprintln!("note: {message}");
    }
    Ok(ExitCode::SUCCESS)
}
