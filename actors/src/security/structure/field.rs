//! One string value of a structured text, with the name it is filed under
//! (its own file so the readers beside `structure.rs` need not import it).

/// One string value of a structured text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Field {
    /// The nearest key above the value (`""` at the top level).
    pub(crate) name: String,
    /// The value, escapes decoded.
    pub(crate) value: String,
}
