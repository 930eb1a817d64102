// Find in a session: a small bar over a conversation with a query, "3 / 17" and buttons to step from
// hit to hit in conversation order (`n` and `N` too, app.js's keys), each step opening the
// conversation at that entry (conversation.js's `goTo`). Opened with the query of the search hit
// the session was opened from (`?q=`), or by Ctrl-F or `f`; Esc closes it. The hits are the
// server's: /api/search in one session, in conversation order.

import { ApiError, get, query } from "./api.js";
import * as render from "./render.js";
import { call } from "./server.js";

/** The most hits of a session the bar steps through (the API's largest page). */
const MOST = 500;

/** The find bar of a conversation. `host`: `sessionId()`, `goTo(cursor, q)` (opens the
 * conversation at that entry and marks it; `q` for its URL) and `closed()` (told when the bar
 * closes). */
export class FindBar {
  constructor(host) {
    this.host = host;
    this.hits = [];
    this.at = -1;
    this.q = "";
    this.more = false;
    this.seq = 0;
    this.input = render.el("input", "find-input");
    this.input.type = "text";
    this.input.autocomplete = "off";
    this.input.spellcheck = false;
    this.input.placeholder = "Find in this session";
    this.input.setAttribute("aria-label", "Find in this session");
    this.count = render.el("span", "find-count", "");
    this.count.setAttribute("role", "status");
    const button = (label, text, onClick) => {
      const b = render.el("button", "small", text);
      b.type = "button";
      b.setAttribute("aria-label", label);
      b.title = label;
      b.addEventListener("click", onClick);
      return b;
    };
    this.prev = button("Previous hit (N)", "↑", () => this.step(-1));
    this.next = button("Next hit (n)", "↓", () => this.step(1));
    const close = button("Close (Esc)", "✕", () => this.close());
    close.classList.add("find-close");
    this.note = render.el("span", "find-note", "");
    this.element = render.el("div", "find-bar", this.input, this.count, this.prev, this.next, close, this.note);
    this.element.setAttribute("role", "search");
    this.element.setAttribute("aria-label", "Find in this session");
    this.element.hidden = true;
    this.input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") {
        e.preventDefault();
        const q = this.input.value.trim();
        if (!q) return;
        if (q !== this.q) this.search(q, null);
        else this.step(e.shiftKey ? -1 : 1);
      } else if (e.key === "Escape") {
        e.preventDefault();
        this.close();
      }
    });
  }

  get isOpen() {
    return !this.element.hidden;
  }

  /** Shows the bar; with `q`, finds it, at the hit of entry `at` when there is one (the entry the
   * conversation opened at), else at the first. */
  open(q = null, at = null) {
    this.element.hidden = false;
    if (q && q !== this.q) {
      this.input.value = q;
      this.search(q, at);
    }
  }

  /** Shows the bar and puts the keyboard in it. */
  focus() {
    this.open();
    this.input.focus();
    this.input.select();
  }

  close() {
    if (!this.isOpen) return;
    this.seq++;
    // The keyboard leaves with the bar now: a hidden input keeps it until the browser's next
    // rendering, and a key pressed before that (f, n) would be typed into it.
    if (this.element.contains(document.activeElement)) document.activeElement.blur();
    this.element.hidden = true;
    this.q = "";
    this.hits = [];
    this.at = -1;
    this.count.textContent = "";
    this.note.textContent = "";
    this.host.closed();
  }

  async search(q, at) {
    const seq = ++this.seq;
    this.q = q;
    this.hits = [];
    this.at = -1;
    this.count.textContent = "Finding…";
    this.count.classList.remove("error");
    this.note.textContent = "";
    try {
      const page = await call(() =>
        get(`/api/search${query({ q, session: this.host.sessionId(), sort: "conversation", group: "none", limit: MOST })}`),
      );
      if (seq !== this.seq) return;
      this.hits = page.hits;
      this.more = !!page.next;
      const read = page.query || {};
      const notes = [read.readAs && read.readAs !== q ? `Searched for: ${read.readAs}` : null, ...(read.notes || [])].filter(Boolean);
      this.note.textContent = notes.join(" · ");
      if (this.hits.length === 0) {
        this.count.textContent = "No hits";
        return;
      }
      const i = at === null ? -1 : this.hits.findIndex((h) => h.cursor === at);
      if (i >= 0) {
        // The conversation opened at this hit already.
        this.at = i;
        this.showCount();
      } else {
        await this.go(0);
      }
    } catch (e) {
      if (seq !== this.seq) return;
      this.count.textContent = e instanceof ApiError ? e.message : String(e);
      this.count.classList.add("error");
    }
  }

  showCount() {
    this.count.textContent = `${this.at + 1} / ${this.hits.length}${this.more ? "+" : ""}`;
  }

  /** Goes to the next hit (`dir` 1) or the one before (-1), round from the last to the first. */
  step(dir) {
    const n = this.hits.length;
    if (!this.isOpen || n === 0) return false;
    const i = this.at < 0 ? (dir > 0 ? 0 : n - 1) : (this.at + dir + n) % n;
    this.go(i);
    return true;
  }

  async go(i) {
    this.at = i;
    this.showCount();
    await this.host.goTo(this.hits[i].cursor, this.q);
  }
}
