//! One blocking HTTP transfer into a staging file, resuming a cut-off
//! prefix with a `Range` request when the server allows it.
//!
//! Runs on the download thread only. Resume is beyond the reference (which
//! restarted from zero): a 610 MB transfer on a flaky link otherwise never
//! finishes.

use std::path::Path;
use std::time::Duration;

use super::error::DownloadError;
use super::files::{PumpError, Sink};

/// Connecting (DNS + TCP + TLS) may take this long.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// The response head must arrive within this after the request.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(60);
/// A stalled body (no byte for this long) counts as a broken transfer.
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// Byte progress of a transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Transferred {
    /// Bytes in the staging file.
    pub bytes: u64,
    /// Full size, when known.
    pub total: Option<u64>,
}

/// A failed transfer and whether its staging file is worth resuming.
#[derive(Debug)]
pub(super) struct FetchFailure {
    /// What went wrong.
    pub error: DownloadError,
    /// The staging file holds a valid prefix and the server takes ranges.
    pub resumable: bool,
}

impl FetchFailure {
    fn new(error: DownloadError, resumable: bool) -> Self {
        Self { error, resumable }
    }
}

/// Downloads `url` into `staging` and returns its `(size, sha256 hex)`.
///
/// With `resume`, a non-empty staging file is kept and only the rest is
/// requested (`Range: bytes=<len>-`); a 200 answer means the server ignored
/// the range, so the file restarts from zero. The file is synced to disk
/// before this returns successfully.
pub(super) fn fetch(
    url: &str,
    staging: &Path,
    resume: bool,
    progress_every: u64,
    report: &mut dyn FnMut(Transferred),
) -> Result<(u64, String), FetchFailure> {
    let io_err = |e: std::io::Error| {
        let msg = format!("staging file {}: {e}", staging.display());
        FetchFailure::new(DownloadError::Io(msg), false)
    };
    let mut sink = if resume && staging.exists() {
        Sink::resume(staging).map_err(io_err)?
    } else {
        Sink::create(staging).map_err(io_err)?
    };
    let offset = sink.written();

    let mut request = agent().get(url);
    if offset > 0 {
        tracing::info!(offset, "resuming the model download");
        request = request.header("Range", format!("bytes={offset}-"));
    }
    // The prefix stays useful after a failed request: the server already
    // showed it takes ranges, which is why we are resuming.
    let response = request
        .call()
        .map_err(|e| FetchFailure::new(DownloadError::Transport(e.to_string()), offset > 0))?;

    let status = response.status().as_u16();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let accepts_ranges = header("accept-ranges").is_some_and(|v| v.contains("bytes"));
    let length = response.body().content_length();
    let total = match status {
        206 => {
            let range = header("content-range");
            match range.as_deref().and_then(parse_content_range) {
                Some((start, total)) if start == offset => {
                    total.or_else(|| length.map(|l| offset + l))
                }
                _ => {
                    // A range we did not ask for: the prefix cannot be
                    // trusted to line up, so the next attempt starts clean.
                    let msg = format!("server resumed at the wrong offset ({range:?})");
                    return Err(FetchFailure::new(DownloadError::Transport(msg), false));
                }
            }
        }
        200..=299 => {
            if offset > 0 {
                tracing::info!(
                    status,
                    "server ignored the Range request; restarting from zero"
                );
                sink.restart().map_err(io_err)?;
            }
            length
        }
        // 416: our prefix does not fit the object (it changed or is
        // complete); starting clean is the only safe way on.
        416 => return Err(FetchFailure::new(DownloadError::Http(status), false)),
        _ => return Err(FetchFailure::new(DownloadError::Http(status), offset > 0)),
    };
    let resumable = accepts_ranges || status == 206;
    tracing::debug!(status, ?total, resumable, "model server responded");

    report(Transferred {
        bytes: sink.written(),
        total,
    });
    let mut reader = response.into_body().into_reader();
    let pumped = sink.pump(&mut reader, progress_every, &mut |bytes| {
        tracing::debug!(bytes, ?total, "model download progress");
        report(Transferred { bytes, total });
    });
    let bytes = sink.written();
    report(Transferred { bytes, total });
    match pumped {
        Ok(()) => {}
        Err(PumpError::Read(e)) => {
            let msg = format!("{e} after {bytes} bytes");
            return Err(FetchFailure::new(
                DownloadError::Transport(msg),
                resumable && bytes > 0,
            ));
        }
        Err(PumpError::Write(e)) => return Err(io_err(e)),
    }
    if let Some(total) = total.filter(|t| bytes < *t) {
        let msg = format!("connection closed after {bytes} of {total} bytes");
        return Err(FetchFailure::new(DownloadError::Transport(msg), resumable));
    }
    sink.finish().map_err(io_err)
}

/// An agent that reports every status to us (we decide what is retryable),
/// asks for the raw bytes (a compressed body would break byte ranges and the
/// hash of what lands on disk), and gives up on a stalled connection.
fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .accept_encoding("identity")
        .user_agent(concat!("kirocrew/", env!("CARGO_PKG_VERSION")))
        .timeout_connect(Some(CONNECT_TIMEOUT))
        .timeout_recv_response(Some(RESPONSE_TIMEOUT))
        .timeout_per_read(Some(READ_TIMEOUT))
        .build()
        .new_agent()
}

/// Parses `Content-Range: bytes <start>-<end>/<total|*>` into
/// `(start, total)`.
pub(super) fn parse_content_range(value: &str) -> Option<(u64, Option<u64>)> {
    let rest = value.trim().strip_prefix("bytes")?.trim_start();
    let (span, total) = rest.split_once('/')?;
    let (start, end) = span.split_once('-')?;
    let start: u64 = start.trim().parse().ok()?;
    let end: u64 = end.trim().parse().ok()?;
    if end < start {
        return None;
    }
    let total = match total.trim() {
        "*" => None,
        t => Some(t.parse().ok()?),
    };
    Some((start, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_range_parsing() {
        assert_eq!(
            parse_content_range("bytes 100-199/200"),
            Some((100, Some(200)))
        );
        assert_eq!(parse_content_range("bytes 0-9/*"), Some((0, None)));
        assert_eq!(parse_content_range("bytes */200"), None);
        assert_eq!(parse_content_range("bytes 9-1/20"), None);
        assert_eq!(parse_content_range("items 0-1/2"), None);
    }
}
