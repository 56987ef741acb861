//! Who holds the shared server's connection places.
//!
//! Anyone on the machine can open a socket to the server; only the owner
//! holds the token. So a new connection starts in a small waiting room of
//! its own, separate from the places the owner's calls use. It leaves the
//! room for a real place on its first request that carries the token. A
//! connection that has not shown the token within a short deadline is
//! closed, and when the room is full the connection that has waited
//! longest is closed to let the new one in: a crowd of idle or reconnecting
//! sockets only ever displaces itself, never a connection that proved it
//! is the owner's, and a new connection of the owner's (which sends its
//! token at once) gets in.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// How long a new connection may take to send a request with the token.
pub const AUTHENTICATION_DEADLINE: Duration = Duration::from_secs(5);

/// The connection places: `cap` for connections that showed the token, and
/// a waiting room for those that have not yet.
pub struct Admission {
    places: Arc<Semaphore>,
    cap: usize,
    /// Connections not yet authenticated, the longest waiting first.
    waiting: Mutex<VecDeque<Arc<Connection>>>,
    room: usize,
}

/// One accepted connection's standing.
pub struct Connection {
    /// Set once a request carried the token and a place was taken.
    place: Mutex<Option<OwnedSemaphorePermit>>,
    authenticated: AtomicBool,
    /// Set once the connection sent a byte: an idle socket is displaced
    /// before one whose request is arriving.
    heard: AtomicBool,
    /// The socket, to look for bytes not yet read (-1 once closed; a
    /// number reused since only misjudges who waits, never reads).
    fd: std::sync::atomic::AtomicI32,
    /// Cancelled to close the connection: displaced from the room, or out
    /// of time to authenticate.
    pub closed: CancellationToken,
}

impl Connection {
    /// Whether a request on it carried the token and it holds a place.
    pub fn authenticated(&self) -> bool {
        self.authenticated.load(Ordering::Acquire)
    }

    /// Whether the connection has sent anything, read or waiting to be:
    /// a client's request is in the socket before silt's task runs.
    fn heard(&self) -> bool {
        if self.heard.load(Ordering::Relaxed) {
            return true;
        }
        let fd = self.fd.load(Ordering::Relaxed);
        if fd < 0 {
            return false;
        }
        let mut byte = 0u8;
        // SAFETY: a one-byte buffer of ours; MSG_PEEK leaves the byte for
        // hyper and MSG_DONTWAIT never blocks
        let n = unsafe {
            libc::recv(
                fd,
                (&raw mut byte).cast(),
                1,
                libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        n > 0
    }

    /// The connection has closed: its place (if it had one) is free.
    pub fn leave(&self) {
        self.fd.store(-1, Ordering::Relaxed);
        self.closed.cancel();
        drop(self.place.lock().unwrap_or_else(|p| p.into_inner()).take());
    }
}

impl Admission {
    /// `cap` places for the owner's connections and a waiting room of a
    /// quarter of that (at least 8) for connections yet to show the token.
    pub fn new(cap: usize) -> Arc<Admission> {
        Arc::new(Admission {
            places: Arc::new(Semaphore::new(cap)),
            cap,
            waiting: Mutex::new(VecDeque::new()),
            room: (cap / 4).max(8),
        })
    }

    /// Seats a new connection (its socket `fd`, -1 for none) in the
    /// waiting room; when the room is full, closes the one that has waited
    /// longest in silence (or, if all have spoken, the longest waiting).
    pub fn arrive(&self, fd: i32) -> Arc<Connection> {
        let conn = Arc::new(Connection {
            fd: std::sync::atomic::AtomicI32::new(fd),
            place: Mutex::new(None),
            authenticated: AtomicBool::new(false),
            heard: AtomicBool::new(false),
            closed: CancellationToken::new(),
        });
        let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        waiting.retain(|c| !c.authenticated() && !c.closed.is_cancelled());
        while waiting.len() >= self.room {
            // the longest silent first; if none is silent, the longest waiting
            let at = waiting.iter().position(|c| !c.heard()).unwrap_or(0);
            if let Some(displaced) = waiting.remove(at) {
                displaced.closed.cancel();
            }
        }
        waiting.push_back(conn.clone());
        conn
    }

    /// Moves `conn` from the waiting room to a place of its own; false when
    /// every place is taken.
    fn promote(&self, conn: &Connection) -> bool {
        let mut place = conn.place.lock().unwrap_or_else(|p| p.into_inner());
        if place.is_some() {
            return true;
        }
        let Ok(permit) = self.places.clone().try_acquire_owned() else {
            return false;
        };
        *place = Some(permit);
        conn.authenticated.store(true, Ordering::Release);
        true
    }

    /// Closes every connection still waiting (the server is stopping).
    pub fn close_waiting(&self) {
        let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        for c in waiting.drain(..) {
            if !c.authenticated() {
                c.closed.cancel();
            }
        }
    }

    /// Waits until every authenticated connection has closed.
    pub async fn drained(&self) {
        let _ = self.places.acquire_many(self.cap as u32).await;
    }
}

/// A connection's socket, noting in its [`Connection`] when it first
/// sends something.
pub struct Heard<S> {
    inner: S,
    conn: Arc<Connection>,
}

impl<S> Heard<S> {
    /// Wraps the socket `inner` of `conn`.
    pub fn new(inner: S, conn: Arc<Connection>) -> Self {
        Heard { inner, conn }
    }
}

impl<S: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Heard<S> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.conn.heard.store(true, Ordering::Relaxed);
        }
        polled
    }
}

impl<S: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Heard<S> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// Axum middleware, outside the token check: a connection whose request
/// was refused for want of the token is closed after the answer, so it
/// waits no longer for a place it will not get.
pub async fn close_refused(req: Request, next: Next) -> Response {
    let mut response = next.run(req).await;
    if response.status() == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::CONNECTION,
            axum::http::HeaderValue::from_static("close"),
        );
    }
    response
}

/// Axum middleware, run only for requests that carried the token: gives
/// the connection a place of its own, or answers 503 when all are taken.
pub async fn promote(req: Request, next: Next) -> Response {
    let seat = req
        .extensions()
        .get::<Seat>()
        .map(|s| (s.admission.clone(), s.connection.clone()));
    if let Some((admission, conn)) = seat
        && !admission.promote(&conn)
    {
        return busy();
    }
    next.run(req).await
}

/// The admission and the connection a request arrived on, put in its
/// extensions by the accept loop.
#[derive(Clone)]
pub struct Seat {
    /// The server's places, which the connection takes one of once it shows
    /// the token.
    pub admission: Arc<Admission>,
    /// The connection the request arrived on.
    pub connection: Arc<Connection>,
}

/// The 503 for a server serving as many connections as it may.
pub fn busy() -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::RETRY_AFTER, "1"),
        ],
        BUSY_BODY,
    )
        .into_response()
}

/// The body of [`busy`].
pub const BUSY_BODY: &str = r#"{"error":{"code":"busy","message":"silt is serving as many connections as it may; retry in a second","hint":"raise [server] max_connections in silt.toml if this is expected load"}}"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_room_closes_the_longest_waiting_and_spares_the_authenticated() {
        let a = Admission::new(8);
        assert_eq!(a.room, 8);
        let owner = a.arrive(-1);
        assert!(a.promote(&owner));
        let crowd: Vec<_> = (0..20).map(|_| a.arrive(-1)).collect();
        assert!(
            !owner.closed.is_cancelled(),
            "the owner's connection was displaced"
        );
        // the 12 that waited longest were closed; the 8 newest wait
        let closed: Vec<bool> = crowd.iter().map(|c| c.closed.is_cancelled()).collect();
        assert_eq!(closed, [[true; 12].as_slice(), &[false; 8]].concat());
        // a connection that shows the token leaves the room for a place,
        // making room for one more before the next is displaced
        assert!(a.promote(&crowd[19]));
        a.arrive(-1);
        assert!(!crowd[19].closed.is_cancelled() && !crowd[12].closed.is_cancelled());
        a.arrive(-1);
        assert!(!crowd[19].closed.is_cancelled() && crowd[12].closed.is_cancelled());
    }

    #[test]
    fn a_silent_connection_is_displaced_before_one_that_spoke() {
        let a = Admission::new(8);
        let spoke = a.arrive(-1);
        spoke.heard.store(true, Ordering::Relaxed);
        let silent: Vec<_> = (0..7).map(|_| a.arrive(-1)).collect();
        for _ in 0..7 {
            a.arrive(-1);
        }
        assert!(
            !spoke.closed.is_cancelled(),
            "the one that spoke was displaced"
        );
        assert!(silent.iter().all(|c| c.closed.is_cancelled()));
    }

    #[test]
    fn promotion_stops_at_the_cap_and_returns_places_on_close() {
        let a = Admission::new(2);
        let (x, y, z) = (a.arrive(-1), a.arrive(-1), a.arrive(-1));
        assert!(a.promote(&x) && a.promote(&y));
        assert!(!a.promote(&z), "a third place past a cap of 2");
        assert!(a.promote(&x), "promoting twice takes one place");
        x.leave();
        assert!(a.promote(&z));
        a.close_waiting();
        assert!(!y.closed.is_cancelled() && !z.closed.is_cancelled());
    }
}
