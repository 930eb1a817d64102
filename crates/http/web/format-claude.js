// Claude Code's transcripts, as the viewer lays a line out. One file per format; formats.js registers
// them. (What a person typed, for reconcile, is the server's: each entry's `typed`.)
import { blocks, el, time } from "./dom.js";

export const name = "claude";

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

/**
 * Lays the history entry `e` out into the list item `item`: its bubble, byline and sub-agent link,
 * or a note. Returns the item, or null for a line a person does not read (progress, snapshots,
 * bookkeeping).
 */
export function entry(e, item, onOpen, subagentHref) {
  const line = e.entry;
  const kind = e.type || line.type;
  if (kind === "user" || kind === "assistant") {
    const message = line.message || {};
    const content = blocks(message.content, onOpen, 0, e.view);
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
    item.append(el("div", "bubble", ...blocks(line.attachment.prompt, onOpen, 0, e.view)), el("div", "byline", "You (queued) ", time(e.timestamp)));
    return item;
  }
  const note = metaText(line);
  if (note === null) return null;
  item.classList.add("note");
  item.append(el("span", "meta-text", note));
  return item;
}
