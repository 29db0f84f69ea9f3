//! The consolidation prompts (spec: "Consolidation", "Lesson Extraction
//! from Chat"). The caps are written into the instructions, so the model
//! is told the same numbers the consolidator enforces; each prompt ends
//! with a short example answer of its path's schema (a small model follows
//! an example far better than a description; shared/models/README.md).
//!
//! The transcript is rendered newest-last and cut to a character budget
//! from the oldest end, so a long session still fits the model's context.

use super::schema::{ConsolidationPath, MAX_EPISODIC, MAX_LESSONS, MAX_SEMANTIC};
use crate::transcripts::{Role, Turn};

/// Longest single turn kept in the transcript, in characters.
const MAX_TURN_CHARS: usize = 1_500;

/// The system message for `path`.
pub fn system_prompt(path: ConsolidationPath, markdown_updates: bool) -> String {
    match path {
        ConsolidationPath::Prefs => prefs_prompt(markdown_updates),
        ConsolidationPath::History => history_prompt(),
    }
}

fn prefs_prompt(markdown_updates: bool) -> String {
    let mut out = format!(
        "You maintain a user's long-term memory. Read the conversation and answer with one JSON object.\n\
         \"semantic\": durable facts about the user and their projects, at most {MAX_SEMANTIC} entries. \
         Each has a \"key\" starting with pref. (preferences), project. (projects) or user. (facts about the user), \
         lower case words joined by underscores (e.g. pref.editor, project.main_language), a short \"value\", \
         and a \"confidence\" from 0 to 1 (0.8 or more only when the user clearly said it). \
         Only what the user stated; nothing the assistant guessed. An empty list is fine.\n"
    );
    if markdown_updates {
        out.push_str(
            "\"preferences_update\": the complete new preferences.md (Markdown bullet list of the user's preferences), \
             keeping what the current file says unless the conversation changed it.\n\
             \"projects_update\": the complete new projects.md (Markdown: active projects and their state), likewise.\n",
        );
    }
    out.push_str("Example answer:\n");
    out.push_str(if markdown_updates {
        r##"{"semantic":[{"key":"pref.editor","value":"neovim","confidence":0.9}],"preferences_update":"- Uses neovim","projects_update":"- kirocrew: Rust memory service"}"##
    } else {
        r#"{"semantic":[{"key":"pref.editor","value":"neovim","confidence":0.9}]}"#
    });
    out
}

fn history_prompt() -> String {
    format!(
        "You keep a diary of a user's conversations with an assistant. Read the conversation and answer with one JSON object.\n\
         \"history\": two to five sentences summarizing what was discussed and decided.\n\
         \"episodic\": notable events worth remembering later, at most {MAX_EPISODIC}, each a self-contained sentence \
         with an \"importance\" from 0 to 1 and a few short \"tags\".\n\
         \"lessons\": at most {MAX_LESSONS} implicit corrections only: places where the user corrected the assistant \
         without saying \"remember\" (explicit requests to remember are already saved). Each has a \"rule\" (what to do), \
         optionally a \"negative\" (what not to do), and a \"category\": tool, preference or knowledge. \
         An empty list is fine.\n\
         Example answer:\n\
         {{\"history\":\"Fixed the deploy script together.\",\"episodic\":[{{\"text\":\"The deploy failed because the build ran in the wrong folder.\",\"importance\":0.6,\"tags\":[\"deploy\"]}}],\"lessons\":[{{\"rule\":\"Run the build from the repository root\",\"category\":\"tool\"}}]}}"
    )
}

fn role(r: Role) -> &'static str {
    match r {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::System => "system",
    }
}

/// The user message: the current Markdown documents (prefs path before
/// migration) and the transcript, cut to `budget` characters from the
/// oldest end.
pub fn user_prompt(turns: &[Turn], documents: Option<(&str, &str)>, budget: usize) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut used = 0;
    let mut omitted = 0;
    for turn in turns.iter().rev() {
        let text: String = turn.text.chars().take(MAX_TURN_CHARS).collect();
        let line = format!("{}: {}", role(turn.role), text.trim());
        let len = line.chars().count() + 1;
        if used + len > budget {
            omitted = turns.len() - lines.len();
            break;
        }
        used += len;
        lines.push(line);
    }
    lines.reverse();
    let mut out = String::new();
    if let Some((preferences, projects)) = documents {
        out.push_str("Current preferences.md:\n");
        out.push_str(if preferences.trim().is_empty() {
            "(empty)"
        } else {
            preferences.trim()
        });
        out.push_str("\n\nCurrent projects.md:\n");
        out.push_str(if projects.trim().is_empty() {
            "(empty)"
        } else {
            projects.trim()
        });
        out.push_str("\n\n");
    }
    out.push_str("Conversation:\n");
    if omitted > 0 {
        out.push_str(&format!("[{omitted} earlier messages omitted]\n"));
    }
    out.push_str(&lines.join("\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consolidator::schema::{answer_keys, parse_answer};

    fn turn(role: Role, text: &str) -> Turn {
        Turn {
            ts: String::new(),
            role,
            text: text.into(),
            channel_id: None,
            sender: None,
            source_id: None,
        }
    }

    #[test]
    fn the_caps_are_in_the_prompts() {
        let prefs = system_prompt(ConsolidationPath::Prefs, true);
        assert!(prefs.contains("at most 20 entries"), "{prefs}");
        assert!(prefs.contains("preferences_update"));
        assert!(!system_prompt(ConsolidationPath::Prefs, false).contains("preferences_update"));
        let history = system_prompt(ConsolidationPath::History, false);
        assert!(history.contains("at most 10, each"), "{history}");
        assert!(
            history.contains("at most 10 implicit corrections"),
            "{history}"
        );
    }

    #[test]
    fn each_example_is_a_valid_answer_of_its_path() {
        for (path, md) in [
            (ConsolidationPath::Prefs, true),
            (ConsolidationPath::Prefs, false),
            (ConsolidationPath::History, false),
        ] {
            let prompt = system_prompt(path, md);
            let example = prompt.rsplit("Example answer:\n").next().unwrap();
            parse_answer(example, path, md).unwrap_or_else(|e| panic!("{path:?}: {e}"));
            assert!(answer_keys(path, md).iter().all(|k| example.contains(k)));
        }
    }

    #[test]
    fn the_transcript_keeps_the_newest_turns_within_budget() {
        let turns: Vec<Turn> = (0..10)
            .map(|i| {
                turn(
                    if i % 2 == 0 {
                        Role::User
                    } else {
                        Role::Assistant
                    },
                    &format!("message {i}"),
                )
            })
            .collect();
        let all = user_prompt(&turns, None, 10_000);
        assert!(all.starts_with("Conversation:\nuser: message 0\nassistant: message 1"));
        let cut = user_prompt(&turns, None, 60);
        assert!(cut.contains("earlier messages omitted"), "{cut}");
        assert!(cut.ends_with("assistant: message 9"), "{cut}");
        assert!(!cut.contains("message 0\n"));
        let docs = user_prompt(&turns[..1], Some(("- dark mode", "")), 1_000);
        assert!(docs.contains("Current preferences.md:\n- dark mode"));
        assert!(docs.contains("Current projects.md:\n(empty)"));
    }
}
