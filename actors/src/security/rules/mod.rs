//! The screening rules: their types ([`rule`]), the per-language
//! vocabulary they are built from ([`vocab`], [`cues`]), the second
//! generation of phrase families ([`families`]), the compiled table
//! ([`table`]) and its shared literal pass ([`prefilter`]).

mod build;
pub mod cues;
pub mod families;
pub mod prefilter;
pub mod rule;
pub mod table;
pub mod vocab;
