//! Transcript text as HTML a browser can be given: CommonMark with GitHub's tables and
//! strikethrough ([`pulldown_cmark`]), fenced code highlighted by [`syntect`], and the result passed
//! through [`ammonia`], the sanitiser, with a short list of tags.
//!
//! What the text says is shown, never obeyed:
//! - raw HTML in the Markdown is text;
//! - a link is a link only to `http(s)`, with `rel="noopener noreferrer"` and its URL written beside
//!   it; any other link is its text and its URL, as text;
//! - an image is never loaded: it reads `[image: alt]` and its URL, as text.
//!
//! The viewer and the exports render with this one function, so that a session reads the same in
//! both.
//!
//! What one text costs is bounded: a text over [`RENDER_MAX`] bytes is not rendered; a code block
//! over [`HIGHLIGHT_MAX`] bytes, and every block once a text has highlighted [`HIGHLIGHT_BUDGET`]
//! bytes of code, is shown escaped without highlighting; and rendered HTML is kept (a small LRU
//! of [`CACHE_BYTES`], keyed by the blake3 of the text), so that a page read again is not
//! rendered again. (The viewer cuts what it asks to render: [`crate::view`].)

use std::collections::{HashMap, HashSet};
use std::sync::{LazyLock, Mutex};

use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd};
use syntect::html::{ClassStyle, ClassedHTMLGenerator};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

/// Text longer than this is not rendered (the caller shows it as it is): a pasted log is no
/// Markdown, and rendering it would cost more than it gives.
pub const RENDER_MAX: usize = 256 * 1024;

/// A code block longer than this (in bytes) is shown without highlighting.
pub const HIGHLIGHT_MAX: usize = 8 * 1024;

/// The most code (in bytes) one text highlights, its blocks together; the blocks past it are
/// shown without highlighting.
pub const HIGHLIGHT_BUDGET: usize = 8 * 1024;

/// Rendered HTML kept in memory, in bytes of text and HTML.
pub const CACHE_BYTES: usize = 32 << 20;

/// Rendered HTML by the blake3 of its text, the least recently used given up first.
#[derive(Default)]
struct Rendered {
    map: HashMap<blake3::Hash, (Option<String>, u64)>,
    /// The length of each kept HTML's text.
    sizes: HashMap<blake3::Hash, usize>,
    bytes: usize,
    clock: u64,
}

impl Rendered {
    fn get(&mut self, key: &blake3::Hash) -> Option<Option<String>> {
        self.clock += 1;
        let clock = self.clock;
        self.map.get_mut(key).map(|(html, used)| {
            *used = clock;
            html.clone()
        })
    }

    fn put(&mut self, key: blake3::Hash, html: Option<String>, text_len: usize) {
        let size = text_len + html.as_ref().map_or(0, String::len);
        if size > CACHE_BYTES / 8 || self.map.contains_key(&key) {
            return;
        }
        while self.bytes + size > CACHE_BYTES {
            let Some(oldest) = self.map.iter().min_by_key(|(_, (_, used))| *used).map(|(k, _)| *k) else { break };
            if let Some((old, _)) = self.map.remove(&oldest) {
                self.bytes -= old.as_ref().map_or(0, String::len) + self.sizes.remove(&oldest).unwrap_or(0);
            }
        }
        self.clock += 1;
        self.bytes += size;
        self.sizes.insert(key, text_len);
        self.map.insert(key, (html, self.clock));
    }
}

static CACHE: LazyLock<Mutex<Rendered>> = LazyLock::new(Mutex::default);

/// The class prefix of highlighted code's spans (`hl-keyword`, `hl-string`…; web/style.css).
const CLASS_PREFIX: &str = "hl-";

static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);

static SANITISER: LazyLock<ammonia::Builder<'static>> = LazyLock::new(|| {
    let mut b = ammonia::Builder::empty();
    b.add_tags([
        "p",
        "br",
        "hr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "em",
        "strong",
        "del",
        "code",
        "pre",
        "blockquote",
        "ul",
        "ol",
        "li",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "a",
        "span",
        "div",
    ])
    .add_tag_attributes("a", ["href"])
    .add_tag_attributes("ol", ["start"])
    .add_tag_attributes("span", ["class"])
    .add_tag_attributes("div", ["class"])
    .add_tag_attributes("pre", ["class"])
    .add_tag_attributes("code", ["class"])
    .url_schemes(HashSet::from(["http", "https"]))
    .url_relative(ammonia::UrlRelative::Deny)
    .link_rel(Some("noopener noreferrer"));
    b
});

/// `text` as sanitised HTML, or `None` when it is longer than [`RENDER_MAX`]; from the cache
/// when it was rendered lately.
pub fn to_html(text: &str) -> Option<String> {
    if text.len() > RENDER_MAX {
        return None;
    }
    let key = blake3::hash(text.as_bytes());
    let cache = || CACHE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(html) = cache().get(&key) {
        return html;
    }
    let html = render(text);
    cache().put(key, html.clone(), text.len());
    html
}

/// The cached rendering of `text`, if there is one.
#[cfg(test)]
fn cached(text: &str) -> Option<Option<String>> {
    CACHE.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&blake3::hash(text.as_bytes()))
}

/// [`to_html`]'s work, uncached.
fn render(text: &str) -> Option<String> {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let mut events: Vec<Event<'_>> = Vec::new();
    // Open links: (the URL, whether it is kept as a link, the text it has so far).
    let mut links: Vec<(CowStr<'_>, bool, String)> = Vec::new();
    let mut images: Vec<CowStr<'_>> = Vec::new();
    let mut code: Option<(String, String)> = None;
    let mut highlight_left = HIGHLIGHT_BUDGET;
    for event in Parser::new_ext(text, options) {
        if let Some((_, body)) = &mut code {
            match event {
                Event::Text(t) => body.push_str(&t),
                Event::End(TagEnd::CodeBlock) => {
                    let (lang, body) = code.take().expect("in a code block");
                    events.push(Event::Html(highlighted(&lang, &body, &mut highlight_left).into()));
                }
                _ => {}
            }
            continue;
        }
        match event {
            Event::Html(raw) | Event::InlineHtml(raw) => events.push(Event::Text(raw)),
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.split_whitespace().next().unwrap_or("").to_owned(),
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((lang, String::new()));
            }
            Event::Start(Tag::Link { dest_url, title, link_type, id }) => {
                let web = is_web(&dest_url);
                links.push((dest_url.clone(), web, String::new()));
                if web {
                    events.push(Event::Start(Tag::Link { dest_url, title, link_type, id }));
                }
            }
            Event::End(TagEnd::Link) => {
                let Some((url, web, shown)) = links.pop() else { continue };
                if web {
                    events.push(Event::End(TagEnd::Link));
                }
                if !web || shown.trim() != url.as_ref() {
                    push_url(&mut events, &url);
                }
            }
            Event::Start(Tag::Image { dest_url, .. }) => {
                images.push(dest_url);
                events.push(Event::Text("[image: ".into()));
            }
            Event::End(TagEnd::Image) => {
                events.push(Event::Text("]".into()));
                if let Some(url) = images.pop() {
                    push_url(&mut events, &url);
                }
            }
            Event::Text(t) => {
                if let Some((_, _, shown)) = links.last_mut() {
                    shown.push_str(&t);
                }
                events.push(Event::Text(t));
            }
            Event::Code(t) => {
                if let Some((_, _, shown)) = links.last_mut() {
                    shown.push_str(&t);
                }
                events.push(Event::Code(t));
            }
            other => events.push(other),
        }
    }
    let mut html = String::with_capacity(text.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    Some(SANITISER.clean(&html).to_string())
}

/// Whether a link goes to the web (`http:` or `https:`, any case).
fn is_web(url: &str) -> bool {
    let lower = url.trim_start().get(..8).unwrap_or(url).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// A URL written out beside what pointed at it, as text.
fn push_url<'a>(events: &mut Vec<Event<'a>>, url: &str) {
    if url.is_empty() {
        return;
    }
    events.push(Event::Html(r#" <span class="link-url">("#.into()));
    events.push(Event::Text(url.to_owned().into()));
    events.push(Event::Html(")</span>".into()));
}

/// `s` with HTML's special characters escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A fenced block: its language's name, and its code highlighted when the language is known, the
/// block is at most [`HIGHLIGHT_MAX`] bytes and it fits in what is `left` of the text's budget.
fn highlighted(lang: &str, code: &str, left: &mut usize) -> String {
    let syntaxes = &*SYNTAXES;
    let syntax = (!lang.is_empty()).then(|| syntaxes.find_syntax_by_token(lang)).flatten();
    let name = syntax.map_or(lang, |s| s.name.as_str());
    let mut out = String::from(r#"<div class="code-block">"#);
    if !name.is_empty() {
        out.push_str(&format!(r#"<div class="code-lang">{}</div>"#, escape(name)));
    }
    out.push_str(r#"<pre class="code"><code>"#);
    let affordable = code.len() <= HIGHLIGHT_MAX && code.len() <= *left;
    if affordable && syntax.is_some() {
        *left -= code.len();
    }
    let body = syntax.filter(|_| affordable).and_then(|syntax| {
        let style = ClassStyle::SpacedPrefixed { prefix: CLASS_PREFIX };
        let mut generator = ClassedHTMLGenerator::new_with_class_style(syntax, syntaxes, style);
        for line in LinesWithEndings::from(code) {
            generator.parse_html_for_line_which_includes_newline(line).ok()?;
        }
        Some(generator.finalize())
    });
    out.push_str(&body.unwrap_or_else(|| escape(code)));
    out.push_str("</code></pre></div>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn html(s: &str) -> String {
        to_html(s).unwrap()
    }

    #[test]
    fn commonmark_and_tables_render() {
        let out = html(
            "# Title\n\n- one\n- **two** and *three* and `four`\n\n> quoted\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n~~gone~~",
        );
        for want in [
            "<h1>Title</h1>",
            "<li><strong>two</strong>",
            "<em>three</em>",
            "<code>four</code>",
            "<blockquote>",
            "<table>",
            "<td>1</td>",
            "<del>gone</del>",
        ] {
            assert!(out.contains(want), "{want} in {out}");
        }
    }

    #[test]
    fn fenced_code_is_highlighted_with_its_language_named() {
        let out = html("```rust\nfn main() { let x = \"s\"; }\n```");
        assert!(out.contains(r#"<div class="code-lang">Rust</div>"#), "{out}");
        assert!(out.contains("hl-keyword") || out.contains("hl-storage"), "{out}");
        let plain = html("```nolang\n<b>x</b>\n```");
        assert!(plain.contains("&lt;b&gt;x&lt;/b&gt;") && plain.contains("nolang"), "{plain}");
    }

    /// Code-heavy text: `blocks` fenced Rust blocks of about `size` characters each.
    fn code_heavy(blocks: usize, size: usize) -> String {
        let line = "fn main() { let x = \"s\"; if x.len() > 2 { println!(\"{x}\"); } }\n";
        let block = line.repeat(size / line.len() + 1);
        (0..blocks).map(|i| format!("Step {i}:\n\n```rust\n{block}```\n\n")).collect()
    }

    #[test]
    fn highlighting_has_a_budget_per_text_and_plain_code_after_it() {
        let text = code_heavy(20, 4000);
        let out = html(&text);
        let blocks: Vec<&str> = out.split(r#"<div class="code-block">"#).skip(1).collect();
        assert_eq!(blocks.len(), 20);
        assert!(blocks[0].contains("hl-"), "the first block is highlighted");
        assert!(!blocks[19].contains("hl-"), "the last block is past the budget: plain");
        assert!(blocks[19].contains("fn main() { let x = "), "and still shown, escaped");
        // One long block is not highlighted at all.
        let long = html(&code_heavy(1, 40_000));
        assert!(!long.contains("hl-"), "a block over the per-block limit is plain");
        assert!(out.len() < 8 * text.len(), "{} bytes of HTML for {}", out.len(), text.len());
    }

    #[test]
    fn rendered_html_is_kept_and_given_again() {
        let text = format!("{}\n\nunique {}", code_heavy(2, 500), std::process::id());
        let first = to_html(&text);
        assert!(first.is_some());
        assert_eq!(cached(&text), Some(first.clone()), "the rendering is kept");
        assert_eq!(to_html(&text), first, "and given again");
    }

    #[test]
    fn html_links_and_images_from_the_text_are_shown_never_obeyed() {
        let out = html("<script>alert(1)</script>\n\nhi <img src=x onerror=alert(1)> there");
        assert!(!out.contains("<script") && !out.contains("<img"), "{out}");
        assert!(out.contains("&lt;script&gt;") && out.contains("&lt;img src=x"), "{out}");
        let out = html("[x](javascript:alert(1)) and [site](https://example.com/a) and <https://example.org>");
        assert!(!out.contains("href=\"javascript"), "{out}");
        assert!(out.contains("x <span class=\"link-url\">(javascript:alert(1))</span>"), "{out}");
        assert!(out.contains(r#"<a href="https://example.com/a" rel="noopener noreferrer">site</a>"#), "{out}");
        assert!(out.contains("(https://example.com/a)"), "the URL is visible: {out}");
        assert!(!out.contains("(https://example.org)"), "an autolink is its own URL: {out}");
        let out = html("![a cat](https://evil.example/cat.png)");
        assert!(
            !out.contains("<img") && out.contains("[image: a cat]") && out.contains("evil.example/cat.png"),
            "{out}"
        );
        let out = html("```html\n<script>alert(1)</script>\n```");
        assert!(!out.contains("<script"), "{out}");
    }
}
