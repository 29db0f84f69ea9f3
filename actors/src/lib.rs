//! # kirocrew-actors
//!
//! The stateful core of kirocrew. Every piece of mutable state has exactly
//! one owner here: an actix actor. Callers never touch that state directly;
//! they hold a cloneable `…Handle` whose async methods return
//! `Result<_, …Error>`, so `Addr<T>` and `MailboxError` never leak into the
//! HTTP layer (`src/http`) or the CLI (`src/cli`). Nothing in this crate
//! knows about HTTP.
//!
//! ## The actors
//!
//! | actor (module) | owns | talked to by |
//! |---|---|---|
//! | `VectorStore` ([`vector_store`]) | memory.db: semantic rows, episodic fragments + their HNSW index, lessons, the audit trail, the embedding space | HTTP memory/lessons routes, CLI `memory`/`learn`, migration, embedding apply flow |
//! | `Embedder` ([`embedder`]) | the embedding backend (llama.cpp) and its cache | `VectorStoreHandle` (embed before commit), embedding routes, `bench embed` |
//! | `DownloadManager` ([`download`]) | the model file, its staging files and download status | start-up task, enable-embeddings and status routes |
//! | `MemoryFiles` ([`memory_files`]) | `workspace/memory/` (preferences, projects, history) and `memory_index.db` | memory-files routes, CLI `memory search --files`, heartbeat, migration |
//! | `SkillLedger` ([`skills`]) | skill-usage.json (the delivery tally) and the skill catalog beside it (SKILL.md discovery, frontmatter cache) | HTTP skills routes, CLI `skills`, the context builder (session skills, `$name`, triggers) |
//! | `HookRunner` ([`hooks`]) | the hook configuration in force (config.json `hooks`, hooks.json); script hooks run in the caller's task under its concurrency limit | gateway hook routes, hooks config routes, CLI `hooks`, context builder |
//! | `SecurityLog` ([`security_log`]) | `security-events.jsonl`: hook decisions, denied reads, injection blocks, skill toggles, auth failures | HTTP routes, hook runner, channel history, skills, CLI `security events` |
//! | `Transcripts` ([`transcripts`]) | `sessions/`: every session's turns (JSONL) and metadata (incl. the consolidation marker) | gateway session routes, context builder, consolidator |
//! | `ChannelHistory` ([`channel_history`]) | per-channel message buffers (mention / observe / off) and `history/<channel_id>.jsonl` | HTTP channel routes (the gateway pushes, the context builder reads) |
//! | `Consolidator` ([`consolidator`]) | per-session prefs offsets, runs in flight, last outcomes (the history marker lives in the transcript metadata) | gateway message route (every turn), heartbeat (idle checks), consolidation routes, `bench consolidate` |
//! | `Heartbeat` ([`heartbeat`]) | the tick counter and live history settings | the daemon (start/stop), settings route; it drives `MemoryFiles` and notifies idle-check subscribers over a channel |
//!
//! Every actor module has the same shape: `mod.rs` (docs, file list,
//! re-exports only), `actor.rs` (the struct, its lifecycle and supervision),
//! `messages.rs` (one `pub(crate)` struct per request, imperative
//! verb–noun, each with a thin handler answering `Result<_, ItsError>`),
//! `handle.rs` (the public `…Handle`; every call goes through
//! [`ask`](crate::ask) so a dead mailbox becomes the error type's
//! `Unavailable`), `error.rs` (one `thiserror` enum with
//! `From<MailboxError>`), and pure logic in plain files beside them,
//! unit-tested without actix. `vector_store` repeats that shape once per
//! domain (`semantic/`, `episodic/`, `lessons/`, `space/`, `transfer/`).
//!
//! Serialization comes from the owner's mailbox rather than from locks: the
//! reference implementation guarded one SQLite connection with a
//! process-wide `RLock` (spec: "Vector Memory → Thread safety"); here a
//! read-modify-write runs inside an `AtomicResponse` handler, so no other
//! message of the same actor interleaves with it.
//!
//! ## Not actors
//!
//! - [`ann`]: approximate nearest neighbours (usearch HNSW) over vectors
//!   keyed by row id; knows nothing of the store (callers pass the space
//!   signature).
//! - [`security`]: layered prompt-injection screening (normalize, decode,
//!   multilingual rules, discussion guard, exemplar similarity) and
//!   credential / exfiltration-URL redaction (pure).
//! - [`control_chars`]: NUL and bidirectional-override characters every
//!   writer refuses (pure).
//! - [`lessons_file`]: the `lessons.jsonl` fallback when memory.db is
//!   unavailable.
//! - [`migration`]: one-shot import of the legacy Markdown memory and
//!   lessons through the store's ordinary writers.
//! - [`context_block`]: a rendered block plus what happened to each
//!   candidate (the context receipt's unit).
//! - [`jsonl`]: append-only JSON-lines files (0600, torn-line safe).
//! - [`atomic_file`]: whole-file replacement that a crash cannot tear
//!   (temporary file, fsync, rename, fsync of the folder).
//! - [`llm`]: the `LlmClient` seam and its two backends (llama.cpp chat
//!   with a schema-derived GBNF grammar; an OpenAI-compatible endpoint).
//! - [`clock`]: the injectable time source every time-dependent rule uses.
//! - [`sensitive_paths`]: `is_sensitive_path` and the guarded file read
//!   (`safe_read_file`, its audited carve-out `safe_read_file_internal`).
//! - [`clock`]: the injectable wall and monotonic clocks every
//!   time-dependent rule uses.

pub mod ann;
mod ask;
pub mod atomic_file;
pub mod channel_history;
pub mod clock;
pub mod consolidator;
pub mod context_block;
pub mod control_chars;
pub mod download;
pub mod embedder;
pub mod heartbeat;
pub mod hooks;
pub mod jsonl;
pub mod lessons_file;
pub mod llm;
pub mod memory_files;
pub mod migration;
mod model_loader;
pub mod security;
pub mod security_log;
pub mod sensitive_paths;
pub mod skills;
pub mod transcripts;
pub mod vector_store;
