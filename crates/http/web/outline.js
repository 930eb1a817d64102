// Walking a long session: its outline (each prompt a line, with its time and the tool calls that
// followed it, from GET /api/sessions/{id}/outline), a turn's figures on its last answer (context
// and output tokens, how long it took), the focused mode's folds (tool calls, results and thinking
// as one line per entry) and the place a person was in a session, kept in localStorage. Transcript
// text goes in as text, never as HTML.

import { el } from "./dom.js";

/** The parts of an entry's bubble the focused mode folds. */
const FOLDED = ":scope > .tool-card, :scope > details.result, :scope > details.thinking, :scope > details.tool:not(.result):not(.call)";

/** A count and its noun: `1 tool call`, `3 tool calls`. */
function count(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * Gives `item` (a history entry's list item) its fold line: one button that stands for its tool
 * calls, results and thinking while the focused mode hides them, and shows them again (or folds
 * them back) when pressed. Made anew when a result joins its card; none where there is nothing to
 * fold. An item with nothing else is marked `tools-only` (the focused mode shows it as that line).
 */
export function fold(item) {
  const bubble = item.querySelector(":scope > .bubble");
  if (!bubble) return;
  const old = bubble.querySelector(":scope > .fold-line");
  if (old) old.remove();
  const parts = [...bubble.querySelectorAll(FOLDED)];
  item.classList.toggle("tools-only", parts.length > 0 && bubble.children.length === parts.length);
  if (!parts.length) return;
  const calls = parts.filter((p) => p.classList.contains("tool-card"));
  const names = [...new Set(calls.map((c) => (c.querySelector(".tool-name") || {}).textContent).filter(Boolean))];
  const said = [];
  if (calls.length) said.push(`${count(calls.length, "tool call", "tool calls")}${names.length ? ` (${names.slice(0, 3).join(", ")}${names.length > 3 ? ", …" : ""})` : ""}`);
  const results = parts.filter((p) => p.matches("details.result")).length;
  if (results) said.push(count(results, "result", "results"));
  if (parts.some((p) => p.matches("details.thinking"))) said.push("thinking");
  const groups = parts.filter((p) => p.matches("details.tool:not(.result):not(.call)")).length;
  if (groups) said.push(count(groups, "step", "steps"));
  const button = el("button", "fold-line", said.join(" · "));
  button.type = "button";
  button.setAttribute("aria-expanded", String(item.classList.contains("unfolded")));
  button.addEventListener("click", () => {
    const open = !item.classList.contains("unfolded");
    item.classList.toggle("unfolded", open);
    button.setAttribute("aria-expanded", String(open));
  });
  bubble.insertBefore(button, parts[0]);
}

/** Tokens in few characters: 950, 45.2k, 1.3M. */
export function tokens(n) {
  if (n < 1000) return String(n);
  if (n < 1e6) return `${(n / 1000).toFixed(1)}k`;
  return `${(n / 1e6).toFixed(1)}M`;
}

/** A span of time in seconds, as a person reads it: 42 s, 3 min 12 s, 1 h 5 min. */
export function duration(seconds) {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ""}`;
  const m = Math.floor(s / 60);
  return `${Math.floor(m / 60)} h${m % 60 ? ` ${m % 60} min` : ""}`;
}

/** How long a turn took, in seconds, from its prompt to its last answer; null where not recorded. */
function took(turn) {
  const from = Date.parse(turn.timestamp || "");
  const to = Date.parse(turn.answeredAt || "");
  return Number.isFinite(from) && Number.isFinite(to) && to >= from ? (to - from) / 1000 : null;
}

/** A turn's figures as one line: its context and output tokens and how long it took, those recorded. */
export function figures(turn) {
  const out = [];
  if (turn.contextTokens !== null && turn.contextTokens !== undefined) out.push(`context ${tokens(turn.contextTokens)} tokens`);
  if (turn.outputTokens !== null && turn.outputTokens !== undefined) out.push(`output ${tokens(turn.outputTokens)}`);
  const seconds = took(turn);
  if (seconds !== null) out.push(`turn ${duration(seconds)}`);
  return out.join(" · ");
}

/** A prompt's time to the minute (local), or its date too where it is not today's. */
function when(timestamp) {
  const t = new Date(timestamp || "");
  if (Number.isNaN(t.getTime())) return "";
  const pad = (n) => String(n).padStart(2, "0");
  return `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())} ${pad(t.getHours())}:${pad(t.getMinutes())}`;
}

let outlineIds = 0;

/**
 * The outline panel (`element`): a heading, a close button and a list of the session's prompts, each
 * a button that calls `onJump(cursor)`. A column beside the conversation on a wide screen, a drawer
 * over it on a phone (style.css). Hidden until `show(true)`.
 */
export class OutlinePanel {
  constructor({ onJump, onClose }) {
    this.onJump = onJump;
    this.list = el("ol", "outline-list");
    this.status = el("p", "meta-text outline-status", "");
    const close = el("button", "small outline-close", "Close");
    close.type = "button";
    close.setAttribute("aria-label", "Close the outline");
    close.addEventListener("click", () => onClose());
    const title = el("h2", "outline-title", "Outline");
    title.id = `outline-title-${++outlineIds}`;
    this.element = el("aside", "outline", el("div", "outline-head", title, close), this.status, this.list);
    this.element.id = `outline-${outlineIds}`;
    this.element.setAttribute("aria-labelledby", title.id);
    this.element.hidden = true;
  }

  get open() {
    return !this.element.hidden;
  }

  show(open) {
    this.element.hidden = !open;
    if (!open) this.wantsFocus = false;
  }

  /** Lays out `turns` (the outline's); `current`: the cursor of the turn to mark, if any. */
  fill(turns, current = null) {
    // The keyboard stays on the turn it was on when the list is made again (a live refresh), and
    // goes into a list that was opened before it was loaded.
    const active = document.activeElement;
    const on = this.list.contains(active) ? active.dataset.cursor : null;
    this.status.textContent = turns.length ? `${count(turns.length, "prompt", "prompts")}` : "No prompts in this session.";
    const items = turns.map((turn) => {
      const button = el(
        "button",
        "turn",
        el("span", "turn-text", turn.text || "(no text)"),
        el("span", "turn-meta", [when(turn.timestamp), count(turn.toolCalls, "tool call", "tool calls")].filter(Boolean).join(" · ")),
      );
      button.type = "button";
      button.dataset.cursor = String(turn.cursor);
      if (turn.cursor === current) button.setAttribute("aria-current", "true");
      button.addEventListener("click", () => this.onJump(turn.cursor));
      return el("li", null, button);
    });
    this.list.replaceChildren(...items);
    if (on !== null) {
      const again = this.list.querySelector(`button.turn[data-cursor="${CSS.escape(on)}"]`);
      if (again) again.focus();
      else this.focus();
    } else if (this.wantsFocus && this.open) {
      this.focus();
    }
  }

  /** Marks the turn at `cursor` as the one read (the last jumped to). */
  mark(cursor) {
    for (const b of this.list.querySelectorAll("button.turn")) {
      if (Number(b.dataset.cursor) === cursor) b.setAttribute("aria-current", "true");
      else b.removeAttribute("aria-current");
    }
  }

  /** Gives the keyboard to the marked turn, else the first; to the first turn listed, if none is yet. */
  focus() {
    const b = this.list.querySelector("button.turn[aria-current]") || this.list.querySelector("button.turn");
    this.wantsFocus = !b;
    if (b) b.focus();
  }
}

/** Where a person was in each session: the cursor of the entry at the top of their view. */
const PLACE = "scrollback-place:";

export const place = {
  get(sessionId) {
    try {
      const v = Number(localStorage.getItem(PLACE + sessionId));
      return Number.isInteger(v) && v >= 0 && localStorage.getItem(PLACE + sessionId) !== null ? v : null;
    } catch {
      return null;
    }
  },
  /** Keeps `cursor` for `sessionId`; null forgets it (the person was at the end). */
  set(sessionId, cursor) {
    try {
      if (cursor === null) localStorage.removeItem(PLACE + sessionId);
      else localStorage.setItem(PLACE + sessionId, String(cursor));
    } catch {
      // Not kept: this page only.
    }
  },
};
