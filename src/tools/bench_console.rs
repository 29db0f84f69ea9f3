//! `kirocrew bench console`: the operator console under load, on a daemon
//! this command starts itself (temporary home, port 0, keyword-only):
//!
//! - round trip: p50/p95 of one console command (`memory stats`), request
//!   sent → answer read;
//! - fan-out: 50 subscribers on the `audit` stream while 1,000 memory
//!   writes run through the console (`memory set`); latency per delivery
//!   is write request sent → audit event read by a subscriber;
//! - a stalled subscriber (subscribed, never reading) during those writes
//!   and then during `--stall-writes` updates with ~3.5 KB values (each
//!   audit row then carries ~7 KB, old and new value), far more than the
//!   socket buffers and the 1,024-row ring hold, so the lag path is really
//!   taken: the process's resident memory is sampled throughout (peak
//!   against the bytes the stalled client was sent), and once it reads
//!   again it must be told what it missed.
//!
//! The daemon runs on its own actix system thread; the clients on another
//! thread, so neither measures the other's scheduling.

use std::cell::RefCell;
use std::collections::HashMap;
use std::process::ExitCode;
use std::rc::Rc;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::{json, Value};

use super::bench_daemon::BenchDaemon;
use super::bench_locomo::percentile;
use crate::console::client::ConsoleClient;
use crate::home::DataHome;

/// Options of `kirocrew bench console`.
#[derive(Debug, clap::Args)]
pub struct ConsoleArgs {
    /// Round trips measured.
    #[arg(long, default_value_t = 500)]
    pub requests: usize,
    /// Audit subscribers during the writes.
    #[arg(long, default_value_t = 50)]
    pub subscribers: usize,
    /// Memory writes while they listen.
    #[arg(long, default_value_t = 1000)]
    pub writes: usize,
    /// Large updates while only the stalled subscriber is subscribed.
    #[arg(long, default_value_t = 3000)]
    pub stall_writes: usize,
    /// Print one JSON object as the last line.
    #[arg(long)]
    pub json: bool,
}

/// Runs the benchmark.
pub(super) fn run(args: ConsoleArgs) -> anyhow::Result<ExitCode> {
    crate::telemetry::init(false, "warn");
    let dir = tempfile::tempdir().context("creating a temporary home")?;
    let home = DataHome::resolve(Some(dir.path().to_path_buf()))?;
    let mut settings = crate::config::load(dir.path(), Vec::new())?.settings;
    settings.server.console_max_sessions = args.subscribers + 4;
    settings.memory.embed_model_path = dir.path().join("no-model.gguf").display().to_string();
    settings.memory.migrated = true;
    let daemon = BenchDaemon::start(home, settings)?;
    let (address, token) = (daemon.address(), daemon.token().to_owned());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let report = runtime.block_on(measure(address, token, &args));
    daemon.stop()?;
    let report = report?;
    print_report(&report);
    if args.json {
        println!("{report}");
    }
    Ok(ExitCode::SUCCESS)
}

async fn measure(
    address: std::net::SocketAddr,
    token: String,
    args: &ConsoleArgs,
) -> anyhow::Result<Value> {
    let connect = || ConsoleClient::connect(address, Some(&token), "bench");
    let mut writer = connect().await?;
    // Round trips.
    let mut round_trips = Vec::with_capacity(args.requests);
    for _ in 0..args.requests {
        let t = Instant::now();
        writer.request("memory stats", json!({})).await?;
        round_trips.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    round_trips.sort_by(f64::total_cmp);

    // Fan-out.
    let sent: Rc<RefCell<HashMap<String, Instant>>> = Rc::default();
    let latencies: Rc<RefCell<Vec<f64>>> = Rc::default();
    let lagged: Rc<RefCell<u64>> = Rc::default();
    let local = tokio::task::LocalSet::new();
    let mut listeners = Vec::new();
    for _ in 0..args.subscribers {
        let mut client = connect().await?;
        client
            .request("subscribe", json!({"stream": "audit"}))
            .await?;
        listeners.push(client);
    }
    let mut stalled = connect().await?;
    stalled
        .request("subscribe", json!({"stream": "audit"}))
        .await?;
    let rss_before = resident_kib();
    let writes = args.writes;
    let report = local
        .run_until(async {
            let mut tasks = Vec::new();
            for mut client in listeners {
                let (sent, latencies, lagged) = (sent.clone(), latencies.clone(), lagged.clone());
                tasks.push(tokio::task::spawn_local(async move {
                    let mut seen = 0;
                    while seen < writes {
                        let Ok(frame) =
                            tokio::time::timeout(Duration::from_secs(60), client.next_event())
                                .await
                        else {
                            break;
                        };
                        let frame = frame?;
                        if frame["type"] == "lagged" {
                            let missed = frame["missed"].as_u64().unwrap_or(0);
                            *lagged.borrow_mut() += missed;
                            seen += missed as usize;
                            continue;
                        }
                        seen += 1;
                        let key = frame["data"]["key"].as_str().unwrap_or_default();
                        if let Some(t) = sent.borrow().get(key) {
                            latencies
                                .borrow_mut()
                                .push(t.elapsed().as_secs_f64() * 1000.0);
                        }
                    }
                    client.close().await;
                    Ok::<_, anyhow::Error>(())
                }));
            }
            let started = Instant::now();
            for i in 0..writes {
                let key = format!("pref.bench_k{i}");
                sent.borrow_mut().insert(key.clone(), Instant::now());
                writer
                    .request(
                        "memory set",
                        json!({"key": key, "value": format!("value {i}")}),
                    )
                    .await?;
            }
            let write_secs = started.elapsed().as_secs_f64();
            for t in tasks {
                t.await??;
            }
            Ok::<_, anyhow::Error>(write_secs)
        })
        .await?;
    let rss_after_fan_out = resident_kib();
    // The stall: large updates, so the events outgrow every buffer.
    let big = "x".repeat(3_500);
    let mut rss_peak = rss_after_fan_out;
    let mut event_bytes = 0u64;
    for i in 0..args.stall_writes {
        let value = format!("{i} {big}");
        // An update carries the old value too.
        event_bytes += 2 * value.len() as u64;
        writer
            .request(
                "memory set",
                json!({"key": format!("pref.bench_big{}", i % 100), "value": value}),
            )
            .await?;
        if i % 250 == 0 {
            rss_peak = rss_peak.max(resident_kib());
        }
    }
    let rss_after = resident_kib();
    rss_peak = rss_peak.max(rss_after);
    // What the stalled subscriber gets once it reads again.
    let expected = (writes + args.stall_writes) as u64;
    let (mut got, mut missed) = (0u64, 0u64);
    while got + missed < expected {
        let frame = tokio::time::timeout(Duration::from_secs(30), stalled.next_event()).await??;
        if frame["type"] == "lagged" {
            missed += frame["missed"].as_u64().unwrap_or(0);
        } else {
            got += 1;
        }
    }
    stalled.close().await;
    writer.close().await;
    let mut fan_out = latencies.borrow().clone();
    fan_out.sort_by(f64::total_cmp);
    let lagged = *lagged.borrow();
    Ok(json!({
        "round_trip_ms": {"p50": percentile(&round_trips, 50.0), "p95": percentile(&round_trips, 95.0), "n": round_trips.len()},
        "fan_out_ms": {
            "p50": percentile(&fan_out, 50.0), "p95": percentile(&fan_out, 95.0),
            "deliveries": fan_out.len(), "subscribers": args.subscribers, "writes": writes,
            "lagged_events": lagged, "writes_per_sec": writes as f64 / report,
        },
        "stalled_subscriber": {
            "rss_kib_before": rss_before, "rss_kib_after_fan_out": rss_after_fan_out,
            "rss_kib_peak": rss_peak, "rss_kib_after": rss_after,
            "stall_writes": args.stall_writes, "event_bytes_sent": event_bytes,
            "received_after_stall": got, "reported_missed": missed,
            "lag_path_taken": missed > 0,
        },
    }))
}

fn print_report(r: &Value) {
    println!(
        "console round trip (memory stats): p50 {:.2} ms, p95 {:.2} ms ({} requests)",
        r["round_trip_ms"]["p50"].as_f64().unwrap_or(0.0),
        r["round_trip_ms"]["p95"].as_f64().unwrap_or(0.0),
        r["round_trip_ms"]["n"]
    );
    let f = &r["fan_out_ms"];
    println!(
        "audit fan-out, {} subscribers x {} writes: p50 {:.2} ms, p95 {:.2} ms ({} deliveries, {} lagged, {:.0} writes/s)",
        f["subscribers"], f["writes"],
        f["p50"].as_f64().unwrap_or(0.0), f["p95"].as_f64().unwrap_or(0.0),
        f["deliveries"], f["lagged_events"], f["writes_per_sec"].as_f64().unwrap_or(0.0)
    );
    let s = &r["stalled_subscriber"];
    println!(
        "stalled subscriber: RSS {} KiB before, {} KiB after the fan-out, peak {} KiB over {} large updates (~{} KiB of events addressed to it); once reading: {} events, told it missed {}",
        s["rss_kib_before"], s["rss_kib_after_fan_out"], s["rss_kib_peak"], s["stall_writes"],
        s["event_bytes_sent"].as_u64().unwrap_or(0) / 1024,
        s["received_after_stall"], s["reported_missed"]
    );
}

/// This process's resident set, in KiB (Linux; 0 elsewhere).
fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}
