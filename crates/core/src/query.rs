//! The search query language, read into a tree that any store compiles to its own full-text
//! search (SQLite's FTS5 in `scrollback-read`, PostgreSQL's later). Pure: no index, no I/O.
//!
//! What a person or an agent types is never an error because of how it is written: a word is a word
//! whatever its punctuation (`gpt-5`, `C++`, `don't`, `foo.bar`, `src/main.rs`, a URL), a quote
//! left open closes at the end, and an operator in the wrong place is read as a word. Only a query
//! that is impossible as written is refused ([`parse`]'s errors): one with nothing to look for, an
//! unknown field, or a field's value that means nothing (`after:someday`).
//!
//! The syntax (`docs/search.md` says it for people, the MCP tool's description for agents):
//!
//! | written | means |
//! |---|---|
//! | `deep link` | entries with both words (closer together ranks higher) |
//! | `"deep link"` | the words together, in this order |
//! | `migrat*` | words that begin so |
//! | `-flaky` | entries without the word (`NOT flaky` too) |
//! | `sqlite OR postgres` | either (binds tighter than the space: `db sqlite OR postgres`) |
//! | `agent:codex` `project:web` `role:user` `role:tool` `tool:Bash` `session:fa812bfe` `after:2026-01-01` `before:2026-02-01` | filters |
//!
//! A field is a lowercase name before a colon; a capitalised one (`Error:`), one whose value begins
//! with a digit (`localhost:8080`) or a slash (`http://…`), and one with no value are words.

use std::fmt;

use crate::error::{Error, Result};
use crate::format;

/// The longest query read, in bytes: the rest is left out (and a [`Query::notes`] says so).
pub const MAX_QUERY: usize = 1000;
/// The most terms a query may have: the rest are left out (and a note says so).
pub const MAX_TERMS: usize = 32;
/// The most prefix terms (`word*`) a query may have: each expands to every word it begins, the
/// costliest part of a query. The rest are read as whole words (and a note says so).
pub const MAX_PREFIX_TERMS: usize = 4;

/// The fields a query may name, in the order help texts list them.
pub const FIELDS: &[&str] = &["agent", "project", "role", "tool", "session", "after", "before"];

/// A query, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    /// Every clause must match (AND); a clause matches when any of its terms does (OR).
    pub all: Vec<Vec<Term>>,
    /// No term of these may match.
    pub none: Vec<Term>,
    /// The filters the query names.
    pub filters: Filters,
    /// What was left out or read otherwise than written, for the person who wrote it.
    pub notes: Vec<String>,
}

/// A word or a phrase as written (its punctuation kept: how it splits into words is the store's
/// tokenizer's business, which makes a punctuated word the phrase of its pieces).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// The text, without the quotes, the `-` and the `*`.
    pub text: String,
    /// Written in quotes.
    pub phrase: bool,
    /// Written with a `*` at its end: its last word is a prefix.
    pub prefix: bool,
}

/// What a query's fields narrow it to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filters {
    /// The agent's format name (`claude`, `codex`, `gemini`).
    pub agent: Option<String>,
    /// A part of the project's path (its working directory).
    pub project: Option<String>,
    /// Who said it.
    pub role: Option<Role>,
    /// The tool called (as its agent names it, case aside).
    pub tool: Option<String>,
    /// The session's id, or the beginning of it.
    pub session: Option<String>,
    /// Entries at or after this instant (a bound as [`time_bound`] makes it).
    pub after: Option<String>,
    /// Entries before this instant (a bound as [`time_bound`] makes it).
    pub before: Option<String>,
}

/// `role:` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// What the person typed.
    User,
    /// What the agent said (its text and thinking).
    Assistant,
    /// Tool calls' input and output.
    Tool,
}

impl Role {
    /// As written in a query.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    fn parse(value: &str) -> Option<Role> {
        match value.to_ascii_lowercase().as_str() {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            "tool" => Some(Role::Tool),
            _ => None,
        }
    }
}

impl Query {
    /// Whether it has a word or a phrase to look for (else only filters).
    pub fn has_words(&self) -> bool {
        !self.all.is_empty()
    }

    /// The terms of its clauses that are single words or phrases alone in their clause (no OR):
    /// what a store may rank by nearness.
    pub fn plain_terms(&self) -> Vec<&Term> {
        self.all.iter().filter(|c| c.len() == 1).map(|c| &c[0]).collect()
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bare = !self.phrase && !self.text.is_empty() && !self.text.contains(['"', ' ']);
        if bare {
            f.write_str(&self.text)?;
        } else {
            write!(f, "\"{}\"", self.text.replace('"', ""))?;
        }
        if self.prefix {
            f.write_str("*")?;
        }
        Ok(())
    }
}

/// The query written back in its canonical form: how it was read.
impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        for clause in &self.all {
            let terms: Vec<String> = clause.iter().map(Term::to_string).collect();
            parts.push(match terms.len() {
                1 => terms[0].clone(),
                _ => format!("({})", terms.join(" OR ")),
            });
        }
        parts.extend(self.none.iter().map(|t| format!("-{t}")));
        let quote = |v: &str| if v.contains(' ') { format!("\"{v}\"") } else { v.to_owned() };
        let Filters { agent, project, role, tool, session, after, before } = &self.filters;
        let fields = [
            ("agent", agent.clone()),
            ("project", project.clone()),
            ("role", role.map(|r| r.as_str().to_owned())),
            ("tool", tool.clone()),
            ("session", session.clone()),
            ("after", after.clone()),
            ("before", before.clone()),
        ];
        for (name, value) in fields {
            if let Some(v) = value {
                parts.push(format!("{name}:{}", quote(&v)));
            }
        }
        f.write_str(&parts.join(" "))
    }
}

/// One piece of the query as the lexer splits it.
#[derive(Debug)]
enum Token {
    /// A word or phrase; `negated` when written after `-` (or `NOT`).
    Term { term: Term, negated: bool },
    /// `OR`.
    Or,
    /// `NOT`.
    Not,
    /// `AND` (what a space means already).
    And,
    /// `name:value`.
    Field { name: String, value: String },
}

/// Reads a query. Fails only when the query is impossible as written: [`Error::BadQuery`] with a
/// sentence for the person (nothing to look for, an unknown field, a field value that means
/// nothing).
pub fn parse(input: &str) -> Result<Query> {
    let mut query = Query::default();
    let mut text = input;
    if text.len() > MAX_QUERY {
        let mut end = MAX_QUERY;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text = &text[..end];
        query.notes.push(format!("only the first {MAX_QUERY} bytes of the query were read"));
    }
    // A NUL is no character a person types, and FTS5 and PostgreSQL refuse it: a space.
    let spaced;
    if text.contains('\0') {
        spaced = text.replace('\0', " ");
        text = &spaced;
    }
    let tokens = lex(text)?;
    // Operators in a place where they mean nothing are words.
    let mut clause: Option<Vec<Term>> = None;
    let mut negate_next = false;
    let mut or_pending = false;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Field { name, value } => apply_field(&mut query.filters, name, value)?,
            Token::And => {
                let joins = clause.is_some() && matches!(tokens.get(i + 1), Some(Token::Term { .. }));
                if !joins {
                    push_term(&mut query, &mut clause, word("AND"), true);
                }
            }
            Token::Not => {
                let next_is_term = matches!(tokens.get(i + 1), Some(Token::Term { .. }));
                if next_is_term {
                    negate_next = true;
                } else {
                    push_term(&mut query, &mut clause, word("NOT"), false);
                }
            }
            Token::Or => {
                let before = clause.is_some();
                let after = matches!(tokens.get(i + 1), Some(Token::Term { negated: false, .. })) && !negate_next;
                if before && after {
                    or_pending = true;
                } else {
                    push_term(&mut query, &mut clause, word("OR"), false);
                }
            }
            Token::Term { term, negated } => {
                let negated = *negated || std::mem::take(&mut negate_next);
                if negated {
                    query.none.push(term.clone());
                } else if std::mem::take(&mut or_pending) {
                    if let Some(c) = clause.as_mut() {
                        c.push(term.clone());
                    }
                } else {
                    push_term(&mut query, &mut clause, term.clone(), true);
                }
            }
        }
        i += 1;
    }
    if let Some(c) = clause.take() {
        query.all.push(c);
    }
    limit_terms(&mut query);
    if !query.has_words() && query.filters.tool.is_none() {
        return Err(Error::BadQuery(if query.none.is_empty() {
            "the query has no word to look for: type one or more words (filters such as agent: only narrow a search)"
                .into()
        } else {
            "the query only leaves words out (-word): add a word to look for".into()
        }));
    }
    Ok(query)
}

fn word(text: &str) -> Term {
    Term { text: text.to_owned(), phrase: false, prefix: false }
}

/// Adds `term` as a clause of its own, closing the clause before it (`new_clause`), or to it.
fn push_term(query: &mut Query, clause: &mut Option<Vec<Term>>, term: Term, new_clause: bool) {
    if new_clause || clause.is_none() {
        if let Some(c) = clause.take() {
            query.all.push(c);
        }
        *clause = Some(vec![term]);
    } else if let Some(c) = clause.as_mut() {
        c.push(term);
    }
}

/// Holds a query to [`MAX_TERMS`] and [`MAX_PREFIX_TERMS`], saying what it left out.
fn limit_terms(query: &mut Query) {
    let mut count = 0;
    let mut dropped = 0;
    let mut prefixes = 0;
    let mut unprefixed = 0;
    let mut keep = |term: &mut Term| {
        count += 1;
        if count > MAX_TERMS {
            dropped += 1;
            return false;
        }
        if term.prefix {
            prefixes += 1;
            if prefixes > MAX_PREFIX_TERMS {
                term.prefix = false;
                unprefixed += 1;
            }
        }
        true
    };
    for clause in &mut query.all {
        clause.retain_mut(&mut keep);
    }
    query.all.retain(|c| !c.is_empty());
    query.none.retain_mut(&mut keep);
    if dropped > 0 {
        query.notes.push(format!("only the first {MAX_TERMS} words were searched ({dropped} left out)"));
    }
    if unprefixed > 0 {
        query.notes.push(format!(
            "at most {MAX_PREFIX_TERMS} words may end in *: {unprefixed} more were searched as whole words"
        ));
    }
}

/// Whether `text` has a character a word is made of (a letter, a digit): a term without one
/// finds nothing, and is left out.
fn has_word(text: &str) -> bool {
    text.chars().any(char::is_alphanumeric)
}

/// Splits the query into tokens at white space outside quotes.
fn lex(text: &str) -> Result<Vec<Token>> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_whitespace() {
            i += 1;
            continue;
        }
        // `-` before a word or a quote is an exclusion; `--x` and a lone `-` are words.
        let negated = chars[i] == '-'
            && chars.get(i + 1).is_some_and(|&c| c == '"' || c.is_alphanumeric())
            && (i == 0 || chars[i - 1].is_whitespace());
        let start = if negated { i + 1 } else { i };
        if chars.get(start) == Some(&'"') {
            let (body, end) = quoted(&chars, start);
            i = end;
            let prefix = chars.get(i) == Some(&'*');
            if prefix {
                i += 1;
            }
            // Glued to what follows (`"a b"c`): the rest is a word of its own.
            if has_word(&body) {
                tokens.push(Token::Term { term: Term { text: body, phrase: true, prefix }, negated });
            }
            continue;
        }
        // A bare token runs to the next white space; a field's quoted value runs to its quote.
        let mut end = start;
        while end < chars.len() && !chars[end].is_whitespace() {
            end += 1;
        }
        let raw: String = chars[start..end].iter().collect();
        if let Some((name, value_start)) = field_name(&raw) {
            let mut value: String = raw[value_start..].to_owned();
            let mut next = end;
            if value.starts_with('"') {
                let at = start + raw[..value_start].chars().count();
                let (body, after) = quoted(&chars, at);
                value = body;
                next = after;
            }
            if negated {
                return Err(Error::BadQuery(format!(
                    "-{name}: a field cannot be left out; narrow with {name}: instead, or quote \"-{raw}\" to find the text"
                )));
            }
            tokens.push(Token::Field { name, value: value.trim().to_owned() });
            i = next;
            continue;
        }
        i = end;
        match raw.as_str() {
            "OR" | "|" if !negated => tokens.push(Token::Or),
            "NOT" if !negated => tokens.push(Token::Not),
            "AND" | "&&" if !negated => tokens.push(Token::And),
            _ => {
                let (text, prefix) = match raw.strip_suffix('*') {
                    Some(stem) if has_word(stem) => (stem.trim_end_matches('*').to_owned(), true),
                    _ => (raw, false),
                };
                if has_word(&text) {
                    tokens.push(Token::Term { term: Term { text, phrase: false, prefix }, negated });
                }
            }
        }
    }
    Ok(tokens)
}

/// The body of the quote that opens at `open`, and where the token after it begins. A quote left
/// open closes at the end of the query.
fn quoted(chars: &[char], open: usize) -> (String, usize) {
    let mut body = String::new();
    let mut i = open + 1;
    while i < chars.len() && chars[i] != '"' {
        body.push(chars[i]);
        i += 1;
    }
    (body.split_whitespace().collect::<Vec<_>>().join(" "), (i + 1).min(chars.len()))
}

/// `name` and where its value begins, if `raw` is written as a field (`name:value`): a name of
/// ASCII letters and a value that does not begin with a colon or a slash (`std::io`, `https://…`
/// are words); a name no field has is one when lowercase and its value does not begin with a digit
/// (`localhost:8080`, `Error:x` are words).
fn field_name(raw: &str) -> Option<(String, usize)> {
    let colon = raw.find(':')?;
    let (name, value) = (&raw[..colon], &raw[colon + 1..]);
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphabetic()) || value.is_empty() {
        return None;
    }
    let first = value.chars().next()?;
    if first == ':' || first == '/' || first == '\\' {
        return None;
    }
    let lower = name.to_ascii_lowercase();
    let known = FIELDS.contains(&lower.as_str());
    let unknown_field = name.bytes().all(|b| b.is_ascii_lowercase()) && !first.is_ascii_digit();
    (known || unknown_field).then_some((lower, colon + 1))
}

/// Sets the filter a field names, or says why it cannot.
fn apply_field(filters: &mut Filters, name: &str, value: &str) -> Result<()> {
    let bad = |why: String| Err(Error::BadQuery(why));
    if value.is_empty() {
        return bad(format!("{name}: needs a value ({name}:something)"));
    }
    match name {
        "agent" => match agent_name(value) {
            Some(agent) => filters.agent = Some(agent.to_owned()),
            None => {
                let names: Vec<&str> = format::FORMATS.iter().map(|f| f.name()).collect();
                return bad(format!("agent:{value} is no agent scrollback reads; it reads {}", names.join(", ")));
            }
        },
        "project" => filters.project = Some(value.to_owned()),
        "role" => match Role::parse(value) {
            Some(role) => filters.role = Some(role),
            None => return bad(format!("role:{value} means nothing; the roles are user, assistant and tool")),
        },
        "tool" => filters.tool = Some(value.to_owned()),
        "session" => filters.session = Some(value.to_owned()),
        "after" => filters.after = Some(time_bound(value, false)?),
        "before" => filters.before = Some(time_bound(value, false)?),
        _ => {
            return bad(format!(
                "{name}: is no field; the fields are {}. To find the text itself, put it in quotes: \"{name}:{value}\"",
                FIELDS.iter().map(|f| format!("{f}:")).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    Ok(())
}

/// The format an `agent:` value names: its name (`codex`) or its display name written as one word
/// (`claude-code`, `codex-cli`, `ClaudeCode`), case aside.
fn agent_name(value: &str) -> Option<&'static str> {
    let squash = |s: &str| s.chars().filter(|c| c.is_alphanumeric()).collect::<String>().to_lowercase();
    let wanted = squash(value);
    format::FORMATS.iter().find(|f| squash(f.name()) == wanted || squash(f.display_name()) == wanted).map(|f| f.name())
}

/// A time bound as the index compares it (`2026-01-31T09:00:00.000Z`), from RFC 3339 or a date
/// (`YYYY-MM-DD`): a date as a lower bound is its first instant (UTC), as an `upper` bound the
/// first instant of the day after, so that "until 2026-01-31" takes in that whole day.
pub fn time_bound(text: &str, upper: bool) -> Result<String> {
    let text = text.trim();
    if let Ok(date) = text.parse::<jiff::civil::Date>()
        && text.len() == 10
    {
        let day = if upper { date.tomorrow().map_err(|e| Error::BadQuery(format!("{text:?}: {e}")))? } else { date };
        return Ok(format!("{day}T00:00:00.000Z"));
    }
    match text.parse::<jiff::Timestamp>() {
        Ok(ts) => Ok(ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()),
        Err(_) => Err(Error::BadQuery(format!(
            "{:?} is not a date (YYYY-MM-DD) or an RFC 3339 time (2026-01-31T09:00:00Z)",
            text.chars().take(60).collect::<String>()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(q: &str) -> String {
        parse(q).unwrap_or_else(|e| panic!("{q:?}: {e}")).to_string()
    }

    fn refused(q: &str) -> String {
        match parse(q) {
            Err(Error::BadQuery(why)) => why,
            other => panic!("{q:?} was not refused: {other:?}"),
        }
    }

    #[test]
    fn punctuated_words_are_words() {
        for q in ["gpt-5", "C++", "don't", "foo.bar", "e-mail", "src/main.rs", "snake_case", "CamelCase", "what?"] {
            let query = parse(q).unwrap();
            assert_eq!(query.all, vec![vec![word(q)]], "{q}");
            assert!(query.none.is_empty() && query.notes.is_empty(), "{q}");
        }
        assert_eq!(read("https://example.com/a?b=c"), "https://example.com/a?b=c");
        assert_eq!(read("localhost:8080 std::io::Error"), "localhost:8080 std::io::Error");
        assert_eq!(read("mix format --migrate"), "mix format --migrate");
        assert_eq!(read("Error: E0502"), "Error: E0502");
    }

    #[test]
    fn the_syntax_is_read() {
        assert_eq!(read("\"deep  link\" migrat* -flaky"), "\"deep link\" migrat* -flaky");
        assert_eq!(read("db sqlite OR postgres OR duckdb"), "db (sqlite OR postgres OR duckdb)");
        assert_eq!(read("cache NOT redis"), "cache -redis");
        assert_eq!(read("a AND b"), "a b");
        assert_eq!(read("-\"two words\" x"), "x -\"two words\"");
        assert_eq!(
            read(
                "fix agent:Codex project:\"my app\" role:TOOL tool:Bash session:fa81 after:2026-01-02 before:2026-02-01"
            ),
            "fix agent:codex project:\"my app\" role:tool tool:Bash session:fa81 after:2026-01-02T00:00:00.000Z \
             before:2026-02-01T00:00:00.000Z"
        );
        assert_eq!(read("agent:claude-code x"), "x agent:claude");
        assert_eq!(read("tool:Bash"), "tool:Bash");
    }

    #[test]
    fn operators_out_of_place_are_words() {
        assert_eq!(read("OR"), "OR");
        assert_eq!(read("x OR"), "(x OR OR)");
        assert_eq!(read("OR x"), "OR x");
        assert_eq!(read("NOT"), "NOT");
        assert_eq!(read("AND"), "AND");
        assert_eq!(read("x AND"), "x AND");
        assert_eq!(read("\"unterminated phrase"), "\"unterminated phrase\"");
        assert_eq!(read("x \"\" y"), "x y");
        assert_eq!(read("a* * -"), "a*");
        assert_eq!(read("\"a b\"* c"), "\"a b\"* c");
        assert_eq!(read("(sqlite) [x] {y}"), "(sqlite) [x] {y}");
    }

    #[test]
    fn impossible_queries_are_refused_with_a_sentence() {
        assert!(refused("").contains("no word"));
        assert!(refused("   ").contains("no word"));
        assert!(refused("?? --").contains("no word"));
        assert!(refused("agent:codex").contains("no word"));
        assert!(refused("-x").contains("only leaves words out"));
        assert!(refused("foo:bar x").contains("\"foo:bar\""));
        assert!(refused("agent:nosuch x").contains("no agent"));
        assert!(refused("role:robot x").contains("user, assistant and tool"));
        assert!(refused("after:someday x").contains("not a date"));
    }

    #[test]
    fn long_queries_are_cut_and_say_so() {
        let many = (0..40).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
        let q = parse(&many).unwrap();
        assert_eq!(q.all.len(), MAX_TERMS);
        assert!(q.notes[0].contains("first 32 words"));
        let prefixes = parse("a* b* c* d* e* f*").unwrap();
        assert_eq!(prefixes.all.iter().filter(|c| c[0].prefix).count(), MAX_PREFIX_TERMS);
        assert!(prefixes.notes[0].contains("whole words"));
        let long = "é".repeat(MAX_QUERY);
        let q = parse(&long).unwrap();
        assert!(q.notes[0].contains("bytes"));
    }
}
