//! The operator commands the CLI and the operator console share: their
//! clap arguments and the functions that run them on the actors' handles,
//! writing what they print to a caller's buffer. The CLI runs them on a
//! data home it opens ([`crate::cli`]); the console runs them inside the
//! daemon on its own handles ([`crate::console::commands`]), so both print
//! the same text and every write passes the same owner's writer.

pub mod config_cmd;
pub mod doctor;
pub mod embedding;
pub mod error;
pub mod hooks;
pub mod learn;
pub mod memory;
pub mod quarantine;
pub mod skills;

pub use error::{CommandError, CommandResult};

mod memory_commands;
mod memory_files;
mod skills_commands;
