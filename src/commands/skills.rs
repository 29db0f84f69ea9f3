//! `kirocrew skills …`: list, show, search, budget, new, edit, remove on
//! the data home's skills, through the same actor as the daemon (its
//! catalog is rediscovered, its ledger read; a one-shot command records no
//! hits, so it never rewrites the daemon's skill-usage.json).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;

use super::skills_commands as cmd;
use super::CommandError;
use crate::home::DataHome;
use kirocrew_actors::clock::system_clock;
use kirocrew_actors::security_log::SecurityLogHandle;
use kirocrew_actors::sensitive_paths::SafeReader;
use kirocrew_actors::skills::{SkillEdit, SkillLedgerHandle};

/// `kirocrew skills …`
#[derive(Debug, Subcommand)]
pub enum SkillsCommand {
    /// List every skill (name, source, size, deliveries, flags, description).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one skill's fields and SKILL.md.
    Show {
        /// The skill (its path under skills/, e.g. utils/tiny-url).
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Search names, descriptions and triggers (bodies when nothing matches).
    Search {
        /// Words to look for.
        query: String,
        /// At most N hits.
        #[arg(long, default_value_t = 10)]
        limit: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// What each skill cost in the last 30 days (size × deliveries).
    Budget {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Create a skill (lowercase, hyphens, slashes) from a template or a file.
    New {
        /// The name.
        name: String,
        /// The description for the template.
        #[arg(long)]
        description: Option<String>,
        /// Use this file as SKILL.md instead of the template.
        #[arg(long, value_name = "FILE")]
        from: Option<PathBuf>,
    },
    /// Change a skill: flags edit the frontmatter (other keys are kept byte
    /// for byte); with no flags on a terminal, $EDITOR opens SKILL.md.
    Edit {
        /// The skill.
        name: String,
        /// New `name:` (empty removes it).
        #[arg(long = "set-name", value_name = "NAME")]
        set_name: Option<String>,
        /// New `description:`.
        #[arg(long)]
        description: Option<String>,
        /// Pin (true) or unpin (false).
        #[arg(long)]
        always: Option<bool>,
        /// Replace the triggers (repeat; `!word` excludes).
        #[arg(long = "trigger", value_name = "WORDS")]
        triggers: Vec<String>,
        /// Remove every trigger.
        #[arg(long, conflicts_with = "triggers")]
        clear_triggers: bool,
        /// Inject the body on a trigger match (true) or only a pointer (false).
        #[arg(long)]
        inject_on_trigger: Option<bool>,
        /// Replace the body (the Markdown after the frontmatter) with this file.
        #[arg(long, value_name = "FILE")]
        body_from: Option<PathBuf>,
    },
    /// Remove a skill's directory.
    Remove {
        /// The skill.
        name: String,
    },
}

/// Runs a skills command on its own actix system.
pub(crate) fn run(home: DataHome, command: SkillsCommand) -> anyhow::Result<ExitCode> {
    let loaded = crate::app::builders::load_config(&home)?;
    crate::telemetry::init(false, "warn");
    home.ensure()?;
    let settings = loaded.settings;
    actix_rt::System::new().block_on(async move {
        let log =
            SecurityLogHandle::start(crate::app::builders::security_log_config(&home, &settings));
        // memory.db holds a skill the screen flags, for review.
        let store = crate::app::builders::open_store(&home, &settings)
            .await
            .with_context(|| format!("opening {}", home.memory_db().display()))?;
        store.attach_security_log(log.clone()).await?;
        let skills = crate::skills_wiring::start_skills(
            &home,
            &settings,
            system_clock(),
            Some(log.clone()),
            &store,
        )
        .await?;
        let interactive = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
        let reader = SafeReader::new(home.sensitive_paths(), log.clone(), "cli");
        let mut out = std::io::stdout().lock();
        let result = execute(&skills, &reader, command, interactive, &mut out).await;
        let _ = skills.close().await;
        let _ = store.close().await;
        // Waits for the audit events the command queued.
        let _ = log.recent(1, None).await;
        Ok(result?)
    })
}

/// Runs a skills command, writing to `out`. `interactive`: whether an
/// `edit` without flags may open `$EDITOR` (the CLI on a terminal; never
/// the operator console). Files named by `--from` and `--body-from` are
/// read through `reader` (the sensitive-path policy; a refusal is a
/// `read_denied` event).
pub(crate) async fn execute(
    skills: &SkillLedgerHandle,
    reader: &SafeReader,
    command: SkillsCommand,
    interactive: bool,
    out: &mut impl std::io::Write,
) -> super::CommandResult {
    match command {
        SkillsCommand::List { json } => cmd::list(skills, json, out).await,
        SkillsCommand::Show { name, json } => cmd::show(skills, &name, json, out).await,
        SkillsCommand::Search { query, limit, json } => {
            cmd::search(skills, &query, limit, json, out).await
        }
        SkillsCommand::Budget { json } => cmd::budget(skills, json, out).await,
        SkillsCommand::New {
            name,
            description,
            from,
        } => {
            let content = match from {
                Some(path) => Some(reader.safe_read_to_string(&path).await?),
                None => None,
            };
            cmd::new(skills, &name, description.as_deref(), content, out).await
        }
        SkillsCommand::Edit {
            name,
            set_name,
            description,
            always,
            triggers,
            clear_triggers,
            inject_on_trigger,
            body_from,
        } => {
            let body = match body_from {
                Some(path) => Some(reader.safe_read_to_string(&path).await?),
                None => None,
            };
            let edit = SkillEdit {
                name: set_name,
                description,
                always,
                triggers: if clear_triggers {
                    Some(Vec::new())
                } else {
                    (!triggers.is_empty()).then_some(triggers)
                },
                inject_on_trigger: None,
                body,
            };
            let editor = std::env::var("VISUAL")
                .or_else(|_| std::env::var("EDITOR"))
                .ok()
                .filter(|e| !e.trim().is_empty());
            let interactive =
                edit == SkillEdit::default() && inject_on_trigger.is_none() && interactive;
            match (interactive, editor) {
                (true, Some(editor)) => {
                    let scratch = tempfile::tempdir()
                        .map_err(CommandError::file("creating a scratch directory"))?;
                    cmd::edit_in_editor(skills, &name, &editor, scratch.path(), out).await
                }
                _ => cmd::edit(skills, &name, edit, inject_on_trigger, out).await,
            }
        }
        SkillsCommand::Remove { name } => cmd::remove(skills, &name, out).await,
    }
}
