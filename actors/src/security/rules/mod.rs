//! The screening rules: their types ([`rule`]), the per-language
//! vocabulary they are built from ([`vocab`], [`cues`]), the second
//! generation of phrase families ([`families`]) and the compiled table
//! ([`table`]).

mod build;
pub mod cues;
pub mod families;
pub mod rule;
pub mod table;
pub mod vocab;
