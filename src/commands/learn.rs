//! `kirocrew learn add|list|remove`: lessons from the command line, through
//! the same write path as `POST /api/lessons` (dedup ladder, screening,
//! audit). When memory.db cannot be opened, the commands fall back to
//! lessons.jsonl (spec: "JSONL fallback") and say so on stderr.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;

use super::{CommandError, CommandResult};
use crate::home::DataHome;
use kirocrew_actors::clock::{format_ts, system_clock};
use kirocrew_actors::lessons_file::LessonFile;
use kirocrew_actors::vector_store::lessons::{lesson_text, Lesson, LessonCategory, LessonWrite};
use kirocrew_actors::vector_store::VectorStoreHandle;

/// `kirocrew learn …`
#[derive(Debug, Subcommand)]
pub enum LearnCommand {
    /// Teach a lesson ("always do X").
    Add {
        /// The rule.
        rule: String,
        /// What not to do instead.
        #[arg(long = "not", value_name = "NEGATIVE")]
        negative: Option<String>,
        /// tool, preference or knowledge.
        #[arg(long, value_parser = parse_category, default_value = "knowledge")]
        category: LessonCategory,
    },
    /// List lessons, newest first.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove a lesson by key (see `learn list`).
    Remove {
        /// The lesson key, `lesson.<hash>`.
        key: String,
    },
}

fn parse_category(name: &str) -> Result<LessonCategory, String> {
    LessonCategory::parse(name)
        .ok_or_else(|| format!("{name:?} is not a category (tool, preference, knowledge)"))
}

/// Runs a learn command.
pub(crate) fn run(home: DataHome, cmd: LearnCommand) -> anyhow::Result<ExitCode> {
    let loaded = crate::app::builders::load_config(&home)?;
    crate::telemetry::init(false, "warn");
    home.ensure()?;
    let settings = loaded.settings;
    actix_rt::System::new().block_on(async move {
        let with_model = matches!(cmd, LearnCommand::Add { .. });
        let local = match crate::app::builders::open_local_store(&home, &settings, with_model).await
        {
            Ok(local) => local,
            Err(e) => {
                eprintln!(
                    "warning: memory.db is not available ({e}); using {}",
                    home.lessons_file().display()
                );
                let log = crate::app::builders::start_security_log(&home, &settings);
                let file = LessonFile::new(home.lessons_file()).with_security_log(log.clone());
                let result = run_on_file(&file, cmd);
                log.flush().await.context("writing the security log")?;
                return result;
            }
        };
        let store = local.store.clone();
        // A lesson the screen blocks is a security event, as in the daemon.
        let log = crate::app::builders::start_security_log(&home, &settings);
        store.attach_security_log(log.clone()).await?;
        let result = run_on_store(&store, cmd, &mut std::io::stdout().lock()).await;
        local.close().await?;
        log.flush().await.context("writing the security log")?;
        Ok(result?)
    })
}

fn print_lessons(lessons: &[Lesson], json: bool, out: &mut impl Write) -> Result<(), CommandError> {
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(lessons)?)?;
        return Ok(());
    }
    for l in lessons {
        let text = lesson_text(&l.rule, l.negative.as_deref());
        writeln!(out, "{}  [{}] {text}", l.key, l.category.as_str())?;
    }
    Ok(())
}

/// The lesson `learn add` writes: the user's, with its negative and
/// category (the store and lessons.jsonl take the same write).
fn user_lesson(rule: String, negative: Option<String>, category: LessonCategory) -> LessonWrite {
    LessonWrite::user(rule)
        .with_negative(negative)
        .with_category(category)
}

/// Runs a learn command on an open store, writing to `out` (standard
/// output for the CLI; the operator console passes its own).
pub(crate) async fn run_on_store(
    store: &VectorStoreHandle,
    cmd: LearnCommand,
    out: &mut impl Write,
) -> CommandResult {
    match cmd {
        LearnCommand::Add {
            rule,
            negative,
            category,
        } => {
            let write = user_lesson(rule, negative, category);
            let outcome = store.write_lesson(write).await?;
            writeln!(out, "{}", serde_json::to_string(&outcome)?)?;
        }
        LearnCommand::List { json } => print_lessons(&store.list_lessons().await?, json, out)?,
        LearnCommand::Remove { key } => {
            store.delete_lesson(&key, "user_explicit").await?;
            writeln!(out, "removed {key}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn run_on_file(file: &LessonFile, cmd: LearnCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        LearnCommand::Add {
            rule,
            negative,
            category,
        } => {
            let write = user_lesson(rule, negative, category);
            let outcome = file.add(&write, &format_ts(system_clock().now()))?;
            println!("{}", serde_json::to_string(&outcome)?);
        }
        LearnCommand::List { json } => {
            let lessons: Vec<Lesson> = file.load()?.iter().rev().map(|l| l.to_lesson()).collect();
            print_lessons(&lessons, json, &mut std::io::stdout().lock())?;
        }
        LearnCommand::Remove { key } => {
            file.remove(&key)?;
            println!("removed {key}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
