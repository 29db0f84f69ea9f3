//! Cross-layer supersession (spec "Conflict resolution: which layer wins";
//! issue 13): after the owners have answered, a semantic fact a lesson
//! contradicts leaves the `[Semantic Memory]` block, and a Markdown line
//! of preferences.md / projects.md a semantic fact contradicts leaves its
//! section. The judging rules (same subject, other value) are the store's
//! (`kirocrew_actors::vector_store::{LessonIndex, Fact, LabelledLine}`);
//! this file only applies them to the rendered sections and records each
//! removal in the receipt as `superseded`, with the item that outranked it.
//!
//! Only what is *in* the prompt supersedes: a lesson or fact dropped by its
//! own cap removes nothing, so a correction is never missing while the
//! value it corrected stays (the corrected value goes with it or not at
//! all — it is the lower layer that yields).

use std::sync::{Arc, Mutex, PoisonError};

use kirocrew_actors::context_block::{BlockItem, DropReason};
use kirocrew_actors::vector_store::lessons::AGENT_LESSON_MARK;
use kirocrew_actors::vector_store::{Fact, LabelledLine, LessonIndex, SEMANTIC_HEADER};

use super::assemble::Parts;

/// The lessons section's rules as shown (its `- ` lines), indexed. A
/// lesson the agent taught itself supersedes nothing: it ranks below what
/// the user stated (issue 42: an agent's `learn_add "Use bun"` dropped the
/// user's `pref.package_manager: npm`).
fn lesson_rules(text: &str) -> LessonIndex {
    LessonIndex::new(
        text.lines()
            .filter_map(|l| l.strip_prefix("- "))
            .filter(|l| !l.ends_with(AGENT_LESSON_MARK)),
    )
}

/// The `key: value` lines of a rendered semantic block.
fn facts(text: &str) -> Vec<(&str, &str)> {
    if !text.starts_with(SEMANTIC_HEADER) {
        return Vec::new();
    }
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_once(": "))
        .collect()
}

/// What this pass judges with: the lessons indexed and the facts
/// stemmed (each with its shown line) — a pure function of the two
/// sections' text.
struct Prepared {
    lessons: LessonIndex,
    facts: Vec<(String, Fact)>,
}

/// The last build's [`Prepared`], by the blake3 of its inputs. From one
/// build to the next the lessons and the shown facts rarely change, and
/// stemming ~200 of each is most of this pass's cost (measured: ~3 ms of a
/// 14 ms session build at 200 lessons and 1,000 semantic rows).
static LAST: Mutex<Option<(blake3::Hash, Arc<Prepared>)>> = Mutex::new(None);

fn prepared(lessons: Option<&str>, semantic: &str) -> Arc<Prepared> {
    let mut h = blake3::Hasher::new();
    h.update(lessons.unwrap_or_default().as_bytes());
    h.update(&[u8::from(lessons.is_some())]);
    h.update(semantic.as_bytes());
    let key = h.finalize();
    let mut last = LAST.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((k, p)) = last.as_ref() {
        if *k == key {
            return Arc::clone(p);
        }
    }
    let p = Arc::new(Prepared {
        lessons: lessons.map(lesson_rules).unwrap_or_default(),
        facts: facts(semantic)
            .into_iter()
            .map(|(key, value)| (format!("{key}: {value}"), Fact::new(key, value)))
            .collect(),
    });
    *last = Some((key, Arc::clone(&p)));
    p
}

/// Applies both rules to the memory group's sections, given the lessons
/// section (`None` when the lessons group is withheld).
pub(crate) fn apply(memory: &mut Parts, lessons: Option<&str>) {
    // Without a semantic section no fact is shown: nothing supersedes.
    let Some((text, items)) = memory.section_mut("semantic") else {
        return;
    };
    let prepared = prepared(lessons, text);
    let mut kept_facts: Vec<&Fact> = Vec::new();
    let mut kept = vec![SEMANTIC_HEADER];
    for (line, fact) in &prepared.facts {
        match prepared.lessons.superseding(fact) {
            Some(rule) => mark(items, &fact.key, "semantic", &rule.text),
            None => {
                kept.push(line.as_str());
                kept_facts.push(fact);
            }
        }
    }
    if !text.is_empty() {
        // Only the header left → no empty header in the prompt.
        *text = if kept.len() > 1 {
            kept.join("\n")
        } else {
            String::new()
        };
    }
    for name in ["preferences", "projects"] {
        let Some((text, items)) = memory.section_mut(name) else {
            continue;
        };
        let mut removed = false;
        let kept: Vec<&str> = text
            .lines()
            .enumerate()
            .filter(|(i, line)| {
                // The first two lines are the heading and the citation.
                let by = (*i >= 2)
                    .then(|| LabelledLine::parse(line))
                    .flatten()
                    .and_then(|l| kept_facts.iter().find(|f| f.supersedes_line(&l)));
                if let Some(Fact { key, .. }) = by {
                    let mut item =
                        BlockItem::new(format!("{name}:{}", i - 1), "markdown_line", None)
                            .dropped(DropReason::Superseded);
                    item.superseded_by = Some(key.clone());
                    items.push(item);
                    removed = true;
                }
                by.is_none()
            })
            .map(|(_, l)| l)
            .collect();
        if removed {
            *text = kept.join("\n");
        }
    }
}

/// Marks the included item `id` of `kind` superseded by `by`.
fn mark(items: &mut [BlockItem], id: &str, kind: &str, by: &str) {
    if let Some(item) = items
        .iter_mut()
        .find(|i| i.id == id && i.kind == kind && i.included)
    {
        item.included = false;
        item.dropped = Some(DropReason::Superseded);
        item.superseded_by = Some(by.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn included(id: &str, kind: &'static str) -> BlockItem {
        let mut item = BlockItem::new(id, kind, None);
        item.included = true;
        item
    }

    fn memory(semantic: &str, preferences: &str) -> Parts {
        let mut parts = Parts::default();
        parts.push(
            "preferences",
            "memory",
            Some(4_000),
            preferences,
            Vec::new(),
        );
        let items = facts(semantic)
            .into_iter()
            .map(|(k, _)| included(k, "semantic"))
            .collect();
        parts.push("semantic", "memory", Some(10_000), semantic, items);
        parts
    }

    const LESSONS: &str = "[Learned corrections]\nALWAYS follow these. They override default behavior.\n- Use pnpm as the package manager — NOT: npm\n(1 of 1 lessons shown, 0 omitted.)";

    #[test]
    fn a_lesson_removes_the_fact_it_contradicts_and_the_fact_the_line() {
        let mut parts = memory(
            "[Semantic Memory]\npref.package_manager: npm\npref.editor: emacs",
            "## Preferences\n(source: preferences.md)\n- Editor: vim\n- Dark mode everywhere",
        );
        apply(&mut parts, Some(LESSONS));
        let (text, items) = parts.section_mut("semantic").unwrap();
        assert_eq!(text, "[Semantic Memory]\npref.editor: emacs");
        let npm = items
            .iter()
            .find(|i| i.id == "pref.package_manager")
            .unwrap();
        assert_eq!(npm.dropped, Some(DropReason::Superseded));
        assert!(npm
            .superseded_by
            .as_deref()
            .unwrap()
            .starts_with("Use pnpm"));
        let (text, items) = parts.section_mut("preferences").unwrap();
        assert_eq!(
            text,
            "## Preferences\n(source: preferences.md)\n- Dark mode everywhere"
        );
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].superseded_by.as_deref(), Some("pref.editor"));
        assert_eq!(items[0].id, "preferences:1", "line 1 of the file");
    }

    #[test]
    fn agreeing_layers_and_withheld_lessons_change_nothing() {
        let semantic = "[Semantic Memory]\npref.package_manager: pnpm\npref.editor: vim";
        let prefs = "## Preferences\n(source: preferences.md)\n- Editor: vim";
        let mut parts = memory(semantic, prefs);
        apply(&mut parts, Some(LESSONS));
        assert_eq!(parts.section_mut("semantic").unwrap().0, semantic);
        assert_eq!(parts.section_mut("preferences").unwrap().0, prefs);

        let semantic = "[Semantic Memory]\npref.package_manager: npm";
        let mut parts = memory(semantic, prefs);
        apply(&mut parts, None);
        assert_eq!(parts.section_mut("semantic").unwrap().0, semantic);
    }

    #[test]
    fn a_block_emptied_by_supersession_leaves_no_header() {
        let mut parts = memory("[Semantic Memory]\npref.package_manager: npm", "");
        apply(&mut parts, Some(LESSONS));
        assert_eq!(parts.section_mut("semantic").unwrap().0, "");
    }
}
