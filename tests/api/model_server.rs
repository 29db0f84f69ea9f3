//! A model file served over HTTP on 127.0.0.1 for the download tests
//! (embedding and consolidation models): counts requests and can fail the
//! first ones with a 500.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Serves one file over HTTP on 127.0.0.1, counting requests.
pub(crate) struct ModelServer {
    /// The file's URL.
    pub(crate) url: String,
    /// Requests answered so far.
    pub(crate) requests: Arc<AtomicUsize>,
}

impl ModelServer {
    /// Serves every request.
    pub(crate) fn start(file: PathBuf) -> Self {
        Self::start_failing_first(file, 0)
    }

    /// Answers the first `failures` requests with a 500, then serves.
    pub(crate) fn start_failing_first(file: PathBuf, failures: usize) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/model.gguf", listener.local_addr().unwrap());
        let requests = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&requests);
        std::thread::spawn(move || {
            let body = std::fs::read(&file).unwrap();
            for stream in listener.incoming().take(8) {
                let Ok(mut stream) = stream else { continue };
                let seen = counter.fetch_add(1, Ordering::SeqCst);
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                if seen < failures {
                    let _ = stream.write_all(
                        b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                    continue;
                }
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream
                    .write_all(head.as_bytes())
                    .and_then(|()| stream.write_all(&body));
            }
        });
        Self { url, requests }
    }
}
