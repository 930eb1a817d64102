//! Full-text search on the hub: the query language's tree ([`Query`]) compiled to PostgreSQL's
//! full-text search over `entries.tsv`, and run as an index's search is (`scrollback_read::history`
//! search): the newest matches as candidates, ranked, a page of hits or of sessions with their best
//! hit, each with a snippet.
//!
//! Every term becomes `phraseto_tsquery('simple', …)` of its text with the index's word marks turned
//! into spaces (so `gpt-5`, `C++` and a Chinese phrase are read by the same parser as the lines
//! were), a prefix its last word `:*`. `tsv` weighs what was said A, tool text B and the tools'
//! names C: `role:` and `tool:` keep to those (`ts_filter`), and the score is `ts_rank_cd` with
//! the index's weights, divided by one plus the log of the line's length (so that, as with BM25, a
//! short line that holds the words ranks over a long one). Ranking differs from an index's in its score (`ts_rank_cd`, not BM25) and
//! in having no "near" tier: the words together come first, then the score, which counts how close
//! they are, then the newer.

use std::cmp::Ordering;

use tokio_postgres::Row as PgRow;
use tokio_postgres::types::ToSql;

use scrollback_core::codec::words;
use scrollback_core::error::{Error, Result};
use scrollback_core::query::{Query, Role, Term};
use scrollback_read::history::{
    CANDIDATES, Candidate, Row, Scope, SearchHit, SearchPage, SearchSource, SessionHitsPage, SessionRow, Snippet, Sort,
    check_offset, hits_page, notes_of, order, scope_role, sessions_page,
};

use crate::Pg;
use crate::store::HubStore;

/// The weights of `tsv`'s classes in the score ({D, C, B, A}: unused, the tools' names, tool text,
/// what was said), as the index weighs its columns.
const WEIGHTS: &str = "'{0.1, 0.5, 0.3, 1.0}'::float4[]";
/// Words around the first match in a snippet, as the index's (FTS5's `snippet(…, 16)`).
const SNIPPET_WORDS: usize = 16;

/// A statement's parameters, numbered as they are added.
#[derive(Default)]
pub(crate) struct Args(Vec<Box<dyn ToSql + Sync>>);

impl Args {
    /// `value` as the next parameter: its placeholder, typed (so that a statement that leaves one
    /// out, such as a count of a search's matches, still prepares).
    pub(crate) fn add(&mut self, value: String) -> String {
        self.0.push(Box::new(value));
        format!("${}::text", self.0.len())
    }

    pub(crate) fn refs(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.0.iter().map(|a| a.as_ref()).collect()
    }
}

/// A term's text as the parser reads it: the word marks of Chinese and Japanese made spaces.
fn spaced(text: &str) -> String {
    words::mark(text).replace('\u{200B}', " ")
}

/// A `tsquery` expression for `term`.
fn tsquery(term: &Term, args: &mut Args) -> String {
    let text = spaced(&term.text);
    if term.prefix {
        let (lead, last) = match text.trim_end().rsplit_once(char::is_whitespace) {
            Some((lead, last)) => (lead.trim(), last),
            None => ("", text.trim()),
        };
        if last.chars().any(char::is_alphanumeric) {
            let quoted = format!("'{}':*", last.replace('\\', "\\\\").replace('\'', "''"));
            let prefix = format!("to_tsquery('simple', {})", args.add(quoted));
            return match lead.is_empty() {
                true => prefix,
                false => format!("(phraseto_tsquery('simple', {}) <-> {prefix})", args.add(lead.to_owned())),
            };
        }
    }
    format!("phraseto_tsquery('simple', {})", args.add(text))
}

/// A query compiled for the hub.
pub(crate) struct Compiled {
    /// A condition on `e` that every match meets (it uses `tsv`'s index).
    pub(crate) matches: String,
    /// The words' `tsquery`, for the score; `None` for a query of filters alone.
    words: Option<String>,
    /// The words together and in order (the first tier), for a query of two or more words and no OR.
    together: Option<String>,
    /// Lower-cased words a snippet marks, each with whether it is a prefix.
    marks: Vec<(String, bool)>,
}

/// `query` compiled, its parameters added to `args`; with its first tier (`together`) only where
/// it is `ranked` (PostgreSQL cannot prepare a statement with a parameter it never names, so a
/// statement that only matches, such as the session list's, must not have that tier's).
pub(crate) fn compile(query: &Query, args: &mut Args, ranked: bool) -> Compiled {
    let clauses: Vec<String> = query
        .all
        .iter()
        .map(|clause| {
            let terms: Vec<String> = clause.iter().map(|t| tsquery(t, args)).collect();
            format!("({})", terms.join(" || "))
        })
        .collect();
    let words = (!clauses.is_empty()).then(|| format!("({})", clauses.join(" && ")));
    let mut conditions = Vec::new();
    if let Some(w) = &words {
        conditions.push(format!("e.tsv @@ {w}"));
        match query.filters.role {
            Some(Role::User | Role::Assistant) => conditions.push(format!("ts_filter(e.tsv, '{{a}}') @@ {w}")),
            Some(Role::Tool) => conditions.push(format!("ts_filter(e.tsv, '{{b,c}}') @@ {w}")),
            None => {}
        }
    }
    if let Some(tool) = &query.filters.tool {
        let name = tsquery(&Term { text: tool.clone(), phrase: true, prefix: false }, args);
        conditions.push(format!("e.tsv @@ {name} AND ts_filter(e.tsv, '{{c}}') @@ {name}"));
    }
    for excluded in &query.none {
        conditions.push(format!("NOT e.tsv @@ {}", tsquery(excluded, args)));
    }
    let plain = ranked && query.all.iter().all(|c| c.len() == 1) && query.all.len() >= 2;
    let together = plain.then(|| {
        let text: Vec<&str> = query.all.iter().map(|c| c[0].text.as_str()).collect();
        let last_prefix = query.all.last().is_some_and(|c| c[0].prefix);
        format!("e.tsv @@ {}", tsquery(&Term { text: text.join(" "), phrase: true, prefix: last_prefix }, args))
    });
    let mut marks = Vec::new();
    for term in query.all.iter().flatten() {
        let pieces: Vec<String> = pieces(&words::mark(&term.text)).map(|(_, w)| w.to_lowercase()).collect();
        let n = pieces.len();
        marks.extend(pieces.into_iter().enumerate().map(|(i, w)| (w, term.prefix && i + 1 == n)));
    }
    let matches = match conditions.is_empty() {
        true => "false".to_owned(),
        false => conditions.join(" AND "),
    };
    Compiled { matches, words, together, marks }
}

/// The words of `text` (runs of letters and digits; the word marks split them too), with where each
/// starts.
fn pieces(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut rest = text.char_indices().peekable();
    std::iter::from_fn(move || {
        while rest.peek().is_some_and(|(_, c)| !c.is_alphanumeric()) {
            rest.next();
        }
        let (start, _) = *rest.peek()?;
        let mut end = start;
        while let Some(&(i, c)) = rest.peek() {
            if !c.is_alphanumeric() {
                break;
            }
            end = i + c.len_utf8();
            rest.next();
        }
        Some((start, &text[start..end]))
    })
}

/// A window of `text` around its first match, the matched words between the index's marks (as
/// FTS5's `snippet()` gives them), word marks taken out; and whether it has a match.
fn snippet(text: &str, marks: &[(String, bool)]) -> (Snippet, bool) {
    let words: Vec<(usize, &str)> = pieces(text).collect();
    let matched = |w: &str| {
        let w = w.to_lowercase();
        marks.iter().any(|(m, prefix)| if *prefix { w.starts_with(m.as_str()) } else { w == *m })
    };
    let hits: Vec<bool> = words.iter().map(|(_, w)| matched(w)).collect();
    let first = hits.iter().position(|&h| h);
    // A few words before the first match, the window kept full to the end as FTS5's is (a text that
    // fits is shown whole).
    let start = first.map_or(0, |f| f.saturating_sub(SNIPPET_WORDS / 4)).min(words.len().saturating_sub(SNIPPET_WORDS));
    let end = (start + SNIPPET_WORDS).min(words.len());
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    let mut at = words.get(start).map_or(0, |(i, _)| *i);
    for (k, (i, w)) in words.iter().enumerate().take(end).skip(start) {
        let between = &text[at..*i];
        // Matched words with only word marks between them (a Chinese or Japanese phrase) are one mark.
        if hits[k] && k > start && hits[k - 1] && between.chars().all(|c| c == '\u{200B}') {
            out.pop();
            out.push_str(between);
            out.push_str(w);
            out.push('\u{E001}');
        } else if hits[k] {
            out.push_str(between);
            out.push('\u{E000}');
            out.push_str(w);
            out.push('\u{E001}');
        } else {
            out.push_str(between);
            out.push_str(w);
        }
        at = i + w.len();
    }
    if end < words.len() {
        out.push('…');
    } else {
        out.push_str(&text[at..]);
    }
    (Snippet::from_fts(words::unmark(&out).into_owned()), first.is_some())
}

/// One search under way: its compiled query, and the conditions of its scope on `e` and `s`.
struct Run<'q> {
    store: &'q HubStore,
    query: &'q Query,
    compiled: Compiled,
    args: Args,
    conditions: String,
    /// Whether the conditions name the session (`s`).
    sessions: bool,
    literal: Option<String>,
    /// The candidates' literal and together columns (set by [`Run::candidates`]): a statement that
    /// takes this run's parameters names them all.
    ranks: String,
}

impl<'q> Run<'q> {
    fn new(store: &'q HubStore, query: &'q Query, scope: Scope<'_>) -> Result<Option<Run<'q>>> {
        let mut args = Args::default();
        let mut scoped = query.clone();
        if let Some(role) = scope.role {
            let role = scope_role(role)?;
            if scoped.filters.role.is_some_and(|r| r != role) {
                return Ok(None);
            }
            scoped.filters.role = Some(role);
        }
        let compiled = compile(&scoped, &mut args, true);
        let f = &scoped.filters;
        let mut conditions = String::new();
        let mut cond = |sql: &str, value: Option<&str>| {
            if let Some(v) = value {
                conditions.push_str(&sql.replace("?", &args.add(v.to_owned())));
            }
        };
        cond(" AND e.agent = ?", scope.agent);
        cond(" AND e.agent = ?", f.agent.as_deref());
        match f.role {
            Some(Role::User) => cond(" AND e.role = ?", Some("user")),
            Some(Role::Assistant) => cond(" AND e.role = ?", Some("assistant")),
            _ => {}
        }
        cond(r#" AND e.timestamp COLLATE "C" >= ?"#, scope.since);
        cond(r#" AND e.timestamp COLLATE "C" >= ?"#, f.after.as_deref());
        cond(r#" AND e.timestamp COLLATE "C" < ?"#, scope.until);
        cond(r#" AND e.timestamp COLLATE "C" < ?"#, f.before.as_deref());
        cond(" AND s.project = ?", scope.project);
        cond(" AND strpos(s.project, ?) > 0", f.project.as_deref());
        cond(r#" AND coalesce(s.last_timestamp, '') COLLATE "C" < ?"#, scope.active_since);
        cond(" AND e.session_id = ?", scope.session);
        cond(" AND starts_with(e.session_id, ?)", f.session.as_deref());
        let literal = scoped
            .all
            .iter()
            .flatten()
            .find(|t| !t.phrase && t.text.chars().any(|c| !c.is_alphanumeric()))
            .map(|t| t.text.to_lowercase());
        let sessions = scope.project.is_some() || f.project.is_some() || scope.active_since.is_some();
        Ok(Some(Run { store, query, compiled, args, conditions, sessions, literal, ranks: "false, false".to_owned() }))
    }

    /// The newest [`CANDIDATES`] matches within the scope, and whether they are every match.
    fn candidates(&mut self) -> Result<(Vec<Candidate>, bool)> {
        let score = match &self.compiled.words {
            Some(w) => format!("ts_rank_cd({WEIGHTS}, e.tsv, {w}, 1)"),
            None => "0::real".to_owned(),
        };
        let literal = match self.literal.clone() {
            Some(l) => format!(
                "strpos(lower(coalesce(e.text, '') || ' ' || coalesce(e.tool_text, '')), {}) > 0",
                self.args.add(l)
            ),
            None => "false".to_owned(),
        };
        let together = self.compiled.together.clone().unwrap_or_else(|| "false".to_owned());
        self.ranks = format!("{literal}, {together}");
        // The newest matches first (`entries_recent` walked in order, or the full-text index and a
        // sort: the planner's choice), then their scores, of those alone.
        let sessions = match self.sessions {
            true => "LEFT JOIN sessions s ON s.host = e.host AND s.id = e.session_id",
            false => "",
        };
        let sql = format!(
            r#"SELECT e.host, e.local_id, e.session_id, e.timestamp, {score}::float8, e.sort_at, e.sort_file, e.line,
                      {literal}, {together}
               FROM (SELECT e.host, e.local_id, e.session_id, e.timestamp, e.sort_at, e.sort_file, e.line, e.tsv,
                            e.text, e.tool_text
                     FROM entries e {sessions}
                     WHERE {} AND NOT e.duplicate{}
                     ORDER BY e.timestamp COLLATE "C" DESC NULLS LAST, e.host, e.local_id DESC LIMIT {}) e
               ORDER BY e.timestamp COLLATE "C" DESC NULLS LAST, e.host, e.local_id DESC"#,
            self.compiled.matches,
            self.conditions,
            CANDIDATES + 1
        );
        let rows = self.store.query(&sql, &self.args.refs())?;
        let mut out: Vec<Candidate> = rows
            .iter()
            .map(|r| {
                let together: bool = r.try_get(9).pg()?;
                Ok(Candidate {
                    host: Some(r.try_get(0).pg()?),
                    id: r.try_get(1).pg()?,
                    // The words together first; a hub has no "near".
                    tier: if together { 0 } else { 2 },
                    literal: r.try_get(8).pg()?,
                    // `ts_rank_cd`, higher is better: negated, as BM25's sign is.
                    score: -r.try_get::<_, f64>(4).pg()?,
                    row: Some(Row {
                        session_id: r.try_get(2).pg()?,
                        timestamp: r.try_get(3).pg()?,
                        order: (r.try_get(5).pg()?, r.try_get(6).pg()?, r.try_get(7).pg()?),
                    }),
                })
            })
            .collect::<Result<_>>()?;
        let complete = out.len() <= CANDIDATES;
        out.truncate(CANDIDATES);
        Ok((out, complete))
    }
}

impl SearchSource for Run<'_> {
    fn ranked(&mut self, sort: Sort) -> Result<(Vec<Candidate>, bool)> {
        let (mut candidates, complete) = self.candidates()?;
        order(&mut candidates, sort, by_relevance);
        Ok((candidates, complete))
    }

    /// Every candidate's row was read with it.
    fn row(&self, c: &Candidate) -> Result<Option<Row>> {
        Ok(c.row.clone())
    }

    /// How many entries of a session match, all of them.
    fn count_in(&mut self, host: Option<&str>, session: &str) -> Result<u64> {
        let host = host.unwrap_or_default();
        // This session's two parameters, for this statement only.
        let kept = self.args.0.len();
        let (h, s) = (self.args.add(host.to_owned()), self.args.add(session.to_owned()));
        // (The subquery names the candidates' columns only so that every parameter is named.)
        let sql = format!(
            "SELECT count(*) FROM (SELECT {} FROM entries e LEFT JOIN sessions s ON s.host = e.host AND s.id = e.session_id
             WHERE e.host = {h} AND e.session_id = {s} AND {} AND NOT e.duplicate{}) c",
            self.ranks, self.compiled.matches, self.conditions
        );
        let n = self.store.query(&sql, &self.args.refs());
        self.args.0.truncate(kept);
        let n: i64 = match n?.first() {
            Some(r) => r.try_get(0).pg()?,
            None => 0,
        };
        Ok(n as u64)
    }

    /// A candidate as a hit, with its session's agent and last time (none when the session has no
    /// row).
    fn hit(&self, c: &Candidate, at: &Row) -> Result<(SearchHit, Option<SessionRow>)> {
        let host = c.host.as_deref().unwrap_or_default();
        let row: PgRow = self
            .store
            .query(
                concat!(
                    "SELECT e.uuid, e.line, e.type, e.timestamp, e.agent, e.role, e.tools,
                        coalesce((SELECT m.title FROM marks m WHERE m.session_id = e.session_id
                                  ORDER BY m.set_at DESC LIMIT 1), s.title), s.project,
                        e.text, e.tool_text, s.agent, s.last_timestamp, s.first_timestamp, ",
                    crate::store::first_said!(),
                    " FROM entries e LEFT JOIN sessions s ON s.host = e.host AND s.id = e.session_id
                 WHERE e.host = $1 AND e.session_id = $2 AND e.local_id = $3"
                ),
                &[&host, &at.session_id, &c.id],
            )?
            .into_iter()
            .next()
            .ok_or_else(|| Error::Hub(format!("entry {} of {host} went during the search", c.id)))?;
        let text: Option<String> = row.try_get(9).pg()?;
        let tool_text: Option<String> = row.try_get(10).pg()?;
        let (said, said_match) = snippet(text.as_deref().unwrap_or(""), &self.compiled.marks);
        let (tool, tool_match) = snippet(tool_text.as_deref().unwrap_or(""), &self.compiled.marks);
        let in_tool = !said_match && (tool_match || text.as_deref().unwrap_or("").is_empty());
        let tools: Option<String> = row.try_get(6).pg()?;
        let project: Option<String> = row.try_get(8).pg()?;
        let first: Option<String> = row.try_get(13).pg()?;
        let title = scrollback_read::history::shown_title(
            row.try_get(7).pg()?,
            row.try_get(14).pg()?,
            project.as_deref(),
            first.as_deref(),
        );
        let session = match row.try_get::<_, Option<String>>(11).pg()? {
            Some(agent) => Some((agent, row.try_get(12).pg()?)),
            None => None,
        };
        let hit = SearchHit {
            session_id: at.session_id.clone(),
            entry_uuid: row.try_get(0).pg()?,
            cursor: c.id,
            line: row.try_get(1).pg()?,
            kind: row.try_get(2).pg()?,
            timestamp: row.try_get(3).pg()?,
            agent: row.try_get(4).pg()?,
            role: row.try_get(5).pg()?,
            tool: tools.and_then(|t| t.lines().next().map(str::to_owned)),
            title,
            project,
            in_tool,
            snippet: if in_tool { tool } else { said },
            host: c.host.clone(),
        };
        Ok((hit, session))
    }

    fn notes(&self, complete: bool) -> Vec<String> {
        notes_of(&self.query.notes, complete)
    }
}

/// The hub's relevance: the words together first, then the entries that hold a punctuated word as
/// written, then the score (`ts_rank_cd`, negated), then the newer.
fn by_relevance(a: &Candidate, b: &Candidate) -> Ordering {
    let time = |c: &Candidate| c.row.as_ref().and_then(|r| r.timestamp.clone());
    (a.tier.cmp(&b.tier))
        .then(b.literal.cmp(&a.literal))
        .then(a.score.total_cmp(&b.score))
        .then(time(b).cmp(&time(a)))
        .then(a.host.cmp(&b.host))
        .then(b.id.cmp(&a.id))
}

/// A page of `limit` hits, one per entry, from `offset` in `sort`'s order.
pub(crate) fn search_page(
    store: &HubStore,
    query: &Query,
    scope: Scope<'_>,
    sort: Sort,
    offset: u32,
    limit: u32,
) -> Result<SearchPage> {
    check_offset(offset)?;
    match Run::new(store, query, scope)? {
        None => Ok(SearchPage { hits: Vec::new(), next: None, notes: query.notes.clone() }),
        Some(mut run) => hits_page(&mut run, sort, offset, limit),
    }
}

/// A page of `limit` sessions with hits, from `offset` in `sort`'s order: each with its best hit and
/// how many of its entries match.
pub(crate) fn search_sessions(
    store: &HubStore,
    query: &Query,
    scope: Scope<'_>,
    sort: Sort,
    offset: u32,
    limit: u32,
) -> Result<SessionHitsPage> {
    check_offset(offset)?;
    match Run::new(store, query, scope)? {
        None => Ok(SessionHitsPage { sessions: Vec::new(), next: None, notes: query.notes.clone() }),
        Some(mut run) => sessions_page(&mut run, sort, offset, limit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snippet_marks_the_query_s_words_around_the_first() {
        let marks = [("harbour".to_owned(), false), ("photo".to_owned(), true)];
        let (s, found) = snippet("The Harbour at dusk, with photos.", &marks);
        assert!(found);
        assert_eq!(s.marked("[", "]"), "The [Harbour] at dusk, with [photos].");
        let long = (0..40).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ") + " harbour end";
        let (s, _) = snippet(&long, &marks);
        // (The window is kept full, as FTS5's: sixteen words, the match near its end.)
        assert_eq!(s.marked("[", "]"), "…w26 w27 w28 w29 w30 w31 w32 w33 w34 w35 w36 w37 w38 w39 [harbour] end");
        let (s, _) = snippet("field-notes/may.md:3: kestrel pair at the quarry", &[("kestrel".to_owned(), false)]);
        assert_eq!(
            s.marked("[", "]"),
            "field-notes/may.md:3: [kestrel] pair at the quarry",
            "a text that fits is whole"
        );
        let (s, found) = snippet("nothing here", &marks);
        assert!(!found);
        assert_eq!(s.marked("[", "]"), "nothing here");
        // Chinese words as the index marks them: each its own, the marks taken out of the snippet.
        let cjk = words::mark("灯塔的照片在港口").into_owned();
        let marks: Vec<(String, bool)> = pieces(&words::mark("港口")).map(|(_, w)| (w.to_owned(), false)).collect();
        let (s, found) = snippet(&cjk, &marks);
        assert!(found, "{cjk:?}");
        assert!(s.marked("[", "]").contains("[港口]"), "{}", s.marked("[", "]"));
        assert!(!s.marked("[", "]").contains('\u{200B}'));
    }
}
