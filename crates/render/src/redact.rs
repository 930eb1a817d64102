//! Secrets taken out of text before it leaves in an export (`scrollback export --redact`): the
//! rules of `redact-rules.json`, made by `scripts/redact_rules.py` from gitleaks' default rule set
//! (MIT licence) and detect-secrets' `BasicAuthDetector` (Apache-2.0). Each rule is a regular
//! expression (RE2's syntax, which the `regex` crate reads), the group that is the secret, the
//! Shannon entropy the secret must reach, keywords one of which the text must hold for the rule to
//! run, and allowlists of the secret, the match or the line that are no secret.
//!
//! A text is redacted as a whole, never a line at a time: a private key spans lines, and a diff's
//! lines are joined, redacted and split again ([`Redactor::redact_parts`]).

use std::borrow::Cow;
use std::collections::BTreeMap;

use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

use scrollback_core::error::{Error, Result};
use scrollback_core::format::parts::{DiffLine, Part, tool_call};

use scrollback_read::history::{SearchAnswer, SearchHit, SessionPage, Snippet};

/// The rule set shipped in the binary.
pub const SHIPPED: &str = include_str!("../redact-rules.json");

#[derive(Deserialize)]
struct File {
    source: String,
    rules: Vec<RuleSpec>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RuleSpec {
    id: String,
    regex: String,
    secret_group: Option<usize>,
    entropy: Option<f64>,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    allowlists: Vec<AllowSpec>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AllowSpec {
    regex_target: Option<String>,
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
}

/// What an allowlist looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Secret,
    Match,
    Line,
}

#[derive(Debug)]
struct Allow {
    target: Target,
    regexes: Vec<Regex>,
    stopwords: Vec<String>,
}

#[derive(Debug)]
struct Rule {
    id: String,
    regex: Regex,
    secret_group: Option<usize>,
    entropy: Option<f64>,
    keywords: Vec<String>,
    allow: Vec<Allow>,
}

/// The rules, compiled.
#[derive(Debug)]
pub struct Redactor {
    /// Where the rules come from.
    pub source: String,
    rules: Vec<Rule>,
}

/// What redaction took out, by rule.
pub type Redacted = BTreeMap<String, u64>;

impl Redactor {
    /// The rules shipped in the binary.
    pub fn shipped() -> Result<Redactor> {
        Redactor::parse(SHIPPED)
    }

    fn parse(text: &str) -> Result<Redactor> {
        let file: File = serde_json::from_str(text).map_err(|e| Error::Internal(format!("redact rules: {e}")))?;
        let compile = |id: &str, re: &str| {
            Regex::new(&ascii_classes(re)).map_err(|e| Error::Internal(format!("redact rule {id}: {e}")))
        };
        let mut rules = Vec::new();
        for spec in file.rules {
            let mut allow = Vec::new();
            for a in spec.allowlists {
                let target = match a.regex_target.as_deref() {
                    Some("match") => Target::Match,
                    Some("line") => Target::Line,
                    _ => Target::Secret,
                };
                let regexes = a.regexes.iter().map(|r| compile(&spec.id, r)).collect::<Result<Vec<_>>>()?;
                allow.push(Allow { target, regexes, stopwords: a.stopwords });
            }
            rules.push(Rule {
                regex: compile(&spec.id, &spec.regex)?,
                id: spec.id,
                secret_group: spec.secret_group,
                entropy: spec.entropy,
                keywords: spec.keywords.iter().map(|k| k.to_lowercase()).collect(),
                allow,
            });
        }
        Ok(Redactor { source: file.source, rules })
    }

    /// The rules' names, for an export's heading.
    pub fn rule_ids(&self) -> Vec<&str> {
        self.rules.iter().map(|r| r.id.as_str()).collect()
    }

    /// `text` with every secret the rules find replaced by `[REDACTED:<rule>]`, counted in `counts`.
    pub fn redact<'t>(&self, text: &'t str, counts: &mut Redacted) -> Cow<'t, str> {
        self.redact_as(text, counts, false)
    }

    /// Every text of `parts` redacted, each as a whole: what was said and thought, a tool call's
    /// name, subject (a path, a command) and input, its diff (its lines joined, so that a key
    /// written over many lines is found, and split again, as many as before), a result and its
    /// label, a note, a harness command, its output and a folded context, a fold's title, a byline.
    pub fn redact_parts(&self, parts: &mut [Part], counts: &mut Redacted) {
        let one = |s: &mut String, counts: &mut Redacted| {
            if let Cow::Owned(new) = self.redact(s, counts) {
                *s = new;
            }
        };
        for part in parts {
            match part {
                Part::Text(t) | Part::Thinking(t) | Part::Note(t) => one(t, counts),
                Part::ToolCall(call) => {
                    one(&mut call.tool, counts);
                    // A subject is the first line of the input's command, path or pattern, cut to
                    // its length: a secret it cut in two is not a secret the rules find. Where the
                    // subject was made from the input, it is made again from the redacted input.
                    let made = tool_call(&call.tool, &call.input).subject == call.subject;
                    self.redact_value(&mut call.input, counts);
                    if made {
                        call.subject = tool_call(&call.tool, &call.input).subject;
                    }
                    one(&mut call.subject, counts);
                    self.redact_diff(&mut call.diff, counts);
                }
                Part::ToolResult { text, label, .. } => {
                    one(text, counts);
                    if let Some(label) = label {
                        one(label, counts);
                    }
                }
                Part::Group { title, parts } => {
                    one(title, counts);
                    self.redact_parts(parts, counts);
                }
                Part::Message { who, parts } => {
                    one(&mut who.name, counts);
                    self.redact_parts(parts, counts);
                }
                Part::Command { name, args } => {
                    one(name, counts);
                    one(args, counts);
                }
                Part::Output { text, .. } => one(text, counts),
                Part::Context { label, text } => {
                    one(label, counts);
                    one(text, counts);
                }
                Part::Media(_) => {}
            }
        }
    }

    /// Every string of `value` redacted, each whole (a multi-line value as one). A member's
    /// string is read after its name, as `name=value`, for the rules that need the name
    /// (`{"api_key": "…"}` is a secret the value alone does not show).
    pub fn redact_value(&self, value: &mut Value, counts: &mut Redacted) {
        match value {
            Value::String(s) => {
                if let Cow::Owned(new) = self.redact(s, counts) {
                    *s = new;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| self.redact_value(i, counts)),
            Value::Object(map) => {
                for (name, v) in map.iter_mut() {
                    let Value::String(s) = v else {
                        self.redact_value(v, counts);
                        continue;
                    };
                    let named = format!("{name}={s}");
                    match self.redact(&named, counts) {
                        Cow::Borrowed(_) => {}
                        Cow::Owned(new) => match new.strip_prefix(&format!("{name}=")) {
                            Some(value) => *s = value.to_owned(),
                            None => *s = self.redact(s, &mut Redacted::new()).into_owned(),
                        },
                    }
                }
            }
            _ => {}
        }
    }

    /// A search's answer masked (`--mask-secrets`): its titles and snippets redacted. A snippet is
    /// a window of its entry's text, and a window may cut a secret from the context its rule needs
    /// (a private key's body without its first line, a value without its `api_key =`), so the
    /// entry's whole text is masked (`whole` gives it; the store's `search_text`) and, where it held a
    /// secret, the snippet is cut again from the masked text, around the first word the search
    /// matched. Else the snippet is masked as its own text.
    pub fn mask_answer(&self, answer: &mut SearchAnswer, whole: &dyn Fn(&SearchHit) -> Option<String>) {
        let mut counts = Redacted::new();
        let mut hit = |h: &mut SearchHit| {
            self.redact_option(&mut h.title, &mut counts);
            if let Some(text) = whole(h)
                && let Cow::Owned(masked) = self.redact(&text, &mut counts)
            {
                let words: Vec<String> = h
                    .snippet
                    .segments()
                    .filter(|(t, m)| *m && !t.trim().is_empty())
                    .map(|(t, _)| t.to_owned())
                    .collect();
                h.snippet = snippet_of(&masked, &words);
                return;
            }
            let plain: String = h.snippet.segments().map(|(t, _)| t).collect();
            if let Cow::Owned(new) = self.redact(&plain, &mut counts) {
                h.snippet = Snippet::from_fts(new);
            }
        };
        match answer {
            SearchAnswer::Entries(page) => page.hits.iter_mut().for_each(hit),
            SearchAnswer::Sessions(page) => {
                for group in &mut page.sessions {
                    hit(&mut group.best);
                    self.redact_option(&mut group.title, &mut Redacted::new());
                }
            }
        }
    }

    /// A page of sessions masked (`--mask-secrets`): their titles redacted.
    pub fn mask_sessions(&self, page: &mut SessionPage) {
        for s in &mut page.sessions {
            self.redact_option(&mut s.title, &mut Redacted::new());
        }
    }

    fn redact_option(&self, text: &mut Option<String>, counts: &mut Redacted) {
        if let Some(t) = text
            && let Cow::Owned(new) = self.redact(t, counts)
        {
            *t = new;
        }
    }

    /// A diff's lines redacted together: a secret's mark stands on its first line, and the lines it
    /// spanned are left empty, so that the diff keeps its lines and their marks.
    fn redact_diff(&self, diff: &mut [DiffLine], counts: &mut Redacted) {
        let joined = diff.iter().map(|d| d.text.as_str()).collect::<Vec<_>>().join("\n");
        let Cow::Owned(redacted) = self.redact_as(&joined, counts, true) else { return };
        let lines: Vec<&str> = redacted.split('\n').collect();
        if lines.len() == diff.len() {
            for (d, line) in diff.iter_mut().zip(lines) {
                d.text = line.to_owned();
            }
        } else {
            // A line held a line end of its own: each is redacted alone, and the joined count stands.
            for d in diff.iter_mut() {
                if let Cow::Owned(new) = self.redact(&d.text, &mut Redacted::new()) {
                    d.text = new;
                }
            }
        }
    }

    fn redact_as<'t>(&self, text: &'t str, counts: &mut Redacted, keep_lines: bool) -> Cow<'t, str> {
        let lower = text.to_lowercase();
        let mut out: Cow<'t, str> = Cow::Borrowed(text);
        for rule in &self.rules {
            if !rule.keywords.is_empty() && !rule.keywords.iter().any(|k| lower.contains(k.as_str())) {
                continue;
            }
            let current = out.as_ref();
            let mut cuts: Vec<(usize, usize)> = Vec::new();
            for caps in rule.regex.captures_iter(current) {
                let whole = caps.get(0).expect("group 0");
                let secret = match rule.secret_group {
                    Some(g) => caps.get(g),
                    None => (1..caps.len()).find_map(|g| caps.get(g)),
                }
                .unwrap_or(whole);
                if rule.entropy.is_some_and(|min| entropy(secret.as_str()) < min) {
                    continue;
                }
                let line = line_around(current, whole.start(), whole.end());
                if rule.allow.iter().any(|a| a.allows(secret.as_str(), whole.as_str(), line)) {
                    continue;
                }
                cuts.push((secret.start(), secret.end()));
            }
            if cuts.is_empty() {
                continue;
            }
            *counts.entry(rule.id.clone()).or_default() += cuts.len() as u64;
            let mut next = String::with_capacity(current.len());
            let mut at = 0;
            for (start, end) in cuts {
                if start < at {
                    continue;
                }
                next.push_str(&current[at..start]);
                next.push_str(&format!("[REDACTED:{}]", rule.id));
                if keep_lines {
                    next.extend(current[start..end].matches('\n'));
                }
                at = end;
            }
            next.push_str(&current[at..]);
            out = Cow::Owned(next);
        }
        out
    }
}

impl Allow {
    fn allows(&self, secret: &str, whole: &str, line: &str) -> bool {
        let target = match self.target {
            Target::Secret => secret,
            Target::Match => whole,
            Target::Line => line,
        };
        let lower = secret.to_lowercase();
        self.regexes.iter().any(|r| r.is_match(target)) || self.stopwords.iter().any(|w| lower.contains(w.as_str()))
    }
}

/// An RE2 pattern as the `regex` crate reads it alike: RE2's `\w`, `\d`, `\s` and `\b` are
/// ASCII's, the crate's Unicode's (whose `[\w-]{50,1000}` alone is over its size limit).
fn ascii_classes(re: &str) -> String {
    let mut out = String::with_capacity(re.len() + 16);
    let mut in_class = false;
    let mut chars = re.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(next) = chars.next() else {
                    out.push(c);
                    break;
                };
                let class = match next {
                    'w' => Some("word"),
                    'd' => Some("digit"),
                    's' => Some("space"),
                    _ => None,
                };
                match (class, in_class) {
                    (Some(name), true) => out.push_str(&format!("[:{name}:]")),
                    (Some(name), false) => out.push_str(&format!("[[:{name}:]]")),
                    (None, false) if next == 'b' => out.push_str(r"(?-u:\b)"),
                    (None, _) => {
                        out.push(c);
                        out.push(next);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A `]` right after the opening bracket (or its `^`) is a member, not the end.
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().expect("peeked"));
                }
                if chars.peek() == Some(&']') {
                    out.push(chars.next().expect("peeked"));
                }
            }
            '[' if chars.peek() == Some(&':') => {
                // A POSIX class inside a class: copied to its end.
                out.push(c);
                for d in chars.by_ref() {
                    out.push(d);
                    if d == ']' {
                        break;
                    }
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            '{' if !in_class => {
                // A repetition (`{2}`, `{2,}`, `{2,5}`) as it is; RE2 reads any other brace as
                // itself, which the crate wants escaped.
                let rest: String = chars.clone().take_while(|&d| d != '}').collect();
                let (min, max) = rest.split_once(',').unwrap_or((&rest, "0"));
                let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
                let closed = chars.clone().nth(rest.chars().count()) == Some('}');
                if closed && !min.is_empty() && digits(min) && digits(max) {
                    out.push('{');
                    for d in chars.by_ref() {
                        out.push(d);
                        if d == '}' {
                            break;
                        }
                    }
                } else {
                    out.push_str("\\{");
                }
            }
            '}' if !in_class => out.push_str("\\}"),
            _ => out.push(c),
        }
    }
    out
}

fn line_around(text: &str, start: usize, end: usize) -> &str {
    let from = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let to = text[end..].find('\n').map_or(text.len(), |i| end + i);
    &text[from..to]
}

/// Shannon entropy of `s`, in bits per character (as gitleaks computes it).
fn entropy(s: &str) -> f64 {
    let mut counts: BTreeMap<char, usize> = BTreeMap::new();
    let mut n = 0usize;
    for c in s.chars() {
        *counts.entry(c).or_default() += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    counts
        .values()
        .map(|&c| {
            let p = c as f64 / n as f64;
            -p * p.log2()
        })
        .sum()
}

/// Bytes of masked text a snippet cut again by [`Redactor::mask_answer`] shows before its first
/// match, and in all.
const SNIPPET_BEFORE: usize = 60;
const SNIPPET_BYTES: usize = 200;

/// A snippet of `text` (already masked) around the first of `words` found in it (ASCII case
/// ignored), each of them marked as FTS5's `snippet()` marks a match; from its start if none is.
fn snippet_of(text: &str, words: &[String]) -> Snippet {
    let lower = text.to_ascii_lowercase();
    let words: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    let first = words.iter().filter_map(|w| lower.find(w.as_str())).min().unwrap_or(0);
    let mut start = first.saturating_sub(SNIPPET_BEFORE);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (start + SNIPPET_BYTES).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    let mut out = String::with_capacity(end - start + 16);
    if start > 0 {
        out.push('…');
    }
    let mut at = start;
    let mut plain = start;
    while at < end {
        let found = words.iter().find(|w| !w.is_empty() && lower[at..end].starts_with(w.as_str()));
        match found {
            Some(w) => {
                out.push_str(&text[plain..at]);
                out.push(scrollback_read::history::MATCH_OPEN);
                out.push_str(&text[at..at + w.len()]);
                out.push(scrollback_read::history::MATCH_CLOSE);
                at += w.len();
                plain = at;
            }
            None => at += text[at..].chars().next().map_or(1, char::len_utf8),
        }
    }
    out.push_str(&text[plain..end]);
    if end < text.len() {
        out.push('…');
    }
    Snippet::from_fts(out)
}

/// A reader's cut of a text (the outline's first words of a prompt) masks it whole first.
impl scrollback_read::history::Mask for Redactor {
    fn mask<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.redact(text, &mut Redacted::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn re2_classes_are_ascii() {
        assert_eq!(ascii_classes(r"\b(ghp_[\w-]{3})\s\d"), r"(?-u:\b)(ghp_[[:word:]-]{3})[[:space:]][[:digit:]]");
        assert_eq!(ascii_classes(r"[^\]\w]x\."), r"[^\][:word:]]x\.");
        assert_eq!(ascii_classes(r"a{2,}b{3}c{x}d{"), r"a{2,}b{3}c\{x\}d\{");
    }

    #[test]
    fn every_shipped_rule_compiles_and_plain_text_is_left_alone() {
        let r = Redactor::shipped().unwrap();
        assert!(r.rule_ids().len() >= 30);
        let mut counts = Redacted::new();
        let plain = "Run cargo test, then open src/db.rs and fix the token_count parsing.";
        assert_eq!(r.redact(plain, &mut counts), plain);
        assert!(counts.is_empty(), "{counts:?}");
    }

    #[test]
    fn a_secret_a_tool_line_cuts_in_two_is_redacted_before_the_cut() {
        let r = Redactor::shipped().unwrap();
        let token = "ghp_Q8dK2mX7vN4pL9sR3tW6yB1cF5gH0jZ2aE7u";
        // The subject is cut at 300 characters: within the token.
        let command = format!("echo {} {token} done", "a".repeat(280));
        let call = tool_call("Bash", &serde_json::json!({"command": command}));
        assert!(call.subject.contains(&token[..12]) && !call.subject.contains(token), "{}", call.subject);
        let mut parts = vec![Part::ToolCall(call)];
        let mut counts = Redacted::new();
        r.redact_parts(&mut parts, &mut counts);
        let Part::ToolCall(call) = &parts[0] else { unreachable!() };
        assert!(!call.subject.contains(&token[..8]), "{}", call.subject);
        assert!(call.subject.contains("[REDACTED:"), "{}", call.subject);
        assert!(!call.input.to_string().contains(token));
    }

    #[test]
    fn every_planted_secret_is_taken_in_every_position() {
        let r = Redactor::shipped().unwrap();
        let planted = crate::planted_secrets::planted();
        assert!(planted.len() >= 100, "{}", planted.len());
        let rules: std::collections::BTreeSet<&str> = planted.iter().map(|p| p.rule).collect();
        let shipped: std::collections::BTreeSet<&str> = r.rule_ids().into_iter().collect();
        assert_eq!(rules, shipped, "every rule has secrets planted");
        let mut leaked = Vec::new();
        for p in &planted {
            let mut counts = Redacted::new();
            let out = r.redact(&p.text, &mut counts);
            if p.secret.iter().any(|s| out.contains(s.as_str())) {
                leaked.push(format!("{} {}: {out}", p.rule, p.position));
            }
        }
        assert!(leaked.is_empty(), "{} of {} leaked:\n{}", leaked.len(), planted.len(), leaked.join("\n"));
    }

    #[test]
    fn ordinary_text_comes_through_unchanged() {
        let r = Redactor::shipped().unwrap();
        for text in crate::planted_secrets::ordinary() {
            let mut counts = Redacted::new();
            assert_eq!(r.redact(text, &mut counts), text, "{counts:?}");
        }
    }

    #[test]
    fn a_key_written_over_many_lines_is_taken_from_a_diff_and_its_lines_kept() {
        let r = Redactor::shipped().unwrap();
        let (_, key, body) = crate::planted_secrets::planted()
            .into_iter()
            .find(|p| p.rule == "private-key" && p.position == "alone")
            .map(|p| (p.rule, p.text, p.secret))
            .unwrap();
        let mut diff = vec![DiffLine { op: '@', text: "id_rsa".into() }];
        diff.extend(key.lines().map(|l| DiffLine { op: '+', text: l.to_owned() }));
        diff.push(DiffLine { op: ' ', text: "kept".into() });
        let call = scrollback_core::format::parts::ToolCall {
            id: None,
            diff: diff.clone(),
            tool: "Write".into(),
            subject: "id_rsa".into(),
            lines: Some((7, 0)),
            input: serde_json::json!({"file_path": "id_rsa", "content": key}),
        };
        let mut parts = vec![Part::ToolCall(call)];
        let mut counts = Redacted::new();
        r.redact_parts(&mut parts, &mut counts);
        let Part::ToolCall(call) = &parts[0] else { unreachable!() };
        let shown = format!("{:?} {}", call.diff, call.input);
        for line in &body {
            assert!(!shown.contains(line.as_str()), "{shown}");
        }
        assert_eq!(call.diff.len(), diff.len(), "the diff keeps its lines");
        assert_eq!(call.diff.iter().map(|d| d.op).collect::<String>(), diff.iter().map(|d| d.op).collect::<String>());
        assert!(call.diff[1].text.starts_with("[REDACTED:private-key]"), "{:?}", call.diff);
        assert_eq!(call.diff.last().unwrap().text, "kept");
        assert_eq!(counts.get("private-key"), Some(&2), "{counts:?}");
    }
}
