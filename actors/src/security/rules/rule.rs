//! What a screening rule is: a stable name, a category, a language, how
//! much the discussion guard may soften it, and its pattern.

use serde::{Deserialize, Serialize};

/// The family of attack a rule belongs to (issue 12's four rule sets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// "Ignore previous instructions", "new instructions:", safety bypass.
    InstructionOverride,
    /// Redefining who the model is ("you are now DAN", "pretend to be…").
    RoleForgery,
    /// Forged prompt structure: chat-template tokens, `<system>` turns,
    /// `### SYSTEM:` headers, fake end-of-prompt markers.
    BoundaryForgery,
    /// Carrying data out: system-prompt disclosure, secrets sent to a URL
    /// or address, image beacons, remote commands.
    Exfiltration,
}

impl Category {
    /// The snake_case name used in verdicts and the labelled data.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InstructionOverride => "instruction_override",
            Self::RoleForgery => "role_forgery",
            Self::BoundaryForgery => "boundary_forgery",
            Self::Exfiltration => "exfiltration",
        }
    }
}

/// How the discussion guard ([`crate::security::speech`]) treats a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strength {
    /// Quoted or reported speech does not block (most phrasing rules).
    Soft,
    /// Always blocks: a concrete exfiltration destination next to a secret
    /// and a send verb is an order to leak however the sentence frames it.
    Hard,
    /// Forged prompt structure (a `[SYSTEM]` header, a `</context><system>`
    /// turn, a fake transcript) or an image beacon: no discussion guard —
    /// a forged turn acts on the model whatever sentence frames it — but
    /// the statistical model may withdraw the block when the text, the
    /// match's neighbourhood and its sentence all read as confidently
    /// benign. Why: write-ups, playbooks and lecture notes show these
    /// forms; on the labelled sets, each left out in turn, the benign
    /// texts they blocked all scored under 0.4 as whole texts, the attacks
    /// nearly all above 0.5 (see `ngram::VETO`).
    Forgery,
    /// A structural token (`<|im_start|>`, `[INST]`): blocks where the text
    /// *uses* it, not where it only *mentions* it — in backticks or quotes,
    /// on a line of code, named as a noun ("the `[INST]` and `[/INST]`
    /// tokens"), or asked about. Documentation, questions and code about
    /// chat templates are full of these tokens; a forged turn sits bare in
    /// the text (see `speech::is_mention`).
    Structural,
}

/// Where a rule's extra requirements must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Within {
    /// In the sentence around the match (most rules: the words must
    /// belong together).
    #[default]
    Sentence,
    /// Anywhere in the text (a claim of authority in one sentence, the
    /// powers it grants in the next).
    Text,
}

/// One screening rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Stable identifier stored in audit events and error messages:
    /// English rules keep the v1 names (`instruction_override`, …), other
    /// languages append `/<lang>` (`instruction_override/fr`).
    pub name: String,
    /// Attack family.
    pub category: Category,
    /// ISO 639-1 code, or `*` for language-independent structure.
    pub language: &'static str,
    /// Whether the discussion guard may soften a match.
    pub strength: Strength,
    /// The regex, matched against lower-cased normalized text. `\b` means
    /// an ASCII word boundary (see `table.rs`).
    pub pattern: String,
    /// Extra regexes that must all match in the same sentence as the
    /// pattern (e.g. exfiltration: a destination *and* a send verb *and* a
    /// sensitive object).
    pub requires: Vec<String>,
    /// Where `requires` must hold.
    pub within: Within,
}
