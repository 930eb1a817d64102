//! A team's hub: a PostgreSQL database that many hosts push their index to (`postgres.sql`).
//!
//! Each host's SQLite index stays the system of record; the hub holds a copy of every host's rows,
//! keyed by the host, the file's row in its index and the line's byte offset, and every photo's
//! decoded bytes once, by their blake3. [`push`] sends what is new; this module connects, with the
//! credentials of a URL or of the standard `PG*` variables and the TLS they ask for ([`tls`]), and
//! keeps the hub's schema current.
//!
//! Every wait on the hub is bounded by [`HubConfig::timeout`] ([`connection`]), and the hub is asked
//! to bound its side the same way: a statement, a session idle inside a transaction or outside one,
//! and TCP keepalive on its socket, so that the session of a pusher gone silent ends, and the host's
//! push lock (a session-level advisory lock) with it.

#![deny(missing_docs)]

use std::time::Duration;

use scrollback_core::error::{Error, Result};

pub mod connection;
pub mod follow;
mod outline;
pub mod push;
mod search;
mod stats;
mod status;
pub mod store;
pub mod tls;
mod usage;

pub use connection::Hub;
pub use tls::{SslMode, Tls};

/// The PostgreSQL driver's errors as the read interface's [`Error::Hub`], named where the hub meets
/// them (`.pg()?`): the core's error knows no driver.
pub(crate) trait Pg<T> {
    /// The driver's error as [`Error::Hub`] ([`driver_error`]).
    fn pg(self) -> Result<T>;
}

impl<T> Pg<T> for std::result::Result<T, tokio_postgres::Error> {
    fn pg(self) -> Result<T> {
        self.map_err(driver_error)
    }
}

/// A PostgreSQL driver error as the hub's, with the server's own message where it sent one, else
/// the driver's with its causes (its own message alone is, say, "error performing TLS handshake",
/// with no word of why).
pub(crate) fn driver_error(e: tokio_postgres::Error) -> Error {
    match e.as_db_error() {
        Some(db) if *db.code() == tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE => Error::Hub(format!(
            "{} ({}): the role lacks a grant; a pusher needs SELECT, INSERT, UPDATE and DELETE on the hub's \
             tables, a reader SELECT (docs/hub.md, Roles)",
            db.message(),
            db.code().code()
        )),
        Some(db) => Error::Hub(format!("{} ({})", db.message(), db.code().code())),
        None => Error::Hub(scrollback_core::error::with_causes(&e)),
    }
}

/// The hub's schema: every table, index and view of the current version.
pub const SCHEMA: &str = include_str!("../postgres.sql");

/// The version [`SCHEMA`] creates, kept in `hub_meta`'s `schema_version`.
pub const VERSION: i64 = 8;

/// One step each, as the index's: `MIGRATIONS[i]` takes a hub from version `i + 1` to `i + 2`, in
/// the transaction that records the new version.
const MIGRATIONS: &[&str] = &[
    // 2: each host name's owner, the identity of the data directory that pushes as it.
    "ALTER TABLE hosts ADD COLUMN identity text;",
    // 3: a person's marks on sessions, as each host has them.
    "CREATE TABLE marks (
         host       text    NOT NULL REFERENCES hosts(name),
         session_id text    NOT NULL,
         title      text,
         pinned     boolean NOT NULL,
         set_at     text    NOT NULL,
         PRIMARY KEY (host, session_id)
     );
     CREATE INDEX marks_session ON marks(session_id);",
    // 4: a line's three search texts apart (what was said, tool text, the tools' names), weighted in
    // `tsv` so that a search keeps to one as `role:` and `tool:` ask, and the lines newest first
    // (`entries_recent`) for a search's candidates. The lines a hub holds had the
    // first two together in `text`: every file is sent again by its host's next push (its
    // generation no longer matches), which rewrites them; a host that never pushes again keeps
    // its lines as they were, searchable as before.
    "ALTER TABLE entries ADD COLUMN tool_text text, ADD COLUMN tools text;
     ALTER TABLE entries DROP COLUMN tsv;
     ALTER TABLE entries ADD COLUMN tsv tsvector GENERATED ALWAYS AS
         (setweight(to_tsvector('simple', replace(coalesce(text, ''), U&'\\200B', ' ')), 'A')
          || setweight(to_tsvector('simple', replace(coalesce(tool_text, ''), U&'\\200B', ' ')), 'B')
          || setweight(to_tsvector('simple', coalesce(tools, '')), 'C')) STORED;
     CREATE INDEX entries_tsv ON entries USING gin(tsv);
     CREATE INDEX entries_recent ON entries (timestamp COLLATE \"C\" DESC NULLS LAST, host, local_id DESC);
     UPDATE files SET generation = -1;",
    // 5: the overview's sums of each session and its edits, as its host's index keeps them. Every
    // file's checkpoint is set apart from its host's, so that the host's next push sends each of
    // its sessions' rows again, and their sums with them (no line is sent again).
    "CREATE TABLE stats_hours (
         host       text   NOT NULL REFERENCES hosts(name),
         session_id text   NOT NULL,
         hour       text   NOT NULL,                -- YYYY-MM-DDTHH, UTC
         messages   bigint NOT NULL,
         prompts    bigint NOT NULL,
         PRIMARY KEY (host, session_id, hour)
     );
     CREATE INDEX stats_hours_hour ON stats_hours(hour COLLATE \"C\");
     CREATE TABLE tool_hours (
         host       text   NOT NULL REFERENCES hosts(name),
         session_id text   NOT NULL,
         hour       text   NOT NULL,
         tool       text   NOT NULL,
         calls      bigint NOT NULL,
         failures   bigint NOT NULL,
         PRIMARY KEY (host, session_id, hour, tool)
     );
     CREATE TABLE response_hours (
         host       text    NOT NULL REFERENCES hosts(name),
         session_id text    NOT NULL,
         hour       text    NOT NULL,
         model      text    NOT NULL,
         bucket     integer NOT NULL,
         responses  bigint  NOT NULL,
         PRIMARY KEY (host, session_id, hour, model, bucket)
     );
     CREATE TABLE usage_hours (
         host                  text   NOT NULL REFERENCES hosts(name),
         session_id            text   NOT NULL,
         hour                  text,
         agent                 text   NOT NULL,
         model                 text,
         tier                  text,
         over                  bigint NOT NULL,
         responses             bigint NOT NULL,
         input_tokens          bigint NOT NULL,
         output_tokens         bigint NOT NULL,
         cache_read_tokens     bigint NOT NULL,
         cache_write_tokens    bigint NOT NULL,
         cache_write_1h_tokens bigint NOT NULL,
         reasoning_tokens      bigint NOT NULL
     );
     CREATE INDEX usage_hours_session ON usage_hours(host, session_id);
     CREATE INDEX usage_hours_hour ON usage_hours(hour COLLATE \"C\");
     CREATE TABLE edits (
         host       text    NOT NULL REFERENCES hosts(name),
         session_id text    NOT NULL,
         local_id   bigint  NOT NULL,               -- the edit's line, entries.id on the host
         ordinal    integer NOT NULL,               -- its place among the line's calls
         timestamp  text    NOT NULL,
         path       text    NOT NULL,               -- the file (or the files a patch names)
         tool       text,
         added      bigint,
         removed    bigint,
         PRIMARY KEY (host, session_id, local_id, ordinal)
     );
     CREATE INDEX edits_recent ON edits(timestamp COLLATE \"C\" DESC);
     UPDATE files SET checkpoint = -1;",
    // 6: the trigram index on the lines with Chinese or Japanese words alone (those the indexer
    // marked), for `psql` users' substring matches there: over every line it made a push about 50%
    // longer, and the hub's search does not read it.
    "DROP INDEX entries_text_trgm;
     CREATE INDEX entries_text_trgm ON entries USING gin(text gin_trgm_ops) WHERE strpos(text, U&'\\200B') > 0;",
    // 7: no foreign key from a line to its file's row (its check, a query for each line sent, was
    // about 5% of the hub's work in a push; a push deletes the lines with the row), the lines'
    // texts in LZ4 ([`LZ4`], run after), and a session's git branch, which each host sends with its
    // sessions' rows at its next push (as for the sums of 5: every file's checkpoint set apart).
    "DO $$ DECLARE c text; BEGIN
         FOR c IN SELECT conname FROM pg_constraint
                  WHERE conrelid = 'entries'::regclass AND confrelid = 'files'::regclass AND contype = 'f' LOOP
             EXECUTE format('ALTER TABLE entries DROP CONSTRAINT %I', c);
         END LOOP;
     END $$;
     ALTER TABLE sessions ADD COLUMN git_branch text;
     UPDATE files SET checkpoint = -1;",
    // 8: a session's outline from the hub: each response names the line that stands for it, and
    // each line's tool calls are counted, both sent with the sessions' rows at each host's next push
    // (every file's checkpoint set apart, as for 5: no line is sent again).
    "ALTER TABLE usage ADD COLUMN local_id bigint;
     CREATE TABLE calls (
         host       text   NOT NULL REFERENCES hosts(name),
         session_id text   NOT NULL,
         local_id   bigint NOT NULL,
         calls      bigint NOT NULL,
         PRIMARY KEY (host, session_id, local_id)
     );
     UPDATE files SET checkpoint = -1;",
];

/// Has a line's texts compressed with LZ4 where the server can (PostgreSQL 14 and later, built with
/// lz4, as Debian's and the official images are; elsewhere they stay pglz): pglz was about 9% of
/// the hub's work in a push. Run after [`SCHEMA`], and by the migration to 7.
const LZ4: &str = "DO $$ BEGIN
    EXECUTE 'ALTER TABLE entries ALTER COLUMN stripped SET COMPRESSION lz4, ALTER COLUMN text SET COMPRESSION lz4,
                 ALTER COLUMN tool_text SET COMPRESSION lz4, ALTER COLUMN tsv SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error THEN NULL;
END $$;";

/// How long connecting may take before it fails (unless the URL or `PGCONNECT_TIMEOUT` says).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the hub may take to answer a statement, by default ([`HubConfig::with_timeout`]).
pub const TIMEOUT: Duration = Duration::from_secs(120);

/// TCP keepalive, on both ends: the first probe after this long idle, then every
/// [`KEEPALIVE_INTERVAL`], the connection dropped after [`KEEPALIVE_PROBES`] unanswered.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(30);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);
const KEEPALIVE_PROBES: u32 = 3;

/// The variables libpq reads, as this driver does not: each fills in what the URL leaves out
/// (`PGSSLMODE` and `PGSSLROOTCERT` too: [`Tls`]).
const ENVIRONMENT: &[&str] =
    &["PGHOST", "PGPORT", "PGUSER", "PGPASSWORD", "PGDATABASE", "PGAPPNAME", "PGCONNECT_TIMEOUT"];

/// Where the hub is and who connects: a `postgres://` URL or a `key=value` string (either may be
/// empty), with whatever it leaves out taken from the `PG*` environment variables, as `psql` does.
#[derive(Clone)]
pub struct HubConfig {
    config: tokio_postgres::Config,
    tls: Tls,
    timeout: Duration,
}

impl std::fmt::Debug for HubConfig {
    // The password stays out of logs and debug output.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl HubConfig {
    /// Parses `url` (see the type) and fills it in from the environment.
    pub fn new(url: &str) -> Result<HubConfig> {
        Self::with_environment(url, |name| std::env::var(name).ok())
    }

    /// `url` alone, with nothing from the environment (to see what it says itself).
    pub fn new_without_environment(url: &str) -> Result<HubConfig> {
        Self::with_environment(url, |_| None)
    }

    /// [`Self::new`] with the environment read through `var`.
    pub fn with_environment(url: &str, var: impl Fn(&str) -> Option<String>) -> Result<HubConfig> {
        let bad = |e: tokio_postgres::Error| {
            Error::BadQuery(format!(
                "not a PostgreSQL URL or connection string: {}",
                scrollback_core::error::with_causes(&e)
            ))
        };
        // The driver knows neither sslrootcert nor the modes that verify.
        let (url, ssl_mode, root_cert) = tls::split(url)?;
        let mut tls = Tls::new(ssl_mode, root_cert, &var)?;
        let mut config: tokio_postgres::Config =
            if url.trim().is_empty() { tokio_postgres::Config::new() } else { url.parse().map_err(bad)? };
        for name in ENVIRONMENT {
            let Some(value) = var(name).filter(|v| !v.is_empty()) else { continue };
            let number = |what: &str| {
                value.parse::<u64>().map_err(|_| Error::BadQuery(format!("{name}={value:?} is not {what}")))
            };
            match *name {
                "PGHOST" if config.get_hosts().is_empty() => {
                    for host in value.split(',') {
                        if host.starts_with('/') {
                            config.host_path(host);
                        } else {
                            config.host(host);
                        }
                    }
                }
                "PGPORT" if config.get_ports().is_empty() => {
                    let port = u16::try_from(number("a port")?)
                        .map_err(|_| Error::BadQuery(format!("{name}={value:?} is not a port")))?;
                    config.port(port);
                }
                "PGUSER" if config.get_user().is_none() => {
                    config.user(value.as_str());
                }
                "PGPASSWORD" if config.get_password().is_none() => {
                    config.password(value.as_str());
                }
                "PGDATABASE" if config.get_dbname().is_none() => {
                    config.dbname(value.as_str());
                }
                "PGAPPNAME" if config.get_application_name().is_none() => {
                    config.application_name(value.as_str());
                }
                "PGCONNECT_TIMEOUT" if config.get_connect_timeout().is_none() => {
                    config.connect_timeout(Duration::from_secs(number("a number of seconds")?));
                }
                _ => {}
            }
        }
        if config.get_hosts().is_empty() {
            config.host("localhost");
        }
        // As libpq, no TLS over a Unix socket (the server offers none there): its file's
        // permissions are what is trusted.
        if config.get_hosts().iter().all(|h| matches!(h, tokio_postgres::config::Host::Unix(_))) {
            tls.mode = SslMode::Disable;
        }
        config.ssl_mode(tls.mode.driver());
        if config.get_user().is_none() {
            let user = var("USER").or_else(|| var("LOGNAME")).unwrap_or_else(|| "postgres".to_owned());
            config.user(user);
        }
        if config.get_dbname().is_none() {
            let user = config.get_user().unwrap_or("postgres").to_owned();
            config.dbname(user);
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("scrollback");
        }
        Ok(HubConfig { config, tls, timeout: TIMEOUT })
    }

    /// The same hub, each of its answers awaited at most `timeout` (at least a second).
    pub fn with_timeout(mut self, timeout: Duration) -> HubConfig {
        self.timeout = timeout.max(Duration::from_secs(1));
        self
    }

    /// How long the hub may take to answer a statement: past it, the connection is dropped and
    /// the call fails. The hub ends a statement running longer, and a session idle longer.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The TLS the connection is to have.
    pub fn tls(&self) -> &Tls {
        &self.tls
    }

    /// Whether a password is set (a URL on a command line must not carry one: `ps` shows it).
    pub fn has_password(&self) -> bool {
        self.config.get_password().is_some()
    }

    /// `user@host:port/dbname`, for logs and `status`: never the password.
    pub fn describe(&self) -> String {
        let host = match self.config.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
            Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
            None => "localhost".to_owned(),
        };
        let port = self.config.get_ports().first().copied().unwrap_or(5432);
        format!("{}@{host}:{port}/{}", self.config.get_user().unwrap_or(""), self.config.get_dbname().unwrap_or(""))
    }

    /// Connects, with TLS as [`Self::tls`] says (the root certificates read now), TCP keepalive,
    /// and the session's own limits set on the hub (see the module).
    pub fn connect(&self) -> Result<Hub> {
        let ms = self.timeout.as_millis();
        let mut config = self.config.clone();
        config
            .keepalives(true)
            .keepalives_idle(KEEPALIVE_IDLE)
            .keepalives_interval(KEEPALIVE_INTERVAL)
            .keepalives_retries(KEEPALIVE_PROBES)
            .tcp_user_timeout(self.timeout);
        let limits = format!(
            "-c statement_timeout={ms} -c idle_in_transaction_session_timeout={ms} -c tcp_keepalives_idle={} \
             -c tcp_keepalives_interval={} -c tcp_keepalives_count={KEEPALIVE_PROBES}",
            KEEPALIVE_IDLE.as_secs(),
            KEEPALIVE_INTERVAL.as_secs()
        );
        let options = match self.config.get_options() {
            Some(given) if !given.trim().is_empty() => format!("{given} {limits}"),
            _ => limits,
        };
        config.options(options);
        let mut hub = Hub::connect(&config, self.tls.connector()?, self.timeout)?;
        // A session idle outside a transaction ends too (PostgreSQL 14 and later know how).
        let version: String = hub.query_one("SHOW server_version_num", &[])?.try_get(0).pg()?;
        if version.parse::<u32>().is_ok_and(|v| v >= 140_000) {
            hub.batch_execute(&format!("SET idle_session_timeout = {ms}"))?;
        }
        Ok(hub)
    }
}

/// Creates the hub's schema, or takes it to [`VERSION`] one step at a time; its version. Two hosts
/// doing so at once take turns (an advisory lock).
pub fn migrate(client: &mut Hub) -> Result<i64> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock(7461023)", &[])?;
    let exists: bool = tx.query_one("SELECT to_regclass('hub_meta') IS NOT NULL", &[])?.try_get(0).pg()?;
    if !exists {
        tx.batch_execute(SCHEMA)?;
        tx.batch_execute(LZ4)?;
        tx.commit()?;
        return Ok(VERSION);
    }
    let found: String =
        tx.query_one("SELECT value FROM hub_meta WHERE key = 'schema_version'", &[])?.try_get(0).pg()?;
    let found: i64 =
        found.parse().map_err(|_| Error::Hub(format!("the hub's schema version {found:?} is not a number")))?;
    if found > VERSION {
        return Err(Error::Hub(format!(
            "the hub has schema version {found}; this scrollback knows version {VERSION}: upgrade it"
        )));
    }
    for (step, sql) in MIGRATIONS.iter().enumerate().skip(found as usize - 1) {
        tx.batch_execute(sql)?;
        tx.execute("UPDATE hub_meta SET value = $1 WHERE key = 'schema_version'", &[&(step as i64 + 2).to_string()])?;
    }
    if found < 7 {
        tx.batch_execute(LZ4)?;
    }
    tx.commit()?;
    Ok(VERSION)
}

/// This machine's name, the default `--host`.
pub fn machine_name() -> String {
    rustix::system::uname().nodename().to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn the_identity_file_is_one_of_the_data_directory_s_names() {
        assert!(scrollback_core::db::DATA_DIR_NAMES.contains(&push::IDENTITY_FILE));
    }

    #[test]
    fn the_environment_fills_in_what_the_url_leaves_out() -> Result<()> {
        let vars = [("PGHOST", "db.example"), ("PGPORT", "6543"), ("PGUSER", "pusher"), ("PGPASSWORD", "s'cret")];
        let c = HubConfig::with_environment("", env(&vars))?;
        assert_eq!(c.describe(), "pusher@db.example:6543/pusher");
        assert!(c.has_password());
        let c = HubConfig::with_environment("postgres://reader@hub:5433/team", env(&vars))?;
        assert_eq!(c.describe(), "reader@hub:5433/team");
        assert_eq!(c.config.get_password(), Some(&b"s'cret"[..]), "the password from PGPASSWORD");
        assert!(!format!("{c:?}").contains("cret"), "the password is never printed");
        let c = HubConfig::with_environment("host=h dbname=d user=u", env(&[]))?;
        assert_eq!(c.describe(), "u@h:5432/d");
        assert!(!c.has_password());
        assert!(HubConfig::with_environment("postgres://h:notaport/d", env(&[])).is_err());
        let over_tcp = HubConfig::with_environment("host=h sslmode=verify-full", env(&[]))?;
        assert_eq!(over_tcp.config.get_ssl_mode(), tokio_postgres::config::SslMode::Require);
        let over_socket = HubConfig::with_environment("host=/run/postgresql sslmode=verify-full", env(&[]))?;
        assert_eq!(over_socket.config.get_ssl_mode(), tokio_postgres::config::SslMode::Disable, "no TLS on a socket");
        Ok(())
    }
}
