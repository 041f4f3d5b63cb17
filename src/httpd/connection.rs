//! One client connection: hyper's HTTP/1.1 over the socket, watched.
//!
//! hyper's own `header_read_timeout` starts as soon as a kept-alive
//! connection waits for its next request, so it would close every idle
//! connection at the header timeout (10 s) and no keep-alive could be longer.
//! The watchdog here tells the two apart: the header clock runs from the
//! connection's opening, or from the first byte after an answer; the idle
//! clock from the end of the last answer while nothing arrives; neither
//! while a request is in flight (the request timeout bounds those). A
//! request pipelined behind another is timed as idle, not as headers.

use super::{ConnectionLimits, Held};
use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::{Bytes, Frame, Incoming, SizeHint};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{watch, Notify};
use tokio::time::Instant;
use tower::ServiceExt;

/// Serves one connection until it ends, the watchdog closes it, or the
/// server stops (then after the request in flight).
pub(super) async fn serve(
    stream: TcpStream,
    peer: SocketAddr,
    router: Router,
    limits: Arc<ConnectionLimits>,
    mut stop: watch::Receiver<()>,
    _held: Held,
) {
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Watched {
        inner: stream,
        activity: activity.clone(),
    });
    let service = {
        let activity = activity.clone();
        hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let in_flight = activity.begin();
            let router = router.clone();
            let mut request = request.map(axum::body::Body::new);
            request.extensions_mut().insert(ConnectInfo(peer));
            async move {
                let response = match router.oneshot(request).await {
                    Ok(response) => response,
                    Err(never) => match never {},
                };
                Ok::<_, Infallible>(response.map(|body| Tracked {
                    body,
                    _in_flight: in_flight,
                }))
            }
        })
    };
    let mut conn = pin!(hyper::server::conn::http1::Builder::new()
        // The watchdog times headers; see the module's note.
        .header_read_timeout(None)
        .serve_connection(io, service));
    let mut watchdog = pin!(watchdog(
        &activity,
        limits.header_read_timeout,
        limits.keep_alive_idle
    ));
    let mut stopping = false;
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                }
                break;
            }
            () = &mut watchdog => {
                // Dropping the connection closes the socket.
                tracing::debug!(%peer, "closing a connection: headers too slow, or idle too long");
                break;
            }
            _ = stop.changed(), if !stopping => {
                stopping = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

/// Resolves when the connection has waited too long for headers, or idled
/// too long between requests.
async fn watchdog(activity: &Activity, header_timeout: Duration, idle: Duration) {
    loop {
        // Made before reading the state: a change after the read still wakes it.
        let changed = activity.changed.notified();
        match activity.deadline(header_timeout, idle) {
            None => changed.await,
            Some(at) if at <= Instant::now() => return,
            Some(at) => {
                tokio::select! {
                    () = tokio::time::sleep_until(at) => {}
                    () = changed => {}
                }
            }
        }
    }
}

/// What the watchdog needs to know of a connection.
struct Activity {
    state: Mutex<State>,
    /// True while nothing is in flight and no header clock runs, so a read
    /// need not take the lock in the common case.
    idle: AtomicBool,
    changed: Notify,
}

struct State {
    in_flight: usize,
    /// When the headers being waited for began (or the connection opened).
    head_since: Option<Instant>,
    /// When the last answer ended.
    idle_since: Instant,
}

impl Activity {
    fn new() -> Activity {
        let now = Instant::now();
        Activity {
            state: Mutex::new(State {
                in_flight: 0,
                head_since: Some(now),
                idle_since: now,
            }),
            idle: AtomicBool::new(false),
            changed: Notify::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Bytes arrived: on an idle connection, a request's headers begin.
    fn read(&self) {
        if !self.idle.swap(false, Ordering::AcqRel) {
            return;
        }
        let mut state = self.lock();
        if state.in_flight == 0 && state.head_since.is_none() {
            state.head_since = Some(Instant::now());
        }
        drop(state);
        self.changed.notify_one();
    }

    /// A request's headers are complete: it is in flight until its answer ends.
    fn begin(self: &Arc<Self>) -> InFlight {
        let mut state = self.lock();
        state.in_flight += 1;
        state.head_since = None;
        self.idle.store(false, Ordering::Release);
        drop(state);
        self.changed.notify_one();
        InFlight(self.clone())
    }

    fn end(&self) {
        let mut state = self.lock();
        state.in_flight = state.in_flight.saturating_sub(1);
        if state.in_flight == 0 {
            state.idle_since = Instant::now();
            state.head_since = None;
            self.idle.store(true, Ordering::Release);
        }
        drop(state);
        self.changed.notify_one();
    }

    /// When the connection must close if nothing changes; `None` while a
    /// request is in flight.
    fn deadline(&self, header_timeout: Duration, idle: Duration) -> Option<Instant> {
        let state = self.lock();
        if state.in_flight > 0 {
            return None;
        }
        Some(match state.head_since {
            Some(since) => since + header_timeout,
            None => state.idle_since + idle,
        })
    }
}

/// A request in flight, until its answer's body is sent or dropped.
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// An answer's body that holds its request in flight.
struct Tracked {
    body: axum::body::Body,
    _in_flight: InFlight,
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The socket, telling [`Activity`] when bytes arrive.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.read();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn headers_are_timed_from_the_opening_and_idle_from_the_last_answer() {
        let activity = Arc::new(Activity::new());
        let (header, idle) = (Duration::from_secs(10), Duration::from_secs(60));
        let opened = Instant::now();
        assert_eq!(activity.deadline(header, idle), Some(opened + header));
        let in_flight = activity.begin();
        assert_eq!(activity.deadline(header, idle), None);
        tokio::time::advance(Duration::from_secs(100)).await;
        drop(in_flight);
        let answered = Instant::now();
        assert_eq!(activity.deadline(header, idle), Some(answered + idle));
        tokio::time::advance(Duration::from_secs(5)).await;
        activity.read();
        assert_eq!(
            activity.deadline(header, idle),
            Some(answered + Duration::from_secs(5) + header)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_watchdog_fires_at_the_header_timeout_unless_a_request_begins() {
        let activity = Arc::new(Activity::new());
        let in_flight = activity.begin();
        let watching = watchdog(&activity, Duration::from_secs(10), Duration::from_secs(60));
        let outcome = tokio::time::timeout(Duration::from_secs(30), watching).await;
        assert!(outcome.is_err(), "a request in flight is never cut");
        drop(in_flight);
        let started = Instant::now();
        watchdog(&activity, Duration::from_secs(10), Duration::from_secs(60)).await;
        assert_eq!(Instant::now() - started, Duration::from_secs(60));
    }
}
