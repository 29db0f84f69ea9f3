//! `kirocrew install claude-code [--user | --project DIR] [--dry-run]` and
//! `kirocrew uninstall claude-code …`: wire kirocrew into Claude Code.
//!
//! Install merges the hook handlers into `settings.json` (user:
//! `~/.claude/settings.json`; project: `DIR/.claude/settings.json`) and
//! registers the MCP server (user: `~/.claude.json`; project:
//! `DIR/.mcp.json`), keeping every existing entry (the merge itself is
//! [`crate::claude_code::settings_merge`]). Each file is backed up before
//! it is first changed, written atomically, and what was added is recorded
//! in the data home, so uninstall removes exactly that. `--dry-run` prints
//! the unified diff and writes nothing. A file that is not valid JSON is
//! never touched: the command names it and exits 1.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::claude_code::settings_merge::{
    add_hooks, add_mcp_server, mcp_server, remove_hooks, remove_mcp_server,
};
use crate::home::DataHome;

/// `kirocrew install …` / `kirocrew uninstall …`.
#[derive(Debug, clap::Subcommand)]
pub enum IntegrationCommand {
    /// Claude Code: hooks in settings.json and the MCP server.
    ClaudeCode(ScopeArgs),
}

/// Where to install.
#[derive(Debug, clap::Args)]
pub struct ScopeArgs {
    /// The user's settings (~/.claude/settings.json, ~/.claude.json); the
    /// default.
    #[arg(long, conflicts_with = "project")]
    pub user: bool,
    /// One project's settings (DIR/.claude/settings.json, DIR/.mcp.json).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Print the changes as a diff; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// The two files of a scope.
#[derive(Debug, Clone)]
pub(crate) struct Targets {
    pub(crate) settings: PathBuf,
    pub(crate) mcp: PathBuf,
}

impl Targets {
    fn of(args: &ScopeArgs) -> anyhow::Result<Self> {
        match &args.project {
            Some(dir) => {
                if !dir.is_dir() {
                    bail!("project directory {} does not exist", dir.display());
                }
                Ok(Self {
                    settings: dir.join(".claude").join("settings.json"),
                    mcp: dir.join(".mcp.json"),
                })
            }
            None => {
                let home = dirs::home_dir().context("cannot find the home directory")?;
                Ok(Self {
                    settings: home.join(".claude").join("settings.json"),
                    mcp: home.join(".claude.json"),
                })
            }
        }
    }
}

/// What install added to one scope (kept in the data home).
#[derive(Debug, Serialize, Deserialize)]
struct InstallRecord {
    settings: PathBuf,
    hook_command: String,
    mcp: PathBuf,
    mcp_entry: Option<Value>,
}

fn record_path(home: &DataHome, settings: &Path) -> PathBuf {
    let id = blake3::hash(settings.to_string_lossy().as_bytes()).to_hex();
    home.root()
        .join(format!("claude-code-install-{}.json", &id[..16]))
}

/// The kirocrew invocation Claude Code runs: this executable, this data
/// home, quoted for a shell.
fn invocation(home: &DataHome, tail: &[&str]) -> anyhow::Result<(String, Vec<String>)> {
    let exe = std::env::current_exe().context("cannot find the kirocrew executable")?;
    let exe = exe.to_string_lossy().into_owned();
    let mut args = vec![
        "--home".to_owned(),
        home.root().to_string_lossy().into_owned(),
    ];
    args.extend(tail.iter().map(|s| (*s).to_owned()));
    Ok((exe, args))
}

fn shell_line(exe: &str, args: &[String]) -> anyhow::Result<String> {
    shlex::try_join(std::iter::once(exe).chain(args.iter().map(String::as_str)))
        .context("the kirocrew path cannot be quoted for a shell")
}

/// Reads a JSON document; a missing file is an empty object.
fn read_doc(path: &Path) -> anyhow::Result<(Option<String>, Value)> {
    match fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok((Some(text), Value::Object(Default::default()))),
        Ok(text) => {
            let doc = serde_json::from_str(&text).with_context(|| {
                format!(
                    "{} is not valid JSON; it was left untouched",
                    path.display()
                )
            })?;
            Ok((Some(text), doc))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok((None, Value::Object(Default::default())))
        }
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

fn render(doc: &Value) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(doc)? + "\n")
}

/// Writes `new` over `path` (backup of the old bytes first, atomic
/// replace, the old file's permissions kept), or prints the diff.
fn apply(
    path: &Path,
    old: Option<&str>,
    new: &str,
    dry_run: bool,
    out: &mut impl Write,
) -> anyhow::Result<bool> {
    if old == Some(new) {
        return Ok(false);
    }
    if dry_run {
        let diff = similar::TextDiff::from_lines(old.unwrap_or(""), new);
        let name = path.display().to_string();
        write!(out, "{}", diff.unified_diff().header(&name, &name))?;
        return Ok(true);
    }
    let dir = path.parent().context("a settings file has a directory")?;
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    if let Some(old) = old {
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S");
        let backup = path.with_file_name(format!(
            "{}.kirocrew-backup-{stamp}",
            path.file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default()
        ));
        fs::write(&backup, old).with_context(|| format!("writing backup {}", backup.display()))?;
        writeln!(out, "backup: {}", backup.display())?;
    }
    // The file keeps its mode (a user's settings.json may be shared).
    kirocrew_actors::atomic_file::replace_atomic(path, new.as_bytes())
        .with_context(|| format!("replacing {} (in {})", path.display(), dir.display()))?;
    writeln!(out, "updated: {}", path.display())?;
    Ok(true)
}

/// `install claude-code`.
pub(crate) fn install(
    home: &DataHome,
    args: &ScopeArgs,
    out: &mut impl Write,
) -> anyhow::Result<ExitCode> {
    let targets = Targets::of(args)?;
    let (exe, hook_args) = invocation(home, &["hook", "claude-code"])?;
    let hook_command = shell_line(&exe, &hook_args)?;
    let (_, mcp_args) = invocation(home, &["mcp"])?;
    let entry = mcp_server(&exe, &mcp_args);
    // Read and merge both before writing either: a broken file stops the
    // install with nothing changed.
    let (settings_old, mut settings) = read_doc(&targets.settings)?;
    let (mcp_old, mut mcp) = read_doc(&targets.mcp)?;
    let added = add_hooks(&mut settings, &hook_command)
        .with_context(|| format!("in {}", targets.settings.display()))?;
    let mcp_added = add_mcp_server(&mut mcp, &entry)
        .with_context(|| format!("in {}", targets.mcp.display()))?;
    let settings_new = render(&settings)?;
    let mcp_new = render(&mcp)?;
    // Nothing added: the file is left as it is, formatting included.
    let mut changed = !added.is_empty()
        && apply(
            &targets.settings,
            settings_old.as_deref(),
            &settings_new,
            args.dry_run,
            out,
        )?;
    if mcp_added {
        changed |= apply(
            &targets.mcp,
            mcp_old.as_deref(),
            &mcp_new,
            args.dry_run,
            out,
        )?;
    }
    if !args.dry_run {
        home.ensure()?;
        let record = InstallRecord {
            settings: targets.settings.clone(),
            hook_command,
            mcp: targets.mcp.clone(),
            mcp_entry: Some(entry),
        };
        fs::write(
            record_path(home, &targets.settings),
            serde_json::to_vec_pretty(&record)?,
        )?;
    }
    if !changed {
        writeln!(
            out,
            "kirocrew is already installed in {}",
            targets.settings.display()
        )?;
    } else if !args.dry_run {
        writeln!(
            out,
            "installed: hooks for {} in {}; MCP server \"kirocrew\" in {}",
            if added.is_empty() {
                "no new events".to_owned()
            } else {
                added.join(", ")
            },
            targets.settings.display(),
            targets.mcp.display()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `uninstall claude-code`.
pub(crate) fn uninstall(
    home: &DataHome,
    args: &ScopeArgs,
    out: &mut impl Write,
) -> anyhow::Result<ExitCode> {
    let targets = Targets::of(args)?;
    let record_file = record_path(home, &targets.settings);
    let record: Option<InstallRecord> = fs::read(&record_file)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    let (hook_command, entry) = match &record {
        Some(r) => (r.hook_command.clone(), r.mcp_entry.clone()),
        None => {
            let (exe, hook_args) = invocation(home, &["hook", "claude-code"])?;
            let (_, mcp_args) = invocation(home, &["mcp"])?;
            (
                shell_line(&exe, &hook_args)?,
                Some(mcp_server(&exe, &mcp_args)),
            )
        }
    };
    let (settings_old, mut settings) = read_doc(&targets.settings)?;
    let (mcp_old, mut mcp) = read_doc(&targets.mcp)?;
    let removed = remove_hooks(&mut settings, &hook_command);
    let mcp_removed = entry
        .as_ref()
        .is_some_and(|e| remove_mcp_server(&mut mcp, e));
    if removed > 0 {
        apply(
            &targets.settings,
            settings_old.as_deref(),
            &render(&settings)?,
            args.dry_run,
            out,
        )?;
    }
    if mcp_removed {
        apply(
            &targets.mcp,
            mcp_old.as_deref(),
            &render(&mcp)?,
            args.dry_run,
            out,
        )?;
    }
    if !args.dry_run {
        let _ = fs::remove_file(&record_file);
    }
    if removed == 0 && !mcp_removed {
        writeln!(
            out,
            "kirocrew was not installed in {}",
            targets.settings.display()
        )?;
    } else if !args.dry_run {
        writeln!(
            out,
            "uninstalled: {removed} hook handler(s){}",
            if mcp_removed {
                " and the MCP server"
            } else {
                ""
            }
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
