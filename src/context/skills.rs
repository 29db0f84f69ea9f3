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

/// The session-start skills section within `cap`. The full index
/// (`skills.lazy_load` off) is the spec's untruncated dump and is never
/// cut; a ranked top-K is cut at `cap` like any section. The receipt
/// marks included only what the text holds whole.
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
    if !loaded.index.is_empty() {
        parts.push(loaded.index.clone());
    }
    let joined = parts.join("\n\n");
    let text = if loaded.full_index {
        joined
    } else {
        cap_with_marker(&joined, cap, SKILLS_TRUNCATED)
    };
    let mut items: Vec<BlockItem> = loaded
        .always
        .iter()
        .map(|b| fate(&b.name, text.contains(&render_body(b))))
        .collect();
    items.extend(loaded.listed.iter().map(|n| {
        let shown = text.contains(&format!("- {n}:")) || text.contains(&format!("- {n} (dir:"));
        fate(n, shown)
    }));
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
    (text, items)
}

/// A skill's receipt item: included, or dropped by the cap.
fn fate(name: &str, shown: bool) -> BlockItem {
    if shown {
        included(name)
    } else {
        BlockItem::new(name, "skill", None).dropped(DropReason::Cap)
    }
}

/// A message's skills, as two receipt sections: the bodies (`skills`)
/// and the trigger pointers (`skill_hint`, spec: never folded into what
/// precedes it).
pub(crate) struct MessageSkillSections {
    /// The `$name` and triggered bodies, within the cap.
    pub(crate) bodies: (String, Vec<BlockItem>),
    /// The pointer block of `inject_on_trigger: false` matches.
    pub(crate) hint: (String, Vec<BlockItem>),
}

/// The per-message skills within `cap`: the bodies its `$name` tokens
/// ask for and its triggers inject (a skill named both ways once), then
/// the pointer block in what the bodies leave. Each delivered body —
/// whole in the text, not cut by the cap — earns one ledger hit.
pub(crate) async fn message_section(
    skills: &SkillLedgerHandle,
    message: &str,
    cap: usize,
) -> MessageSkillSections {
    let found = skills.message_skills(message).await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "message skills not resolved");
        Default::default()
    });
    let mut bodies = found.dollar;
    for b in found.triggered.bodies {
        if !bodies.iter().any(|x| x.name == b.name) {
            bodies.push(b);
        }
    }
    let rendered: Vec<String> = bodies.iter().map(render_body).collect();
    let text = if rendered.is_empty() {
        String::new()
    } else {
        cap_with_marker(&rendered.join("\n\n"), cap, SKILLS_TRUNCATED)
    };
    let delivered: Vec<String> = bodies
        .iter()
        .zip(&rendered)
        .filter(|(_, r)| text.contains(r.as_str()))
        .map(|(b, _)| b.name.clone())
        .collect();
    if !delivered.is_empty() {
        if let Err(e) = skills.record_use(&delivered).await {
            tracing::warn!(error = %e, "skill deliveries not recorded");
        }
    }
    let items = bodies
        .iter()
        .map(|b| fate(&b.name, delivered.contains(&b.name)))
        .collect();
    let hint_text = found.triggered.hint;
    let room = cap.saturating_sub(text.chars().count());
    let hint = if hint_text.is_empty() {
        (String::new(), Vec::new())
    } else {
        let shown = cap_with_marker(&hint_text, room, SKILLS_TRUNCATED);
        let items = found
            .triggered
            .pointers
            .iter()
            .map(|p| {
                let mut item = BlockItem::new(p.clone(), "skill_pointer", None);
                item.included = shown.contains(p.as_str());
                if !item.included {
                    item = item.dropped(DropReason::Cap);
                }
                item
            })
            .collect();
        (shown, items)
    };
    MessageSkillSections {
        bodies: (text, items),
        hint,
    }
}
