// Turning history entries, pending sends and search snippets into DOM. Transcript text is untrusted:
// every string goes in as text (textContent, text nodes), never as HTML. Photos are lazy <img>s whose
// URLs must be this server's media routes; anything else a transcript claims is not loaded.

export const NOT_DISPLAYED = "[image not displayed]";
const IMAGE_TYPES = new Set(["image", "image_url", "input_image"]);

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
function mediaUrl(url) {
  return typeof url === "string" && (url.startsWith("/api/session-media/") || url.startsWith("/api/media/"))
    ? url
    : null;
}

/** Text with ``` code fences as <pre><code>, the rest as paragraphs (white space kept by CSS). */
export function text(value) {
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

function failed() {
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

/** A payload outside an image block (a PDF, an attachment): a link that downloads it. */
function mediaLink(block) {
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

/** The blocks of `message.content` (or a tool result's content). */
function blocks(content, onOpen, depth = 0) {
  if (typeof content === "string") return [text(content)];
  if (!Array.isArray(content)) return [];
  const out = [];
  for (const block of content) {
    if (!block || typeof block !== "object") continue;
    const type = block.type;
    if (type === "text" && typeof block.text === "string") out.push(text(block.text));
    else if (IMAGE_TYPES.has(type)) out.push(imageBlock(block, onOpen));
    else if (type === "document") out.push(mediaLink(block) || el("span", "failed", "[document not available]"));
    else if (type === "thinking" || type === "redacted_thinking") {
      out.push(collapsed("thinking", "Thinking", el("pre", null, typeof block.thinking === "string" ? block.thinking : "(redacted)")));
    } else if (type === "tool_use") {
      out.push(collapsed("tool", `Tool call: ${typeof block.name === "string" ? block.name : "?"}`, el("pre", null, pretty(block.input))));
    } else if (type === "tool_result" && depth === 0) {
      const inner = blocks(block.content, onOpen, depth + 1);
      out.push(collapsed(block.is_error ? "tool error" : "tool", block.is_error ? "Tool error" : "Tool result", ...inner));
    } else if (type === "tool_result") {
      out.push(el("pre", null, pretty(block.content)));
    }
  }
  return out;
}

/** The plain text a line that is not a message carries, for the few kinds shown. */
function metaText(line) {
  switch (line.type) {
    case "summary":
      return typeof line.summary === "string" ? `Summary: ${line.summary}` : null;
    case "custom-title":
      return typeof line.customTitle === "string" ? `Title: ${line.customTitle}` : null;
    case "ai-title":
      return typeof line.aiTitle === "string" ? `Title: ${line.aiTitle}` : null;
    case "system":
      return typeof line.content === "string" ? line.content : null;
    default:
      return null;
  }
}

function time(timestamp) {
  if (typeof timestamp !== "string") return null;
  const t = el("time", "when", timestamp.replace("T", " ").replace(/\.\d+Z$|Z$/, ""));
  t.dateTime = timestamp;
  return t;
}

/**
 * One history entry as a list item, or null for a line a person does not read (progress,
 * snapshots, bookkeeping). `data-cursor` and `data-uuid` say which entry it is. A tool call that ran
 * a sub-agent links to its entries at `subagentHref(e.subagent)`.
 */
export function entry(e, onOpen, subagentHref) {
  const item = el("li", "entry");
  item.dataset.cursor = String(e.cursor);
  if (e.uuid) item.dataset.uuid = e.uuid;
  if (e.isSidechain) item.classList.add("sidechain");
  if (e.invalid) {
    item.classList.add("invalid");
    item.append(el("span", "meta-text", `Line ${e.line} could not be read: ${e.invalid}`));
    return item;
  }
  const line = e.entry;
  if (!line || typeof line !== "object") return null;
  const kind = e.type || line.type;
  if (kind === "user" || kind === "assistant") {
    const message = line.message || {};
    const content = blocks(message.content, onOpen);
    if (content.length === 0) return null;
    const isToolResult = Array.isArray(message.content) && message.content.some((b) => b && b.type === "tool_result");
    item.classList.add(kind === "user" && !isToolResult ? "user" : "assistant");
    if (line.isMeta) item.classList.add("meta");
    const mine = kind === "user" && !isToolResult;
    const who = e.isSidechain ? (mine ? "To the sub-agent" : "Sub-agent") : mine ? "You" : "Assistant";
    item.append(el("div", "bubble", ...content), el("div", "byline", who, " ", time(e.timestamp)));
    if (e.subagent && e.subagent.first !== null && subagentHref) {
      const a = el("a", "subagent", `Sub-agent ${e.subagent.agentId}: ${e.subagent.entries} ${e.subagent.entries === 1 ? "entry" : "entries"}`);
      a.href = subagentHref(e.subagent);
      a.dataset.link = "";
      item.append(a);
    }
    return item;
  }
  if (kind === "attachment" && line.attachment && line.attachment.type === "queued_command") {
    item.classList.add("user");
    item.append(el("div", "bubble", ...blocks(line.attachment.prompt, onOpen)), el("div", "byline", "You (queued) ", time(e.timestamp)));
    return item;
  }
  const note = metaText(line);
  if (note === null) return null;
  item.classList.add("note");
  item.append(el("span", "meta-text", note));
  return item;
}

/** A pending send: its text and photos, and its state (sending, pending, failed). */
export function pending(p, onOpen, onRetry) {
  const item = el("li", "entry user pending");
  item.dataset.clientMessageId = p.clientMessageId;
  const content = [];
  if (p.text) content.push(text(p.text));
  for (const image of p.images || []) {
    const src = image.dataUrl || mediaUrl(image.url);
    content.push(src ? photo(src, "your photo", onOpen) : failed());
  }
  const state = el("div", "byline");
  if (p.error) {
    state.append(el("span", "error", p.error), " ");
    const retry = el("button", "retry", "Retry");
    retry.type = "button";
    retry.addEventListener("click", () => onRetry(p.clientMessageId));
    state.append(retry);
    item.classList.add("failed-send");
  } else if (p.engineError) {
    state.append(el("span", "error", `Sent, but the engine failed: ${p.engineError}`), " ");
    const retry = el("button", "retry", "Retry");
    retry.type = "button";
    retry.addEventListener("click", () => onRetry(p.clientMessageId));
    state.append(retry);
    item.classList.add("failed-send");
  } else {
    state.append(p.acceptedAt ? "Sent · waiting for the transcript" : "Sending…");
  }
  item.append(el("div", "bubble", ...content), state);
  return item;
}

/** A search snippet: escaped HTML whose only markup is <mark>, rebuilt as text and <mark>s. */
export function snippet(html) {
  const box = el("span", "snippet");
  const decode = (s) =>
    s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");
  const parts = String(html).split(/(<mark>|<\/mark>)/);
  let marked = false;
  for (const part of parts) {
    if (part === "<mark>") marked = true;
    else if (part === "</mark>") marked = false;
    else if (part) box.append(marked ? el("mark", null, decode(part)) : document.createTextNode(decode(part)));
  }
  return box;
}
