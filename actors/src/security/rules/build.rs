//! Shared pieces of the rule generators (`table.rs`, `families.rs`): the
//! in-sentence gap, the rule constructor, rule naming, and who an order is
//! addressed to. Kept apart so the generators import it, not each other.

use super::rule::{Category, Rule, Strength, Within};

/// Within one sentence: anything but a sentence terminator or newline.
pub(crate) const GAP: &str = r"[^.!?;。！？；\n]";

/// A rule with no requirements.
pub(crate) fn rule(
    name: &str,
    category: Category,
    lang: &'static str,
    strength: Strength,
    pattern: String,
) -> Rule {
    Rule {
        name: name.to_owned(),
        category,
        language: lang,
        strength,
        pattern,
        requires: Vec::new(),
        within: Within::Sentence,
    }
}

/// `base` for English (the v1 names stay stable), `base/lang` otherwise.
pub(crate) fn named(base: &str, lang: &str) -> String {
    if lang == "en" {
        base.to_owned()
    } else {
        format!("{base}/{lang}")
    }
}

/// Who a voided-rules statement is addressed to: the model ("you", "tu",
/// "du", "你", …) or an order to it. "The old installation instructions
/// are obsolete" is a note; "the instructions you received are void" is
/// not.
pub(crate) const ADDRESSEE: &str = concat!(
    r"\b(?:you|your|yours|you're|comply|obey)\b|",
    // Not `\b` before these: the ASCII boundary also falls after "è", so
    // "obsolètes" would hold "tes".
    r"(?:^|[^\p{L}\p{N}])(?:tu|te|toi|vous|ton|tes|vos|votre|du|dir|dich|dein|deine|deinen|deines|euch|ti|tus|usted|tuas|tuoi|tuo|tua|tue)\b|",
    r"(?:^|[^\p{L}\p{N}])t'|obéi|befolge|gehorche|obedece|você|obedeça|obbedisci|",
    r"ты|тебе|тебя|твои|вы |вам|вас|ваши|",
    r"你|您|あなた|君|お前|",
    // The model named as the one addressed ("Attention, assistant: …").
    r"\b(?:assistant|ai|llm|chatbot)\b|assistente|asistente|ассистент|アシスタント|助手"
);

/// `prior` without the quantifiers ("all", "any", "tous", "所有", …) that
/// mark nothing as earlier.
pub(crate) fn earlier_only(prior: &str) -> String {
    const QUANTIFIERS: &[&str] = &[
        "all",
        "any",
        "every",
        "toutes",
        "tous",
        "alle",
        "todas",
        "todos",
        "tutte",
        "tutti",
        "все",
        "所有",
        "一切",
        "すべて",
        "全て",
    ];
    prior
        .split('|')
        .filter(|w| !QUANTIFIERS.contains(w))
        .collect::<Vec<_>>()
        .join("|")
}

/// "The rules … are void": `marker` (what makes the rules the model's —
/// earlier ones, or who set them) next to a rule noun, then a void
/// predicate, each within `gap` characters of one sentence.
pub(crate) fn voided_pattern(marker: &str, nouns: &str, void: &str, gap: u32) -> String {
    format!(
        "(?:(?:{marker}){GAP}{{0,{gap}}}?(?:{nouns})|(?:{nouns}){GAP}{{0,{gap}}}?(?:{marker})){GAP}{{0,{gap}}}?(?:{void})"
    )
}
