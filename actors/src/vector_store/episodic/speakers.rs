//! Who a fragment is by, and who a query is about (issue 37: speaker- and
//! entity-aware episodic retrieval).
//!
//! The store knows its people without an LLM: dialogue turns are written
//! `"<speaker>: <text>"` (transcripts, the LoCoMo benchmark, chat-log
//! imports) and the consolidator's notes open with whom they are about
//! ("Melanie painted a lake sunrise"). Both are counted (`names.rs` reads
//! the text) in a [`SpeakerBook`] the mirror keeps up to date on the same
//! change stream as its rows (a tombstone takes its count away).
//!
//! A query is "about" a speaker when one of its words names them
//! ([`SpeakerBook::named_in`]): the full name, one of its words, a
//! possessive ("Caroline's"), a diacritic-free spelling ("Zoe" for "Zoë"),
//! or a nickname that starts a known name ("Mel" for "Melanie", capitalized
//! and unambiguous only, so "jo" in lower case names nobody). The ranking
//! uses that for a soft boost and for the `speaker_mismatch` gate
//! (`speaker_gate.rs`).

use std::collections::HashMap;

use super::names::{entities, lead_name, name_key, name_words, owner};

/// Fragments a name must own before it counts as a speaker: one line
/// that happens to start "Note: …" does not make "Note" a person.
pub(crate) const MIN_SPEAKER_ROWS: u32 = 2;
/// Shortest nickname matched against the start of a name.
const MIN_NICKNAME_CHARS: usize = 3;

/// The people of the store, counted over the active rows: who speaks
/// (dialogue prefixes), who third-person notes open with, and which
/// capitalized words occur inside sentences (entities).
#[derive(Debug, Default, Clone)]
pub(crate) struct SpeakerBook {
    /// Name key → rows it speaks.
    speaks: HashMap<String, u32>,
    /// Name key → rows that open with it ("Melanie painted …").
    leads: HashMap<String, u32>,
    /// Entity key → rows naming it inside a sentence.
    mentions: HashMap<String, u32>,
}

fn count(map: &mut HashMap<String, u32>, key: String, up: bool) {
    if up {
        *map.entry(key).or_default() += 1;
    } else if let Some(n) = map.get_mut(&key) {
        *n = n.saturating_sub(1);
        if *n == 0 {
            map.remove(&key);
        }
    }
}

impl SpeakerBook {
    fn tally(&mut self, text: &str, up: bool) {
        match owner(text) {
            Some(name) => count(&mut self.speaks, name_key(name), up),
            None => {
                if let Some(lead) = lead_name(text) {
                    count(&mut self.leads, lead, up);
                }
            }
        }
        for e in entities(text) {
            count(&mut self.mentions, e, up);
        }
    }

    /// Counts a fragment in (an active row appeared).
    pub(crate) fn add(&mut self, text: &str) {
        self.tally(text, true);
    }

    /// Counts a fragment out (tombstoned, or replaced by a newer version).
    pub(crate) fn remove(&mut self, text: &str) {
        self.tally(text, false);
    }

    /// Whether `key` is a person of the store: it speaks in at least
    /// [`MIN_SPEAKER_ROWS`] rows, or opens that many notes and is also
    /// written capitalized inside a sentence somewhere (so "Painting is
    /// fun" twice does not make "Painting" a person).
    pub(crate) fn is_speaker(&self, key: &str) -> bool {
        let at_least =
            |m: &HashMap<String, u32>| m.get(key).is_some_and(|n| *n >= MIN_SPEAKER_ROWS);
        at_least(&self.speaks) || (at_least(&self.leads) && self.mentions.contains_key(key))
    }

    /// The keys of the store's people (see [`Self::is_speaker`]).
    pub(crate) fn speakers(&self) -> impl Iterator<Item = &str> {
        self.speaks
            .keys()
            .chain(self.leads.keys().filter(|k| !self.speaks.contains_key(*k)))
            .map(String::as_str)
            .filter(|k| self.is_speaker(k))
    }

    /// Who a fragment is about by its form: its speaker, else the person
    /// its note opens with (when that is a person of the store).
    pub(crate) fn subject(&self, text: &str) -> Option<String> {
        match owner(text) {
            Some(name) => Some(name_key(name)),
            None => lead_name(text).filter(|k| self.is_speaker(k)),
        }
    }

    /// The known speakers `text` names, as keys, in order of first mention.
    pub(crate) fn named_in(&self, text: &str) -> Vec<String> {
        let speakers: Vec<&str> = self.speakers().collect();
        let mut out: Vec<String> = Vec::new();
        let mut push = |key: &str| {
            if !out.iter().any(|k| k == key) {
                out.push(key.to_owned());
            }
        };
        for (word, capitalized) in name_words(text) {
            // A word of a name ("Mary Ann" by "Ann"), or else a nickname.
            let exact: Vec<&str> = speakers
                .iter()
                .copied()
                .filter(|s| s.split(' ').any(|p| p == word))
                .collect();
            if !exact.is_empty() {
                exact.iter().for_each(|s| push(s));
                continue;
            }
            if capitalized && word.chars().count() >= MIN_NICKNAME_CHARS {
                let nick: Vec<&str> = speakers
                    .iter()
                    .copied()
                    .filter(|s| s.split(' ').any(|p| p.starts_with(word.as_str())))
                    .collect();
                if let [one] = nick.as_slice() {
                    push(one);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn book(rows: &[&str]) -> SpeakerBook {
        let mut b = SpeakerBook::default();
        rows.iter().for_each(|r| b.add(r));
        b
    }

    #[test]
    fn third_person_notes_teach_the_book_their_subjects() {
        let mut b = book(&[
            "Melanie painted a lake sunrise last year.",
            "Melanie ran a charity race.",
            "Painting is a fun way to relax.",
            "Painting helps her unwind.",
        ]);
        assert!(!b.is_speaker("melanie"), "not yet seen inside a sentence");
        b.add("Caroline told Melanie about the parade.");
        assert!(b.is_speaker("melanie"));
        assert!(!b.is_speaker("painting"));
        assert_eq!(
            b.subject("Melanie's kids love camping").as_deref(),
            Some("melanie")
        );
        assert_eq!(b.subject("Painting is fun"), None);
        assert_eq!(b.subject("Caroline: hi").as_deref(), Some("caroline"));
        assert_eq!(b.named_in("What did Melanie paint?"), ["melanie"]);
        b.remove("Caroline told Melanie about the parade.");
        assert!(!b.is_speaker("melanie"));
    }

    #[test]
    fn the_book_counts_rows_and_forgets_tombstoned_ones() {
        let mut b = book(&["Caroline: a", "Caroline: b", "Melanie: c", "Note: d"]);
        assert!(b.is_speaker("caroline"));
        assert!(!b.is_speaker("melanie"), "one row is not yet a speaker");
        b.add("Melanie: e");
        assert!(b.is_speaker("melanie"));
        b.remove("Caroline: a");
        assert!(!b.is_speaker("caroline"));
        b.remove("Caroline: b");
        assert!(!b.speaks.contains_key("caroline"));
    }

    #[test]
    fn queries_name_speakers_by_possessive_nickname_and_folded_spelling() {
        let b = book(&[
            "Caroline: a",
            "Caroline: b",
            "Melanie: c",
            "Melanie: d",
            "Zoë: e",
            "Zoë: f",
        ]);
        assert_eq!(b.named_in("What did Caroline realize?"), ["caroline"]);
        assert_eq!(b.named_in("Where is Caroline's friend from?"), ["caroline"]);
        assert_eq!(b.named_in("Caroline’s dog"), ["caroline"]);
        assert_eq!(b.named_in("what did caroline say"), ["caroline"]);
        assert_eq!(b.named_in("Did Mel paint?"), ["melanie"]);
        assert!(
            b.named_in("did mel paint").is_empty(),
            "nicknames only capitalized"
        );
        assert_eq!(b.named_in("What does Zoe like?"), ["zoe"]);
        assert_eq!(
            b.named_in("Did Melanie and Caroline meet?"),
            ["melanie", "caroline"]
        );
        assert!(b.named_in("What did they do?").is_empty());
    }

    #[test]
    fn an_ambiguous_nickname_names_nobody() {
        let b = book(&["Jonah: a", "Jonah: b", "Jonathan: c", "Jonathan: d"]);
        assert!(b.named_in("What did Jon do?").is_empty());
        assert_eq!(b.named_in("What did Jonah do?"), ["jonah"]);
    }

    #[test]
    fn multi_word_names_match_by_any_of_their_words() {
        let b = book(&["Mary Ann: a", "Mary Ann: b", "Bob: c", "Bob: d"]);
        assert_eq!(b.named_in("What did Mary Ann buy?"), ["mary ann"]);
        assert_eq!(b.named_in("Ann's car"), ["mary ann"]);
    }
}
