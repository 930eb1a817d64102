// The viewer's DOM toolkit: elements, text, photos, content blocks, tool calls. Transcript text is
// untrusted: every string goes in as text (textContent, text nodes), never as HTML, but for one
// thing: the HTML the server rendered from a text's Markdown and passed through its sanitiser
// (ammonia: read/markdown.rs), which `text` takes from an entry's `view`. Photos are lazy <img>s whose
// URLs must be this server's media routes; anything else a transcript claims is not loaded.
// Knows no transcript format: each format's module (format-*.js) lays its lines out with these.

export const NOT_DISPLAYED = "[image not displayed]";
export const IMAGE_TYPES = new Set(["image", "image_url", "input_image"]);

/** An element with a class and children (strings become text nodes). */
export function el(tag, className, ...children) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

/** Only this server's media routes are loaded, whatever a transcript says. */
export function mediaUrl(url) {
  return typeof url === "string" && (url.startsWith("/api/session-media/") || url.startsWith("/api/media/"))
    ? url
    : null;
}

/**
 * Text: its Markdown as the server rendered and sanitised it, when the entry's `view` has it; else
 * ``` code fences as <pre><code> and the rest as paragraphs (white space kept by CSS).
 */
export function text(value, view) {
  const html = view && view.html && Object.prototype.hasOwnProperty.call(view.html, value) ? view.html[value] : null;
  if (typeof html === "string") {
    const box = el("div", "text markdown");
    // Sanitised HTML (ammonia, with a short list of tags; links only to http(s)): see the top.
    box.innerHTML = html;
    return box;
  }
  const box = el("div", "text");
  const parts = String(value).split(/^```[^\n]*\n?/m);
  parts.forEach((part, i) => {
    if (i % 2 === 1) {
      box.append(el("pre", "code", el("code", null, part.replace(/\n$/, ""))));
    } else {
      for (const para of part.split(/\n{2,}/)) {
        if (para.trim() !== "") box.append(el("p", null, para.replace(/^\n+|\n+$/g, "")));
      }
    }
  });
  return box;
}

/** A photo: a lazy <img> with its space reserved, opening full size on click. */
export function photo(src, label, onOpen) {
  const img = el("img", "photo");
  img.loading = "lazy";
  img.decoding = "async";
  img.alt = label || "photo";
  img.width = 320;
  img.height = 240;
  img.src = src;
  const button = el("button", "photo-button", img);
  button.type = "button";
  button.title = "Open full size";
  button.addEventListener("click", () => onOpen(src));
  return button;
}

export function failed() {
  return el("span", "failed", NOT_DISPLAYED);
}

/** An image block of a rendered line. */
function imageBlock(block, onOpen) {
  const src = !block.failed && mediaUrl(block.url);
  return src ? photo(src, block.mimeType ? `photo (${block.mimeType})` : "photo", onOpen) : failed();
}

function pretty(value) {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

function collapsed(className, summary, ...body) {
  const details = el("details", className, el("summary", null, summary), ...body);
  return details;
}

/** An edit's diff: unified on a narrow screen, side by side on a wide one (style.css picks). */
export function diff(lines) {
  const unified = el("div", "diff-unified");
  for (const d of lines) unified.append(el("div", `diff-line ${DIFF_CLASS[d.op] || "ctx"}`, `${d.op === "@" ? "" : d.op}${d.text}`));
  const split = el("div", "diff-split");
  let removed = [];
  let added = [];
  const flush = () => {
    for (let i = 0; i < Math.max(removed.length, added.length); i++) {
      const left = removed[i];
      const right = added[i];
      split.append(
        el("div", `diff-line ${left === undefined ? "none" : "del"}`, left === undefined ? "" : left),
        el("div", `diff-line ${right === undefined ? "none" : "add"}`, right === undefined ? "" : right),
      );
    }
    removed = [];
    added = [];
  };
  for (const d of lines) {
    if (d.op === "-") removed.push(d.text);
    else if (d.op === "+") added.push(d.text);
    else {
      flush();
      if (d.op === "@") split.append(el("div", "diff-line head wide", d.text));
      else split.append(el("div", "diff-line ctx", d.text), el("div", "diff-line ctx", d.text));
    }
  }
  flush();
  return el("div", "diff", unified, split);
}

const DIFF_CLASS = { "+": "add", "-": "del", " ": "ctx", "@": "head" };

/**
 * A tool call as one line: the tool and what it acted on (`glance`, from the entry's view; else
 * only its name), with an edit's lines added and removed. Opening it shows an edit's diff and the
 * input.
 */
export function toolCall(glance, name, input) {
  const summary = el("summary", "tool-line", el("span", "tool-name", glance ? glance.tool : typeof name === "string" ? name : "Tool call"));
  if (glance && glance.subject) summary.append(" ", el("code", "tool-subject", glance.subject));
  if (glance && (glance.added !== undefined || glance.removed !== undefined)) {
    summary.append(" ", el("span", "diffstat", el("span", "add", `+${glance.added || 0}`), " ", el("span", "del", `−${glance.removed || 0}`)));
  }
  const body = [];
  if (glance && Array.isArray(glance.diff) && glance.diff.length) body.push(diff(glance.diff));
  body.push(el("pre", "tool-input", pretty(input)));
  return el("details", "tool call", summary, ...body);
}

/** The lines a result's preview shows before it is opened. */
const RESULT_PREVIEW_LINES = 3;

/** A tool's result: its first lines and size, opening to the whole; an error is marked. `extra`
 * are nodes shown inside it after the text (a photo the tool gave back). */
export function toolResult(value, { error = false, label = "Result", extra = [] } = {}) {
  const body = typeof value === "string" ? value : pretty(value);
  const lines = body === "" ? 0 : body.split("\n").length;
  const size = new TextEncoder().encode(body).length;
  const summary = el(
    "summary",
    null,
    el("span", error ? "result-label error" : "result-label", error ? `${label}: error` : label),
    " ",
    el("span", "meta-text", `${lines} ${lines === 1 ? "line" : "lines"}, ${formatBytes(size)}`),
  );
  const head = body.split("\n").slice(0, RESULT_PREVIEW_LINES).join("\n");
  if (head) summary.append(el("pre", "result-head", lines > RESULT_PREVIEW_LINES ? `${head}\n…` : head));
  const box = el("details", error ? "tool result error" : "tool result", summary);
  if (body) box.append(el("pre", "result-body", body));
  box.append(...extra);
  if (extra.length) box.open = true;
  return box;
}

/** A payload outside an image block (a PDF, an attachment): a link that downloads it. */
export function mediaLink(block) {
  const source = block.source || block;
  const href = mediaUrl(source.mediaUrl || block.mediaUrl);
  if (!href) return null;
  const type = source.mediaType || source.media_type || "file";
  const a = el("a", "attachment", `${type === "application/pdf" ? "PDF document" : type} (${formatBytes(source.mediaBytes)})`);
  a.href = href;
  a.download = "";
  return a;
}

export function formatBytes(n) {
  if (typeof n !== "number") return "?";
  if (n < 1024) return `${n} B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1 << 20)).toFixed(1)} MB`;
}

/** The text of a tool result's content: a string, or its text blocks. */
export function resultText(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? "" : pretty(content);
  return content.filter((b) => b && b.type === "text" && typeof b.text === "string").map((b) => b.text).join("\n");
}

/** Content blocks (a string, or Anthropic-style blocks: text, image, document, thinking, tool calls and
 * results), as DOM nodes. `view` is the entry's (its texts' HTML, its tool calls at a glance). */
export function blocks(content, onOpen, depth = 0, view = null) {
  if (typeof content === "string") return [text(content, view)];
  if (!Array.isArray(content)) return [];
  const out = [];
  let call = 0;
  for (const block of content) {
    if (!block || typeof block !== "object") continue;
    const type = block.type;
    if (type === "text" && typeof block.text === "string") out.push(text(block.text, depth === 0 ? view : null));
    else if (IMAGE_TYPES.has(type)) out.push(imageBlock(block, onOpen));
    else if (type === "document") out.push(mediaLink(block) || el("span", "failed", "[document not available]"));
    else if (type === "thinking" || type === "redacted_thinking") {
      out.push(collapsed("thinking", "Thinking", el("pre", null, typeof block.thinking === "string" ? block.thinking : "(redacted)")));
    } else if (type === "tool_use" || type === "server_tool_use") {
      const glance = view && Array.isArray(view.tools) ? view.tools[call] : null;
      call += 1;
      out.push(toolCall(glance, block.name, block.input));
    } else if (type === "tool_result" && depth === 0) {
      const photos = Array.isArray(block.content) ? block.content.filter((b) => b && IMAGE_TYPES.has(b.type)).map((b) => imageBlock(b, onOpen)) : [];
      out.push(toolResult(resultText(block.content), { error: block.is_error === true, extra: photos }));
    } else if (type === "tool_result") {
      out.push(el("pre", null, pretty(block.content)));
    }
  }
  return out;
}

export function time(timestamp) {
  if (typeof timestamp !== "string") return null;
  const t = el("time", "when", timestamp.replace("T", " ").replace(/\.\d+Z$|Z$/, ""));
  t.dateTime = timestamp;
  return t;
}

