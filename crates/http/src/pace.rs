//! A request body's deadline: every body the server reads must keep arriving, or the request is
//! answered 408 and its connection closed, so a client that sends a head and then a byte at a time
//! cannot hold a connection, a task and a buffer for as long as it likes.
//!
//! The rule is the one Apache's `mod_reqtimeout` made familiar: a body has the connection's idle
//! timeout (`--idle-secs`) to arrive, and every [`MIN_RATE`] bytes that do arrive give it one second
//! more. A body that comes at the minimum rate or faster is never cut; one that stalls is, however
//! much of it came first (what came first bought its own time, no more). The clock starts when the
//! request's head has arrived; a route that never reads its body never starts it.
//!
//! The serve loop wraps every request's body in a [`Paced`]; the routes that read a body say a
//! [`Stalled`] in the chain of the error as 408 `body-timeout` ([`stalled`]).

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};
use warp::http::StatusCode;

use super::ApiError;

/// The slowest a body may arrive once its first allowance is spent: each this many bytes give it one
/// second more (16 KiB/s, 128 kbit/s: far below any link a person sends photos over).
pub const MIN_RATE: u64 = 16 << 10;

/// The body every route is handed: hyper's, with its deadline.
pub(crate) type RequestBody = Paced<hyper::body::Incoming>;

/// A body that fails with [`Stalled`] once it arrives slower than its deadline allows.
pub(crate) struct Paced<B> {
    inner: B,
    /// When the head arrived.
    start: Instant,
    /// The allowance before any byte counts.
    grace: Duration,
    /// Bytes of body so far.
    received: u64,
    /// Armed the first time the body has nothing to give.
    timer: Option<Pin<Box<Sleep>>>,
    /// Said once: the body stalled.
    failed: bool,
}

/// What a body that missed its deadline fails with.
#[derive(Debug)]
pub(crate) struct Stalled {
    received: u64,
    after: Duration,
}

impl std::fmt::Display for Stalled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the request body stopped arriving: {} bytes in {:.1} s, and it must keep to {} bytes a second",
            self.received,
            self.after.as_secs_f64(),
            MIN_RATE
        )
    }
}

impl std::error::Error for Stalled {}

impl<B> Paced<B> {
    /// `inner`, with `grace` to arrive and a second more for every [`MIN_RATE`] bytes.
    pub(crate) fn new(inner: B, grace: Duration) -> Paced<B> {
        Paced { inner, start: Instant::now(), grace, received: 0, timer: None, failed: false }
    }

    /// When the body must have arrived, given what has.
    fn deadline(&self) -> Instant {
        self.start + self.grace + Duration::from_secs_f64(self.received as f64 / MIN_RATE as f64)
    }
}

impl<B> Body for Paced<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        if this.failed {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.received += data.len() as u64;
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => {
                let deadline = this.deadline();
                let timer = this.timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                if timer.deadline() != deadline {
                    timer.as_mut().reset(deadline);
                }
                match timer.as_mut().poll(cx) {
                    Poll::Pending => Poll::Pending,
                    Poll::Ready(()) => {
                        this.failed = true;
                        let stalled = Stalled { received: this.received, after: this.start.elapsed() };
                        tracing::debug!("{stalled}");
                        Poll::Ready(Some(Err(Box::new(stalled))))
                    }
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.failed || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A [`Stalled`] anywhere in `e`'s chain of sources, as the API answers it: 408 `body-timeout`.
pub(crate) fn stalled(e: &(dyn std::error::Error + 'static)) -> Option<ApiError> {
    let mut next = Some(e);
    while let Some(e) = next {
        if let Some(s) = e.downcast_ref::<Stalled>() {
            return Some(ApiError::new(StatusCode::REQUEST_TIMEOUT, "body-timeout", s.to_string()));
        }
        next = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt as _;
    use http_body_util::StreamBody;

    type Chunks = StreamBody<tokio_stream::wrappers::ReceiverStream<Result<Frame<Bytes>, std::io::Error>>>;

    fn body(grace: Duration) -> (tokio::sync::mpsc::Sender<Result<Frame<Bytes>, std::io::Error>>, Paced<Chunks>) {
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        (tx, Paced::new(StreamBody::new(tokio_stream::wrappers::ReceiverStream::new(rx)), grace))
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_stalls_fails_once_its_allowance_is_spent() {
        let (tx, mut paced) = body(Duration::from_secs(5));
        tx.send(Ok(Frame::data(Bytes::from_static(b"{")))).await.unwrap();
        let first = paced.frame().await.unwrap().unwrap();
        assert_eq!(first.into_data().unwrap(), Bytes::from_static(b"{"));
        let before = Instant::now();
        let e = paced.frame().await.unwrap().unwrap_err();
        // The paused clock jumps straight to the deadline: 5 s, and 1/16384 s for the byte.
        assert!(Instant::now() - before >= Duration::from_secs(5), "{:?}", Instant::now() - before);
        let answer = stalled(e.as_ref()).expect("a Stalled in the chain");
        assert_eq!(answer.status, StatusCode::REQUEST_TIMEOUT);
        assert!(paced.frame().await.is_none(), "a stalled body ends");
        drop(tx);
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_at_the_minimum_rate_is_never_cut() {
        let (tx, mut paced) = body(Duration::from_secs(2));
        let chunk = Bytes::from(vec![b'x'; MIN_RATE as usize]);
        let sender = tokio::spawn(async move {
            for _ in 0..20 {
                // One second's allowance a second, a little late each time: the grace absorbs it.
                tokio::time::sleep(Duration::from_millis(1020)).await;
                tx.send(Ok(Frame::data(chunk.clone()))).await.unwrap();
            }
        });
        let mut total = 0;
        while let Some(frame) = paced.frame().await {
            total += frame.expect("no stall").into_data().unwrap().len();
        }
        assert_eq!(total, 20 * MIN_RATE as usize);
        sender.await.unwrap();
    }

    #[test]
    fn other_errors_are_not_a_stall() {
        let e = std::io::Error::other("reset");
        assert!(stalled(&e).is_none());
    }
}
