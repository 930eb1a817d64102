// Turning history entries, pending sends and search snippets into DOM. Transcript text is untrusted:
// every string goes in as text (textContent, text nodes), never as HTML. Photos are lazy <img>s whose
// URLs must be this server's media routes; anything else a transcript claims is not loaded. A line's
// layout is its format's (formats.js); the elements are dom.js's.
import { el, failed, mediaUrl, photo, text } from "./dom.js";
import { formatOf } from "./formats.js";

export { NOT_DISPLAYED, el, formatBytes, photo, text } from "./dom.js";

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
  return formatOf(e).entry(e, item, onOpen, subagentHref);
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
