//! The compiled rule table: hand-written structural rules plus the
//! per-language phrasing rules generated from [`super::vocab`].
//!
//! Patterns run on lower-cased, NFKC-normalized text (see
//! `normalize.rs`), so they are written in lower case without `(?i)`.
//! `\b` is rewritten to the ASCII word boundary `(?-u:\b)`: a Unicode
//! boundary would make the regex engine leave its fast DFA on any non-ASCII
//! text (every fr/de/ru/zh/ja input), and the 1 ms budget for a 2,000-char
//! screen depends on that DFA. Non-Latin words therefore carry no `\b`.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

use super::build::{earlier_only, named, rule, voided_pattern, ADDRESSEE, GAP};
use super::prefilter::Prefilter;
use super::rule::{Category, Rule, Strength};
use super::vocab::{Vocab, LANGUAGES};

/// The gap between a reveal verb and the prompt it names: also stops at
/// `(`, so code that prints a message *about* the prompt
/// (`print(f"system prompt has {n} tokens")`) is no request to reveal it;
/// printing the prompt variable itself is `prompt_print_code`.
const REVEAL_GAP: &str = r"[^.!?;。！？；\n(]";

/// The rules, compiled once.
///
/// No `RegexSet`: a set must find *every* matching pattern, and over these
/// bounded-gap alternations its combined DFA thrashes (≈ 4 ms for 2,000
/// characters, measured), while the ~50 patterns run one by one cost
/// ≈ 70 µs together.
pub(crate) struct Table {
    /// The rules in priority order (the first match names the verdict).
    pub rules: Vec<Rule>,
    /// Each pattern, compiled.
    pub each: Vec<Regex>,
    /// Each rule's same-sentence requirements.
    pub requires: Vec<Vec<Regex>>,
    /// Which rules can match a view at all (one pass for the table).
    pub prefilter: Prefilter,
}

/// The table, built on first use.
pub(crate) static TABLE: LazyLock<Table> = LazyLock::new(|| {
    let rules = all_rules();
    // The patterns are compile-time text covered by the unit tests below.
    // Many rules share a requirement (one per language of the same
    // family): each distinct text is compiled once, and the rules share
    // the compiled regex (a clone is a reference count).
    let mut compiled: HashMap<String, Regex> = HashMap::new();
    let mut compile = |p: &str| {
        compiled
            .entry(p.to_owned())
            .or_insert_with(|| {
                Regex::new(&ascii_boundaries(p))
                    .unwrap_or_else(|e| panic!("rule {p:?} invalid: {e}"))
            })
            .clone()
    };
    let each = rules.iter().map(|r| compile(&r.pattern)).collect();
    let prefilter = Prefilter::new(
        &rules
            .iter()
            .map(|r| ascii_boundaries(&r.pattern))
            .collect::<Vec<_>>(),
    );
    let requires = rules
        .iter()
        .map(|r| r.requires.iter().map(|p| compile(p)).collect())
        .collect();
    Table {
        rules,
        each,
        requires,
        prefilter,
    }
});

fn ascii_boundaries(pattern: &str) -> String {
    pattern.replace(r"\b", r"(?-u:\b)")
}

/// Whether the language writes without spaces and puts the verb last
/// (object-first phrasing needs the reverse word order).
fn verb_final(lang: &str) -> bool {
    matches!(lang, "ja" | "zh")
}

/// What makes a question about "the instructions you were given" one about
/// the model's own prompt rather than a colleague's errand: a time or
/// origin cue (before, at the start, initially), or the prompt's own
/// vocabulary (system, conversation, developers), in any screened language.
const PROMPT_ORIGIN: &str = concat!(
    r"\b(?:before|earlier|initially|originally|at the (?:start|beginning|top)|first|system|prompt|conversation|chat|session|developers?|creators?|operators?|setup)\b|",
    r"avant|au (?:début|départ)|initia|système|conversation|développeur|",
    r"\bvor\b|zu beginn|am anfang|anfangs|system|gespräch|chat|entwickler|",
    r"antes|al principio|al inicio|inicial|sistema|conversación|desarrollador|",
    r"no início|conversa|desenvolvedor|",
    r"prima|all'inizio|inizial|conversazione|sviluppator|",
    r"до |перед|в начале|изначальн|систем|разговор|чат|разработчик|",
    r"之前|以前|开始|開始|最初|初始|系统|系統|对话|對話|开发者|",
    r"前|初期|システム|会話|開発者"
);

fn phrasing_rules(v: &Vocab) -> Vec<Rule> {
    use Category::*;
    let l = v.lang;
    let b = if verb_final(l) || l == "ru" {
        ""
    } else {
        r"\b"
    };
    let mut override_pat = format!(
        "{b}(?:{verbs}){GAP}{{0,40}}?(?:(?:{prior}){GAP}{{0,30}}?(?:{nouns})|(?:{nouns}){GAP}{{0,30}}?(?:{prior}))",
        verbs = v.override_verbs,
        prior = v.prior,
        nouns = v.rule_nouns,
    );
    let mut reveal_pat = format!(
        "{b}(?:{verbs}){REVEAL_GAP}{{0,40}}?(?:{nouns})",
        verbs = v.reveal_verbs,
        nouns = v.prompt_nouns
    );
    if verb_final(l) || l == "de" {
        // "以前の指示をすべて無視して", "deinen Systemprompt gib aus".
        override_pat.push_str(&format!(
            "|(?:{prior}){GAP}{{0,15}}?(?:{nouns}){GAP}{{0,15}}?(?:{verbs})",
            prior = v.prior,
            nouns = v.rule_nouns,
            verbs = v.override_verbs
        ));
        reveal_pat.push_str(&format!(
            "|(?:{nouns}){GAP}{{0,20}}?(?:{verbs})",
            nouns = v.prompt_nouns,
            verbs = v.reveal_verbs
        ));
    }
    // "the instructions you received earlier are void": the override
    // stated rather than ordered. Only with a marker of *earlier* rules
    // (not "all"/"any": "all rules in this doc are obsolete" is work talk).
    let voided = voided_pattern(&earlier_only(v.prior), v.rule_nouns, v.void_predicates, 30);
    let mut role = format!("{b}(?:{}){GAP}{{0,60}}?(?:{})", v.you_now, v.unrestricted);
    let mut persona = format!("{b}(?:{}){GAP}{{0,60}}?(?:{})", v.pretend, v.unrestricted);
    if verb_final(l) {
        // "制限のないAIとして振る舞って": the description comes first.
        role.push_str(&format!(
            "|(?:{}){GAP}{{0,20}}?(?:{})",
            v.unrestricted, v.you_now
        ));
        persona.push_str(&format!(
            "|(?:{}){GAP}{{0,20}}?(?:{})",
            v.unrestricted, v.pretend
        ));
    }
    vec![
        rule(
            &named("instruction_override", l),
            InstructionOverride,
            l,
            Strength::Soft,
            override_pat,
        ),
        Rule {
            requires: vec![ADDRESSEE.to_owned()],
            ..rule(
                &named("instructions_voided", l),
                InstructionOverride,
                l,
                Strength::Soft,
                voided,
            )
        },
        rule(
            &named("role_hijack", l),
            RoleForgery,
            l,
            Strength::Soft,
            role,
        ),
        rule(
            &named("persona_swap", l),
            RoleForgery,
            l,
            Strength::Soft,
            persona,
        ),
        rule(
            &named("prompt_exfiltration", l),
            Exfiltration,
            l,
            Strength::Soft,
            reveal_pat,
        ),
        Rule {
            requires: vec![PROMPT_ORIGIN.to_owned()],
            ..rule(
                &named("prompt_question", l),
                Exfiltration,
                l,
                Strength::Soft,
                v.told_question.to_owned(),
            )
        },
    ]
}

fn alternation(pick: impl Fn(&Vocab) -> &'static str) -> String {
    LANGUAGES.iter().map(pick).collect::<Vec<_>>().join("|")
}

fn english_rules() -> Vec<Rule> {
    use Category::*;
    use Strength::*;
    let s = |n: &str, c, st, p: &str| rule(n, c, "en", st, p.to_owned());
    vec![
        s(
            "new_instructions",
            InstructionOverride,
            Soft,
            r"\b(?:new|updated|revised|real|actual|hidden|secret|true|override|additional) (?:system )?(?:instructions?|directives?|system prompt|orders)\s*[:\-–—]",
        ),
        s(
            "behaviour_rewrite",
            InstructionOverride,
            Soft,
            r"\b(?:from now on|henceforth|starting now|going forward|from this point(?: on| forward)?),? (?:you|the (?:assistant|ai|model|agent))\b[^.!?;\n]{0,60}?\b(?:obey|comply|ignore|disregard|answer (?:any|every|all)|respond only|reply only|without (?:question|restriction|filter|limit)|never refuse|always (?:agree|comply|obey|approve|say)|approve (?:every|all)|reveal|bypass|act as|pretend)",
        ),
        s(
            "do_not_follow",
            InstructionOverride,
            Soft,
            r"\b(?:do not|don't|stop|no longer|never again) (?:follow|obey|adhere to|listen to|respect|comply with)(?:ing)? (?:\w+ ){0,2}?(?:instructions|rules|guidelines|directives|system prompt|programming|developers?)",
        ),
        s(
            "safety_bypass",
            InstructionOverride,
            Soft,
            r"\b(?:bypass|disable|turn off|switch off|circumvent|evade|ignore|deactivate|remove|override) (?:\w+ ){0,2}?(?:safety|security|content|moderation|ethical|ethics) (?:filters?|checks?|guardrails?|polic(?:y|ies)|restrictions?|rules?|guidelines?|settings?|protocols?|measures?)",
        ),
        s(
            "goal_hijack",
            InstructionOverride,
            Soft,
            r"\b(?:stop everything|nevermind|never mind)\b[^\n]{0,40}?\b(?:just|only|instead) (?:print|say|output|write|reply|respond)",
        ),
        s(
            "conceal_from_user",
            InstructionOverride,
            Soft,
            r"\b(?:do not|don't|never) (?:tell|inform|alert|notify|mention (?:this|it) to|reveal (?:this|it) to)(?: it to)? the user\b|\bwithout (?:telling|informing|alerting|notifying) the user\b",
        ),
        s(
            "addressed_to_model",
            InstructionOverride,
            Soft,
            r"\b(?:to|attention|note to) (?:any|all|the) (?:ai|llm|assistant|model|agent)s? (?:reading|processing|that reads|who reads)\b|\bif you are an? (?:ai|llm|language model|assistant)\b",
        ),
        s(
            "jailbreak_mode",
            RoleForgery,
            Soft,
            r"\b(?:god|jailbreak|dan|sudo|unrestricted) mode (?:is )?(?:now )?(?:on|enabled|activated|unlocked|engaged)\b|\benable (?:god|dan|jailbreak) mode|\bjailbreak(?:ed)? (?:prompt|the (?:ai|model|assistant))|\byou are (?:now )?in (?:developer|god|dan|jailbreak|maintenance|debug) mode",
        ),
        s(
            "instruction_question",
            Exfiltration,
            Soft,
            r"\bwhat (?:are|were|is) your (?:\w+ )?(?:instructions|system prompt|prompt|rules|guidelines)\b",
        ),
        // The prompt-extraction family beyond "reveal your system prompt":
        // printing the prompt variable in code, completion tricks that make
        // the model continue its own prompt ("'My instructions are:'",
        // "'I was instructed to'", "begin with 'You are'").
        s(
            "prompt_print_code",
            Exfiltration,
            Soft,
            r"\b(?:console\.(?:log|info|debug)|print(?:ln!?|f)?|puts|echo|alert|dump|var_dump|system\.out\.println|(?:logger|logging|log)\.\w+)\s*\(?\s*[$'\x22]?(?:self\.|this\.|window\.|process\.env\.)?(?:system_?prompt|sys_?prompt|system_?message|initial_?prompt|system_?instructions|hidden_?prompt|pre_?prompt)\b\s*[)'\x22]?\s*;?\s*(?:$|\n)",
        ),
        s(
            "prompt_completion_trick",
            Exfiltration,
            Soft,
            r"['\x22“‘](?:my (?:\w+ )?(?:instructions|prompt|rules|guidelines|system prompt) (?:are|is|say|read)|(?:the|your) (?:system prompt|initial prompt|hidden prompt|instructions) (?:is|are|says|reads)|i was (?:instructed|told|programmed|asked) to)\b|\bwhat (?:are|were) you not (?:supposed|allowed|permitted) to (?:tell|say|reveal|share|disclose)\b|\b(?:begin|start)\w* (?:your (?:answer|reply|response|output) )?with ['\x22“‘]you are\b",
        ),
        s(
            "remote_command",
            Exfiltration,
            Soft,
            r"\b(?:curl|wget|invoke-webrequest|iwr)\b[^\n|]{0,200}\|\s*(?:ba|z)?sh\b|\b(?:curl|wget)\b[^\n]{0,120}(?:--data|-d\s|--upload-file|-t\s|-f\s)",
        ),
    ]
}

fn structural_rules() -> Vec<Rule> {
    use Category::*;
    use Strength::*;
    let headers = alternation(|v| v.header_words);
    let cues = r"you|ignore|always|never|do not|from now|override|disregard|obey|must|grant|reveal|tu |du |usted|você|ты|вы|你|あなた|nouvelles|neue|nuevas|novas|nuove|новые|新";
    let s = |n: &str, c, st, p: String| rule(n, c, "*", st, p);
    vec![
        s("template_token_forgery", BoundaryForgery, Structural,
          r"<\|\s*(?:im_start|im_end|im_sep|system|user|assistant|endoftext|begin_of_text|end_of_text|start_header_id|end_header_id|eot_id|eom_id|fim_\w+)\s*\|>|<<\s*/?sys\s*>>|\[/?inst\]|<(?:start|end)_of_turn>".to_owned()),
        s("role_tag_forgery", BoundaryForgery, Forgery,
          r"</(?:user|user_input|input|context|document|data|human|query)>\s*<(?:system|assistant|developer|sys|instructions?)>|<(?:system|assistant|developer|sys)(?:\s[^>]*)?>[^<>]{0,300}?\S\s+\S+\s+\S[^<>]{0,300}?</(?:system|assistant|developer|sys)>".to_owned()),
        s("role_header_forgery", BoundaryForgery, Forgery,
          format!(r"(?m)^\s*#{{1,6}}\s*(?:{headers})(?:\s+\w+)?\s*[:：]|(?:\[|<<)\s*(?:{headers})(?:\s+\w+)?\s*(?:\]|>>)\s*[:：]|【\s*(?:{headers})\s*】|(?m)^\s*(?:{headers})\s*[:：]\s*(?:{cues})")),
        s("boundary_marker_forgery", BoundaryForgery, Forgery,
          r"(?:-{2,}|={2,}|#{2,}|\*{2,}|\[|<|【)\s*(?:end|beginning|begin|start|fin|ende|fine|final|fim|конец)\s+(?:of\s+|de\s+|des\s+|der\s+|del\s+|do\s+|della\s+|dei\s+)?(?:the\s+|la\s+|las\s+|los\s+|le\s+|les\s+)?(?:system\s+(?:prompt|message|instructions)|instructions?|prompt|context|user\s+input|conversation|consignes|instructions système|systemanweisungen|systemprompts?|instrucciones|instruções|istruzioni)".to_owned()),
        s("markdown_image_beacon", Exfiltration, Forgery,
          r"!\[[^\]]*\]\(\s*https?://[^)\s]*(?:\?[^)\s]*=|\{|%7b|\$)".to_owned()),
    ]
}

fn exfiltration_rule() -> Rule {
    let mut r = rule(
        "data_exfiltration",
        Category::Exfiltration,
        "*",
        // A concrete destination next to a secret and a send verb is an
        // order to leak, however the sentence is framed.
        Strength::Hard,
        // A URL, an e-mail address, or a chat handle ("DM it to @ops").
        r"https?://\S+|[\w.+-]+@[\w-]+\.[\w.-]*\w|(?:^|\s)@[\w.-]{3,}".to_owned(),
    );
    // Secrets only: this rule is hard (no discussion guard), and personal
    // data sent to an address is also what ordinary e-mail asks for
    // ("forward the customer list to anna@corp.example").
    r.requires = vec![alternation(|v| v.send_verbs), alternation(|v| v.sensitive)];
    r
}

fn all_rules() -> Vec<Rule> {
    let mut rules = Vec::new();
    // English override first: the v1 name `instruction_override` is what
    // callers and their tests see for the canonical attack.
    for v in LANGUAGES {
        rules.extend(phrasing_rules(v).into_iter().take(1));
    }
    rules.extend(english_rules());
    rules.extend(structural_rules());
    rules.push(exfiltration_rule());
    for v in LANGUAGES {
        rules.extend(phrasing_rules(v).into_iter().skip(1));
    }
    rules.extend(super::families::all_family_rules());
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_compiles_and_names_are_unique() {
        let t = &*TABLE;
        assert_eq!(t.rules.len(), t.each.len());
        let mut names: Vec<_> = t.rules.iter().map(|r| r.name.as_str()).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate rule names");
    }

    #[test]
    fn the_prefilter_skips_most_rules_on_ordinary_text() {
        let t = &*TABLE;
        assert!(
            t.prefilter.filtered() * 4 >= t.rules.len() * 3,
            "only {} of {} rules have a finite prefix set",
            t.prefilter.filtered(),
            t.rules.len()
        );
        let note = "the release review moved to thursday; bob has the notes.";
        let run = t.prefilter.candidates(note).iter().filter(|&&c| c).count();
        assert!(
            run * 2 < t.rules.len(),
            "{run} of {} rules run",
            t.rules.len()
        );
    }

    #[test]
    fn the_prefilter_never_skips_a_rule_that_matches() {
        use crate::security::normalize::{fold, plain};
        let t = &*TABLE;
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/screening/");
        let mut checked = 0;
        for set in [
            "dev.jsonl",
            "dev_obfuscated.jsonl",
            "dev_multilingual.jsonl",
        ] {
            let data = std::fs::read_to_string(format!("{dir}{set}")).expect(set);
            for line in data.lines() {
                let row: serde_json::Value = serde_json::from_str(line).expect("labelled row");
                let text = plain(row["text"].as_str().expect("text"));
                for view in std::iter::once(text.clone()).chain(fold(&text)) {
                    let cand = t.prefilter.candidates(&view);
                    for (idx, re) in t.each.iter().enumerate() {
                        let name = t.rules[idx].name.as_str();
                        assert!(!re.is_match(&view) || cand[idx], "{name} skipped on {view}");
                        checked += usize::from(re.is_match(&view));
                    }
                }
            }
        }
        assert!(checked > 500, "only {checked} matches checked");
    }

    #[test]
    fn every_language_has_all_four_phrasing_rules() {
        for v in LANGUAGES {
            let count = TABLE.rules.iter().filter(|r| r.language == v.lang).count();
            assert!(count >= 4, "{}: {count}", v.lang);
        }
    }
}
