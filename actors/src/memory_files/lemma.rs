//! Irregular word forms for the full-text index, and the FTS5 query builder.
//!
//! The index tokenizes with `porter unicode61` (spec: "Memory"), which folds
//! regular inflections: "running", "runs" and "run" all stem to `run`. The
//! Porter stemmer is purely suffix-based, so irregular forms ("ran", "went",
//! "wrote", "children") keep their own stems and would never meet their base
//! word. The reference promises that searching "running" finds an entry that
//! says "ran", so we close that gap explicitly, in both directions:
//!
//! - at index time every irregular form in a section adds its base word to a
//!   second indexed column (`lemmas`), so a document saying "ran" is also
//!   found by `run`, `runs`, `running`;
//! - at query time an irregular query word is OR-ed with its base word, so a
//!   query "ran" also finds "running".
//!
//! The table below covers common English irregular verbs and a few nouns;
//! anything else relies on Porter alone. Forms that are mostly other words
//! ("ground", "wound", "bound", "is") are left out on purpose: mapping them
//! would make unrelated sections match.

use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;

use crate::vector_store::keyword::query_words;

/// `(base, irregular forms…)`, space-separated forms.
const IRREGULAR: &[(&str, &str)] = &[
    ("arise", "arose arisen"),
    ("awake", "awoke awoken"),
    ("bear", "bore borne born"),
    ("beat", "beaten"),
    ("become", "became"),
    ("begin", "began begun"),
    ("bend", "bent"),
    ("bite", "bit bitten"),
    ("bleed", "bled"),
    ("blow", "blew blown"),
    ("break", "broke broken"),
    ("breed", "bred"),
    ("bring", "brought"),
    ("build", "built"),
    ("burn", "burnt"),
    ("buy", "bought"),
    ("catch", "caught"),
    ("choose", "chose chosen"),
    ("cling", "clung"),
    ("come", "came"),
    ("creep", "crept"),
    ("deal", "dealt"),
    ("dig", "dug"),
    ("do", "did done does"),
    ("draw", "drew drawn"),
    ("dream", "dreamt"),
    ("drink", "drank drunk"),
    ("drive", "drove driven"),
    ("eat", "ate eaten"),
    ("fall", "fell fallen"),
    ("feed", "fed"),
    ("feel", "felt"),
    ("fight", "fought"),
    ("find", "found"),
    ("flee", "fled"),
    ("fly", "flew flown"),
    ("forbid", "forbade forbidden"),
    ("forget", "forgot forgotten"),
    ("forgive", "forgave forgiven"),
    ("freeze", "froze frozen"),
    ("get", "got gotten"),
    ("give", "gave given"),
    ("go", "went gone goes"),
    ("grow", "grew grown"),
    ("hang", "hung"),
    ("have", "had has"),
    ("hear", "heard"),
    ("hide", "hid hidden"),
    ("hold", "held"),
    ("keep", "kept"),
    ("know", "knew known"),
    ("lay", "laid"),
    ("lead", "led"),
    ("lean", "leant"),
    ("leap", "leapt"),
    ("learn", "learnt"),
    ("leave", "left"),
    ("lend", "lent"),
    ("lie", "lain"),
    ("light", "lit"),
    ("lose", "lost"),
    ("make", "made"),
    ("mean", "meant"),
    ("meet", "met"),
    ("overcome", "overcame"),
    ("pay", "paid"),
    ("prove", "proven"),
    ("ride", "rode ridden"),
    ("ring", "rang rung"),
    ("rise", "rose risen"),
    ("run", "ran"),
    ("say", "said"),
    ("see", "saw seen"),
    ("seek", "sought"),
    ("sell", "sold"),
    ("send", "sent"),
    ("shake", "shook shaken"),
    ("shine", "shone"),
    ("shoot", "shot"),
    ("show", "shown"),
    ("shrink", "shrank shrunk"),
    ("sing", "sang sung"),
    ("sink", "sank sunk"),
    ("sit", "sat"),
    ("sleep", "slept"),
    ("slide", "slid"),
    ("speak", "spoke spoken"),
    ("speed", "sped"),
    ("spend", "spent"),
    ("spin", "spun"),
    ("spring", "sprang sprung"),
    ("stand", "stood"),
    ("steal", "stole stolen"),
    ("stick", "stuck"),
    ("sting", "stung"),
    ("strike", "struck stricken"),
    ("strive", "strove striven"),
    ("swear", "swore sworn"),
    ("sweep", "swept"),
    ("swim", "swam swum"),
    ("swing", "swung"),
    ("take", "took taken"),
    ("teach", "taught"),
    ("tear", "tore torn"),
    ("tell", "told"),
    ("think", "thought"),
    ("throw", "threw thrown"),
    ("understand", "understood"),
    ("undo", "undid undone"),
    ("wake", "woke woken"),
    ("wear", "wore worn"),
    ("weave", "wove woven"),
    ("weep", "wept"),
    ("win", "won"),
    ("withdraw", "withdrew withdrawn"),
    ("write", "wrote written"),
    // Nouns whose plural Porter cannot fold.
    ("child", "children"),
    ("foot", "feet"),
    ("goose", "geese"),
    ("man", "men"),
    ("mouse", "mice"),
    ("person", "people"),
    ("tooth", "teeth"),
    ("woman", "women"),
];

static BASE_OF: LazyLock<HashMap<&'static str, &'static str>> = LazyLock::new(|| {
    let mut map = HashMap::new();
    for (base, forms) in IRREGULAR {
        for form in forms.split_whitespace() {
            // First base wins for forms shared by two verbs ("lay", "found").
            map.entry(form).or_insert(*base);
        }
    }
    map
});

/// The base word of an irregular form (`ran` → `run`), if it is one.
pub(crate) fn base_form(word: &str) -> Option<&'static str> {
    BASE_OF.get(word).copied()
}

/// Lower-cased words of `text` (runs of Unicode letters and digits).
pub(crate) fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// The `lemmas` column of a section: the base words of its irregular forms,
/// each once.
pub(crate) fn lemma_column(text: &str) -> String {
    let bases: BTreeSet<&str> = words(text).filter_map(|w| base_form(&w)).collect();
    bases.into_iter().collect::<Vec<_>>().join(" ")
}

/// Most words a query may have.
pub(crate) const MAX_QUERY_WORDS: usize = 32;

/// Turns free text into a safe FTS5 MATCH expression.
///
/// - Every word becomes a quoted string, so no user input is read as FTS5
///   syntax (the words are runs of letters and digits: they hold no quote).
/// - Function words are dropped the way every other keyword path drops them
///   ([`query_words`]): "which editor does the user prefer" asks about
///   `editor`, `user`, `prefer`; a query of only function words keeps them.
/// - An irregular word is OR-ed with its base word.
/// - Words are OR-ed, not AND-ed: a question rarely has every one of its
///   words in one section, and BM25 already ranks the sections that match
///   more (and rarer) words first. Each term is parenthesized and joined with
///   an explicit `OR`, since FTS5's implicit AND only joins phrases:
///   `"editor" ("does" OR "do")` is a syntax error.
///
/// `None` when the text has no words.
pub(crate) fn match_expression(query: &str) -> Option<String> {
    let terms: Vec<String> = query_words(query)
        .into_iter()
        .take(MAX_QUERY_WORDS)
        .map(|w| match base_form(&w) {
            Some(base) => format!("(\"{w}\" OR \"{base}\")"),
            None => format!("\"{w}\""),
        })
        .collect();
    (!terms.is_empty()).then(|| terms.join(" OR "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn irregular_forms_map_to_their_base() {
        assert_eq!(base_form("ran"), Some("run"));
        assert_eq!(base_form("went"), Some("go"));
        assert_eq!(base_form("children"), Some("child"));
        assert_eq!(base_form("runs"), None, "regular forms are Porter's job");
        assert_eq!(lemma_column("He RAN, then went home; ran again."), "go run");
        assert_eq!(lemma_column("nothing irregular"), "");
    }

    #[test]
    fn queries_are_quoted_and_expanded() {
        assert_eq!(match_expression("running"), Some("\"running\"".into()));
        assert_eq!(
            match_expression("Ran fast ran"),
            Some("(\"ran\" OR \"run\") OR \"fast\"".into())
        );
        assert_eq!(
            match_expression("a\" OR NEAR(x*) -b:"),
            Some("\"near\" OR \"x\" OR \"b\"".into())
        );
        assert_eq!(match_expression("  !!! "), None);
        assert_eq!(
            match_expression("café ☕ naïve"),
            Some("\"café\" OR \"naïve\"".into())
        );
        let long = "w ".repeat(100) + &(0..100).map(|i| format!("x{i} ")).collect::<String>();
        let expr = match_expression(&long).unwrap();
        assert_eq!(expr.matches('"').count(), MAX_QUERY_WORDS * 2);
    }
}
