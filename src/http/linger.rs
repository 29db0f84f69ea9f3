//! Lingering close, so an early error response reaches the client instead
//! of being wiped out by a TCP reset.
//!
//! When actix-http refuses a request it has not read to the end (a request
//! head over its 128 KiB buffer or with more than 96 headers gets a 431), it
//! writes the response and drops the socket at once. Closing a socket that
//! still has unread input makes the kernel send RST instead of FIN, and the
//! client, often still sending, sees "connection reset" and never the 431
//! (RFC 9112 §9.6 asks servers to close in stages for exactly this reason).
//!
//! actix gives no hook on its close, but it runs an on-connect callback with
//! the socket and keeps what the callback stores for as long as the
//! connection lives. We store a duplicate of the socket's descriptor there:
//! when actix drops the connection, its close no longer closes the socket,
//! and the duplicate's drop half-closes it (FIN after the response) and
//! reads and discards what the client still sends, for at most
//! [`LINGER_TIME`] and [`LINGER_BYTES`], before closing for good.

use std::any::Any;
use std::net::Shutdown;
use std::os::fd::AsFd;
use std::time::Duration;

use actix_web::dev::Extensions;
use tokio::io::AsyncReadExt;

/// How long a closed connection keeps reading before the final close.
pub const LINGER_TIME: Duration = Duration::from_secs(2);

/// How much a closed connection reads (and discards) at most.
pub const LINGER_BYTES: usize = 1 << 20;

/// The on-connect callback (`HttpServer::on_connect`).
pub fn on_connect(connection: &dyn Any, data: &mut Extensions) {
    let Some(stream) = connection.downcast_ref::<actix_web::rt::net::TcpStream>() else {
        return;
    };
    match stream.as_fd().try_clone_to_owned() {
        Ok(fd) => {
            data.insert(LingerOnClose(Some(std::net::TcpStream::from(fd))));
        }
        // Without a duplicate the connection still works; only an early
        // error response may be reset.
        Err(e) => tracing::debug!(error = %e, "cannot duplicate the connection socket"),
    }
}

/// The duplicate descriptor; its drop performs the lingering close.
struct LingerOnClose(Option<std::net::TcpStream>);

impl Drop for LingerOnClose {
    fn drop(&mut self) {
        let Some(stream) = self.0.take() else { return };
        // Outside a runtime (process teardown) there is nothing to linger
        // on; dropping closes the socket as actix would have.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        // FIN after whatever actix wrote; errors mean the peer is gone.
        let _ = stream.shutdown(Shutdown::Write);
        runtime.spawn(drain(stream));
    }
}

async fn drain(stream: std::net::TcpStream) {
    // The duplicate shares the original's non-blocking mode.
    let Ok(mut stream) = tokio::net::TcpStream::from_std(stream) else {
        return;
    };
    let read_rest = async {
        let mut buf = vec![0u8; 16 * 1024];
        let mut total = 0;
        while total < LINGER_BYTES {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
    };
    let _ = tokio::time::timeout(LINGER_TIME, read_rest).await;
}
