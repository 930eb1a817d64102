// The viewer's DOM toolkit: elements, text, photos, content blocks. Transcript text is untrusted:
// every string goes in as text (textContent, text nodes), never as HTML. Photos are lazy <img>s whose
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

/** Content blocks (a string, or Anthropic-style blocks: text, image, document, thinking, tool calls and
 * results), as DOM nodes. */
export function blocks(content, onOpen, depth = 0) {
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

export function time(timestamp) {
  if (typeof timestamp !== "string") return null;
  const t = el("time", "when", timestamp.replace("T", " ").replace(/\.\d+Z$|Z$/, ""));
  t.dateTime = timestamp;
  return t;
}

