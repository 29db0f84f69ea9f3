//! The screening rules: their types ([`rule`]), the per-language
//! vocabulary they are built from ([`vocab`]) and the compiled table
//! ([`table`]).

pub mod rule;
pub mod table;
pub mod vocab;
