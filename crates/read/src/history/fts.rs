//! A query tree ([`Query`]) compiled to FTS5's query syntax, over `entries_fts`'s three columns
//! (`text`, `tool_text`, `tools`).
//!
//! Every term becomes an FTS5 string (`"…"`, its quotes doubled), which FTS5 splits with the
//! index's own tokenizer: a punctuated word (`gpt-5`, `C++`) becomes the phrase of its pieces, and
//! nothing a person types can be read as FTS5 syntax. Words in scripts written without spaces get
//! the word marks the index has ([`words::mark`]).

use scrollback_core::codec::words;
use scrollback_core::query::{Query, Role, Term};

/// How near the words of a query must be, in tokens, to rank as near (the second tier).
pub(crate) const NEAR: usize = 6;

/// A query compiled: what an entry must match, and the stricter form that ranks first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Compiled {
    /// Every entry that matches the query.
    pub all: String,
    /// Of those, the ones with the query's words together and in order, then the ones with them
    /// near each other ([`NEAR`]), when the query has two or more words and no `OR`.
    pub closer: Vec<String>,
}

/// An FTS5 string for `term`: its text quoted, word marks added, `*` after it for a prefix.
fn string(term: &Term) -> String {
    let body = words::mark(&term.text).replace('"', "\"\"");
    format!("\"{body}\"{}", if term.prefix { " *" } else { "" })
}

/// The query in FTS5's syntax.
pub(crate) fn compile(query: &Query) -> Compiled {
    let clauses: Vec<String> = query
        .all
        .iter()
        .map(|clause| match &clause[..] {
            [one] => string(one),
            many => format!("({})", many.iter().map(string).collect::<Vec<_>>().join(" OR ")),
        })
        .collect();
    let plain = query.all.iter().all(|c| c.len() == 1) && query.all.len() >= 2;
    let mut closer = Vec::new();
    if plain {
        let words: Vec<&str> = query.all.iter().map(|c| c[0].text.as_str()).collect();
        let last_prefix = query.all.last().is_some_and(|c| c[0].prefix);
        closer.push(string(&Term { text: words.join(" "), phrase: true, prefix: last_prefix }));
        closer.push(format!("NEAR({}, {NEAR})", clauses.join(" ")));
    }
    let wrap = |words: Option<String>| -> String {
        let scoped = words.map(|w| match query.filters.role {
            Some(Role::User | Role::Assistant) => format!("{{text}} : ({w})"),
            Some(Role::Tool) => format!("{{tool_text tools}} : ({w})"),
            None => format!("({w})"),
        });
        let tool = query.filters.tool.as_deref().map(|name| {
            let name = Term { text: name.to_owned(), phrase: true, prefix: false };
            format!("{{tools}} : {}", string(&name))
        });
        let mut expr = match (scoped, tool) {
            (Some(w), Some(t)) => format!("{w} AND {t}"),
            (Some(w), None) => w,
            (None, Some(t)) => t,
            (None, None) => String::new(),
        };
        for excluded in &query.none {
            expr = format!("({expr}) NOT {}", string(excluded));
        }
        expr
    };
    let all = wrap((!clauses.is_empty()).then(|| clauses.join(" AND ")));
    Compiled { all, closer: closer.into_iter().map(|c| wrap(Some(c))).collect() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scrollback_core::query::parse;

    fn fts(q: &str) -> Compiled {
        compile(&parse(q).unwrap())
    }

    #[test]
    fn terms_are_strings_whatever_they_hold() {
        assert_eq!(fts("gpt-5").all, "(\"gpt-5\")");
        assert_eq!(fts("say \"hi\"x").all, "(\"say\" AND \"hi\" AND \"x\")");
        assert_eq!(fts("don't C++").all, "(\"don't\" AND \"C++\")");
        assert_eq!(fts("a\"b").all, "(\"a\"\"b\")");
        assert_eq!(fts("migrat*").all, "(\"migrat\" *)");
        assert_eq!(fts("数据库").all, "(\"数\u{200B}据\u{200B}库\")");
    }

    #[test]
    fn the_tree_is_compiled() {
        let c = fts("deep link");
        assert_eq!(c.all, "(\"deep\" AND \"link\")");
        assert_eq!(c.closer, ["(\"deep link\")", "(NEAR(\"deep\" \"link\", 6))"]);
        let c = fts("db sqlite OR postgres -flaky -\"two words\"");
        assert_eq!(c.all, "(((\"db\" AND (\"sqlite\" OR \"postgres\"))) NOT \"flaky\") NOT \"two words\"");
        assert!(c.closer.is_empty());
        assert_eq!(fts("x role:user").all, "{text} : (\"x\")");
        assert_eq!(fts("x role:tool tool:Bash").all, "{tool_text tools} : (\"x\") AND {tools} : \"Bash\"");
        assert_eq!(fts("tool:Bash").all, "{tools} : \"Bash\"");
    }
}
