//! The screening rules: their types ([`rule`]), the per-language
//! vocabulary they are built from ([`vocab`], [`cues`]), the second
//! generation of phrase families ([`families`]), the compiled table
//! ([`table`]) and its shared literal pass ([`prefilter`]).

mod build;
pub(super) mod cues;
pub(super) mod families;
pub(super) mod prefilter;
pub(super) mod rule;
pub(super) mod table;
pub(super) mod vocab;
