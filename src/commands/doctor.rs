//! `kirocrew doctor`: checks the installation (incl. which llama.cpp CPU
//! module computes, verified on this CPU for the configured model's
//! weight types, and every module passed over with why) and the data home,
//! one line per check, exit 1 if any fails. Safe to run while the daemon
//! runs. [`report`] writes to any `Write`: the CLI passes standard output
//! with a store it opened, the operator console its own buffer with the
//! daemon's store.

use kirocrew_actors::embedder::{Calibration, Similarity, Thresholds};
use std::cell::{Cell, RefCell};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::process::ExitCode;

use crate::home::DataHome;
use crate::lifecycle::read_daemon_record;
use kirocrew_actors::embedder::kernels::{self, KernelReport, Verification};
use kirocrew_actors::vector_store::VectorStoreHandle;

/// The check lines, written out at the end (interior mutability: the
/// helpers below share one `&Report`).
#[derive(Default)]
struct Report {
    failed: Cell<bool>,
    lines: RefCell<Vec<String>>,
}

impl Report {
    fn ok(&self, what: &str, detail: impl std::fmt::Display) {
        self.lines
            .borrow_mut()
            .push(format!("ok    {what}: {detail}"));
    }
    fn warn(&self, what: &str, detail: impl std::fmt::Display) {
        self.lines
            .borrow_mut()
            .push(format!("warn  {what}: {detail}"));
    }
    fn fail(&self, what: &str, detail: impl std::fmt::Display) {
        self.failed.set(true);
        self.lines
            .borrow_mut()
            .push(format!("FAIL  {what}: {detail}"));
    }
}

/// `kirocrew doctor` options.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Only print the directory the llama.cpp CPU backend modules load
    /// from (for packaging: `make install-service` copies them).
    #[arg(long)]
    pub backends_dir: bool,
}

/// Runs every check, or prints the backends directory.
pub(crate) fn run(home: DataHome, args: DoctorArgs) -> anyhow::Result<ExitCode> {
    if args.backends_dir {
        let dir = kernels::backends_dir().map_err(anyhow::Error::msg)?;
        println!("{}", dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    crate::telemetry::init(false, "error");
    // memory.db needs the home to exist; `report` checks (and reports) it.
    let _ = home.ensure();
    // A config that does not load is one of the checks' findings; memory.db
    // is still opened, with the defaults.
    let settings = match crate::app::builders::load_config(&home) {
        Ok(loaded) => loaded.settings,
        Err(_) => crate::config::default_settings()?,
    };
    actix_rt::System::new().block_on(async {
        let local = crate::app::builders::open_local_store(&home, &settings, false).await;
        let mut out = std::io::stdout().lock();
        match local {
            Ok(local) => {
                let code = report(&home, Ok(&local.store), &mut out).await;
                local.close().await?;
                Ok(code?)
            }
            Err(e) => Ok(report(&home, Err(e.to_string()), &mut out).await?),
        }
    })
}

/// Runs every check on `home`, with `store` (or why it could not be
/// opened) for the memory.db check, and writes one line per check.
pub(crate) async fn report(
    home: &DataHome,
    store: Result<&VectorStoreHandle, String>,
    out: &mut impl Write,
) -> super::CommandResult {
    writeln!(out, "kirocrew {}", env!("CARGO_PKG_VERSION"))?;
    // The file checks touch the disk (and walk the home): off the async
    // worker, which in the daemon (console `doctor`) serves other requests.
    let owned = home.clone();
    let (report, cached) = tokio::task::spawn_blocking(move || file_checks(&owned))
        .await
        .map_err(|e| super::CommandError::Failed(format!("doctor's file checks failed: {e}")))?;
    let similarity = match &store {
        Ok(store) => store.similarity().await.ok(),
        Err(_) => None,
    };
    report_similarity(&report, similarity, cached);
    // Probing starts /bin/true in new namespaces: off the async worker too.
    match tokio::task::spawn_blocking(|| {
        kirocrew_actors::hooks::machine_report(kirocrew_actors::hooks::SandboxMode::BestEffort)
    })
    .await
    {
        Ok(layers) => report_hook_sandbox(&report, &layers),
        Err(e) => report.warn("hook sandbox", format!("not probed: {e}")),
    }
    let db_result = match store {
        Ok(store) => store.stats().await.map_err(|e| e.to_string()),
        Err(e) => Err(e),
    };
    match db_result {
        Ok(stats) => report.ok(
            "memory.db",
            format!(
                "schema current; {} semantic entries, {} events, {} bytes",
                stats.semantic.active, stats.events, stats.db_size_bytes
            ),
        ),
        Err(e) => report.fail("memory.db", e),
    }
    match read_daemon_record(home) {
        Some(rec) if process_alive(rec.pid) => report.ok(
            "daemon",
            format!("running, pid {} on {}", rec.pid, rec.address),
        ),
        Some(rec) => report.warn(
            "daemon",
            format!("stale daemon.json (pid {} is gone)", rec.pid),
        ),
        None => report.ok("daemon", "not running"),
    }
    for line in report.lines.borrow().iter() {
        writeln!(out, "{line}")?;
    }
    Ok(if report.failed.get() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Which layers of the script-hook sandbox hold on this machine (what a
/// hook gets with `hooks.sandbox = "best_effort"`; `required` refuses to
/// run hooks while any is missing).
fn report_hook_sandbox(report: &Report, layers: &kirocrew_actors::hooks::SandboxLayers) {
    let held = [
        ("env", layers.env),
        ("network", layers.network),
        ("filesystem", layers.filesystem),
        ("secrets_hidden", layers.secrets_hidden),
        ("cpu", layers.cpu),
        ("memory", layers.memory),
        ("processes", layers.processes),
        ("file_size", layers.file_size),
    ]
    .iter()
    .filter(|(_, h)| *h)
    .map(|(name, _)| match *name {
        "filesystem" => format!("filesystem ({})", layers.filesystem_via.unwrap_or("?")),
        "processes" => format!("processes ({})", layers.processes_via.unwrap_or("?")),
        other => other.to_owned(),
    })
    .collect::<Vec<_>>()
    .join(", ");
    let missing = layers.missing();
    if missing.is_empty() {
        report.ok("hook sandbox", format!("every layer holds: {held}"));
    } else {
        report.warn(
            "hook sandbox",
            format!(
                "holds: {held}; missing: {} (hooks.sandbox = \"required\" refuses to run hooks here)",
                missing.join(", ")
            ),
        );
    }
}

/// The checks that read files only: home, permissions, config, the chat
/// model, token, llama.cpp's CPU backend. Also answers the calibration
/// cached for the configured embedding model, if any.
fn file_checks(home: &DataHome) -> (Report, Option<Calibration>) {
    let report = Report::default();
    match home.ensure() {
        Ok(()) => report.ok("data home", home.root().display()),
        Err(e) => report.fail("data home", format!("{e:#}")),
    }
    check_home_permissions(&report, home);
    let mut model = None;
    let mut cached = None;
    match crate::config::load(home.root(), std::env::vars()) {
        Ok(loaded) => {
            let path = crate::embedder_wiring::configured_model(home, &loaded.settings)
                .1
                .path;
            cached = cached_calibration(home, &path);
            model = Some(path);
            let server = &loaded.settings.server;
            let configured = format!("{}:{}", server.bind, server.port);
            // `serve --port/--bind` overrides the configured address: say
            // where the running daemon actually listens.
            let running = read_daemon_record(home)
                .filter(|r| process_alive(r.pid))
                .map(|r| r.address);
            let text = match running {
                Some(address) if address != configured => format!(
                    "valid; API configured on {configured}, the running daemon listens on {address} (serve --bind/--port)"
                ),
                _ => format!("valid; API on {configured}"),
            };
            report.ok("config", text);
            for w in loaded.warnings {
                report.warn("config", w);
            }
            report_chat_model(&report, home, &loaded.settings);
        }
        Err(e) => report.fail("config", e),
    }
    match std::fs::metadata(home.token_file()) {
        Ok(meta) if meta.permissions().mode() & 0o077 == 0 => {
            report.ok("api token", "present, mode 0600")
        }
        Ok(meta) => report.fail(
            "api token",
            format!(
                "mode {:o} lets others read it; run `chmod 600 {}`",
                meta.permissions().mode() & 0o777,
                home.token_file().display()
            ),
        ),
        Err(_) => report.warn(
            "api token",
            "not created yet (the daemon creates it on first start)",
        ),
    }
    // The same choice the daemon makes for the configured model.
    let types = model
        .filter(|m| m.is_file())
        .map(|m| kernels::model_types(&m))
        .unwrap_or_default();
    match kernels::cpu_backend_for(&types) {
        Ok(cpu) => report.ok(
            "llama.cpp",
            format!("CPU backend from {} ({})", cpu.dir.display(), cpu.kernels()),
        ),
        Err(e) => report.fail("llama.cpp", e),
    }
    if let Some(choice) = kernels::report() {
        report_cpu_module(&report, &choice);
    }
    (report, cached)
}

/// The similarity thresholds: the live calibration (in the daemon), else
/// one cached for the configured model, else the reference values.
fn report_similarity(report: &Report, live: Option<Similarity>, cached: Option<Calibration>) {
    let live = live.filter(|s| s.calibration.is_some());
    let view = match live {
        Some(s) => Some(serde_json::json!(s)),
        None => cached.map(|c| serde_json::json!({"calibration": c, "thresholds": c.thresholds()})),
    };
    match view {
        Some(v) => report.ok(
            "similarity",
            crate::commands::embedding::similarity_line(&v),
        ),
        None => report.ok(
            "similarity",
            format!(
                "{}; the daemon calibrates the model when it loads it",
                crate::commands::embedding::similarity_line(&serde_json::json!({
                    "calibration": null,
                    "thresholds": Thresholds::REFERENCE,
                }))
            ),
        ),
    }
}

/// The cached calibration of the embedding model at `model`, if any.
fn cached_calibration(home: &DataHome, model: &std::path::Path) -> Option<Calibration> {
    let id = kirocrew_actors::embedder::model_id_for(model);
    let path = home
        .root()
        .join("models")
        .join(crate::embedder_wiring::CALIBRATION_FILE);
    let all: Vec<Calibration> = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    all.into_iter().find(|c| c.model_id == id)
}

/// The consolidation model, and a warning when it is the test-grade
/// default (issue 35: SmolLM2-135M invents facts; grounding drops what the
/// conversation does not support, but a stronger model finds more).
fn report_chat_model(report: &Report, home: &DataHome, settings: &crate::config::Settings) {
    let models = home.root().join("models");
    match crate::consolidator_wiring::select_model(&settings.consolidation, &models) {
        crate::consolidator_wiring::ModelSelection::Endpoint(e) => report.ok(
            "chat model",
            format!("endpoint {} ({})", e.base_url, e.model),
        ),
        crate::consolidator_wiring::ModelSelection::Local {
            path,
            default: false,
        } => report.ok("chat model", format!("local {}", path.display())),
        crate::consolidator_wiring::ModelSelection::Local { default: true, .. } => {
            report.warn("chat model", crate::consolidator_wiring::TEST_GRADE_NOTE)
        }
    }
}

/// Warns when the home or a file in it lets other users in (the daemon
/// tightens them at its next start).
fn check_home_permissions(report: &Report, home: &DataHome) {
    match home.loose_permissions() {
        Ok(loose) if loose.is_empty() => {
            report.ok("permissions", "data home private (0700, files 0600)")
        }
        Ok(loose) => {
            let shown: Vec<String> = loose
                .iter()
                .take(5)
                .map(|l| format!("{} ({:o})", l.path.display(), l.mode))
                .collect();
            let more = loose.len().saturating_sub(shown.len());
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            report.warn(
                "permissions",
                format!(
                    "readable by other users: {}{more}; the daemon tightens them at start, or run `chmod -R go-rwx {}`",
                    shown.join(", "),
                    home.root().display()
                ),
            );
        }
        Err(e) => report.warn("permissions", format!("cannot check: {e:#}")),
    }
}

/// One line per module passed over, then the module computing.
fn report_cpu_module(report: &Report, choice: &KernelReport) {
    let cached = |yes: bool| if yes { " (cached verdict)" } else { "" };
    let passed_over = choice
        .candidates
        .iter()
        .filter(|m| choice.module.as_deref() != Some(m.module.as_str()));
    for m in passed_over {
        let detail = m.detail.as_deref().unwrap_or("");
        report.warn(
            "cpu module",
            format!("{} {}: {detail}{}", m.module, m.verdict, cached(m.cached)),
        );
    }
    let Some(module) = &choice.module else {
        return;
    };
    let pinned = if choice.pinned {
        format!(", pinned by {}", kernels::PIN_ENV)
    } else {
        String::new()
    };
    let from_cache = choice
        .candidates
        .iter()
        .find(|m| &m.module == module)
        .is_some_and(|m| m.cached);
    match choice.verification {
        Some(Verification::Verified) => report.ok(
            "cpu module",
            format!(
                "{module}, verified on this CPU for {}{pinned}{}",
                choice.types.join(" "),
                cached(from_cache)
            ),
        ),
        _ => report.warn("cpu module", format!("{module}, not verified{pinned}")),
    }
}

fn process_alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}
