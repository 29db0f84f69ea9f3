//! Text helpers every context block shares: how a stored value reads in a
//! prompt, and how lines are packed under a character cap.

use serde_json::Value;

/// The value as it appears in a prompt: a JSON string's contents, anything
/// else as compact JSON; newlines folded so each entry stays one line.
pub(super) fn value_text(value: &Value) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    text.replace(['\r', '\n'], " ")
}

/// `header` followed by as many `lines` as fit within `cap` characters, in
/// order; a line that does not fit is dropped and the scan goes on. Empty
/// when no line fits. Shared by every context block.
pub(crate) fn fit_lines(
    header: &str,
    lines: impl IntoIterator<Item = String>,
    cap: usize,
) -> String {
    let mut out = String::from(header);
    let mut used = header.chars().count();
    let mut any = false;
    for line in lines {
        let len = line.chars().count() + 1;
        if used + len <= cap {
            out.push('\n');
            out.push_str(&line);
            used += len;
            any = true;
        }
    }
    if any {
        out
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiline_values_stay_on_one_line() {
        assert_eq!(value_text(&Value::String("a\nb\r\nc".into())), "a b  c");
    }

    #[test]
    fn lines_that_do_not_fit_are_skipped_in_order() {
        let lines = ["aaaa".to_owned(), "b".repeat(50), "cc".to_owned()];
        assert_eq!(fit_lines("[H]", lines.clone(), 12), "[H]\naaaa\ncc");
        assert_eq!(fit_lines("[H]", lines, 3), "");
    }
}
