// The viewer's DOM toolkit: elements, text, photos, files, tool calls and results. Transcript text is
// untrusted: every string goes in as text (textContent, text nodes), never as HTML, but for one
// thing: the HTML the server rendered from a text's Markdown and passed through its sanitiser
// (ammonia: read/markdown.rs), which `text` takes from a text part of an entry's `view`. Photos are
// lazy <img>s whose URLs must be this server's media routes; anything else a transcript claims is not
// loaded. Knows no transcript format: render.js lays out the parts the server gives with these.

export const NOT_DISPLAYED = "[image not displayed]";

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
 * Text: `html`, its Markdown as the server rendered and sanitised it, where the view has it; else
 * ``` code fences as <pre><code> and the rest as paragraphs (white space kept by CSS).
 */
export function text(value, html) {
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

/**
 * A photo or a file of an entry's view (`{image, url, mimeType, bytes, failed}`): a photo, a link that
 * downloads the file, or what stands in for one with nothing behind it.
 */
export function media(m, onOpen) {
  const src = !m.failed && mediaUrl(m.url);
  if (m.image) {
    const label = typeof m.label === "string" ? m.label : null;
    const shown = src ? photo(src, label || (m.mimeType ? `photo (${m.mimeType})` : "photo"), onOpen) : failed();
    // A photo the text refers to by number (`[Image #1]`) carries that name under it.
    return label ? el("figure", "named-photo", shown, el("figcaption", "image-ref", label)) : shown;
  }
  const what = m.mimeType === "application/pdf" ? "PDF document" : m.mimeType || "attachment";
  if (!src) return el("span", "failed", `[${what} not available]`);
  const a = el("a", "attachment", typeof m.bytes === "number" ? `${what} (${formatBytes(m.bytes)})` : what);
  a.href = src;
  a.download = "";
  return a;
}

function pretty(value) {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/** A fold: `summary` while closed, `body` when opened. */
export function collapsed(className, summary, ...body) {
  return el("details", className, el("summary", null, summary), ...body);
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
 * A tool call (a `toolCall` part of an entry's view) as one line: the tool and what it acted on,
 * with an edit's lines added and removed. Opening it shows an edit's diff, or else the input (a
 * diff says what its input did: the raw input is not repeated under it).
 */
export function toolCall(call) {
  const summary = el("summary", "tool-line", el("span", "tool-name", typeof call.tool === "string" ? call.tool : "Tool call"));
  if (call.subject) summary.append(" ", el("code", "tool-subject", call.subject));
  if (call.added !== undefined || call.removed !== undefined) {
    summary.append(" ", el("span", "diffstat", el("span", "add", `+${call.added || 0}`), " ", el("span", "del", `−${call.removed || 0}`)));
  }
  const body = Array.isArray(call.diff) && call.diff.length ? diff(call.diff) : el("pre", "tool-input", pretty(call.input));
  return el("details", "tool call", summary, body);
}

/**
 * A tool call's card: the call, and under it its result once there is one (`attach`). `id` is the
 * call's id where its format gives one: a result that names it (`data-call-id`) joins this card,
 * from the same entry or a later one.
 */
export function toolCard(call) {
  const card = el("div", "tool-card", toolCall(call));
  if (typeof call.id === "string" && call.id) card.dataset.callId = call.id;
  return card;
}

/** A command the person gave the agent's harness (a slash command): a chip, its arguments beside it. */
export function command(name, args) {
  const chip = el("span", "command", el("code", "command-name", String(name || "")));
  if (args) chip.append(" ", el("span", "command-args", String(args)));
  return chip;
}

/** What such a command printed: output, in a box of its own, an error output marked. */
export function output(value, error) {
  return el("div", error ? "command-output error" : "command-output", el("div", "output-label", error ? "Error output" : "Output"), el("pre", null, String(value)));
}

/** Context the harness added to a message (an IDE selection, a system reminder): folded, under what it is. */
export function context(label, value) {
  return collapsed("context", String(label || "Context"), el("pre", null, String(value)));
}

/** The lines a result's preview shows before it is opened. */
const RESULT_PREVIEW_LINES = 3;

/** A tool's result: its first lines and size, opening to the whole; an error is marked. `extra`
 * are nodes shown inside it after the text (a photo the tool gave back). */
export function toolResult(value, { error = false, label = "Result", extra = [] } = {}) {
  const body = typeof value === "string" ? value : pretty(value);
  const lines = body === "" ? 0 : body.split("\n").length;
  const size = new TextEncoder().encode(body).length;
  // A result of photos alone is said as its photos, not as "0 lines, 0 B".
  const said = [lines || !extra.length ? `${many(lines, "line")}, ${formatBytes(size)}` : null, extra.length ? many(extra.length, "photo") : null];
  const summary = el(
    "summary",
    null,
    el("span", error ? "result-label error" : "result-label", error ? `${label}: error` : label),
    " ",
    el("span", "meta-text", said.filter(Boolean).join(", ")),
  );
  const head = body.split("\n").slice(0, RESULT_PREVIEW_LINES).join("\n");
  if (head) summary.append(el("pre", "result-head", lines > RESULT_PREVIEW_LINES ? `${head}\n…` : head));
  const box = el("details", error ? "tool result error" : "tool result", summary);
  if (body) box.append(el("pre", "result-body", body));
  box.append(...extra);
  if (extra.length) box.open = true;
  return box;
}

/** A project as a person names it: its directory's last name; a folder Gemini CLI named by the
 * SHA-256 of the directory (nothing recorded the directory) as "gemini project" and its first eight
 * hex digits. (The server names untitled sessions by the same rule: history::project_name.) */
export function projectName(project) {
  if (!project) return null;
  const p = String(project);
  if (/^[0-9a-f]{64}$/i.test(p)) return `gemini project ${p.slice(0, 8)}`;
  const parts = p.split(/[\\/]/).filter(Boolean);
  return parts.length ? parts[parts.length - 1] : p;
}

/** What names a session where its title is expected: its title (the server names an untitled one by
 * its first words, or its project and day), never its id. */
export function sessionTitle(s) {
  return (s && s.title) || "Untitled session";
}

/** `n` things, counted as one says it: "1 photo", "2 photos", "1,024 entries"; "unknown sessions"
 * when nothing could say. `plural` where adding "s" does not make it ("entry", "entries"). */
export function many(n, thing, plural = `${thing}s`) {
  if (n === null || n === undefined) return `unknown ${plural}`;
  return `${Number(n).toLocaleString("en-US")} ${n === 1 ? thing : plural}`;
}

/** `n` bytes in the largest unit that keeps it at 1 or more: 512 B, 1.4 MB, 73.0 GB. */
export function formatBytes(n) {
  if (typeof n !== "number") return "?";
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB", "PB"];
  let v = n / 1024;
  let u = 0;
  // (1,023.96 KB would round to 1024.0 KB: it is 1.0 MB.)
  while (v >= 1023.95 && u < units.length - 1) {
    v /= 1024;
    u += 1;
  }
  return `${v.toFixed(1)} ${units[u]}`;
}

export function time(timestamp) {
  if (typeof timestamp !== "string") return null;
  const t = el("time", "when", timestamp.replace("T", " ").replace(/\.\d+Z$|Z$/, ""));
  t.dateTime = timestamp;
  return t;
}

