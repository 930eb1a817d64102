//! The commands that read the index and print: `search`, `export`, `usage`, `stats`, `media` and
//! `status`.
//! Each reads through the read crate's `Store` (or the ops crate, for `status`) and only formats
//! what it gets; none of them writes the index.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use scrollback::read::{Store, history, index, media};
use scrollback::{MediaName, Root};

use crate::cli::Usage;
use crate::table::{usage_table, write_columns};

/// `scrollback status`: what the index holds, line by line.
pub(crate) fn status(data_dir: &Path, roots: &[Root]) -> anyhow::Result<()> {
    let conn = index::open(data_dir)?;
    let status = scrollback::ops::status::of_data_dir(&conn, data_dir)?;
    let pending = status.sends_pending;
    let s = status.index.context("the index could not be read")?;
    let mb = |b: u64| b as f64 / 1e6;
    let mut out = std::io::stdout().lock();
    writeln!(out, "data directory  {}", data_dir.display())?;
    writeln!(out, "transcripts     {} followed, {} gone (their history kept)", s.transcripts_live, s.transcripts_gone)?;
    for root in roots {
        let state = if root.exists() { "exists" } else { "does not exist" };
        writeln!(out, "root            {} ({state})", root.spec())?;
    }
    for (agent, sessions) in &s.agents {
        writeln!(out, "agent           {agent}: {sessions} sessions")?;
    }
    writeln!(out, "sessions        {}", s.sessions)?;
    writeln!(out, "entries         {} ({} invalid lines)", s.entries, s.invalid_lines)?;
    writeln!(out, "photos          {}", s.photos)?;
    writeln!(out, "index           {:.1} MB", mb(s.index_bytes))?;
    match s.free_bytes {
        Some(free) => writeln!(out, "free space      {:.1} MB", mb(free))?,
        None => writeln!(out, "free space      unknown")?,
    }
    writeln!(out, "sends pending   {pending}")?;
    match &s.vault.off {
        None => writeln!(
            out,
            "vault           on: {} links; {:.1} MB of deleted transcripts only the vault still holds",
            s.vault.links,
            mb(s.vault.only_in_vault_bytes)
        )?,
        Some(why) => writeln!(out, "vault           off: {why}")?,
    }
    for broken in &s.vault.broken {
        writeln!(out, "vault problem   {broken}")?;
    }
    Ok(())
}

/// How `scrollback search` shows its results.
pub(crate) struct Shown {
    pub sort: history::Sort,
    pub per_entry: bool,
    pub limit: u32,
    pub json: bool,
}

/// `scrollback search`: sessions with hits, each its title, where it is, and its best hit (the
/// matched words in brackets); or every hit (`per_entry`); or the API's JSON.
pub(crate) fn search(query: &str, data_dir: &Path, scope: history::Scope<'_>, shown: Shown) -> anyhow::Result<()> {
    let usage = |e: scrollback::Error| match e {
        scrollback::Error::BadQuery(why) => anyhow::Error::new(Usage(why)),
        e => e.into(),
    };
    let parsed = scrollback::query::parse(query).map_err(usage)?;
    let conn = index::open(data_dir)?;
    let store: &dyn Store = &conn;
    let marks = |ids: Vec<&str>| -> anyhow::Result<Vec<scrollback::accept::Mark>> {
        match data_dir.join(scrollback::db::ACCEPT_FILE).exists() {
            true => Ok(scrollback::accept::AcceptStore::open(data_dir)?.marks(&ids)?),
            false => Ok(Vec::new()),
        }
    };
    let mut out = std::io::stdout().lock();
    if shown.per_entry {
        let page = store.search(&parsed, scope, shown.sort, 0, shown.limit).map_err(usage)?;
        let marks = marks(page.hits.iter().map(|h| h.session_id.as_str()).collect())?;
        if shown.json {
            let read = scrollback::http::wire::QueryRead::new(query, &parsed, &page.notes);
            serde_json::to_writer_pretty(&mut out, &scrollback::http::wire::Hits::marked(read, &page, &marks))?;
            writeln!(out)?;
            return Ok(());
        }
        for note in &page.notes {
            eprintln!("note: {note}");
        }
        for hit in &page.hits {
            let title = marks.iter().find(|m| m.session_id == hit.session_id).and_then(|m| m.title.as_deref());
            writeln!(out, "{}", title.or(hit.title.as_deref()).unwrap_or("(untitled)"))?;
            writeln!(out, "    {} · {}", hit.session_id, hit_line(hit))?;
            writeln!(out, "    {}", hit.snippet.marked("[", "]").replace('\n', " "))?;
        }
        if page.hits.is_empty() {
            eprintln!("no hits for {query:?}");
        }
        return Ok(());
    }
    let page = store.search_sessions(&parsed, scope, shown.sort, 0, shown.limit).map_err(usage)?;
    let marks = marks(page.sessions.iter().map(|g| g.session_id.as_str()).collect())?;
    if shown.json {
        let read = scrollback::http::wire::QueryRead::new(query, &parsed, &page.notes);
        serde_json::to_writer_pretty(&mut out, &scrollback::http::wire::SessionHitsPage::marked(read, &page, &marks))?;
        writeln!(out)?;
        return Ok(());
    }
    for note in &page.notes {
        eprintln!("note: {note}");
    }
    for g in &page.sessions {
        let title = marks.iter().find(|m| m.session_id == g.session_id).and_then(|m| m.title.as_deref());
        let others = match g.hits {
            1 => "1 hit".to_owned(),
            n => format!("{n} hits"),
        };
        writeln!(out, "{}  ({others})", title.or(g.title.as_deref()).unwrap_or("(untitled)"))?;
        writeln!(
            out,
            "    {} · {} · {} · last {}",
            g.session_id,
            g.agent,
            g.project.as_deref().unwrap_or("-"),
            g.last_timestamp.as_deref().unwrap_or("-")
        )?;
        writeln!(out, "    {}", hit_line(&g.best))?;
        writeln!(out, "    {}", g.best.snippet.marked("[", "]").replace('\n', " "))?;
        writeln!(out)?;
    }
    if page.sessions.is_empty() {
        eprintln!("no hits for {query:?}");
    }
    Ok(())
}

/// A hit's time, line, and who said it (or the tool it calls).
fn hit_line(h: &history::SearchHit) -> String {
    let who = h.role.as_deref().or(h.kind.as_deref()).unwrap_or("-");
    let what = match (&h.tool, h.in_tool) {
        (Some(tool), _) => format!("{who}, tool call {tool}"),
        (None, true) => format!("{who}, tool output"),
        (None, false) => who.to_owned(),
    };
    format!("{} line {} ({what})", h.timestamp.as_deref().unwrap_or("-"), h.line)
}

/// `scrollback export`: written to a temporary file beside the target and renamed into place once
/// every photo was checked (a failure leaves nothing behind), or to standard output.
pub(crate) fn export(
    data_dir: &Path,
    session: &str,
    format: &str,
    redact: bool,
    output: Option<PathBuf>,
) -> anyhow::Result<()> {
    use scrollback::read::export::Kind;
    let kind = Kind::parse(format).map_err(|e| Usage(e.to_string()))?;
    let redactor = redact.then(scrollback::read::redact::Redactor::shipped).transpose()?;
    let conn = index::open(data_dir)?;
    let store: &dyn Store = &conn;
    let target = output.unwrap_or_else(|| PathBuf::from(format!("{session}.{}", kind.extension())));
    let written = if target.as_os_str() == "-" {
        let photos = PathBuf::from(format!("{session}_files"));
        let name = photos.display().to_string();
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        store.export(session, kind, redactor.as_ref(), &mut out, Some((&photos, &name)))?
    } else {
        let dir = target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let stem = target.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| session.to_owned());
        let photos_name = format!("{stem}_files");
        let photos = dir.join(&photos_name);
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        let written = {
            let mut out = std::io::BufWriter::new(tmp.as_file_mut());
            store.export(session, kind, redactor.as_ref(), &mut out, Some((&photos, &photos_name)))?
        };
        if written.is_some() {
            tmp.as_file().sync_all()?;
            tmp.persist(&target).map_err(|e| e.error)?;
        }
        written
    };
    let Some(written) = written else {
        return Err(anyhow::Error::new(Usage(format!("no session {session:?} in the index"))));
    };
    let redacted: u64 = written.redacted.values().sum();
    eprintln!(
        "exported {} entries and {} photos of {session}{}{}",
        written.entries,
        written.photos,
        if target.as_os_str() == "-" { String::new() } else { format!(" to {}", target.display()) },
        if redact { format!("; {redacted} secrets redacted") } else { String::new() }
    );
    Ok(())
}

/// `scrollback usage`: the report as a table on a terminal (or JSON).
pub(crate) fn usage(
    data_dir: &Path,
    by: &str,
    filter: scrollback::read::usage::Filter<'_>,
    prices: &scrollback::read::prices::Prices,
    json: bool,
) -> anyhow::Result<()> {
    use scrollback::read::usage::By;
    let conn = index::open(data_dir)?;
    let store: &dyn Store = &conn;
    let by = By::parse(by).map_err(|e| Usage(e.to_string()))?;
    let report = store.usage(by, filter, prices).map_err(|e| match e {
        scrollback::Error::BadQuery(why) => anyhow::Error::new(Usage(why)),
        e => e.into(),
    })?;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
        return Ok(());
    }
    write_columns(&mut out, &usage_table(&report, by))?;
    for (model, n) in &report.unpriced_models {
        writeln!(out, "unpriced: {model} ({n} responses): no price in the table; pass --prices FILE")?;
    }
    writeln!(out, "prices: {}, taken {}", report.prices.source, report.prices.taken)?;
    Ok(())
}

/// `scrollback stats`: the overview as a report on a terminal (or JSON).
pub(crate) fn stats(
    data_dir: &Path,
    filter: scrollback::read::stats::Filter<'_>,
    prices: &scrollback::read::prices::Prices,
    json: bool,
) -> anyhow::Result<()> {
    let conn = index::open(data_dir)?;
    let store: &dyn Store = &conn;
    let stats = store.stats(filter, prices).map_err(|e| match e {
        scrollback::Error::BadQuery(why) => anyhow::Error::new(Usage(why)),
        e => e.into(),
    })?;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &stats)?;
        writeln!(out)?;
        return Ok(());
    }
    crate::table::write_stats(&mut out, &stats)?;
    Ok(())
}

/// `scrollback media`: one payload's decoded bytes, verified, to a file or a pipe.
pub(crate) fn media_cmd(reference: &str, data_dir: &Path, output: Option<&Path>) -> anyhow::Result<()> {
    let conn = index::open(data_dir)?;
    let name = MediaName::parse(reference).map_err(|e| Usage(e.to_string()))?;
    let record = (&conn as &dyn Store).media(&name).map_err(|e| match e {
        scrollback::Error::NotFound(what) => anyhow::anyhow!(
            "no media for {what}: the ref is unknown, or its line is not indexed yet (run `scrollback index`)"
        ),
        e => e.into(),
    })?;
    drop(conn);
    match output {
        Some(path) => {
            media::save(&record, path)?;
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            if stdout.is_terminal() {
                bail!(
                    "refusing to write {} bytes of {} to a terminal: use -o FILE or redirect",
                    record.decoded_length,
                    record.media_type.as_deref().unwrap_or("media")
                );
            }
            // Verify first, so that standard output never gets a byte of a payload that changed.
            media::open(&record)?.verify()?;
            media::copy_to(&record, media::open(&record)?, &mut stdout, Path::new("standard output"))?;
        }
    }
    Ok(())
}
