// Turning history entries, pending sends and search snippets into DOM. Transcript text is untrusted:
// every string goes in as text (textContent, text nodes), never as HTML. Photos are lazy <img>s whose
// URLs must be this server's media routes; anything else a transcript claims is not loaded. Knows no
// transcript format: an entry is laid out from its `view`, who said it and its parts, which the
// server's formats give (scrollback_core::format::parts); the elements are dom.js's.
import { get } from "./api.js";
import { collapsed, command, context, el, failed, media, mediaUrl, output, photo, text, time, toolCard, toolResult } from "./dom.js";

export { NOT_DISPLAYED, el, formatBytes, many, photo, projectName, sessionTitle, text } from "./dom.js";

/** The sides an entry stands on, each a class of its list item. */
const SIDES = new Set(["user", "assistant", "note"]);

/** One part of an entry's view as DOM nodes (none for a kind this viewer does not know). */
function part(p, onOpen) {
  if (!p || typeof p !== "object") return [];
  switch (p.kind) {
    case "text": {
      const box = text(p.text, p.html);
      if (p.more && Number.isInteger(p.more.index)) box.append(showAll(box, p.more));
      return [box];
    }
    case "thinking":
      return [collapsed("thinking", "Thinking", el("pre", null, p.text))];
    case "toolCall":
      return [toolCard(p)];
    case "toolResult": {
      const extra = (Array.isArray(p.media) ? p.media : []).map((m) => media(m, onOpen));
      const node = toolResult(p.text, { error: p.error === true, label: p.label || "Result", extra });
      if (typeof p.callId === "string" && p.callId) node.dataset.callId = p.callId;
      return [node];
    }
    case "command":
      return [command(p.name, p.args)];
    case "output":
      return [output(p.text, p.error === true)];
    case "context":
      return [context(p.label, p.text)];
    case "media":
      return [media(p, onOpen)];
    case "note":
      return [el("span", "meta-text", p.text)];
    case "group":
      return [collapsed("tool", p.title, ...parts(p.parts, onOpen))];
    case "message":
      return [el("div", "checkpoint-message", el("div", "byline", p.who ? p.who.name : ""), ...parts(p.parts, onOpen))];
    default:
      return [];
  }
}

/**
 * A cut text's "Show all": fetches the entry's texts whole (GET …/entries/{cursor}/texts) and shows
 * this one in place, as plain text (never rendered: a text this long is no Markdown to render).
 */
function showAll(box, more) {
  const button = el("button", "show-all", `Show all (${more.chars} characters)`);
  button.type = "button";
  button.addEventListener("click", async () => {
    const item = box.closest("li.entry");
    const session = location.pathname.match(/^\/sessions\/([^/?#]+)/);
    if (!item || !session) return;
    button.disabled = true;
    try {
      const answer = await get(`/api/sessions/${session[1]}/entries/${encodeURIComponent(item.dataset.cursor)}/texts`);
      const whole = answer && Array.isArray(answer.texts) ? answer.texts[more.index] : null;
      if (typeof whole === "string") box.replaceWith(text(whole));
      else button.disabled = false;
    } catch {
      button.disabled = false;
    }
  });
  return button;
}

/** An entry's parts as DOM nodes: a tool's result goes into its call's card where the call is
 * among them (the one it names, else the call just before it, for a format that names neither). */
function parts(list, onOpen) {
  const out = [];
  for (const p of Array.isArray(list) ? list : []) {
    for (const node of part(p, onOpen)) {
      if (node.classList.contains("result")) {
        const id = node.dataset.callId;
        const cards = out.filter((n) => n.classList.contains("tool-card"));
        const card = id ? cards.find((c) => c.dataset.callId === id) : out.length && out[out.length - 1].classList.contains("tool-card") ? out[out.length - 1] : null;
        if (card && !card.querySelector(":scope > details.result")) {
          card.append(node);
          continue;
        }
      }
      out.push(node);
    }
  }
  return out;
}

/**
 * One history entry as a list item, or null for a line a person does not read (progress,
 * snapshots, bookkeeping: the server's view names no one for it). `data-cursor` and `data-uuid` say
 * which entry it is. A note (a title, a rewind) is its text; anything else is a bubble and a byline.
 * A tool call that ran a sub-agent links to its entries at `subagentHref(e.subagent)`, and the
 * sub-agent's first entry back to that call at `subagentHref(e.spawnedBy)`.
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
  const view = e.view;
  const who = view && view.who;
  if (!who || !Array.isArray(view.parts) || view.parts.length === 0) return null;
  if (view.parts.every((p) => p && p.kind === "note")) {
    item.classList.add("note");
    item.append(...parts(view.parts, onOpen));
    return item;
  }
  const content = parts(view.parts, onOpen);
  if (content.length === 0) return null;
  if (SIDES.has(who.side)) item.classList.add(who.side);
  item.append(el("div", "bubble", ...content), el("div", "byline", who.name || "", " ", time(e.timestamp)));
  if (e.subagent && e.subagent.first !== null && subagentHref) {
    const a = el("a", "subagent", `Sub-agent ${e.subagent.agentId}: ${e.subagent.entries} ${e.subagent.entries === 1 ? "entry" : "entries"}`);
    a.href = subagentHref(e.subagent);
    a.dataset.link = "";
    item.append(a);
  }
  if (e.spawnedBy && e.spawnedBy.cursor !== null && e.spawnedBy.cursor !== undefined && subagentHref) {
    const a = el("a", "subagent parent", `Sub-agent ${e.spawnedBy.agentId}: back to the call that ran it`);
    a.href = subagentHref({ first: e.spawnedBy.cursor });
    a.dataset.link = "";
    item.prepend(a);
  }
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
