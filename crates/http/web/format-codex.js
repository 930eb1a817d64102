// Codex CLI's rollouts, as the viewer lays a line ({timestamp, type, payload}) out. (What a person
// typed, for reconcile, is the server's: each entry's `typed`.)
// The UI events that repeat a conversation item, and a fork's copies of its parent's lines, never
// reach the viewer: the index hides them.
import { el, failed, mediaUrl, photo, text, time, toolCall, toolResult } from "./dom.js";

export const name = "codex";

const INJECTED = ["# AGENTS.md instructions", "<environment_context>", "<user_instructions>", "<permissions instructions>", "<user_shell_command>", "<turn_aborted>"];

function isImageWrapper(t) {
  const s = t.trim();
  return (s.startsWith("<image") && s.endsWith(">") && !s.includes("\n")) || s === "</image>";
}

function isInjected(t) {
  const s = t.trimStart();
  return INJECTED.some((p) => s.startsWith(p)) || isImageWrapper(s);
}

/** What the person wrote in a block the IDE extension framed, else the block. */
function ownWords(t) {
  const request = "## My request for Codex:";
  if (!t.trimStart().startsWith("# Context from my IDE setup")) return t;
  const at = t.indexOf(request);
  return at < 0 ? t : t.slice(at + request.length).trim();
}

function image(block, onOpen) {
  const src = !block.failed && mediaUrl(block.url);
  return src ? photo(src, block.mimeType ? `photo (${block.mimeType})` : "photo", onOpen) : failed();
}

/** Message content or tool output items: text and photos. */
function items(content, onOpen, { user = false, view = null } = {}) {
  if (typeof content === "string") return content.trim() ? [text(content, view)] : [];
  if (!Array.isArray(content)) return [];
  const out = [];
  for (const b of content) {
    if (!b || typeof b !== "object") continue;
    if ((b.type === "input_text" || b.type === "output_text" || b.type === "text") && typeof b.text === "string") {
      if (user && isInjected(b.text)) continue;
      out.push(text(user ? ownWords(b.text) : b.text, view));
    } else if (b.type === "input_image" || b.type === "image") {
      out.push(image(b, onOpen));
    }
  }
  return out;
}

function pretty(value) {
  if (typeof value !== "string") return JSON.stringify(value, null, 2);
  try {
    return JSON.stringify(JSON.parse(value), null, 2);
  } catch {
    return value;
  }
}

/** The entry's one tool call at a glance, from its view. */
function glance(e) {
  return e.view && Array.isArray(e.view.tools) ? e.view.tools[0] : null;
}

/** A call's arguments: JSON text as the value it spells, else the text. */
function parsed(input) {
  if (typeof input !== "string") return input;
  try {
    return JSON.parse(input);
  } catch {
    return input;
  }
}

function details(className, summary, ...body) {
  return el("details", className, el("summary", null, summary), ...body);
}

function note(item, words) {
  item.classList.add("note");
  item.append(el("span", "meta-text", words));
  return item;
}

function bubble(item, kind, who, content, timestamp) {
  item.classList.add(kind);
  item.append(el("div", "bubble", ...content), el("div", "byline", who, " ", time(timestamp)));
  return item;
}

/** Lays the history entry `e` out into `item`, or returns null for bookkeeping lines. */
export function entry(e, item, onOpen) {
  const line = e.entry;
  const p = line.payload && typeof line.payload === "object" ? line.payload : {};
  switch (line.type) {
    case "session_meta": {
      const words = [`Codex ${p.cli_version || ""}`.trim(), p.cwd, p.git && p.git.branch ? `branch ${p.git.branch}` : null].filter(Boolean).join(" · ");
      return note(item, p.forked_from_id ? `${words} · forked from ${p.forked_from_id}` : words);
    }
    case "compacted":
      return note(item, "Context compacted: the conversation before this point was summarised.");
    case "event_msg":
      if (p.type === "turn_aborted") return note(item, "Turn interrupted.");
      if (p.type === "mcp_tool_call_end" && p.result && p.result.Ok) {
        const body = items(p.result.Ok.content, onOpen);
        return body.length ? bubble(item, "assistant", "Tool result", [details("tool", "MCP result", ...body)], line.timestamp) : null;
      }
      return null;
    case "response_item":
      break;
    default:
      return null;
  }
  switch (p.type) {
    case "message": {
      if (p.role === "user") {
        const content = items(p.content, onOpen, { user: true, view: e.view });
        return content.length ? bubble(item, "user", "You", content, line.timestamp) : null;
      }
      if (p.role === "assistant") {
        const content = items(p.content, onOpen, { view: e.view });
        return content.length ? bubble(item, "assistant", "Codex", content, line.timestamp) : null;
      }
      return null;
    }
    case "reasoning": {
      const summary = (Array.isArray(p.summary) ? p.summary : []).map((s) => s && s.text).filter((t) => typeof t === "string");
      if (summary.length === 0) return null;
      return bubble(item, "assistant", "Codex", [details("thinking", "Thinking", el("pre", null, summary.join("\n\n")))], line.timestamp);
    }
    case "function_call":
    case "custom_tool_call": {
      const input = p.type === "function_call" ? p.arguments : p.input;
      return bubble(item, "assistant", "Codex", [toolCall(glance(e), p.name, parsed(input))], line.timestamp);
    }
    case "local_shell_call": {
      const command = p.action && Array.isArray(p.action.command) ? p.action.command.join(" ") : "";
      return bubble(item, "assistant", "Codex", [toolCall(glance(e), "shell", command)], line.timestamp);
    }
    case "function_call_output":
    case "custom_tool_call_output": {
      const output = p.output && typeof p.output === "object" && !Array.isArray(p.output) ? p.output.content : p.output;
      const photos = Array.isArray(output) ? output.filter((b) => b && (b.type === "input_image" || b.type === "image")).map((b) => image(b, onOpen)) : [];
      const words = typeof output === "string" ? output : (Array.isArray(output) ? output : []).filter((b) => b && typeof b.text === "string").map((b) => b.text).join("\n");
      const failedRun = p.output && typeof p.output === "object" && p.output.success === false;
      const box = toolResult(words, { error: failedRun, label: photos.length ? "Result (with a photo)" : "Result", extra: photos });
      return bubble(item, "assistant", "Tool result", [box], line.timestamp);
    }
    case "web_search_call":
      return note(item, `Web search: ${(p.action && p.action.query) || ""}`);
    default:
      return null;
  }
}
