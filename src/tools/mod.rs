//! What a developer runs, not a user: the benchmarks (`kirocrew bench …`)
//! and the screening model's training (`kirocrew security train`). Kept
//! out of `src/cli` so that folder is what a user runs; the CLI only
//! dispatches here. Benches drive the product through its public
//! surfaces and handles (a daemon on a free port, the HTTP API, the hook
//! adapter), never through a face's internals.

pub mod bench;
pub mod security_train;

mod bench_compress;
mod bench_console;
mod bench_consolidate;
mod bench_context;
mod bench_daemon;
mod bench_hooks;
mod bench_lanes;
mod bench_locomo;
mod bench_locomo_gate;
mod bench_loop;
mod bench_loop_client;
mod bench_loop_data;
mod bench_loop_gold;
mod bench_loop_report;
mod bench_loop_score;
mod bench_screening;
mod failed_runs;
