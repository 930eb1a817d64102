// Gemini CLI's chats, as the viewer lays a record out. (What a person typed, for reconcile, is the
// server's: each entry's `typed`.) What a rewind undid, what a
// checkpoint replaced and a message's earlier writes never reach the viewer: the index hides them.
import { el, failed, mediaUrl, photo, text, time, toolCall, toolResult } from "./dom.js";

export const name = "gemini";

function inline(d, onOpen) {
  if (typeof d.mimeType === "string" && d.mimeType.startsWith("image/")) {
    const src = !d.failed && mediaUrl(d.url);
    return src ? photo(src, `photo (${d.mimeType})`, onOpen) : failed();
  }
  const href = mediaUrl(d.mediaUrl);
  if (!href) return el("span", "failed", `[${d.mimeType || "attachment"} not available]`);
  const a = el("a", "attachment", d.mimeType || "attachment");
  a.href = href;
  a.download = "";
  return a;
}

function details(className, summary, ...body) {
  return el("details", className, el("summary", null, summary), ...body);
}

function responseText(r) {
  const out = r && (r.output ?? r.error);
  return typeof out === "string" ? out : JSON.stringify(out ?? r, null, 2);
}

/** Content parts (or a string): text, photos, thoughts, tool responses. */
function parts(content, onOpen, view) {
  if (typeof content === "string") return content.trim() ? [text(content, view)] : [];
  if (!Array.isArray(content)) return [];
  const out = [];
  for (const part of content) {
    if (!part || typeof part !== "object") continue;
    if (typeof part.text === "string") {
      if (part.thought) out.push(details("thinking", "Thinking", el("pre", null, part.text)));
      else if (part.text.trim()) out.push(text(part.text, view));
    } else if (part.inlineData && typeof part.inlineData === "object") out.push(inline(part.inlineData, onOpen));
    else if (part.fileData) out.push(el("span", "meta-text", `[file ${part.fileData.fileUri || ""}]`));
    else if (part.functionResponse) {
      out.push(toolResult(responseText(part.functionResponse.response), { label: `Response of ${part.functionResponse.name || "a tool"}` }));
    }
  }
  return out;
}

/** One message record's bubble content. */
function message(m, onOpen, view = null) {
  const out = [];
  if (Array.isArray(m.thoughts) && m.thoughts.length) {
    const words = m.thoughts.map((t) => [t.subject, t.description].filter((s) => typeof s === "string").join(": ")).join("\n\n");
    out.push(details("thinking", "Thinking", el("pre", null, words)));
  }
  const shown = m.type === "user" && m.displayContent !== undefined ? m.displayContent : m.content;
  out.push(...parts(shown, onOpen, view));
  if (m.type === "user" && m.displayContent !== undefined && Array.isArray(m.content)) {
    for (const part of m.content) if (part && part.inlineData) out.push(inline(part.inlineData, onOpen));
  }
  let index = 0;
  for (const call of Array.isArray(m.toolCalls) ? m.toolCalls : []) {
    if (!call) continue;
    const glance = view && Array.isArray(view.tools) ? view.tools[index] : null;
    index += 1;
    const texts = [];
    const photos = [];
    for (const part of Array.isArray(call.result) ? call.result : []) {
      if (!part) continue;
      if (part.functionResponse) {
        texts.push(responseText(part.functionResponse.response));
        for (const inner of Array.isArray(part.functionResponse.parts) ? part.functionResponse.parts : []) {
          if (inner && inner.inlineData) photos.push(inline(inner.inlineData, onOpen));
        }
      } else if (part.inlineData) {
        photos.push(inline(part.inlineData, onOpen));
      }
    }
    out.push(toolCall(glance, call.displayName || call.name, call.args ?? {}));
    if (texts.length || photos.length || call.status === "error") {
      out.push(toolResult(texts.join("\n"), { error: call.status === "error", extra: photos }));
    }
  }
  return out;
}

const WHO = { user: "You", gemini: "Gemini", info: "Info", error: "Error", warning: "Warning" };

/** Lays the history entry `e` out into `item`, or returns null for bookkeeping records. */
export function entry(e, item, onOpen) {
  const line = e.entry;
  const kind = e.type;
  if (kind === "rewind") {
    item.classList.add("note");
    item.append(el("span", "meta-text", "Rewound: the messages just before this were undone (the index keeps them, hidden)."));
    return item;
  }
  if (kind === "checkpoint") {
    const messages = (line.$set && Array.isArray(line.$set.messages) ? line.$set.messages : []).filter((m) => m && typeof m === "object");
    item.classList.add("assistant");
    const inner = messages.map((m) => el("div", "checkpoint-message", el("div", "byline", WHO[m.type] || m.type || "?"), ...message(m, onOpen)));
    item.append(el("div", "bubble", details("tool", `Checkpoint: the conversation as ${messages.length} messages`, ...inner)), el("div", "byline", "Gemini CLI ", time(line.$set && line.$set.lastUpdated)));
    return item;
  }
  if (typeof line.id !== "string" || !(kind in WHO)) return null;
  const content = message(line, onOpen, e.view);
  if (content.length === 0) return null;
  const toolResponse = kind === "user" && Array.isArray(line.content) && line.content.some((p) => p && p.functionResponse);
  item.classList.add(kind === "user" && !toolResponse ? "user" : kind === "gemini" ? "assistant" : "note");
  item.append(el("div", "bubble", ...content), el("div", "byline", toolResponse ? "Tool response" : WHO[kind], " ", time(e.timestamp)));
  return item;
}
