//! The writer as a front end opens it, and the watch on the live writer's health.

use std::path::Path;

use scrollback_core::error::Result;
use scrollback_index::Indexer;
use scrollback_index::events::Event;
use scrollback_index::lock::WriterLock;

/// How a front end wants the writer.
#[derive(Debug, Clone, Default)]
pub struct WriterOptions {
    /// Keep no vault links, for this reason (said in `status`).
    pub vault_off: Option<String>,
    /// How the front end names itself in the lock file (`serve`, `index`): `scrollback` if `None`.
    pub holder: Option<&'static str>,
}

/// Opens the index for writing in `data_dir` ([`Indexer::open`]), and finishes what a `forget`
/// killed midway left: the acceptance record's part and the vault links of each session whose
/// index rows are gone. The vault's retention check is logged (reported, never fixed by deleting
/// anything).
///
/// An `mcp` server that writes the index hands it over: this waits for it, and says so
/// ([`WriterLock::take_over`]). Another front end that writes is [`scrollback_core::Error::Locked`].
pub fn open_writer(data_dir: &Path, options: &WriterOptions) -> Result<Indexer> {
    let lock = take_over(data_dir, options.holder)?;
    open_writer_locked(data_dir, options, lock)
}

/// The writer lock for a front end, taken over from an `mcp` server if one holds it.
fn take_over(data_dir: &Path, holder: Option<&'static str>) -> Result<WriterLock> {
    WriterLock::take_over(data_dir, holder.unwrap_or("scrollback"), &mut |h| {
        tracing::warn!("`scrollback {h}` writes the index here; waiting for it to hand it over");
    })
}

/// [`open_writer`] with the lock already held.
pub(crate) fn open_writer_locked(data_dir: &Path, options: &WriterOptions, lock: WriterLock) -> Result<Indexer> {
    let mut indexer = Indexer::open_locked(data_dir, lock)?;
    if let Some(why) = &options.vault_off {
        indexer.set_vault_off(why)?;
    }
    crate::forget::finish_interrupted(&mut indexer, data_dir)?;
    let conn = scrollback_read::index::open(data_dir)?;
    for broken in scrollback_read::status::vault_status(&conn)?.broken {
        tracing::warn!("vault: {broken}");
    }
    Ok(indexer)
}

/// [`open_writer`] for `scrollback rebuild`: the index moved aside and a new one opened in its
/// place ([`Indexer::open_rebuilt`]), interrupted forgets finished. Returns where the old file went.
pub fn open_rebuilt(data_dir: &Path) -> Result<(Indexer, std::path::PathBuf)> {
    let (mut indexer, old) = Indexer::open_rebuilt(data_dir, take_over(data_dir, Some("rebuild"))?)?;
    crate::forget::finish_interrupted(&mut indexer, data_dir)?;
    Ok((indexer, old))
}

/// Resolves with the reason when the live writer dies ([`Event::WriterFailed`] on the bus); never,
/// if the bus closes first. Subscribe before the writer starts, so that its death is never missed.
pub async fn writer_died(mut events: tokio::sync::broadcast::Receiver<Event>) -> String {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        match events.recv().await {
            Ok(Event::WriterFailed { error }) => return error,
            Err(RecvError::Closed) => std::future::pending::<()>().await,
            _ => {}
        }
    }
}
