use super::rules::*;
use crate::embedder::calibration::Thresholds;
use crate::vector_store::keyword::{stems, KeywordQuery};

fn existing(rule: &str, cosine: Option<f32>) -> ExistingLesson {
    ExistingLesson {
        key: lesson_key(rule),
        rule: rule.to_owned(),
        cosine,
    }
}

#[test]
fn keys_hash_the_normalized_rule() {
    let k = lesson_key("  Always   run the tests ");
    assert_eq!(k, lesson_key("Always run the tests"));
    assert!(k.starts_with("lesson.") && k.len() == 7 + 64);
    assert_ne!(k, lesson_key("always run the tests"));
}

#[test]
fn text_round_trips_with_and_without_a_negative() {
    let t = lesson_text("use rg", Some("grep -r"));
    assert_eq!(t, "use rg — NOT: grep -r");
    assert_eq!(
        parse_lesson_text(&t),
        ("use rg".to_owned(), Some("grep -r".to_owned()))
    );
    assert_eq!(lesson_text("use rg", Some("  ")), "use rg");
    assert_eq!(parse_lesson_text("use rg"), ("use rg".to_owned(), None));
}

#[test]
fn validation_rejects_empty_long_and_separator_rules() {
    assert!(validate_lesson(&LessonWrite::user("   ")).is_err());
    assert!(validate_lesson(&LessonWrite::user("x".repeat(1001))).is_err());
    assert!(validate_lesson(&LessonWrite::user("x".repeat(1000))).is_ok());
    assert!(validate_lesson(&LessonWrite::user("a — NOT: b")).is_err());
    let mut w = LessonWrite::user(" use  rg ");
    w.negative = Some(" ".into());
    assert_eq!(validate_lesson(&w).unwrap(), ("use rg".to_owned(), None));
}

#[test]
fn substring_dedup_keeps_the_more_specific_rule() {
    let old = [existing("always use dark mode", None)];
    assert_eq!(
        dedup(
            "use dark mode",
            &old,
            Thresholds::REFERENCE.lesson_duplicate
        ),
        Dedup::Duplicate(lesson_key("always use dark mode"))
    );
    let old = [existing("use dark mode", None)];
    assert_eq!(
        dedup(
            "Always use dark mode in the editor",
            &old,
            Thresholds::REFERENCE.lesson_duplicate
        ),
        Dedup::Replace(lesson_key("use dark mode"))
    );
}

#[test]
fn topic_overlap_lets_the_newer_replace() {
    let old = [existing("use dark mode", None)];
    assert_eq!(
        dedup(
            "use light mode",
            &old,
            Thresholds::REFERENCE.lesson_duplicate
        ),
        Dedup::Replace(lesson_key("use dark mode"))
    );
    let unrelated = [existing("run cargo fmt before committing", None)];
    assert_eq!(
        dedup(
            "use light mode",
            &unrelated,
            Thresholds::REFERENCE.lesson_duplicate
        ),
        Dedup::New
    );
}

#[test]
fn embedding_dedup_keeps_the_longer_text() {
    // No shared keywords, so only the embedding rung can match.
    let old = [existing("use ripgrep for code lookups", Some(0.9))];
    assert_eq!(
        dedup(
            "prefer rg when searching",
            &old,
            Thresholds::REFERENCE.lesson_duplicate
        ),
        Dedup::Duplicate(lesson_key("use ripgrep for code lookups"))
    );
    let old = [existing("prefer rg when searching", Some(0.9))];
    assert_eq!(
        dedup(
            "use ripgrep for code lookups",
            &old,
            Thresholds::REFERENCE.lesson_duplicate
        ),
        Dedup::Replace(lesson_key("prefer rg when searching"))
    );
    let old = [existing("search with rg", Some(0.85))];
    assert_eq!(
        dedup(
            "prefer ripgrep for code",
            &old,
            Thresholds::REFERENCE.lesson_duplicate
        ),
        Dedup::New
    );
}

#[test]
fn the_rules_own_key_is_not_a_duplicate() {
    let old = [existing("use dark mode", Some(1.0))];
    assert_eq!(
        dedup(
            "use dark mode",
            &old,
            Thresholds::REFERENCE.lesson_duplicate
        ),
        Dedup::New
    );
}

fn lesson(rule: &str) -> Lesson {
    Lesson {
        key: lesson_key(rule),
        rule: rule.into(),
        negative: None,
        category: LessonCategory::Tool,
        source: "user_explicit".into(),
        created_at: String::new(),
    }
}

#[test]
fn block_states_shown_and_omitted_within_budget() {
    let lessons: Vec<Lesson> = (0..5)
        .map(|i| lesson(&format!("rule number {i}")))
        .collect();
    let full = render_lessons_block(&lessons, 10_000);
    assert!(full.starts_with(
        "[Learned corrections]\nALWAYS follow these. They override default behavior.\n- rule number 0"
    ));
    assert!(
        full.ends_with("(5 of 5 lessons shown, 0 omitted.)"),
        "{full}"
    );
    let budget = 160;
    let part = render_lessons_block(&lessons, budget);
    assert!(part.chars().count() <= budget, "{part}");
    assert!(part.contains("- rule number 0") && !part.contains("- rule number 4"));
    assert!(part.contains("lessons shown") && part.contains("omitted"));
    assert_eq!(render_lessons_block(&lessons, 20), "");
    assert_eq!(render_lessons_block(&[], 10_000), "");
}

#[test]
fn relevance_mixes_cosine_and_keywords() {
    let q = KeywordQuery::new("how should I search code?");
    let kw = lesson_relevance(&q, &stems("search code with rg"), None);
    assert!(kw > 0.0);
    let hybrid = lesson_relevance(&q, &stems("search code with rg"), Some(Some(0.5)));
    assert!((hybrid - (0.6 * 0.5 + 0.4 * kw)).abs() < 1e-9);
    assert!(lesson_relevance(&q, &stems("unrelated"), Some(None)).abs() < 1e-9);
}
