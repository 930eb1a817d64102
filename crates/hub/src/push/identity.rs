//! A data directory's identity on the hub: a random id made once, kept in the data directory's
//! `hub-identity` file (readable by its owner alone), and recorded on the hub with the host name it
//! pushes as ([`claim`]). Two machines share a host name easily (the default is the machine's name,
//! which clones and containers share); their data directories do not share an identity, so the
//! second is refused the name instead of replacing the first's rows at every push.
//!
//! The file is not in the index: the index is derived and may be made anew, the identity stays.
//! A data directory copied whole carries its identity along: delete the copy's file to make it
//! another.

use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::Pg;
use crate::connection::Hub;
use scrollback_core::error::{Error, Result};

/// The identity's file in the data directory.
pub const IDENTITY_FILE: &str = "hub-identity";

/// The data directory's identity (32 hex digits), made and kept the first time it is asked for.
pub fn identity(data_dir: &Path) -> Result<String> {
    let path = data_dir.join(IDENTITY_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => return parse(&text).ok_or_else(|| bad(&path)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(&path, e)),
    }
    let mut random = [0u8; 16];
    let urandom = Path::new("/dev/urandom");
    std::fs::File::open(urandom).and_then(|mut f| f.read_exact(&mut random)).map_err(|e| Error::io(urandom, e))?;
    let id: String = random.iter().map(|b| format!("{b:02x}")).collect();
    // Written whole under another name, then linked into place: a reader never sees half of it,
    // and of two made at once the first linked wins.
    let tmp = data_dir.join(format!("{IDENTITY_FILE}.{}.tmp", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(format!("{id}\n").as_bytes()).and_then(|()| f.sync_all()));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(&tmp, e));
    }
    let linked = std::fs::hard_link(&tmp, &path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(id),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
            parse(&text).ok_or_else(|| bad(&path))
        }
        Err(e) => Err(Error::io(&path, e)),
    }
}

fn parse(text: &str) -> Option<String> {
    let id = text.trim();
    (id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())).then(|| id.to_ascii_lowercase())
}

fn bad(path: &Path) -> Error {
    Error::Hub(format!(
        "{} is not a scrollback hub identity (32 hex digits): delete it to make a new one, and push with --take-over",
        path.display()
    ))
}

/// Records `host` on the hub as `identity`'s: a new name, or one no identity holds yet (pushed by
/// an older scrollback), is taken; a name another identity holds is refused, unless `take_over`,
/// which deletes the rows pushed as it so that this data directory's are sent in their place.
pub(super) fn claim(hub: &mut Hub, host: &str, identity: &str, take_over: bool) -> Result<()> {
    let mut tx = hub.transaction()?;
    tx.execute(
        "INSERT INTO hosts (name, identity) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        &[&host, &identity],
    )?;
    let row = tx.query_one(
        "SELECT identity, to_char(last_push_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') FROM hosts
         WHERE name = $1 FOR UPDATE",
        &[&host],
    )?;
    let (held, last): (Option<String>, Option<String>) = (row.try_get(0).pg()?, row.try_get(1).pg()?);
    match held {
        Some(held) if held == identity => return tx.commit(),
        None => {}
        Some(held) if !take_over => {
            return Err(Error::Hub(format!(
                "the host name {host:?} is pushed to this hub from another data directory (identity {}…, last push {} UTC): \
                 push as another name (--host NAME), or, if this data directory is to be {host:?} from now on, add \
                 --take-over: the rows pushed as {host:?} are then replaced by this index's",
                &held[..held.len().min(8)],
                last.as_deref().unwrap_or("never"),
            )));
        }
        Some(_) => {
            let sums = super::read::SUMS.iter().map(|t| t.table);
            for table in ["entries", "files", "sessions", "usage", "forgotten", "marks"].into_iter().chain(sums) {
                tx.execute(&format!("DELETE FROM {table} WHERE host = $1"), &[&host])?;
            }
            tx.execute("UPDATE hosts SET index_id = NULL WHERE name = $1", &[&host])?;
            tracing::info!("{host}: taken over from another data directory; its rows on the hub are replaced");
        }
    }
    tx.execute("UPDATE hosts SET identity = $2 WHERE name = $1", &[&host, &identity])?;
    tx.commit()
}
