//! `kirocrew bench loop`'s data: LoCoMo's turns, questions and gold
//! observations, grouped by conversation and cut to what is replayed.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::bail;
use serde::Deserialize;

use super::bench_locomo::read_jsonl;

#[derive(Deserialize)]
pub(super) struct Turn {
    pub(super) conv: u32,
    pub(super) id: String,
    pub(super) session: u32,
    pub(super) speaker: String,
    pub(super) text: String,
    #[serde(default)]
    pub(super) image_caption: Option<String>,
    pub(super) session_date: String,
}

impl Turn {
    /// What the speaker said, with the photo they shared described (the
    /// photo is often what the turn is about).
    pub(super) fn spoken(&self) -> String {
        match &self.image_caption {
            Some(caption) => format!("{} [shares a photo: {caption}]", self.text),
            None => self.text.clone(),
        }
    }
}

#[derive(Clone, Deserialize)]
pub(super) struct Question {
    pub(super) conv: u32,
    pub(super) question: String,
    pub(super) category_name: String,
    pub(super) evidence: Vec<String>,
}

#[derive(Clone, Deserialize)]
pub(super) struct Observation {
    pub(super) conv: u32,
    pub(super) session: u32,
    pub(super) text: String,
    pub(super) evidence: Vec<String>,
}

/// One conversation, cut to the replayed sessions.
pub(super) struct Conversation {
    pub(super) conv: u32,
    pub(super) sessions: BTreeMap<u32, Vec<Turn>>,
    pub(super) questions: Vec<Question>,
    pub(super) observations: Vec<Observation>,
}

/// The session number of a dialog id (`D12:3` → 12).
pub(super) fn session_of(id: &str) -> Option<u32> {
    id.strip_prefix('D')?.split(':').next()?.parse().ok()
}

/// The conversations of `data` (the first `conversations`), each cut to
/// its first `sessions` sessions, with the questions whose evidence lies
/// in them and their gold observations.
pub(super) fn conversations(
    data: &Path,
    conversations: Option<usize>,
    sessions: Option<usize>,
) -> anyhow::Result<Vec<Conversation>> {
    let turns: Vec<Turn> = read_jsonl(&data.join("memories.jsonl"))?;
    let questions: Vec<Question> = read_jsonl(&data.join("queries.jsonl"))?;
    let observations: Vec<Observation> = read_jsonl(&data.join("observations.jsonl"))?;
    let mut out: BTreeMap<u32, Conversation> = BTreeMap::new();
    for t in turns {
        out.entry(t.conv)
            .or_insert_with(|| Conversation {
                conv: t.conv,
                sessions: BTreeMap::new(),
                questions: Vec::new(),
                observations: Vec::new(),
            })
            .sessions
            .entry(t.session)
            .or_default()
            .push(t);
    }
    let mut out: Vec<Conversation> = out
        .into_values()
        .take(conversations.unwrap_or(usize::MAX))
        .collect();
    for c in &mut out {
        let kept: Vec<u32> = c
            .sessions
            .keys()
            .copied()
            .take(sessions.unwrap_or(usize::MAX))
            .collect();
        c.sessions.retain(|s, _| kept.contains(s));
        let replayed = |id: &String| session_of(id).is_some_and(|s| kept.contains(&s));
        c.questions = questions
            .iter()
            .filter(|q| q.conv == c.conv && q.evidence.iter().all(replayed))
            .cloned()
            .collect();
        c.observations = observations
            .iter()
            .filter(|o| o.conv == c.conv && kept.contains(&o.session))
            .cloned()
            .collect();
    }
    if out.iter().all(|c| c.questions.is_empty()) {
        bail!("no question to ask in {}", data.display());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dialog_ids_name_their_session() {
        assert_eq!(session_of("D12:3"), Some(12));
        assert_eq!(session_of("D1:1"), Some(1));
        assert_eq!(session_of("X1:1"), None);
        assert_eq!(session_of("D:4"), None);
    }
}
