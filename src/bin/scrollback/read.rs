//! The commands that read the index and print: `search`, `export`, `usage`, `stats`, `media` and
//! `status`.
//! Each reads through the read crate's `Store` (or the ops crate, for `status`) and only formats
//! what it gets; none of them writes the index.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use scrollback::ops::roots::Origin;
use scrollback::read::status::IndexStatus;
use scrollback::read::{Store, history, index, media, request};
use scrollback::{MediaName, Root};

use crate::cli::{Usage, bad_name};
use crate::table::{usage_table, write_columns};
use crate::visible::{one_line, visible};
use crate::words::count;

/// `scrollback status`: what the index holds, line by line.
pub(crate) fn status(data_dir: &Path, roots: &[Root], origin: &Origin) -> anyhow::Result<()> {
    let conn = index::open(data_dir)?;
    let status = scrollback::ops::status::of_data_dir(&conn, data_dir, roots)?;
    let pending = status.sends_pending;
    let s = status.index.context("the index could not be read")?;
    let mb = |b: u64| b as f64 / 1e6;
    let mut out = std::io::stdout().lock();
    writeln!(out, "data directory  {}", one_line(&data_dir.display().to_string()))?;
    writeln!(out, "transcripts     {} followed, {} gone (their history kept)", s.transcripts_live, s.transcripts_gone)?;
    writeln!(out, "roots           {}", one_line(&origin.to_string()))?;
    for root in &status.roots {
        let state = match (root.exists, root.count) {
            (false, _) => "does not exist".to_owned(),
            (true, Some(c)) => {
                format!("exists: {}, {}", count(c.transcripts, "transcript"), count(c.sessions, "session"))
            }
            (true, None) => "exists".to_owned(),
        };
        writeln!(out, "root            {} ({state})", one_line(&root.root.spec()))?;
    }
    for (agent, sessions) in &s.agents {
        writeln!(out, "agent           {}: {}", one_line(agent), count(*sessions, "session"))?;
    }
    writeln!(out, "sessions        {}", s.sessions)?;
    writeln!(out, "entries         {}", entries_words(&s))?;
    writeln!(out, "photos          {}", photos_words(&s))?;
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
        Some(why) => writeln!(out, "vault           off: {}", one_line(why))?,
    }
    for broken in &s.vault.broken {
        writeln!(out, "vault problem   {}", one_line(broken))?;
    }
    Ok(())
}

/// The entries the index holds, in the words `status` and `index` both use: those history shows
/// (invalid lines among them), and the lines it leaves out.
pub(crate) fn entries_words(s: &IndexStatus) -> String {
    format!(
        "{} ({}), and {} hidden as copies or replays",
        s.entries,
        count(s.invalid_lines, "invalid line"),
        count(s.hidden_lines, "more line")
    )
}

/// The photos the index holds, in the words `status` and `index` both use: the photos history
/// shows, and every payload (photos, their copies, documents, files), which `index` counts as it reads.
pub(crate) fn photos_words(s: &IndexStatus) -> String {
    format!("{}, of {} in all", s.photos, count(s.payloads, "payload"))
}

/// A request the store refused as asked ([`scrollback::Error::BadQuery`]) as a usage error (exit
/// 2, its message as the API says it); any other error as it is.
fn refused(e: scrollback::Error) -> anyhow::Error {
    match e {
        scrollback::Error::BadQuery(why) => anyhow::Error::new(Usage(why)),
        e => e.into(),
    }
}

/// A person's marks on those of `ids` that have any, from the acceptance record (none if there is
/// no record: reading never makes one).
fn marks_of(data_dir: &Path, ids: &[&str]) -> anyhow::Result<Vec<scrollback::accept::Mark>> {
    match data_dir.join(scrollback::db::ACCEPT_FILE).exists() {
        true => Ok(scrollback::accept::AcceptStore::open(data_dir)?.marks(ids)?),
        false => Ok(Vec::new()),
    }
}

/// The title a person gave session `id`, if they gave one.
fn marked_title<'m>(marks: &'m [scrollback::accept::Mark], id: &str) -> Option<&'m str> {
    marks.iter().find(|m| m.session_id == id).and_then(|m| m.title.as_deref())
}

/// `value` as pretty JSON on its own line: what `--json` prints (the API's answer).
fn json_to(out: &mut impl Write, value: &impl serde::Serialize) -> anyhow::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)?;
    Ok(())
}

/// What a search says of how its query was read and run, on standard error.
fn say_notes(notes: &[String]) {
    for note in notes {
        eprintln!("note: {}", one_line(note));
    }
}

/// `scrollback sessions`: the sessions, newest first, a line each (their titles a person's where
/// they gave one); or the API's JSON.
pub(crate) fn sessions(data_dir: &Path, input: request::SessionsInput, json: bool) -> anyhow::Result<()> {
    let query = input.parse(50, history::MAX_LIMIT).map_err(refused)?;
    let conn = index::open(data_dir)?;
    let store: &dyn Store = &conn;
    let page = store.sessions(&query).map_err(refused)?;
    let marks = marks_of(data_dir, &page.sessions.iter().map(|s| s.id.as_str()).collect::<Vec<_>>())?;
    let mut out = std::io::stdout().lock();
    if json {
        return json_to(&mut out, &scrollback::http::wire::Sessions::marked(&page, &marks));
    }
    let mut table =
        vec![["session", "last", "agent", "project", "entries", "photos", "title"].map(String::from).to_vec()];
    for s in &page.sessions {
        let title = marked_title(&marks, &s.id);
        table.push(vec![
            s.id.clone(),
            s.last_timestamp.as_deref().unwrap_or("-").to_owned(),
            s.agent.clone(),
            one_line(s.project.as_deref().unwrap_or("-")),
            s.entries.to_string(),
            s.images.to_string(),
            one_line(title.or(s.title.as_deref()).unwrap_or("(untitled)")),
        ]);
    }
    if page.sessions.is_empty() {
        eprintln!("no sessions");
        return Ok(());
    }
    crate::table::write_rows(&mut out, &table, &[4, 5])?;
    if page.next.is_some() {
        eprintln!("more: raise --limit, or narrow with --project, --agent, --since or --query");
    }
    Ok(())
}

/// `scrollback search`: sessions with hits, each its title, where it is, and its best hit (the
/// matched words in brackets); or every hit (`input.group` `none`); or the API's JSON. The search's
/// session may be named by a prefix of its id.
pub(crate) fn search(data_dir: &Path, input: request::SearchInput, json: bool) -> anyhow::Result<()> {
    let mut asked = request::Search::parse(input, 20, history::MAX_LIMIT).map_err(refused)?;
    let conn = index::open(data_dir)?;
    let store: &dyn Store = &conn;
    asked.session = asked.session.map(|given| store.session_named(&given)).transpose().map_err(bad_name)?;
    let marks = |ids: Vec<&str>| marks_of(data_dir, &ids);
    let read = |notes| scrollback::http::wire::QueryRead::new(&asked.written, &asked.query, notes);
    let no_hits = || eprintln!("no hits for {}", one_line(&format!("{:?}", asked.written)));
    let mut out = std::io::stdout().lock();
    match asked.answer(store).map_err(refused)? {
        history::SearchAnswer::Entries(page) => {
            let marks = marks(page.hits.iter().map(|h| h.session_id.as_str()).collect())?;
            if json {
                return json_to(&mut out, &scrollback::http::wire::Hits::marked(read(&page.notes), &page, &marks));
            }
            say_notes(&page.notes);
            for hit in &page.hits {
                let title = marked_title(&marks, &hit.session_id);
                writeln!(out, "{}", one_line(title.or(hit.title.as_deref()).unwrap_or("(untitled)")))?;
                writeln!(out, "    {}", one_line(&format!("{} · {}", hit.session_id, hit_line(hit))))?;
                writeln!(out, "    {}", one_line(&hit.snippet.marked("[", "]")))?;
            }
            if page.hits.is_empty() {
                no_hits();
            }
        }
        history::SearchAnswer::Sessions(page) => {
            let marks = marks(page.sessions.iter().map(|g| g.session_id.as_str()).collect())?;
            if json {
                let wire = scrollback::http::wire::SessionHitsPage::marked(read(&page.notes), &page, &marks);
                return json_to(&mut out, &wire);
            }
            say_notes(&page.notes);
            for g in &page.sessions {
                let title = marked_title(&marks, &g.session_id);
                let others = count(g.hits, "hit");
                writeln!(out, "{}  ({others})", one_line(title.or(g.title.as_deref()).unwrap_or("(untitled)")))?;
                let place = format!(
                    "{} · {} · {} · last {}",
                    g.session_id,
                    g.agent,
                    g.project.as_deref().unwrap_or("-"),
                    g.last_timestamp.as_deref().unwrap_or("-")
                );
                writeln!(out, "    {}", one_line(&place))?;
                writeln!(out, "    {}", one_line(&hit_line(&g.best)))?;
                writeln!(out, "    {}", one_line(&g.best.snippet.marked("[", "]")))?;
                writeln!(out)?;
            }
            if page.sessions.is_empty() {
                no_hits();
            }
        }
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

/// `counted` with its verb: `1 line was`, `2 lines were`.
fn were(counted: String, one: bool) -> String {
    format!("{counted} {}", if one { "was" } else { "were" })
}

/// Where `export -o` writes.
enum Target {
    /// Standard output (`-o -`).
    Stdout,
    /// A regular file, or none yet: a temporary file beside it, renamed into place once every
    /// photo was checked (a failure leaves nothing behind). A symbolic link's file is replaced and
    /// the link kept.
    Beside(PathBuf),
    /// A FIFO or a character device (`/dev/stdout`, a terminal, `/dev/null`): written into as it
    /// is, never replaced by a file; what it is, for the message.
    InPlace(PathBuf, &'static str),
}

impl Target {
    /// What `path` is, and so how it is written; anything else than a regular file, a FIFO or a
    /// character device (a directory, a socket, a block device) is refused, before anything is written.
    fn of(path: PathBuf) -> anyhow::Result<Target> {
        use std::os::unix::fs::FileTypeExt;
        if path.as_os_str() == "-" {
            return Ok(Target::Stdout);
        }
        let meta = match std::fs::metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Target::Beside(path)),
            Err(e) => return Err(e).with_context(|| format!("looking at {}", path.display())),
        };
        let kind = meta.file_type();
        if kind.is_file() {
            let real = std::fs::canonicalize(&path).with_context(|| format!("resolving {}", path.display()))?;
            return Ok(Target::Beside(real));
        }
        if kind.is_fifo() {
            return Ok(Target::InPlace(path, "FIFO"));
        }
        if kind.is_char_device() {
            return Ok(Target::InPlace(path, "character device"));
        }
        let what = if kind.is_dir() {
            "a directory"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_block_device() {
            "a block device"
        } else {
            "not a regular file"
        };
        Err(Usage(format!(
            "refusing to export onto {}: it is {what}; give a file's path (or - for standard output)",
            one_line(&path.display().to_string())
        ))
        .into())
    }
}

/// `scrollback export`: to a file (written beside it and renamed into place), into a FIFO or a
/// character device as it is, or to standard output (a terminal gets its control characters
/// shown, not obeyed). The session may be named by a prefix of its id.
pub(crate) fn export(
    data_dir: &Path,
    session: &str,
    format: &str,
    redact: bool,
    output: Option<PathBuf>,
) -> anyhow::Result<()> {
    use scrollback::render::export::{Kind, export};
    let kind = Kind::parse(format).map_err(|e| Usage(e.to_string()))?;
    let redactor = redact.then(scrollback::render::redact::Redactor::shipped).transpose()?;
    let conn = index::open(data_dir)?;
    let store: &dyn Store = &conn;
    let session = store.session_named(session).map_err(bad_name)?;
    let session = session.as_str();
    let target = Target::of(output.unwrap_or_else(|| PathBuf::from(format!("{session}.{}", kind.extension()))))?;
    // A Markdown export's photos go to `<name>_files/` beside it.
    let photos_beside = |path: &Path| {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_owned();
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| session.to_owned());
        let name = format!("{stem}_files");
        (dir.join(&name), name, dir)
    };
    let written = match &target {
        Target::Stdout => {
            let photos = PathBuf::from(format!("{session}_files"));
            let name = photos.display().to_string();
            let stdout = std::io::stdout();
            if stdout.is_terminal() {
                // Whole, then shown: a terminal obeys no escape from the transcript.
                let mut text = Vec::new();
                let written = export(&conn, session, kind, redactor.as_ref(), &mut text, Some((&photos, &name)))?;
                stdout.lock().write_all(visible(&String::from_utf8_lossy(&text)).as_bytes())?;
                written
            } else {
                let mut out = std::io::BufWriter::new(stdout.lock());
                export(&conn, session, kind, redactor.as_ref(), &mut out, Some((&photos, &name)))?
            }
        }
        Target::InPlace(path, _) => {
            let (photos, name, _) = photos_beside(path);
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .with_context(|| format!("opening {}", path.display()))?;
            let mut out = std::io::BufWriter::new(file);
            export(&conn, session, kind, redactor.as_ref(), &mut out, Some((&photos, &name)))?
        }
        Target::Beside(path) => {
            let (photos, name, dir) = photos_beside(path);
            let mut tmp = tempfile::NamedTempFile::new_in(&dir)?;
            let written = {
                let mut out = std::io::BufWriter::new(tmp.as_file_mut());
                export(&conn, session, kind, redactor.as_ref(), &mut out, Some((&photos, &name)))?
            };
            if written.is_some() {
                tmp.as_file().sync_all()?;
                tmp.persist(path).map_err(|e| e.error)?;
            }
            written
        }
    };
    let Some(written) = written else {
        return Err(anyhow::Error::new(Usage(format!("no session {session:?} in the index"))));
    };
    // The entries the export's header (and the viewer's) counts: the session's, side chains left
    // out. A JSONL export counts the lines it wrote.
    let counted = match kind {
        Kind::Jsonl => count(written.entries, "line"),
        _ => {
            let about = store.session(session)?.context("the session went while it was exported")?;
            format!(
                "{} and {}",
                count(about.entries - about.sidechain_entries, "entry"),
                count(written.photos, "photo")
            )
        }
    };
    let redacted: u64 = written.redacted.values().sum();
    let place = match &target {
        Target::Stdout => String::new(),
        Target::Beside(path) => format!(" to {}", path.display()),
        Target::InPlace(path, what) => format!(" into the {what} {} (written in place)", path.display()),
    };
    eprintln!(
        "exported {counted} of {session}{}{}",
        one_line(&place),
        if redact { format!("; {} redacted", count(redacted, "secret")) } else { String::new() }
    );
    if written.from_index > 0 {
        eprintln!(
            "{} written from the index's copy: their transcript no longer holds them (deleted with \
             the vault off, replaced or changed); {} of them hold the marker where their photos or files were",
            were(count(written.from_index, "line"), written.from_index == 1),
            written.without_payloads
        );
    }
    if written.lost > 0 {
        let lost = count(written.lost, "line");
        let (lost, are) = if written.lost == 1 { (lost, "is") } else { (lost, "are") };
        eprintln!("{lost} the index never stored {are} gone with their transcript: left out");
    }
    Ok(())
}

/// `scrollback usage`: the report as a table on a terminal (or JSON).
pub(crate) fn usage(
    data_dir: &Path,
    input: request::UsageInput,
    prices: &scrollback::read::prices::Prices,
    json: bool,
) -> anyhow::Result<()> {
    let mut asked = input.parse().map_err(refused)?;
    let conn = index::open(data_dir)?;
    let store: &dyn Store = &conn;
    asked.session = asked.session.map(|given| store.session_named(&given)).transpose().map_err(bad_name)?;
    let by = asked.by;
    let report = store.usage(by, asked.filter(), prices).map_err(refused)?;
    let mut out = std::io::stdout().lock();
    if json {
        return json_to(&mut out, &report);
    }
    write_columns(&mut out, &usage_table(&report, by))?;
    for (model, n) in &report.unpriced_models {
        writeln!(
            out,
            "unpriced: {} ({}): no price in the table; pass --prices FILE",
            one_line(model),
            count(*n, "response")
        )?;
    }
    writeln!(out, "prices: {}", one_line(&format!("{}, taken {}", report.prices.source, report.prices.taken)))?;
    Ok(())
}

/// `scrollback stats`: the overview as a report on a terminal (or JSON).
pub(crate) fn stats(
    data_dir: &Path,
    input: request::StatsInput,
    prices: &scrollback::read::prices::Prices,
    json: bool,
) -> anyhow::Result<()> {
    let asked = input.parse().map_err(refused)?;
    let conn = index::open(data_dir)?;
    let store: &dyn Store = &conn;
    let mut stats = store.stats(asked.filter(), prices).map_err(refused)?;
    // A person's marks: their title in place of the transcript's, as in the session list.
    let marks = marks_of(data_dir, &stats.session_ids())?;
    stats.retitle(|id| marked_title(&marks, id).map(str::to_owned));
    let mut out = std::io::stdout().lock();
    if json {
        return json_to(&mut out, &stats);
    }
    crate::table::write_stats(&mut out, &stats)?;
    Ok(())
}

/// `scrollback media`: one payload's decoded bytes, verified, to a file or a pipe. A ref's session
/// may be named by a prefix of its id.
pub(crate) fn media_cmd(reference: &str, data_dir: &Path, output: Option<&Path>) -> anyhow::Result<()> {
    let conn = index::open(data_dir)?;
    let mut name = MediaName::parse(reference).map_err(|e| Usage(e.to_string()))?;
    // A session the index does not know is left as given: the ref is then unknown, as it says.
    if let (MediaName::Ref(_), Some((session, rest))) = (&name, reference.split_once('/'))
        && session.chars().count() >= history::names::MIN_PREFIX
    {
        match (&conn as &dyn Store).session_named(session) {
            Ok(id) => name = MediaName::parse(&format!("{id}/{rest}")).map_err(|e| Usage(e.to_string()))?,
            Err(scrollback::Error::UnknownSession(_)) => {}
            Err(e) => return Err(bad_name(e)),
        }
    }
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
