//! A connection to the hub whose every wait is bounded: each statement must be answered within the
//! hub's timeout ([`HubConfig::timeout`](crate::HubConfig::timeout)), or the connection is dropped
//! and the call fails; a stop flag ends any wait within a tenth of a second.
//!
//! The driver (tokio-postgres) runs on a runtime of this connection's own, on the caller's thread:
//! each call waits on the statement, a timer and the stop flag at once. A hub that went silent (a
//! dead link, a hung machine, a relay that takes bytes and passes none on) is what the timer is
//! for: TCP keepalive and the kernel's retransmission limit (`tcp_user_timeout`) end a connection
//! whose peer is gone, but not one whose peer takes the bytes and never answers.
//!
//! It never retries: the caller decides (a push's transactions are whole either way).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio_postgres::Row;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;

use scrollback_core::error::{Error, Result};

use crate::Pg;
use crate::tls::MakeRustls;

/// How often a wait looks at the stop flag.
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// A statement's parameters, as the driver takes them.
pub type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// How a wait ended.
enum Ended<T> {
    Done(std::result::Result<T, tokio_postgres::Error>),
    Late,
    Stopped,
}

/// What every wait of a connection is bounded by.
struct Waits {
    /// Its own runtime (`None` only once dropped).
    runtime: Option<tokio::runtime::Runtime>,
    /// The driver's connection task: aborted when an answer is late, which closes the socket.
    connection: Option<tokio::task::AbortHandle>,
    timeout: Duration,
    stop: Option<Arc<AtomicBool>>,
    /// An answer was late or the wait was stopped: the connection is not used again.
    broken: AtomicBool,
}

impl Drop for Waits {
    /// Shuts the runtime down without waiting for it, so that a connection may be dropped anywhere,
    /// inside a server's runtime too (a plain drop there panics: it would block).
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Waits {
    fn runtime(&self) -> Result<&tokio::runtime::Runtime> {
        self.runtime.as_ref().ok_or_else(|| Error::Internal("the hub connection's runtime is gone".into()))
    }

    /// Runs `f` to its end, at most `limit`; the driver's error as it is.
    fn wait<T>(
        &self,
        limit: Duration,
        f: impl Future<Output = std::result::Result<T, tokio_postgres::Error>>,
    ) -> Result<std::result::Result<T, tokio_postgres::Error>> {
        if self.broken.load(Ordering::SeqCst) {
            return Err(Error::Hub(
                "the connection to the hub was dropped (an answer was late, or the push was stopped)".into(),
            ));
        }
        let stop = self.stop.clone();
        let stopped = async move {
            while !stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst)) {
                tokio::time::sleep(LOOK_EVERY).await;
            }
        };
        let ended = self.runtime()?.block_on(async {
            tokio::select! {
                done = f => Ended::Done(done),
                () = tokio::time::sleep(limit) => Ended::Late,
                () = stopped => Ended::Stopped,
            }
        });
        let why = match ended {
            Ended::Done(done) => return Ok(done),
            Ended::Late => format!(
                "the hub did not answer within {} s (--hub-timeout): the connection is dropped",
                limit.as_secs_f64()
            ),
            Ended::Stopped => "the push was stopped".to_owned(),
        };
        self.broken.store(true, Ordering::SeqCst);
        if let Some(connection) = &self.connection {
            connection.abort();
            // Lets the runtime drop the aborted task, and with it the socket.
            self.runtime()?.block_on(tokio::task::yield_now());
        }
        Err(Error::Hub(why))
    }

    /// Runs `f` within the connection's timeout.
    fn run<T>(&self, f: impl Future<Output = std::result::Result<T, tokio_postgres::Error>>) -> Result<T> {
        self.wait(self.timeout, f)?.pg()
    }
}

/// A connection to the hub (see the module).
pub struct Hub {
    waits: Waits,
    client: tokio_postgres::Client,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub").field("timeout", &self.waits.timeout).field("closed", &self.is_closed()).finish()
    }
}

impl Hub {
    /// Connects with `config` and `tls`, the whole handshake within `timeout`, every later answer too.
    pub(crate) fn connect(config: &tokio_postgres::Config, tls: MakeRustls, timeout: Duration) -> Result<Hub> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Internal(format!("the hub connection's runtime: {e}")))?;
        let mut waits =
            Waits { runtime: Some(runtime), connection: None, timeout, stop: None, broken: AtomicBool::new(false) };
        let limit = timeout.max(config.get_connect_timeout().copied().unwrap_or_default());
        let (client, connection) = waits.wait(limit, config.connect(tls))?.pg()?;
        let task = waits.runtime()?.spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("the hub's connection ended: {e}");
            }
        });
        waits.connection = Some(task.abort_handle());
        Ok(Hub { waits, client })
    }

    /// Makes every wait end (the connection then dropped) once `stop` is set.
    pub fn stop_on(&mut self, stop: Arc<AtomicBool>) {
        self.waits.stop = Some(stop);
    }

    /// The answer timeout.
    pub fn timeout(&self) -> Duration {
        self.waits.timeout
    }

    /// Whether the connection is gone (a new one is needed).
    pub fn is_closed(&self) -> bool {
        self.waits.broken.load(Ordering::SeqCst) || self.client.is_closed()
    }

    /// Runs a statement; the rows it changed.
    pub fn execute(&mut self, sql: &str, params: Params<'_>) -> Result<u64> {
        self.waits.run(self.client.execute(sql, params))
    }

    /// Runs a query; its rows.
    pub fn query(&mut self, sql: &str, params: Params<'_>) -> Result<Vec<Row>> {
        self.waits.run(self.client.query(sql, params))
    }

    /// Runs a query that returns one row.
    pub fn query_one(&mut self, sql: &str, params: Params<'_>) -> Result<Row> {
        self.waits.run(self.client.query_one(sql, params))
    }

    /// Runs a query that returns at most one row.
    pub fn query_opt(&mut self, sql: &str, params: Params<'_>) -> Result<Option<Row>> {
        self.waits.run(self.client.query_opt(sql, params))
    }

    /// Runs statements separated by semicolons, without parameters.
    pub fn batch_execute(&mut self, sql: &str) -> Result<()> {
        self.waits.run(self.client.batch_execute(sql))
    }

    /// Opens a transaction (rolled back unless committed).
    pub fn transaction(&mut self) -> Result<HubTransaction<'_>> {
        let Hub { waits, client } = self;
        let tx = waits.run(client.transaction())?;
        Ok(HubTransaction { waits, tx })
    }

    /// Takes the session-level advisory lock `(class, hashtext(name))`, waiting at most `wait` for
    /// another session to let it go; whether it got it. The hub frees it when this session ends.
    pub(crate) fn advisory_lock(&mut self, class: i32, name: &str, wait: Duration) -> Result<bool> {
        let Hub { waits, client } = self;
        let tx = waits.run(client.transaction())?;
        let ms = wait.as_millis().max(1);
        waits.run(tx.batch_execute(&format!("SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = {ms}")))?;
        let got = waits
            .wait(wait + waits.timeout, tx.execute("SELECT pg_advisory_lock($1, hashtext($2))", &[&class, &name]))?;
        match got {
            Ok(_) => {
                // A session lock outlives the transaction that took it.
                waits.run(tx.commit())?;
                Ok(true)
            }
            Err(e) if e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE) => Ok(false),
            Err(e) => Err(crate::driver_error(e)),
        }
    }
}

/// A transaction on the hub, each of its statements bounded as the connection's.
pub struct HubTransaction<'a> {
    waits: &'a Waits,
    tx: tokio_postgres::Transaction<'a>,
}

impl HubTransaction<'_> {
    /// Runs a statement; the rows it changed.
    pub fn execute(&mut self, sql: &str, params: Params<'_>) -> Result<u64> {
        self.waits.run(self.tx.execute(sql, params))
    }

    /// Runs a query; its rows.
    pub fn query(&mut self, sql: &str, params: Params<'_>) -> Result<Vec<Row>> {
        self.waits.run(self.tx.query(sql, params))
    }

    /// Runs a query that returns one row.
    pub fn query_one(&mut self, sql: &str, params: Params<'_>) -> Result<Row> {
        self.waits.run(self.tx.query_one(sql, params))
    }

    /// Runs a query that returns at most one row.
    pub fn query_opt(&mut self, sql: &str, params: Params<'_>) -> Result<Option<Row>> {
        self.waits.run(self.tx.query_opt(sql, params))
    }

    /// Runs statements separated by semicolons, without parameters.
    pub fn batch_execute(&mut self, sql: &str) -> Result<()> {
        self.waits.run(self.tx.batch_execute(sql))
    }

    /// Commits.
    pub fn commit(self) -> Result<()> {
        self.waits.run(self.tx.commit())
    }
}
