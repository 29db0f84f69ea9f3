//! Who a fragment is by, and who a query is about (issue 37: speaker- and
//! entity-aware episodic retrieval).
//!
//! Conversation memory is written as `"<speaker>: <text>"` (the gateway's
//! transcripts, the LoCoMo benchmark, imports of chat logs), so the store
//! knows its speakers without an LLM: the [`owner`] prefix of each active
//! fragment, counted in a [`SpeakerBook`] the mirror keeps up to date on
//! the same change stream as its rows (a tombstone takes its count away).
//!
//! A query is "about" a speaker when one of its words names them
//! ([`SpeakerBook::named_in`]): the full name, one of its words, a
//! possessive ("Caroline's"), a diacritic-free spelling ("Zoe" for "Zoë"),
//! or a nickname that starts a known name ("Mel" for "Melanie", capitalized
//! and unambiguous only, so "jo" in lower case names nobody). The ranking
//! uses that for a soft boost and for the `speaker_mismatch` gate
//! (`speaker_gate.rs`).

use std::collections::HashMap;

use super::bm25::plain;

/// Longest speaker prefix, in characters.
const MAX_OWNER_CHARS: usize = 40;
/// Most words in a speaker's name.
const MAX_OWNER_WORDS: usize = 3;
/// Fragments a name must own before it counts as a speaker: one line
/// that happens to start "Note: …" does not make "Note" a person.
pub(crate) const MIN_SPEAKER_ROWS: u32 = 2;
/// Shortest nickname matched against the start of a name.
const MIN_NICKNAME_CHARS: usize = 3;

/// The speaker prefix of a fragment written `"<Name>: <text>"`: one to
/// three words, each starting with an upper-case letter and made of
/// letters, `-`, `.` or apostrophes, followed by `": "`. `None` for any
/// other text ("Note that: …", "http://…", "10:30 …").
pub(crate) fn owner(text: &str) -> Option<&str> {
    let (head, rest) = text.split_once(':')?;
    if !rest.starts_with(char::is_whitespace) || head.chars().count() > MAX_OWNER_CHARS {
        return None;
    }
    let words: Vec<&str> = head.split_whitespace().collect();
    if words.is_empty() || words.len() > MAX_OWNER_WORDS || head.starts_with(char::is_whitespace) {
        return None;
    }
    let is_name_word = |w: &&str| {
        w.chars().next().is_some_and(char::is_uppercase)
            && w.chars()
                .all(|c| c.is_alphabetic() || matches!(c, '-' | '.' | '\'' | '’'))
    };
    words.iter().all(is_name_word).then(|| head.trim_end())
}

/// The text after the speaker prefix (all of it when there is none).
pub(crate) fn body(text: &str) -> &str {
    match owner(text) {
        Some(_) => text
            .split_once(':')
            .map_or(text, |(_, rest)| rest.trim_start()),
        None => text,
    }
}

/// A name's comparison key: folded (lowercase, no diacritics), words
/// joined by one space.
pub(crate) fn name_key(name: &str) -> String {
    name.split_whitespace()
        .map(plain)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The words of `text` as candidate names: split on anything but letters,
/// digits and apostrophes, possessive `'s` / `’s` / trailing apostrophe
/// removed. Each comes with whether it was capitalized.
fn name_words(text: &str) -> impl Iterator<Item = (String, bool)> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .filter_map(|w| {
            let w = w
                .strip_suffix("'s")
                .or_else(|| w.strip_suffix("’s"))
                .unwrap_or(w)
                .trim_matches(|c| c == '\'' || c == '’');
            (!w.is_empty()).then(|| (plain(w), w.starts_with(char::is_uppercase)))
        })
}

/// Interjections that open an address ("Hey Caroline,", "Thanks Mel!").
const GREETINGS: &[&str] = &[
    "hey",
    "hi",
    "hello",
    "thanks",
    "thank",
    "yep",
    "yeah",
    "yes",
    "wow",
    "oh",
    "aw",
    "aww",
    "congrats",
    "congratulations",
    "dear",
    "ok",
    "okay",
    "sure",
    "no",
    "sorry",
    "morning",
    "evening",
    "night",
    "bye",
    "cheers",
    "haha",
    "omg",
    "great",
    "right",
    "well",
];

/// Whether `text` speaks *about* someone whose name has one of the word
/// keys `parts`: a mention that is not a vocative. "Thanks, Caroline!" or
/// "Hey Mel, look" address the listener and say nothing about her; "I
/// went with Caroline" does. A name is a vocative when it stands alone
/// between an opening (start of a sentence, a comma, a greeting word) and
/// a closing (a comma, `!`, `?`, `.`, `;` or the end).
pub(crate) fn mentions_about(text: &str, parts: &[&str]) -> bool {
    // Tokens with the punctuation between them.
    let mut tokens: Vec<(usize, usize)> = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        let word = c.is_alphanumeric() || c == '\'' || c == '’';
        match (word, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                tokens.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        tokens.push((s, text.len()));
    }
    tokens.iter().enumerate().any(|(i, &(s, e))| {
        let raw = &text[s..e];
        let word = raw
            .strip_suffix("'s")
            .or_else(|| raw.strip_suffix("’s"))
            .unwrap_or(raw);
        if !word.starts_with(char::is_uppercase) || !parts.contains(&name_key(word).as_str()) {
            return false;
        }
        let before = text[..s].trim_end();
        let after = text[e..].trim_start();
        let opens = before.is_empty()
            || before.ends_with([',', '.', '!', '?', ';', ':', '—', '-'])
            || (i > 0 && {
                let (ps, pe) = tokens[i - 1];
                text[pe..s].trim().is_empty() && GREETINGS.contains(&plain(&text[ps..pe]).as_str())
            });
        let closes =
            raw == word && (after.is_empty() || after.starts_with([',', '!', '?', '.', ';']));
        !(opens && closes)
    })
}

/// First-person words (the speaker talks about themself).
const FIRST_PERSON: &[&str] = &[
    "i", "i'm", "i've", "i'd", "i'll", "me", "my", "mine", "myself", "we", "we're", "we've", "our",
    "ours", "us",
];
/// Second-person words (the speaker talks about the listener).
const SECOND_PERSON: &[&str] = &[
    "you", "you're", "you've", "you'd", "you'll", "your", "yours", "yourself", "ya", "u",
];

/// Whether a fragment's body is about its listener rather than its
/// speaker: more second-person words than first-person ones ("Your
/// charity race sounds amazing!" said by Caroline is about Melanie).
pub(crate) fn about_listener(body: &str) -> bool {
    let (mut first, mut second) = (0u32, 0u32);
    for w in body.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’')) {
        let w = plain(w).replace('’', "'");
        if FIRST_PERSON.contains(&w.as_str()) {
            first += 1;
        } else if SECOND_PERSON.contains(&w.as_str()) {
            second += 1;
        }
    }
    second > first
}

/// The speakers of the store: name key → (name as written, fragments).
#[derive(Debug, Default, Clone)]
pub(crate) struct SpeakerBook {
    names: HashMap<String, (String, u32)>,
}

impl SpeakerBook {
    /// Counts a fragment in (an active row appeared).
    pub(crate) fn add(&mut self, text: &str) {
        if let Some(name) = owner(text) {
            let entry = self
                .names
                .entry(name_key(name))
                .or_insert_with(|| (name.to_owned(), 0));
            entry.1 += 1;
        }
    }

    /// Counts a fragment out (tombstoned, or replaced by a newer version).
    pub(crate) fn remove(&mut self, text: &str) {
        if let Some(name) = owner(text) {
            let key = name_key(name);
            if let Some(entry) = self.names.get_mut(&key) {
                entry.1 = entry.1.saturating_sub(1);
                if entry.1 == 0 {
                    self.names.remove(&key);
                }
            }
        }
    }

    /// The keys of names owning at least [`MIN_SPEAKER_ROWS`] fragments.
    pub(crate) fn speakers(&self) -> impl Iterator<Item = &str> {
        self.names
            .iter()
            .filter(|(_, (_, n))| *n >= MIN_SPEAKER_ROWS)
            .map(|(k, _)| k.as_str())
    }

    /// Whether `key` is a known speaker.
    pub(crate) fn is_speaker(&self, key: &str) -> bool {
        self.names
            .get(key)
            .is_some_and(|(_, n)| *n >= MIN_SPEAKER_ROWS)
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
    fn owners_are_capitalized_name_prefixes() {
        assert_eq!(
            owner("Caroline: I went to a support group."),
            Some("Caroline")
        );
        assert_eq!(owner("Mary Ann: hi there"), Some("Mary Ann"));
        assert_eq!(owner("Zoë: ça va"), Some("Zoë"));
        assert_eq!(owner("O'Brien: fine"), Some("O'Brien"));
        assert_eq!(owner("Note that: x"), None);
        assert_eq!(owner("http://example.com is down"), None);
        assert_eq!(owner("10:30 meeting"), None);
        assert_eq!(owner("The Big Long Name Here: x"), None);
        assert_eq!(owner("Caroline:no space"), None);
        assert_eq!(owner("plain text"), None);
        assert_eq!(body("Caroline: I went"), "I went");
        assert_eq!(body("plain: text"), "plain: text");
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
        assert!(b.names.get("caroline").is_none());
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
    fn second_person_fragments_are_about_the_listener() {
        assert!(about_listener(
            "Wow, your charity race sounds amazing! You did great."
        ));
        assert!(!about_listener("I ran a charity race for mental health."));
        assert!(!about_listener(
            "I told you I’d run it, and I did, my friend"
        ));
        assert!(!about_listener("It rained all day."));
    }

    #[test]
    fn vocatives_are_not_mentions() {
        let p = ["caroline"];
        assert!(!mentions_about(
            "Thanks, Caroline! The event was great.",
            &p
        ));
        assert!(!mentions_about("Hey Caroline, look at this.", &p));
        assert!(!mentions_about("Caroline, you're amazing", &p));
        assert!(!mentions_about("That's great news, Caroline.", &p));
        assert!(!mentions_about("Yep, Caroline!", &p));
        assert!(mentions_about("I went hiking with Caroline.", &p));
        assert!(mentions_about("Caroline's dog is cute", &p));
        assert!(mentions_about("Thanks, Caroline! Caroline said so.", &p));
        assert!(
            !mentions_about("caroline went home", &p),
            "names are capitalized"
        );
        assert!(!mentions_about("Nothing here", &p));
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
