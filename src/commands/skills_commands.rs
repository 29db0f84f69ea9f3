//! One function per `kirocrew skills` subcommand, each writing to `&mut
//! impl Write` (the CLI passes standard output; the operator console will
//! pass its stream). All go through the skills actor's handle, so names are
//! sanitized, paths confined, writes atomic and toggles audited exactly as
//! over HTTP.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use super::{CommandError, CommandResult};

use kirocrew_actors::skills::store::template;
use kirocrew_actors::skills::{SkillEdit, SkillError, SkillInfo, SkillLedgerHandle};

/// Who the skills' security events name for these faces.
const WRITER: &str = "cli";

/// A write's outcome: printed `done` when written; a write held in the
/// quarantine is told with the command that releases it (exit 4).
fn report<T>(
    written: Result<T, SkillError>,
    out: &mut impl Write,
    done: impl FnOnce(T) -> String,
) -> CommandResult {
    match written {
        Ok(value) => {
            writeln!(out, "{}", done(value))?;
            Ok(ExitCode::SUCCESS)
        }
        Err(SkillError::Quarantined { id, rule, .. }) => {
            super::quarantine::report_held(out, id, rule)
        }
        Err(e) => Err(e.into()),
    }
}

fn print_json(out: &mut impl Write, value: &impl serde::Serialize) -> CommandResult {
    writeln!(out, "{}", serde_json::to_string_pretty(value)?)?;
    Ok(ExitCode::SUCCESS)
}

fn one_line(text: Option<&str>, max: usize) -> String {
    let flat = text
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    format!(
        "{}…",
        flat.chars().take(max.saturating_sub(1)).collect::<String>()
    )
}

fn flags(s: &SkillInfo) -> String {
    let mut f = Vec::new();
    if s.always {
        f.push("always");
    }
    if !s.inject_on_trigger {
        f.push("pointer-only");
    }
    if !s.owned {
        f.push("read-only");
    }
    if s.error.is_some() {
        f.push("frontmatter-error");
    }
    f.join(",")
}

/// `skills list`.
pub(crate) async fn list(
    skills: &SkillLedgerHandle,
    json: bool,
    out: &mut impl Write,
) -> CommandResult {
    let list = skills.list().await?;
    if json {
        return print_json(out, &list);
    }
    if list.is_empty() {
        writeln!(out, "(no skills in {})", skills.skills_dir().display())?;
    }
    for s in &list {
        let deliveries = s.deliveries.map_or("-".to_owned(), |d| d.to_string());
        writeln!(
            out,
            "{:<32} {:<8} {:>7}B {:>5}x {:<28} {}",
            s.name,
            serde_json::to_value(s.source)?.as_str().unwrap_or(""),
            s.size_bytes,
            deliveries,
            flags(s),
            one_line(s.description.as_deref(), 70)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `skills show NAME`.
pub(crate) async fn show(
    skills: &SkillLedgerHandle,
    name: &str,
    json: bool,
    out: &mut impl Write,
) -> CommandResult {
    let d = skills.get(name).await?;
    if json {
        return print_json(out, &d);
    }
    let i = &d.info;
    writeln!(out, "name:              {}", i.name)?;
    writeln!(
        out,
        "declared name:     {}",
        i.declared_name.as_deref().unwrap_or("-")
    )?;
    writeln!(
        out,
        "description:       {}",
        one_line(i.description.as_deref(), 400)
    )?;
    writeln!(
        out,
        "source:            {}",
        serde_json::to_value(i.source)?.as_str().unwrap_or("")
    )?;
    writeln!(out, "path:              {}", i.path)?;
    writeln!(out, "always:            {}", i.always)?;
    writeln!(out, "triggers:          {}", i.triggers.join(", "))?;
    writeln!(out, "inject_on_trigger: {}", i.inject_on_trigger)?;
    writeln!(out, "size:              {} bytes", i.size_bytes)?;
    writeln!(
        out,
        "deliveries:        {}",
        i.deliveries
            .map_or("untracked".to_owned(), |d| d.to_string())
    )?;
    writeln!(out, "owned:             {}", i.owned)?;
    if let Some(e) = &i.error {
        writeln!(out, "frontmatter error: {e}")?;
    }
    writeln!(out, "\n{}", d.content)?;
    Ok(ExitCode::SUCCESS)
}

/// `skills search QUERY`.
pub(crate) async fn search(
    skills: &SkillLedgerHandle,
    query: &str,
    limit: usize,
    json: bool,
    out: &mut impl Write,
) -> CommandResult {
    let hits = skills.search(query, limit).await?;
    if json {
        return print_json(out, &hits);
    }
    if hits.is_empty() {
        writeln!(out, "(no matches)")?;
    }
    for h in hits {
        writeln!(
            out,
            "{} [{}] {}",
            h.name,
            h.matched_in,
            one_line(h.description.as_deref(), 90)
        )?;
        if let Some(s) = h.snippet {
            writeln!(out, "    {s}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `skills budget`.
pub(crate) async fn budget(
    skills: &SkillLedgerHandle,
    json: bool,
    out: &mut impl Write,
) -> CommandResult {
    let b = skills.budget().await?;
    if json {
        return print_json(out, &b);
    }
    writeln!(
        out,
        "last {} days: {} characters delivered",
        b.window_days, b.total_chars
    )?;
    writeln!(
        out,
        "{:<32} {:>9} {:>10} {:>11} {:>5}  folded",
        "skill", "size", "deliveries", "chars", "idle"
    )?;
    for r in b.rows {
        writeln!(
            out,
            "{:<32} {:>9} {:>10} {:>11} {:>5}  {}",
            r.key,
            r.size_bytes,
            r.deliveries.map_or("-".to_owned(), |d| d.to_string()),
            r.chars,
            r.idle_days.map_or("-".to_owned(), |d| format!("{d}d")),
            r.folded_from.map(|f| f.join(",")).unwrap_or_default()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `skills new NAME`: from `content`, else a template.
pub(crate) async fn new(
    skills: &SkillLedgerHandle,
    name: &str,
    description: Option<&str>,
    content: Option<String>,
    out: &mut impl Write,
) -> CommandResult {
    let content = content.unwrap_or_else(|| template(name, description));
    let written = skills.create(name, &content, WRITER).await;
    report(written, out, |info| {
        format!("created {} ({})", info.name, info.path)
    })
}

/// `skills edit NAME` with flags: a structured edit (every other
/// frontmatter key kept byte for byte); `inject` goes through the audited
/// toggle.
pub(crate) async fn edit(
    skills: &SkillLedgerHandle,
    name: &str,
    edit: SkillEdit,
    inject: Option<bool>,
    out: &mut impl Write,
) -> CommandResult {
    let structured = edit != SkillEdit::default();
    if !structured && inject.is_none() {
        return Err(CommandError::Usage(
            "nothing to change: pass a flag (see --help), or run on a terminal with $EDITOR set"
                .into(),
        ));
    }
    if structured {
        let written = skills.edit(name, edit, WRITER).await;
        if matches!(written, Err(SkillError::Quarantined { .. })) {
            return report(written, out, |_| String::new());
        }
        written?;
    }
    if let Some(inject) = inject {
        let o = skills.set_inject_on_trigger(name, inject, "cli").await?;
        if let Some(why) = o.refused {
            return Err(CommandError::Failed(format!(
                "inject_on_trigger not changed: {}",
                serde_json::to_value(why)?.as_str().unwrap_or("refused")
            )));
        }
    }
    writeln!(out, "updated {name}")?;
    Ok(ExitCode::SUCCESS)
}

/// `skills edit NAME` on a terminal: opens SKILL.md in `editor` (a shell
/// command, `$EDITOR`) on a private copy and saves it back through the
/// writer if it changed.
pub(crate) async fn edit_in_editor(
    skills: &SkillLedgerHandle,
    name: &str,
    editor: &str,
    scratch: &Path,
    out: &mut impl Write,
) -> CommandResult {
    let before = skills.get(name).await?.content;
    let file = scratch.join("SKILL.md");
    std::fs::write(&file, &before)
        .map_err(CommandError::file(format!("writing {}", file.display())))?;
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("kirocrew-edit")
        .arg(&file)
        .status()
        .map_err(CommandError::file(format!("running the editor {editor:?}")))?;
    if !status.success() {
        return Err(CommandError::Failed(format!(
            "the editor exited with {status}; nothing saved"
        )));
    }
    let after = std::fs::read_to_string(&file)
        .map_err(CommandError::file(format!("reading {}", file.display())))?;
    if after == before {
        writeln!(out, "no changes")?;
        return Ok(ExitCode::SUCCESS);
    }
    let written = skills.update(name, &after, WRITER).await;
    report(written, out, |_| format!("updated {name}"))
}

/// `skills remove NAME`.
pub(crate) async fn remove(
    skills: &SkillLedgerHandle,
    name: &str,
    out: &mut impl Write,
) -> CommandResult {
    skills.delete(name).await?;
    writeln!(out, "removed {name}")?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kirocrew_actors::clock::system_clock;
    use kirocrew_actors::skills::SkillsConfig;

    fn start(home: &Path) -> SkillLedgerHandle {
        SkillLedgerHandle::start(SkillsConfig::new(home, system_clock()))
    }

    #[actix_rt::test]
    async fn editor_round_trip_and_listing_output() {
        let home = tempfile::tempdir().unwrap();
        let skills = start(home.path());
        let mut out = Vec::new();
        new(&skills, "ed", Some("old words"), None, &mut out)
            .await
            .unwrap();
        let scratch = tempfile::tempdir().unwrap();
        edit_in_editor(&skills, "ed", "sed -i s/old/new/", scratch.path(), &mut out)
            .await
            .unwrap();
        assert_eq!(
            skills.get("ed").await.unwrap().info.description.as_deref(),
            Some("new words")
        );
        edit_in_editor(&skills, "ed", "true", scratch.path(), &mut out)
            .await
            .unwrap();
        assert!(String::from_utf8_lossy(&out).contains("no changes"));
        assert!(
            edit_in_editor(&skills, "ed", "false", scratch.path(), &mut out)
                .await
                .is_err()
        );
        let mut listing = Vec::new();
        list(&skills, false, &mut listing).await.unwrap();
        let listing = String::from_utf8(listing).unwrap();
        assert!(listing.starts_with("ed "), "{listing}");
        assert!(listing.contains("new words"));
        skills.close().await.unwrap();
    }
}
