//! Per-section caps and their scaling with the model's context window
//! (spec "Per-section caps", "Dynamic budget scaling").
//!
//! Every cap is `int(base × fraction)`; the fractions are the single source
//! of truth. At the 1M-token reference window the base is 165,000 chars and
//! the caps are byte-for-byte the spec's constants; a smaller window scales
//! the base linearly (`165,000 × window / 1,000,000`), floored at 20 % of
//! the reference base so a misreported window cannot collapse the caps.
//! `None` (unknown, empty or `auto` model) is the reference.

use serde::Serialize;

/// `_CONTEXT_BUDGET_BASE`: chars at the reference window.
pub const CONTEXT_BUDGET_BASE: usize = 165_000;

/// `_REFERENCE_WINDOW_TOKENS`.
pub const REFERENCE_WINDOW_TOKENS: u64 = 1_000_000;

/// `_PER_MESSAGE_CAP` at the reference window.
pub const PER_MESSAGE_CAP: usize = 8_000;

/// `_EPISODIC_INJECT_CAP`: the live episodic block never exceeds this.
pub const EPISODIC_INJECT_CAP: usize = 3_000;

/// Section fractions of the base, in per-mille tenths (fractions like 22.6 %
/// and 7.7 % are exact this way; floats would make `int(165,000 × 0.077)`
/// land one char off).
mod fraction {
    /// Thread history, LLM-compressed: 27 %.
    pub(super) const COMPRESSED_HISTORY: usize = 2_700;
    /// Lessons: 22.6 %.
    pub(super) const LESSONS: usize = 2_260;
    /// Thread history, truncation fallback: 21 %.
    pub(super) const HISTORY_FALLBACK: usize = 2_100;
    /// Daily history: 16 %.
    pub(super) const DAILY_HISTORY: usize = 1_600;
    /// Skills: 15 %.
    pub(super) const SKILLS: usize = 1_500;
    /// Steering: 10 %.
    pub(super) const STEERING: usize = 1_000;
    /// Semantic memory: 7.7 %.
    pub(super) const SEMANTIC: usize = 770;
    /// Episodic memory: 7.7 %.
    pub(super) const EPISODIC: usize = 770;
    /// Projects: 3.9 %.
    pub(super) const PROJECTS: usize = 390;
    /// Preferences: 2.6 %.
    pub(super) const PREFERENCES: usize = 260;
    /// Preamble headroom: 3 %.
    pub(super) const PREAMBLE: usize = 300;
    /// The denominator.
    pub(super) const WHOLE: usize = 10_000;
}

/// The caps for one window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ResolvedCaps {
    /// The scaled base (the flat ceiling with `skills.lazy_load` off).
    pub base: usize,
    /// `_COMPRESSED_HISTORY_CAP`.
    pub compressed_history: usize,
    /// `_LESSONS_CAP`.
    pub lessons: usize,
    /// `_HISTORY_BUDGET_CHARS` (thread history, truncation fallback).
    pub history_fallback: usize,
    /// `_MEMORY_HISTORY_CAP`.
    pub daily_history: usize,
    /// `_SKILLS_CAP`.
    pub skills: usize,
    /// `_STEERING_CAP`.
    pub steering: usize,
    /// `_SEMANTIC_MEMORY_CAP`.
    pub semantic: usize,
    /// `_EPISODIC_MEMORY_CAP`.
    pub episodic: usize,
    /// `_MEMORY_PROJECTS_CAP`.
    pub projects: usize,
    /// `_MEMORY_PREFS_CAP`.
    pub preferences: usize,
    /// `_PREAMBLE_HEADROOM`.
    pub preamble: usize,
    /// `_PER_MESSAGE_CAP`, scaled.
    pub per_message: usize,
}

impl ResolvedCaps {
    /// `_MAX_CONTEXT_CHARS`: the sum of the section caps (the ceiling with
    /// `skills.lazy_load` on). Thread history is either compressed or, when
    /// compression is unavailable, truncated to the fallback budget — one of
    /// the two, so only the compressed cap counts (that is how the spec's
    /// 190,575 adds up). The per-message cap is a bound inside history, not
    /// a section, so it is not in the sum either.
    pub fn max_context(&self) -> usize {
        self.compressed_history
            + self.lessons
            + self.daily_history
            + self.skills
            + self.steering
            + self.semantic
            + self.episodic
            + self.projects
            + self.preferences
            + self.preamble
    }

    /// The global ceiling: the flat base with lazy loading off, the section
    /// sum with it on.
    pub fn ceiling(&self, lazy_load: bool) -> usize {
        if lazy_load {
            self.max_context()
        } else {
            self.base
        }
    }

    /// The per-message cap clamped to the history budget, so one large
    /// message cannot push all history out.
    pub fn per_message_within(&self, history_budget: usize) -> usize {
        self.per_message.min(history_budget)
    }

    /// The live episodic block's cap: `min(_EPISODIC_INJECT_CAP, episodic)`.
    pub fn episodic_inject(&self) -> usize {
        EPISODIC_INJECT_CAP.min(self.episodic)
    }
}

/// `_resolve_caps(window)`: the caps for a model window in tokens (`None`
/// = the reference).
pub fn resolve_caps(window: Option<u64>) -> ResolvedCaps {
    let base = scaled_base(window);
    let cap = |f: usize| base * f / fraction::WHOLE;
    ResolvedCaps {
        base,
        compressed_history: cap(fraction::COMPRESSED_HISTORY),
        lessons: cap(fraction::LESSONS),
        history_fallback: cap(fraction::HISTORY_FALLBACK),
        daily_history: cap(fraction::DAILY_HISTORY),
        skills: cap(fraction::SKILLS),
        steering: cap(fraction::STEERING),
        semantic: cap(fraction::SEMANTIC),
        episodic: cap(fraction::EPISODIC),
        projects: cap(fraction::PROJECTS),
        preferences: cap(fraction::PREFERENCES),
        preamble: cap(fraction::PREAMBLE),
        per_message: scale(PER_MESSAGE_CAP, base),
    }
}

/// `_MIN_CONTEXT_BUDGET_BASE`: 20 % of the reference base.
pub const MIN_CONTEXT_BUDGET_BASE: usize = CONTEXT_BUDGET_BASE / 5;

fn scaled_base(window: Option<u64>) -> usize {
    let Some(window) = window.filter(|w| *w > 0) else {
        return CONTEXT_BUDGET_BASE;
    };
    let window = window.min(REFERENCE_WINDOW_TOKENS) as u128;
    let scaled = (CONTEXT_BUDGET_BASE as u128 * window / REFERENCE_WINDOW_TOKENS as u128) as usize;
    scaled.max(MIN_CONTEXT_BUDGET_BASE)
}

/// A reference-window value scaled to `base`.
fn scale(value: usize, base: usize) -> usize {
    value * base / CONTEXT_BUDGET_BASE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_window_gives_the_spec_constants_byte_for_byte() {
        for window in [None, Some(REFERENCE_WINDOW_TOKENS)] {
            let c = resolve_caps(window);
            assert_eq!(c.base, 165_000);
            assert_eq!(c.compressed_history, 44_550);
            assert_eq!(c.lessons, 37_290);
            assert_eq!(c.history_fallback, 34_650);
            assert_eq!(c.daily_history, 26_400);
            assert_eq!(c.skills, 24_750);
            assert_eq!(c.steering, 16_500);
            assert_eq!(c.semantic, 12_705);
            assert_eq!(c.episodic, 12_705);
            assert_eq!(c.projects, 6_435);
            assert_eq!(c.preferences, 4_290);
            assert_eq!(c.preamble, 4_950);
            assert_eq!(c.per_message, 8_000);
            assert_eq!(c.max_context(), 190_575);
            assert_eq!(c.ceiling(false), 165_000);
            assert_eq!(c.ceiling(true), 190_575);
            assert_eq!(c.episodic_inject(), 3_000);
        }
    }

    #[test]
    fn smaller_windows_scale_every_cap_linearly() {
        let c = resolve_caps(Some(200_000));
        assert_eq!(c.base, 33_000);
        assert_eq!(c.lessons, 7_458);
        assert_eq!(c.semantic, 2_541);
        assert_eq!(c.per_message, 1_600);
        assert_eq!(c.episodic_inject(), 2_541);
        let c = resolve_caps(Some(128_000));
        // Below the 200K tier every window collapses to the floor.
        assert_eq!(c.base, MIN_CONTEXT_BUDGET_BASE);
        assert_eq!(c.base, 33_000);
        let tiny = resolve_caps(Some(4_000));
        assert_eq!(tiny, resolve_caps(Some(128_000)));
        assert!(tiny.preferences > 0);
        // Larger than the reference is the reference (never more).
        assert_eq!(resolve_caps(Some(2_000_000)), resolve_caps(None));
        assert_eq!(resolve_caps(Some(0)), resolve_caps(None));
        let half = resolve_caps(Some(500_000));
        assert_eq!(half.base, 82_500);
        assert_eq!(half.daily_history, 13_200);
    }

    #[test]
    fn the_per_message_cap_is_clamped_to_the_history_budget() {
        let c = resolve_caps(None);
        assert_eq!(c.per_message_within(100_000), 8_000);
        assert_eq!(c.per_message_within(500), 500);
    }
}
