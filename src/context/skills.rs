//! Skills in the context (spec "Skills → Loading into context"): at
//! session start the always-on bodies and the skills index (the full index,
//! or pinned skills plus a usage-ranked top-K under `skills.lazy_load`) —
//! part of the conduct group, since an agent without the index cannot
//! discover what it can do; with every message the bodies its `$name`
//! tokens ask for and what its triggers match (bodies, or one pointer line
//! for `inject_on_trigger: false` skills). The usage ledger records the
//! deliveries (the skill ledger does that as it answers).

use kirocrew_actors::context_block::{BlockItem, DropReason};
use kirocrew_actors::skills::{SkillBody, SkillLedgerHandle};

use super::lessons::cap_with_marker;

/// Marker at the end of a cut skills section.
const SKILLS_TRUNCATED: &str = "…[skills truncated; use skill_search]";

fn render_body(b: &SkillBody) -> String {
    format!(
        "## Skill: {}\n(source: {})\n{}",
        b.name,
        b.path,
        b.body.trim()
    )
}

fn included(id: &str) -> BlockItem {
    let mut item = BlockItem::new(id, "skill", None);
    item.included = true;
    item
}

/// The session-start skills section within `cap`.
pub(crate) async fn session_section(
    skills: &SkillLedgerHandle,
    cap: usize,
) -> (String, Vec<BlockItem>) {
    let loaded = match skills.session_skills(cap).await {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "skills left out of the context");
            return (String::new(), Vec::new());
        }
    };
    let mut parts: Vec<String> = loaded.always.iter().map(render_body).collect();
    let mut items: Vec<BlockItem> = loaded.always.iter().map(|b| included(&b.name)).collect();
    if !loaded.index.is_empty() {
        parts.push(loaded.index.clone());
    }
    items.extend(loaded.listed.iter().map(|n| included(n)));
    if loaded.omitted > 0 {
        items.push(
            BlockItem::new(
                format!("{} more on-demand skills", loaded.omitted),
                "skill",
                None,
            )
            .dropped(DropReason::Cap),
        );
    }
    let text = cap_with_marker(&parts.join("\n\n"), cap, SKILLS_TRUNCATED);
    (text, items)
}

/// The per-message skills: `$name` bodies and trigger matches, within
/// `cap`.
pub(crate) async fn message_section(
    skills: &SkillLedgerHandle,
    message: &str,
    cap: usize,
) -> (String, Vec<BlockItem>) {
    let (dollar, triggered) =
        tokio::join!(skills.dollar_skills(message), skills.triggered(message));
    let mut bodies = dollar.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "$skill tokens not resolved");
        Vec::new()
    });
    let triggered = triggered.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "skill triggers not matched");
        Default::default()
    });
    for b in triggered.bodies {
        if !bodies.iter().any(|x| x.name == b.name) {
            bodies.push(b);
        }
    }
    let mut parts: Vec<String> = bodies.iter().map(render_body).collect();
    let mut items: Vec<BlockItem> = bodies.iter().map(|b| included(&b.name)).collect();
    if !triggered.hint.is_empty() {
        parts.push(triggered.hint.clone());
        items.extend(triggered.pointers.iter().map(|p| {
            let mut item = BlockItem::new(p.clone(), "skill_pointer", None);
            item.included = true;
            item
        }));
    }
    if parts.is_empty() {
        return (String::new(), items);
    }
    (
        cap_with_marker(&parts.join("\n\n"), cap, SKILLS_TRUNCATED),
        items,
    )
}
