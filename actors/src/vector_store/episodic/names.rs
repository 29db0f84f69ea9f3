//! Who and what a fragment's text names, read without a model (issue 37):
//! the speaker prefix of a dialogue turn (`"Caroline: …"`), the subject a
//! third-person note opens with ("Melanie painted …"), mentions that are
//! not vocatives, whether a turn talks about its listener, and the
//! capitalized entities inside sentences. Pure functions; the speaker book
//! (`speakers.rs`), the speaker gate and the entity graph read text
//! through them.

use super::bm25::plain;
use crate::vector_store::keyword::is_stop_word;

/// Longest speaker prefix, in characters.
const MAX_OWNER_CHARS: usize = 40;
/// Most words in a speaker's name.
const MAX_OWNER_WORDS: usize = 3;
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
pub(crate) fn name_words(text: &str) -> impl Iterator<Item = (String, bool)> + '_ {
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
    // A search asks this of every candidate: most name nobody, and an
    // ASCII name that is not even a substring needs no tokenizing.
    let absent = |part: &&str| {
        part.is_ascii()
            && !text
                .as_bytes()
                .windows(part.len().max(1))
                .any(|w| w.eq_ignore_ascii_case(part.as_bytes()))
    };
    if parts.iter().all(absent) {
        return false;
    }
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

/// The subject a third-person note opens with: its first word, when
/// that is a capitalized word of letters (a possessive allowed) and not a
/// function word ("Melanie painted …", "Caroline's art …"). Whether it is
/// a person is the speaker book's call (`speakers.rs`).
pub(crate) fn lead_name(text: &str) -> Option<String> {
    let first = text.split_whitespace().next()?;
    // "Caroline, look!" addresses her; a subject runs on into its verb.
    if first.ends_with([',', '!', '?', ':', ';']) {
        return None;
    }
    let first = first.trim_end_matches('.');
    let word = first
        .strip_suffix("'s")
        .or_else(|| first.strip_suffix("’s"))
        .unwrap_or(first);
    let key = plain(word);
    (word.chars().count() >= 2
        && word.starts_with(char::is_uppercase)
        && word.chars().all(char::is_alphabetic)
        && !is_stop_word(&key)
        && !NOT_ENTITIES.contains(&key.as_str()))
    .then_some(key)
}

/// Capitalized words that are not entities.
const NOT_ENTITIES: &[&str] = &[
    "i", "i'm", "i've", "i'd", "i'll", "im", "ive", "the", "a", "an", "and", "but", "or", "so",
    "thanks", "thank", "hey", "hi", "hello", "yes", "yeah", "yep", "no", "oh", "wow", "ok", "okay",
    "sure", "it", "it's", "that", "this", "that's", "what", "when", "where", "who", "how", "why",
    "my", "your", "you", "we", "they", "he", "she", "mom", "dad", "congrats", "haha", "lol", "omg",
    "aw", "aww", "sounds", "great", "awesome", "cool", "nice", "love", "glad",
];

/// The entities of `text` (the speaker prefix skipped), folded, distinct.
pub(crate) fn entities(text: &str) -> Vec<String> {
    let text = body(text);
    let mut out: Vec<String> = Vec::new();
    let mut run: Vec<String> = Vec::new();
    let mut sentence_start = true;
    let flush = |run: &mut Vec<String>, out: &mut Vec<String>| {
        if !run.is_empty() {
            let e = run.join(" ");
            if !out.contains(&e) {
                out.push(e);
            }
            run.clear();
        }
    };
    let mut word = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '\'' || c == '’' {
            word.push(c);
            if chars.peek().is_some() {
                continue;
            }
        }
        if !word.is_empty() {
            let w = word
                .strip_suffix("'s")
                .or_else(|| word.strip_suffix("’s"))
                .unwrap_or(&word);
            let key = name_key(w);
            let capitalized = w.starts_with(char::is_uppercase);
            if capitalized && !sentence_start && !NOT_ENTITIES.contains(&key.as_str()) {
                run.push(key);
            } else {
                flush(&mut run, &mut out);
            }
            sentence_start = false;
            word.clear();
        }
        if matches!(c, '.' | '!' | '?' | '\n' | ':' | ';' | '"' | '(') {
            flush(&mut run, &mut out);
            sentence_start = matches!(c, '.' | '!' | '?' | '\n');
        } else if c == ',' {
            flush(&mut run, &mut out);
        }
    }
    flush(&mut run, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn entities_are_capitalized_runs_inside_sentences() {
        assert_eq!(
            entities("Anna: My sister Beatrice moved to New York last May."),
            ["beatrice", "new york", "may"]
        );
        assert_eq!(
            entities("Thanks, Caroline! I went to the LGBTQ group. Zoë's café rocks"),
            ["caroline", "lgbtq"]
        );
        assert!(entities("I think so. It was fine.").is_empty());
        assert_eq!(
            entities("We met José, Anna and Bob"),
            ["jose", "anna", "bob"]
        );
    }

    #[test]
    fn lead_names_are_capitalized_first_words() {
        assert_eq!(
            lead_name("Melanie painted a sunrise.").as_deref(),
            Some("melanie")
        );
        assert_eq!(
            lead_name("Caroline's art is bold").as_deref(),
            Some("caroline")
        );
        assert_eq!(lead_name("Zoë ran, as always").as_deref(), Some("zoe"));
        assert_eq!(lead_name("Caroline, look at this!"), None, "a vocative");
        assert_eq!(lead_name("The race was long"), None);
        assert_eq!(lead_name("I ran"), None);
        assert_eq!(lead_name("melanie ran"), None);
        assert_eq!(lead_name("R2D2 beeped"), None);
        assert_eq!(lead_name(""), None);
    }
}
