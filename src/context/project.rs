//! The `project` group (spec "Switchable context groups"): the `[PROJECT]`
//! directory line, the `[DOCUMENTATION]` pointer, and steering resources
//! (`<project>/.kiro/steering/*.md`, sent only to the Claude Code backend:
//! kiro-cli loads an agent's own resources natively). Steering files are
//! read through the guarded reader, so a link to a sensitive file is
//! refused and recorded, never sent.

use std::path::Path;

use kirocrew_actors::context_block::{BlockItem, DropReason};
use kirocrew_actors::sensitive_paths::SafeReader;

/// Marker at the end of cut steering.
pub(super) const STEERING_TRUNCATED: &str = "…[steering truncated]";

/// Most steering files read.
const MAX_STEERING_FILES: usize = 50;

/// `[PROJECT]` and `[DOCUMENTATION]` for `dir`.
pub(crate) fn project_lines(dir: &Path) -> String {
    let mut s = format!("[PROJECT]\ndirectory: {}", dir.display());
    for name in ["README.md", "AGENTS.md", "docs"] {
        let p = dir.join(name);
        if p.exists() {
            s.push_str(&format!(
                "\n\n[DOCUMENTATION]\nProject documentation starts at {}; read it before changing the project.",
                p.display()
            ));
            break;
        }
    }
    s
}

/// The steering block within `cap` chars, and one item per file.
pub(crate) async fn steering(
    dir: &Path,
    reader: &SafeReader,
    cap: usize,
) -> (String, Vec<BlockItem>) {
    let steering_dir = dir.join(".kiro").join("steering");
    let Ok(entries) = std::fs::read_dir(&steering_dir) else {
        return (String::new(), Vec::new());
    };
    let mut files: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    files.truncate(MAX_STEERING_FILES);
    let mut body = String::from("[STEERING]");
    let mut items = Vec::new();
    let mut full = true;
    for path in files {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let item = BlockItem::new(name.clone(), "steering", None);
        match reader.safe_read_to_string(&path).await {
            Ok(text) if full => {
                let part = format!("\n\n## {name}\n{}", text.trim());
                let room = cap.saturating_sub(body.chars().count() + STEERING_TRUNCATED.len() + 1);
                let mut item = item;
                if part.chars().count() <= room {
                    body.push_str(&part);
                    item.included = true;
                } else {
                    let kept: String = part.chars().take(room).collect();
                    body.push_str(&kept);
                    body.push('\n');
                    body.push_str(STEERING_TRUNCATED);
                    item.included = !kept.trim().is_empty();
                    if !item.included {
                        item = item.dropped(DropReason::Cap);
                    }
                    full = false;
                }
                items.push(item);
            }
            Ok(_) => items.push(item.dropped(DropReason::Cap)),
            Err(e) => {
                tracing::warn!(file = %path.display(), error = %e, "steering file not read");
            }
        }
    }
    if items.iter().all(|i| !i.included) {
        return (String::new(), items);
    }
    (body, items)
}
