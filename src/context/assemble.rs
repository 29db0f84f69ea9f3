//! Putting sections together: each section's text joined with a blank
//! line, its receipt entry counting exactly the chars it adds (separator
//! included), and the global ceiling applied last (newline-boundary
//! truncation, a last resort the caps normally make unnecessary).

use kirocrew_actors::context_block::{BlockItem, ContextBlock, DropReason};

use super::receipt::SectionReceipt;

/// Between two sections.
const SEPARATOR: &str = "\n\n";

/// A context being built.
#[derive(Debug, Default)]
pub(crate) struct Assembly {
    text: String,
    sections: Vec<SectionReceipt>,
}

/// Sections gathered apart (concurrently) and appended later in order.
#[derive(Debug, Default)]
pub(crate) struct Parts(Vec<Pending>);

/// A queued section: name, group, cap, text, items.
type Pending = (
    &'static str,
    &'static str,
    Option<usize>,
    String,
    Vec<BlockItem>,
);

impl Parts {
    /// Queues a section (see [`Assembly::push`]).
    pub(crate) fn push(
        &mut self,
        name: &'static str,
        group: &'static str,
        cap: Option<usize>,
        text: &str,
        items: Vec<BlockItem>,
    ) {
        self.0.push((name, group, cap, text.to_owned(), items));
    }

    /// Queues `block` as section `name`; answers how many of its
    /// candidates went in (for the receipt's reasons).
    pub(crate) fn push_block(
        &mut self,
        name: &'static str,
        group: &'static str,
        cap: Option<usize>,
        block: ContextBlock,
    ) -> usize {
        let included = block.items.iter().filter(|i| i.included).count();
        self.push(name, group, cap, &block.text, block.items);
        included
    }

    /// The text and items of the queued section `name`, to revise them
    /// before they are appended (cross-layer supersession).
    pub(crate) fn section_mut(&mut self, name: &str) -> Option<(&mut String, &mut Vec<BlockItem>)> {
        self.0
            .iter_mut()
            .find(|p| p.0 == name)
            .map(|(_, _, _, text, items)| (text, items))
    }
}

impl Assembly {
    /// Appends gathered sections in their order.
    pub(crate) fn extend(&mut self, parts: Parts) {
        for (name, group, cap, text, items) in parts.0 {
            self.push(name, group, cap, &text, items);
        }
    }

    /// Appends a section. An empty text adds nothing to the context but
    /// its items still go into the receipt (so a dropped candidate is
    /// accounted for).
    pub(crate) fn push(
        &mut self,
        name: &'static str,
        group: &'static str,
        cap: Option<usize>,
        text: &str,
        items: Vec<BlockItem>,
    ) {
        let mut chars = 0;
        if !text.is_empty() {
            if !self.text.is_empty() {
                self.text.push_str(SEPARATOR);
                chars += SEPARATOR.len();
            }
            self.text.push_str(text);
            chars += text.chars().count();
        }
        if chars > 0 || !items.is_empty() {
            self.sections.push(SectionReceipt {
                name,
                group,
                chars,
                cap,
                items,
            });
        }
    }

    /// The context and its sections, cut at `ceiling` chars on a newline
    /// boundary if it is longer (the sections past the cut lose their chars
    /// and their items are reported dropped by the cap).
    pub(crate) fn finish(self, ceiling: usize) -> (String, Vec<SectionReceipt>, bool) {
        let Self {
            mut text,
            mut sections,
        } = self;
        let total = text.chars().count();
        if total <= ceiling {
            return (text, sections, false);
        }
        let byte_at_ceiling = text
            .char_indices()
            .nth(ceiling)
            .map_or(text.len(), |(i, _)| i);
        let cut = text[..byte_at_ceiling]
            .rfind('\n')
            .unwrap_or(byte_at_ceiling);
        text.truncate(cut);
        let mut remaining = text.chars().count();
        for section in &mut sections {
            let kept = section.chars.min(remaining);
            remaining -= kept;
            if kept < section.chars && kept == 0 {
                for item in &mut section.items {
                    if item.included {
                        *item = item.clone().dropped(DropReason::Cap);
                    }
                }
            }
            section.chars = kept;
        }
        (text, sections, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_chars_add_up_to_the_context_length() {
        let mut a = Assembly::default();
        a.push("one", "conduct", None, "[A]\nxx", vec![]);
        a.push(
            "empty",
            "memory",
            Some(10),
            "",
            vec![BlockItem::new("k", "semantic", None).dropped(DropReason::Cap)],
        );
        a.push("two", "memory", Some(100), "[B]\nyyé", vec![]);
        let (text, sections, cut) = a.finish(1_000);
        assert!(!cut);
        assert_eq!(text, "[A]\nxx\n\n[B]\nyyé");
        assert_eq!(
            sections.iter().map(|s| s.chars).sum::<usize>(),
            text.chars().count()
        );
        assert_eq!(sections.len(), 3);
        assert_eq!(sections[1].chars, 0);
    }

    #[test]
    fn the_ceiling_cuts_on_a_newline_and_the_receipt_follows() {
        let mut a = Assembly::default();
        a.push("one", "conduct", None, "[A]\nline one\nline two", vec![]);
        let mut item = BlockItem::new("x", "semantic", None);
        item.included = true;
        a.push("two", "memory", None, "[B]\nmore", vec![item]);
        let (text, sections, cut) = a.finish(16);
        assert!(cut);
        assert_eq!(text, "[A]\nline one");
        assert_eq!(
            sections.iter().map(|s| s.chars).sum::<usize>(),
            text.chars().count()
        );
        assert_eq!(sections[1].chars, 0);
        assert_eq!(sections[1].items[0].dropped, Some(DropReason::Cap));
    }
}
