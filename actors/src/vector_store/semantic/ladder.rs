//! The semantic conflict ladder (spec: "Semantic Memory → Conflict
//! resolution" and "Conflict resolution: which layer wins").
//!
//! 1. `user_explicit` always wins, and only another `user_explicit` write may
//!    overwrite a `user_explicit` row.
//! 2. Otherwise the higher confidence wins.
//! 3. Confidences within [`CONFIDENCE_TIE_BAND`] count as equal, and then the
//!    newer write (the incoming one) wins.

use super::validate::USER_EXPLICIT;

/// Confidences this close count as equal.
pub(crate) const CONFIDENCE_TIE_BAND: f64 = 0.1;

/// Absorbs binary rounding so that, e.g., 0.9 vs 0.8 (0.0999…98 apart in
/// f64) and 0.95 vs 0.85 (0.1000…01 apart) both count as "within 0.1".
const EPSILON: f64 = 1e-9;

/// The stored row an incoming write competes with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Incumbent<'a> {
    /// Its source label.
    pub source: &'a str,
    /// Its confidence.
    pub confidence: f64,
}

/// What the ladder decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// No active row: insert.
    Create,
    /// The incoming write wins: overwrite.
    Overwrite,
    /// The incumbent wins; the reason is recorded in the `conflict_skip` event.
    Skip(String),
}

/// Decides whether an incoming write (`source`, `confidence`) replaces
/// `incumbent`.
pub(crate) fn decide(incumbent: Option<Incumbent<'_>>, source: &str, confidence: f64) -> Verdict {
    let Some(old) = incumbent else {
        return Verdict::Create;
    };
    if source == USER_EXPLICIT {
        return Verdict::Overwrite;
    }
    if old.source == USER_EXPLICIT {
        return Verdict::Skip(format!(
            "the stored value is user_explicit; only another user_explicit write may replace it (incoming source: {source})"
        ));
    }
    if (confidence - old.confidence).abs() <= CONFIDENCE_TIE_BAND + EPSILON
        || confidence > old.confidence
    {
        Verdict::Overwrite
    } else {
        Verdict::Skip(format!(
            "stored confidence {} beats incoming {} by more than {CONFIDENCE_TIE_BAND}",
            old.confidence, confidence
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(source: &str, confidence: f64) -> Option<Incumbent<'_>> {
        Some(Incumbent { source, confidence })
    }

    #[test]
    fn empty_slot_is_created() {
        assert_eq!(decide(None, "consolidation", 0.8), Verdict::Create);
    }

    #[test]
    fn user_explicit_always_wins() {
        assert_eq!(
            decide(row("consolidation", 1.0), USER_EXPLICIT, 0.1),
            Verdict::Overwrite
        );
        assert_eq!(
            decide(row(USER_EXPLICIT, 1.0), USER_EXPLICIT, 0.2),
            Verdict::Overwrite
        );
    }

    #[test]
    fn only_user_explicit_replaces_user_explicit() {
        assert!(matches!(
            decide(row(USER_EXPLICIT, 0.5), "consolidation", 1.0),
            Verdict::Skip(_)
        ));
    }

    #[test]
    fn higher_confidence_wins_outside_the_band() {
        assert_eq!(
            decide(row("consolidation", 0.8), "import", 0.95),
            Verdict::Overwrite
        );
        assert!(matches!(
            decide(row("consolidation", 0.95), "import", 0.8),
            Verdict::Skip(_)
        ));
        assert!(matches!(
            decide(row("consolidation", 0.96), "import", 0.85),
            Verdict::Skip(_)
        ));
    }

    #[test]
    fn within_the_band_the_newer_write_wins() {
        assert_eq!(
            decide(row("consolidation", 0.9), "import", 0.8),
            Verdict::Overwrite
        );
        assert_eq!(
            decide(row("consolidation", 0.95), "import", 0.85),
            Verdict::Overwrite
        );
        assert_eq!(
            decide(row("consolidation", 0.85), "import", 0.85),
            Verdict::Overwrite
        );
    }
}
