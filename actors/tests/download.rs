//! The model download manager against a scripted HTTP server on
//! 127.0.0.1:0: success with progress, checksum and size rejection, retry
//! after a 500, Range resume after a cut-off transfer, servers that ignore
//! or never offer ranges, shared in-flight downloads, the skip flag, Ollama
//! blob salvage, and already-installed files.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use kirocrew_actors::download::{
    backoff_delay, file_name_from_url, resolve_source, DownloadError, DownloadHandle,
    DownloadSettings, DownloadStep, ModelSource, StartOutcome, DEFAULT_MODEL_FILE_NAME,
    DEFAULT_MODEL_SHA256, DEFAULT_MODEL_URL, GGUF_MIN_BYTES,
};
use sha2::{Digest, Sha256};
use tempfile::TempDir;

/// A bit over 3 MiB, so it spans several progress steps and chunks.
const BODY_LEN: usize = 3 * 1024 * 1024 + 12_345;
/// Where the scripted cut-offs stop sending.
const CUT_AT: usize = 1024 * 1024;
const FILE_NAME: &str = "test-model.gguf";

// ---------------------------------------------------------------- server ---

/// What the server does with one request.
#[derive(Debug, Clone, Copy)]
enum Reply {
    /// 200, or 206 for `Range: bytes=N-`; advertises `Accept-Ranges: bytes`.
    Serve,
    /// Like `Serve`, but paced so a poller can watch progress.
    Slow,
    /// Always 200 with the whole body and no `Accept-Ranges`.
    IgnoreRange,
    /// Only this status.
    Status(u16),
    /// Announces the full (range) length, sends `bytes` of it, hangs up.
    CutAfter { bytes: usize, ranges: bool },
}

#[derive(Default)]
struct State {
    script: VecDeque<Reply>,
    ranges_seen: Vec<Option<String>>,
}

struct Server {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
}

impl Server {
    /// Serves `body`, answering requests with `script` in order and
    /// `fallback` after it runs out.
    fn start(body: Arc<Vec<u8>>, script: Vec<Reply>, fallback: Reply) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State {
            script: script.into(),
            ..State::default()
        }));
        let shared = state.clone();
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (body, state) = (body.clone(), shared.clone());
                thread::spawn(move || serve(stream, &body, &state, fallback));
            }
        });
        Self { addr, state }
    }

    fn url(&self) -> String {
        format!("http://{}/models/{FILE_NAME}?download=true", self.addr)
    }

    /// The `Range` header of every request so far (`None`: no header).
    fn ranges_seen(&self) -> Vec<Option<String>> {
        self.state.lock().unwrap().ranges_seen.clone()
    }

    fn requests(&self) -> usize {
        self.ranges_seen().len()
    }
}

fn serve(mut stream: TcpStream, body: &[u8], state: &Mutex<State>, fallback: Reply) {
    let mut range = None;
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("range") {
                range = Some(value.trim().to_owned());
            }
        }
    }
    let reply = {
        let mut state = state.lock().unwrap();
        state.ranges_seen.push(range.clone());
        state.script.pop_front().unwrap_or(fallback)
    };
    let start = range
        .as_deref()
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.strip_suffix('-'))
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| *n < body.len());
    let honour_range = !matches!(reply, Reply::IgnoreRange);
    let (status, slice) = match start {
        Some(n) if honour_range => ("206 Partial Content", &body[n..]),
        _ => ("200 OK", body),
    };
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n",
        slice.len()
    );
    if let (Some(n), true) = (start, honour_range) {
        head += &format!(
            "Content-Range: bytes {n}-{}/{}\r\n",
            body.len() - 1,
            body.len()
        );
    }
    let advertise = match reply {
        Reply::CutAfter { ranges, .. } => ranges,
        Reply::IgnoreRange => false,
        _ => true,
    };
    if advertise {
        head += "Accept-Ranges: bytes\r\n";
    }
    let _ = match reply {
        Reply::Status(code) => write!(
            stream,
            "HTTP/1.1 {code} Scripted\r\nContent-Length: 4\r\nConnection: close\r\n\r\nnope"
        ),
        Reply::Serve | Reply::IgnoreRange => {
            write!(stream, "{head}\r\n").and_then(|()| stream.write_all(slice))
        }
        Reply::Slow => write!(stream, "{head}\r\n").and_then(|()| {
            for chunk in slice.chunks(64 * 1024) {
                stream.write_all(chunk)?;
                thread::sleep(Duration::from_millis(3));
            }
            Ok(())
        }),
        Reply::CutAfter { bytes, .. } => write!(stream, "{head}\r\n")
            .and_then(|()| stream.write_all(&slice[..bytes.min(slice.len())])),
    };
    let _ = stream.flush();
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

// -------------------------------------------------------------- fixtures ---

/// Deterministic pseudo-random bytes (xorshift), so a misplaced chunk
/// cannot hash the same.
fn body_of(len: usize) -> Arc<Vec<u8>> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let body = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    Arc::new(body)
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

struct Fixture {
    _tmp: TempDir,
    models: PathBuf,
    blobs: PathBuf,
    body: Arc<Vec<u8>>,
    server: Server,
}

impl Fixture {
    fn new(script: Vec<Reply>, fallback: Reply) -> Self {
        Self::with_body(body_of(BODY_LEN), script, fallback)
    }

    fn with_body(body: Arc<Vec<u8>>, script: Vec<Reply>, fallback: Reply) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let (models, blobs) = (tmp.path().join("models"), tmp.path().join("blobs"));
        // An empty blob store of our own: the host's ~/.ollama never leaks in.
        std::fs::create_dir_all(&blobs).unwrap();
        let server = Server::start(body.clone(), script, fallback);
        Self {
            _tmp: tmp,
            models,
            blobs,
            body,
            server,
        }
    }

    fn sha(&self) -> String {
        sha256_hex(&self.body)
    }

    fn source(&self) -> ModelSource {
        self.source_pinned(Some(self.sha()))
    }

    fn source_pinned(&self, sha256: Option<String>) -> ModelSource {
        ModelSource {
            url: self.server.url(),
            sha256,
            file_name: FILE_NAME.to_owned(),
        }
    }

    fn settings(&self) -> DownloadSettings {
        DownloadSettings {
            ollama_blobs_dir: Some(self.blobs.clone()),
            backoff_base: Duration::from_millis(5),
            backoff_cap: Duration::from_millis(20),
            progress_every: 256 * 1024,
            ..DownloadSettings::new(self.models.clone())
        }
    }

    fn start(&self) -> DownloadHandle {
        DownloadHandle::start(self.source(), self.settings())
    }

    fn target(&self) -> PathBuf {
        self.models.join(FILE_NAME)
    }

    /// Every file in the models dir (staging files start with a dot).
    fn model_dir_files(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.models) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// The model is installed, intact, and alone in the models dir.
    fn assert_installed(&self, path: &Path) {
        assert_eq!(path, self.target());
        let bytes = std::fs::read(path).unwrap();
        assert_eq!(bytes.len(), self.body.len());
        assert_eq!(sha256_hex(&bytes), self.sha());
        assert_eq!(self.model_dir_files(), vec![FILE_NAME.to_owned()]);
    }

    /// Nothing at all in the models dir: no model, no staging leftovers.
    fn assert_nothing_left(&self) {
        assert!(!self.target().exists());
        assert_eq!(self.model_dir_files(), Vec::<String>::new());
    }
}

/// The `N` of a `Range: bytes=N-` header.
fn range_start(header: &str) -> u64 {
    let n = header
        .strip_prefix("bytes=")
        .and_then(|r| r.strip_suffix('-'));
    n.and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("malformed Range header {header:?}"))
}

// ----------------------------------------------------------------- tests ---

#[actix_rt::test]
async fn downloads_verifies_installs_and_reports_progress() {
    let fx = Fixture::new(vec![], Reply::Slow);
    let handle = fx.start();
    let waiter = handle.clone();
    let ensure = actix_rt::spawn(async move { waiter.ensure_model(1).await });

    let mut partial = Vec::new();
    while !ensure.is_finished() {
        let s = handle.status().await.unwrap();
        if s.step == DownloadStep::Downloading && s.bytes_downloaded > 0 {
            assert_eq!(s.bytes_total, Some(BODY_LEN as u64));
            partial.push(s.bytes_downloaded);
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let path = ensure.await.unwrap().unwrap();
    fx.assert_installed(&path);
    assert!(
        partial.iter().any(|b| *b < BODY_LEN as u64),
        "no intermediate progress seen: {partial:?}"
    );
    assert!(partial.windows(2).all(|w| w[0] <= w[1]), "{partial:?}");

    let status = handle.status().await.unwrap();
    assert_eq!(status.step, DownloadStep::Ready);
    assert_eq!(status.error, None);
    assert_eq!((status.attempt, status.max_attempts), (1, 1));
    assert_eq!(status.bytes_downloaded, BODY_LEN as u64);
    assert_eq!(status.bytes_total, Some(BODY_LEN as u64));
    assert_eq!(status.path.as_deref(), Some(fx.target().as_path()));
    assert_eq!(handle.model_path().await.unwrap(), Some(fx.target()));
    assert_eq!(fx.server.requests(), 1);

    // Installed and remembered: no further request.
    assert_eq!(handle.ensure_model(3).await.unwrap(), fx.target());
    let kick = handle.start_download(3).await.unwrap();
    assert_eq!(kick, StartOutcome::AlreadyInstalled);
    assert_eq!(fx.server.requests(), 1);

    let json = serde_json::to_value(&status).unwrap();
    assert_eq!(json["step"], "ready");
}

#[actix_rt::test]
async fn checksum_mismatch_fails_without_leaving_files() {
    let fx = Fixture::new(vec![], Reply::Serve);
    let wrong = "0".repeat(64);
    let handle = DownloadHandle::start(fx.source_pinned(Some(wrong.clone())), fx.settings());

    let err = handle.ensure_model(2).await.unwrap_err();
    match &err {
        DownloadError::ChecksumMismatch { expected, actual } => {
            assert_eq!(expected, &wrong);
            assert_eq!(actual, &fx.sha());
        }
        other => panic!("expected a checksum mismatch, got {other:?}"),
    }
    let status = handle.status().await.unwrap();
    assert_eq!(status.step, DownloadStep::Failed);
    assert_eq!(status.error, Some(err.to_string()));
    assert_eq!((status.attempt, status.max_attempts), (2, 2));
    assert!(status.can_retry());
    assert_eq!(fx.server.requests(), 2);
    fx.assert_nothing_left();
    assert_eq!(handle.model_path().await.unwrap(), None);
}

#[actix_rt::test]
async fn a_body_under_the_minimum_is_rejected_as_truncated() {
    let fx = Fixture::with_body(body_of(100_000), vec![], Reply::Serve);
    let handle = fx.start();
    let err = handle.ensure_model(1).await.unwrap_err();
    assert_eq!(
        err,
        DownloadError::Truncated {
            bytes: 100_000,
            min: GGUF_MIN_BYTES
        }
    );
    assert_eq!(handle.status().await.unwrap().step, DownloadStep::Failed);
    fx.assert_nothing_left();
}

#[actix_rt::test]
async fn a_server_error_is_retried_after_backoff() {
    let fx = Fixture::new(vec![Reply::Status(500)], Reply::Serve);
    let handle = fx.start();
    let path = handle.ensure_model(3).await.unwrap();
    fx.assert_installed(&path);
    assert_eq!(fx.server.requests(), 2);
    let status = handle.status().await.unwrap();
    assert_eq!((status.step, status.attempt), (DownloadStep::Ready, 2));
}

#[actix_rt::test]
async fn a_persistent_http_error_is_reported_with_its_status() {
    let fx = Fixture::new(vec![], Reply::Status(404));
    let handle = fx.start();
    assert_eq!(handle.ensure_model(2).await, Err(DownloadError::Http(404)));
    assert_eq!(fx.server.requests(), 2);
    fx.assert_nothing_left();
}

#[actix_rt::test]
async fn a_cut_off_transfer_resumes_with_a_range_request() {
    let cut = Reply::CutAfter {
        bytes: CUT_AT,
        ranges: true,
    };
    let fx = Fixture::new(vec![cut], Reply::Serve);
    let handle = fx.start();
    let path = handle.ensure_model(3).await.unwrap();
    fx.assert_installed(&path);

    let ranges = fx.server.ranges_seen();
    assert_eq!(ranges.len(), 2, "{ranges:?}");
    assert_eq!(ranges[0], None);
    let resumed_at = range_start(ranges[1].as_deref().expect("second request had no Range"));
    assert!(
        resumed_at > 0 && resumed_at <= CUT_AT as u64,
        "{resumed_at}"
    );
    let status = handle.status().await.unwrap();
    assert_eq!(status.bytes_downloaded, BODY_LEN as u64);
}

#[actix_rt::test]
async fn a_transfer_cut_on_every_attempt_leaves_no_partial_file() {
    let cut = Reply::CutAfter {
        bytes: CUT_AT,
        ranges: true,
    };
    let fx = Fixture::new(vec![], cut);
    let handle = fx.start();
    let err = handle.ensure_model(2).await.unwrap_err();
    assert!(matches!(err, DownloadError::Transport(_)), "{err:?}");
    // The second attempt resumed, so two cut-offs got two chunks in.
    let ranges = fx.server.ranges_seen();
    assert_eq!(ranges.len(), 2, "{ranges:?}");
    assert!(ranges[1].is_some());
    let status = handle.status().await.unwrap();
    assert_eq!(status.step, DownloadStep::Failed);
    assert_eq!(status.bytes_downloaded, 2 * CUT_AT as u64);
    fx.assert_nothing_left();
}

#[actix_rt::test]
async fn a_server_that_ignores_range_still_yields_a_correct_file() {
    let cut = Reply::CutAfter {
        bytes: CUT_AT,
        ranges: true,
    };
    let fx = Fixture::new(vec![cut], Reply::IgnoreRange);
    let handle = fx.start();
    let path = handle.ensure_model(3).await.unwrap();
    fx.assert_installed(&path);
    let ranges = fx.server.ranges_seen();
    assert_eq!(ranges.len(), 2, "{ranges:?}");
    assert!(ranges[1].is_some(), "the retry should have tried to resume");
}

#[actix_rt::test]
async fn without_accept_ranges_a_retry_starts_from_zero() {
    let cut = Reply::CutAfter {
        bytes: CUT_AT,
        ranges: false,
    };
    let fx = Fixture::new(vec![cut], Reply::Serve);
    let handle = fx.start();
    let path = handle.ensure_model(3).await.unwrap();
    fx.assert_installed(&path);
    assert_eq!(fx.server.ranges_seen(), vec![None, None]);
}

#[actix_rt::test]
async fn concurrent_callers_share_one_download() {
    let fx = Fixture::new(vec![], Reply::Slow);
    let handle = fx.start();
    let (a, b, kick) = tokio::join!(handle.ensure_model(3), handle.ensure_model(3), async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        handle.start_download(3).await
    });
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a, b);
    fx.assert_installed(&a);
    assert_eq!(kick.unwrap(), StartOutcome::Adopted);
    assert_eq!(fx.server.requests(), 1);
}

#[actix_rt::test]
async fn start_download_returns_at_once_and_finishes_in_the_background() {
    let fx = Fixture::new(vec![], Reply::Slow);
    let handle = fx.start();
    assert_eq!(
        handle.start_download(3).await.unwrap(),
        StartOutcome::Started
    );
    assert!(handle.status().await.unwrap().is_busy());
    // EnsureModel joins the kicked download rather than starting another.
    let path = handle.ensure_model(3).await.unwrap();
    fx.assert_installed(&path);
    assert_eq!(fx.server.requests(), 1);
}

#[actix_rt::test]
async fn the_skip_flag_never_downloads() {
    let fx = Fixture::new(vec![], Reply::Serve);
    let settings = DownloadSettings {
        skip: true,
        ..fx.settings()
    };
    let handle = DownloadHandle::start(fx.source(), settings);
    assert_eq!(handle.ensure_model(3).await, Err(DownloadError::Disabled));
    assert_eq!(handle.start_download(3).await, Err(DownloadError::Disabled));
    let status = handle.status().await.unwrap();
    assert_eq!(status.step, DownloadStep::Failed);
    let error = status.error.unwrap();
    assert!(error.contains("KIROCREW_SKIP_MODEL_DOWNLOAD"), "{error}");
    assert_eq!(fx.server.requests(), 0);
    fx.assert_nothing_left();
}

#[actix_rt::test]
async fn an_ollama_blob_is_salvaged_without_http() {
    let fx = Fixture::new(vec![], Reply::Serve);
    std::fs::write(fx.blobs.join(format!("sha256-{}", fx.sha())), &*fx.body).unwrap();
    let handle = fx.start();
    let path = handle.ensure_model(3).await.unwrap();
    fx.assert_installed(&path);
    assert_eq!(fx.server.requests(), 0);
    // The blob is copied, not moved: Ollama keeps its store.
    assert!(fx.blobs.join(format!("sha256-{}", fx.sha())).exists());
}

#[actix_rt::test]
async fn a_corrupt_ollama_blob_falls_back_to_the_download() {
    let fx = Fixture::new(vec![], Reply::Serve);
    let blob = fx.blobs.join(format!("sha256-{}", fx.sha()));
    std::fs::write(
        &blob,
        body_of(2 * 1024 * 1024)
            .iter()
            .rev()
            .copied()
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let handle = fx.start();
    let path = handle.ensure_model(3).await.unwrap();
    fx.assert_installed(&path);
    assert_eq!(fx.server.requests(), 1);
}

#[actix_rt::test]
async fn an_installed_model_is_ready_without_a_request() {
    let fx = Fixture::new(vec![], Reply::Serve);
    std::fs::create_dir_all(&fx.models).unwrap();
    std::fs::write(fx.target(), &*fx.body).unwrap();
    let handle = fx.start();
    assert_eq!(handle.ensure_model(3).await.unwrap(), fx.target());
    assert_eq!(
        handle.start_download(3).await.unwrap(),
        StartOutcome::AlreadyInstalled
    );
    let status = handle.status().await.unwrap();
    assert_eq!(status.step, DownloadStep::Ready);
    assert_eq!(handle.model_path().await.unwrap(), Some(fx.target()));
    assert_eq!(fx.server.requests(), 0);
}

#[actix_rt::test]
async fn an_installed_model_that_fails_its_pin_is_replaced() {
    let fx = Fixture::new(vec![], Reply::Serve);
    std::fs::create_dir_all(&fx.models).unwrap();
    std::fs::write(fx.target(), vec![7u8; 2 * 1024 * 1024]).unwrap();
    let handle = fx.start();
    let path = handle.ensure_model(3).await.unwrap();
    fx.assert_installed(&path);
    assert_eq!(fx.server.requests(), 1);
}

#[actix_rt::test]
async fn an_unpinned_custom_source_installs_without_a_checksum() {
    let fx = Fixture::new(vec![], Reply::Serve);
    let handle = DownloadHandle::start(fx.source_pinned(None), fx.settings());
    let path = handle.ensure_model(1).await.unwrap();
    fx.assert_installed(&path);
}

#[test]
fn source_resolution_backoff_and_file_names() {
    let mirror = "https://mirror.example/m/Qwen.Q8.gguf?dl=1";
    assert_eq!(resolve_source(None, "", "", None), ModelSource::builtin());
    let s = resolve_source(Some(mirror), "https://cfg.example/c.gguf", "", None);
    // Unpinned custom URL: a mirror of the built-in model, held to its pin.
    assert_eq!(
        (s.url.as_str(), s.file_name.as_str(), s.sha256.as_deref()),
        (mirror, DEFAULT_MODEL_FILE_NAME, Some(DEFAULT_MODEL_SHA256))
    );
    let s = resolve_source(Some(mirror), "", &"ab".repeat(32), None);
    assert_eq!(s.file_name, "Qwen.Q8.gguf");
    let s = resolve_source(None, "https://cfg.example/c.bin", "AA", Some(""));
    assert_eq!(s.file_name, "c.bin.gguf");
    assert_eq!(s.sha256.as_deref(), Some("aa"));
    let s = resolve_source(None, DEFAULT_MODEL_URL, "ff", None);
    assert_eq!(s.sha256.as_deref(), Some(DEFAULT_MODEL_SHA256));

    let minute = Duration::from_secs(60);
    let cap = Duration::from_secs(1800);
    let schedule: Vec<u64> = (1..=6)
        .map(|a| backoff_delay(a, minute, cap).as_secs())
        .collect();
    assert_eq!(schedule, vec![60, 120, 240, 480, 960, 1800]);

    assert_eq!(file_name_from_url("https://h/a b/../x y.gguf"), "x_y.gguf");
}

#[actix_rt::test]
async fn a_start_during_the_retry_wait_launches_the_next_attempt_now() {
    let fx = Fixture::new(vec![Reply::Status(500)], Reply::Serve);
    let settings = DownloadSettings {
        backoff_base: Duration::from_secs(3600),
        backoff_cap: Duration::from_secs(3600),
        ..fx.settings()
    };
    let handle = DownloadHandle::start(fx.source(), settings);
    assert_eq!(
        handle.start_download(3).await.unwrap(),
        StartOutcome::Started
    );
    while handle.status().await.unwrap().step != DownloadStep::WaitingRetry {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    // An hour's backoff, cut short by the kick: the second attempt runs now.
    assert_eq!(
        handle.start_download(3).await.unwrap(),
        StartOutcome::RetryStarted
    );
    let path = handle.ensure_model(3).await.unwrap();
    fx.assert_installed(&path);
    assert_eq!(fx.server.requests(), 2);
    assert_eq!(handle.status().await.unwrap().attempt, 2);
    assert_eq!(
        handle.start_download(3).await.unwrap(),
        StartOutcome::AlreadyInstalled
    );
}
