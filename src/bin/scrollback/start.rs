//! What `serve` says as it starts, to a person: the agents whose transcripts it found, those it did
//! not (one line), how many sessions are indexed once the catch-up is done, and last, alone on its
//! line, the address to open. The detail (each root, where the roots came from, the data directory)
//! is logged at `info` (`RUST_LOG=scrollback=info`), and `scrollback status` lists it. It reads the
//! index and never writes it.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use scrollback::Root;
use scrollback::ingest::tail::WriterHandle;
use scrollback::ops::roots::Origin;
use scrollback::ops::status::RootStatus;

use crate::visible::one_line;
use crate::words::count;

/// How long the start waits for the catch-up before it gives the address anyway: the viewer shows
/// the sessions as they are read.
const CATCH_UP_WAIT: Duration = Duration::from_secs(3);

/// What the start says, and what it needs to say it.
pub(crate) struct Start {
    /// The roots followed.
    pub(crate) roots: Vec<Root>,
    /// Where they came from; `None` for the demo's own.
    pub(crate) origin: Option<Origin>,
    /// The data directory (the demo's own, with `--demo`).
    pub(crate) data_dir: PathBuf,
    /// The writer, whose first job runs once its catch-up is done.
    pub(crate) writer: WriterHandle,
    /// When the writer started its catch-up.
    pub(crate) started: Instant,
}

/// The roots' agents, in their order, by display name, each once: whether any of its roots exists,
/// and the sessions the index holds from them.
fn agents(roots: &[RootStatus]) -> Vec<(&'static str, bool, i64)> {
    let mut agents: Vec<(&'static str, bool, i64)> = Vec::new();
    for root in roots {
        let name = root.root.format.display_name();
        let sessions = root.count.as_ref().map_or(0, |c| c.sessions);
        match agents.iter_mut().find(|a| a.0 == name) {
            Some(agent) => {
                agent.1 |= root.exists;
                agent.2 += sessions;
            }
            None => agents.push((name, root.exists, sessions)),
        }
    }
    agents
}

/// What the index holds from each root, read now; `None` (logged) if it cannot be read.
fn read_roots(data_dir: PathBuf, roots: Vec<Root>) -> Option<Vec<RootStatus>> {
    let read = || -> scrollback::Result<Vec<RootStatus>> {
        let conn = scrollback::read::index::open(&data_dir)?;
        scrollback::ops::status::roots(&conn, &roots)
    };
    read().inspect_err(|e| tracing::warn!("reading what the index holds: {e}")).ok()
}

impl Start {
    /// The lines before the address: the agents found (with their sessions once `caught_up`), the
    /// agents or roots not found, and the sessions indexed.
    fn lines(&self, roots: &[RootStatus], caught_up: Option<f64>) -> Vec<String> {
        let version = env!("CARGO_PKG_VERSION");
        let agents = agents(roots);
        let found: Vec<String> = agents
            .iter()
            .filter(|a| a.1)
            .map(|(name, _, sessions)| match caught_up {
                Some(_) => format!("{name} ({})", count(*sessions, "session")),
                None => name.to_string(),
            })
            .collect();
        let mut lines = Vec::new();
        if found.is_empty() {
            lines.push(match &self.origin {
                Some(Origin::Defaults) => format!(
                    "scrollback {version}: no transcripts yet, of any agent (try --demo, or --root FORMAT:DIR); \
                     `scrollback status` lists where it looks"
                ),
                _ => one_line(&format!(
                    "scrollback {version}: no transcripts yet: {} not there (yet); looked for again at every rescan",
                    roots.iter().map(|r| r.root.spec()).collect::<Vec<_>>().join(", ")
                )),
            });
            return lines;
        }
        let reading = if caught_up.is_some() { "" } else { "reading " };
        match &self.origin {
            None => lines.push(format!(
                "scrollback {version}: the demo, {reading}{}, in a data directory of its own: {}",
                found.join(", "),
                one_line(&self.data_dir.display().to_string())
            )),
            Some(_) => lines.push(format!("scrollback {version}: {reading}{}", found.join(", "))),
        }
        match &self.origin {
            // The defaults: each agent's own place, which most people lack for most agents.
            Some(Origin::Defaults) => {
                let missing: Vec<&str> = agents.iter().filter(|a| !a.1).map(|a| a.0).collect();
                if !missing.is_empty() {
                    lines.push(format!(
                        "no transcripts yet for {} (`scrollback status` lists where it looked)",
                        missing.join(", ")
                    ));
                }
            }
            // Roots a person named: each that is not there, by its name.
            _ => {
                let missing: Vec<String> = roots.iter().filter(|r| !r.exists).map(|r| r.root.spec()).collect();
                if !missing.is_empty() {
                    lines.push(one_line(&format!(
                        "not there (yet): {}; looked for again at every rescan",
                        missing.join(", ")
                    )));
                }
            }
        }
        let sessions: i64 = agents.iter().map(|a| a.2).sum();
        lines.push(match caught_up {
            Some(seconds) => format!("{} indexed, caught up in {seconds:.1} s", count(sessions, "session")),
            None => {
                format!("{} indexed so far; the viewer shows the others as they are read", count(sessions, "session"))
            }
        });
        lines
    }

    /// Says what was found, waits a moment for the catch-up and says what the index holds, then gives
    /// `url` on a line of its own. A catch-up longer than the wait is said when it ends.
    pub(crate) async fn announce(self, url: String) {
        let writer = self.writer.clone();
        // The writer's first job runs once its catch-up is done (`None`: the writer died).
        let mut done = tokio::task::spawn_blocking(move || writer.run(|_| ()));
        let caught_up = match tokio::time::timeout(CATCH_UP_WAIT, &mut done).await {
            Ok(Ok(Some(()))) => Some(self.started.elapsed().as_secs_f64()),
            Ok(_) => return eprintln!("{url}"),
            Err(_) => None,
        };
        let (data_dir, roots) = (self.data_dir.clone(), self.roots.clone());
        if let Ok(Some(read)) = tokio::task::spawn_blocking(move || read_roots(data_dir, roots)).await {
            for line in self.lines(&read, caught_up) {
                eprintln!("{line}");
            }
        }
        eprintln!("{url}");
        if caught_up.is_some() || !matches!(done.await, Ok(Some(()))) {
            return;
        }
        let seconds = self.started.elapsed().as_secs_f64();
        let (data_dir, roots) = (self.data_dir.clone(), self.roots.clone());
        if let Ok(Some(read)) = tokio::task::spawn_blocking(move || read_roots(data_dir, roots)).await {
            let sessions: i64 = agents(&read).iter().map(|a| a.2).sum();
            eprintln!("caught up in {seconds:.1} s: {} indexed", count(sessions, "session"));
        }
    }
}
