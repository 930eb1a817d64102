//! Export every photo (and any other payload) of one session to files, read straight from the
//! transcript by the offsets in the index.
//!
//! ```text
//! cargo run --example export_photos -- DATA_DIR SESSION_ID OUT_DIR
//! ```
//! Each payload is written as `<line>-<ordinal or kind>-<hash prefix>.<ext>`, after its bytes were
//! checked against the recorded blake3: a payload whose transcript changed is reported, not written.

use std::path::PathBuf;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args_os().skip(1).map(PathBuf::from);
    let (Some(data_dir), Some(session), Some(out_dir)) = (args.next(), args.next(), args.next()) else {
        anyhow::bail!("usage: export_photos DATA_DIR SESSION_ID OUT_DIR");
    };
    let session = session.to_string_lossy().into_owned();
    std::fs::create_dir_all(&out_dir)?;

    let conn = scrollback::read::index::open(&data_dir)?;
    let records = scrollback::read::index::media_of_session(&conn, &session)?;
    drop(conn);
    if records.is_empty() {
        anyhow::bail!("session {session} has no photos in the index at {}", data_dir.display());
    }
    let mut written = 0;
    for record in &records {
        let label = match record.ordinal {
            Some(ordinal) => format!("image{ordinal}"),
            None => record.kind.as_str().to_owned(),
        };
        let name = format!("{}-{label}-{}.{}", record.id, &record.blake3[..12], record.extension());
        let target = out_dir.join(name);
        // Decode into a temporary file beside the target; keep it only if the hash matched.
        let mut tmp = tempfile::NamedTempFile::new_in(&out_dir)?;
        let copied = scrollback::read::media::open(record).and_then(|mut reader| {
            std::io::copy(&mut reader, tmp.as_file_mut()).map_err(|e| scrollback::read::media::into_error(e, record))
        });
        match copied {
            Ok(bytes) => {
                tmp.persist(&target)?;
                println!("{} ({bytes} bytes, {})", target.display(), record.media_type.as_deref().unwrap_or("?"));
                written += 1;
            }
            Err(e) => {
                let name = record.reference().map_or_else(|| record.blake3.clone(), |r| r.to_string());
                eprintln!("skipped {name}: {e}");
            }
        }
    }
    println!("{written} of {} payloads written to {}", records.len(), out_dir.display());
    Ok(())
}
