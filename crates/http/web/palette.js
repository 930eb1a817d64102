// The command palette (Ctrl-K, Cmd-K): a modal with one box. As a person types, the sessions whose
// title holds the words come first (those the sidebar has listed at once, then the server's), then
// the text's hits, a session each, below them; the arrows move, Enter or a click opens a session (or
// a hit at its entry, with the query for the find bar), Esc closes and gives the keyboard back.
// A listbox the box points into (aria-activedescendant): the keyboard never leaves the box.

import { ApiError, get, query } from "./api.js";
import { $, navigate } from "./page.js";
import * as render from "./render.js";
import { folder, hitHref, hitLine, when } from "./search.js";
import { agentName, call } from "./server.js";
import { sidebar } from "./sidebar.js";

/** How many sessions by title, and how many by their text, the palette shows. */
const TITLES = 6;
const HITS = 8;
/** How long typing may pause before the server is asked, in ms. */
const DEBOUNCE = 150;

export const palette = {
  /** What had the keyboard before the palette opened: it gets it back. */
  opener: null,
  timer: null,
  seq: 0,
  options: [],
  at: -1,
  /** A search under way (the debounce, then the server's answer): Enter waits for it. */
  pending: null,

  get isOpen() {
    return $("palette").open;
  },

  open() {
    const dialog = $("palette");
    if (dialog.open) {
      $("palette-input").select();
      return;
    }
    this.opener = document.activeElement;
    $("palette-input").value = "";
    this.show([], [], "Type to find a session by its title or its text.");
    dialog.showModal();
    $("palette-input").focus();
  },

  close() {
    if (this.isOpen) $("palette").close();
  },

  /** The dialog closed (Esc, a choice): nothing more is shown, the keyboard goes back. */
  closed() {
    clearTimeout(this.timer);
    this.seq++;
    this.pending = null;
    const opener = this.opener;
    this.opener = null;
    if (opener && opener.isConnected && typeof opener.focus === "function") opener.focus();
  },

  typed() {
    clearTimeout(this.timer);
    const q = $("palette-input").value.trim();
    const seq = ++this.seq;
    this.pending = new Promise((resolve) => {
      this.timer = setTimeout(() => this.run(q, seq).then(resolve), DEBOUNCE);
    });
  },

  /** Finds `q`: titles among the listed sessions at once, then the server's titles and hits. */
  async run(q, seq) {
    if (!q) {
      this.show([], [], "Type to find a session by its title or its text.");
      return;
    }
    const lower = q.toLowerCase();
    const byTitle = (s) => (s.title || "").toLowerCase().includes(lower);
    const listed = [...sidebar.sessions.values()].filter(byTitle);
    this.show(listed.slice(0, TITLES), [], "Searching…");
    const [titles, hits] = await Promise.allSettled([
      call(() => get(`/api/sessions${query({ q, limit: TITLES * 2 })}`)),
      call(() => get(`/api/search${query({ q, limit: HITS })}`)),
    ]);
    if (seq !== this.seq || !this.isOpen) return;
    const found = new Map(listed.map((s) => [s.id, s]));
    if (titles.status === "fulfilled") for (const s of titles.value.sessions) if (byTitle(s) && !found.has(s.id)) found.set(s.id, s);
    const sessions = hits.status === "fulfilled" ? hits.value.sessions : [];
    let status = "";
    if (hits.status === "rejected") status = hits.reason instanceof ApiError ? hits.reason.message : String(hits.reason);
    else if (found.size === 0 && sessions.length === 0) status = "Nothing found.";
    this.show([...found.values()].slice(0, TITLES), sessions, status, q);
  },

  /** Lays out the sessions found by title, then the text's hits, each an option; keeps the one
   * chosen where it is still there. */
  show(titled, hits, status, q = "") {
    const list = $("palette-list");
    const chosen = this.options[this.at] && this.options[this.at].dataset.href;
    this.options = [];
    const option = (href, ...children) => {
      const o = render.el("div", "palette-option", ...children);
      const i = this.options.length;
      o.id = `palette-option-${i}`;
      o.setAttribute("role", "option");
      o.setAttribute("aria-selected", "false");
      o.dataset.href = href;
      // The keyboard stays in the box.
      o.addEventListener("mousedown", (e) => e.preventDefault());
      o.addEventListener("click", () => this.go(i));
      o.addEventListener("mousemove", () => this.at !== i && this.select(i));
      this.options.push(o);
      return o;
    };
    const group = (label, items) => {
      const g = render.el("div", "palette-group", render.el("div", "palette-heading", label), ...items);
      g.setAttribute("role", "group");
      g.setAttribute("aria-label", label);
      g.firstChild.setAttribute("aria-hidden", "true");
      return g;
    };
    const meta = (agent, project, time) => render.el("span", "meta", [agentName(agent), folder(project), when(time)].filter(Boolean).join(" · "));
    const groups = [];
    if (titled.length) {
      groups.push(group("Sessions", titled.map((s) =>
        option(`/sessions/${encodeURIComponent(s.id)}`, render.el("span", "palette-title", render.sessionTitle(s)), meta(s.agent, s.project, s.lastTimestamp)),
      )));
    }
    if (hits.length) {
      groups.push(group("In the text", hits.map((s) =>
        option(hitHref(s.best, q), render.el("span", "palette-title", render.sessionTitle(s)), meta(s.agent, s.project, s.lastTimestamp), hitLine(s.best)),
      )));
    }
    list.replaceChildren(...groups);
    list.hidden = this.options.length === 0;
    $("palette-input").setAttribute("aria-expanded", String(this.options.length > 0));
    $("palette-status").textContent = status;
    const again = this.options.findIndex((o) => o.dataset.href === chosen);
    this.select(again >= 0 ? again : 0);
  },

  select(i) {
    const input = $("palette-input");
    if (this.options.length === 0) {
      this.at = -1;
      input.removeAttribute("aria-activedescendant");
      return;
    }
    this.at = (i + this.options.length) % this.options.length;
    this.options.forEach((o, n) => {
      o.setAttribute("aria-selected", String(n === this.at));
      o.classList.toggle("selected", n === this.at);
    });
    const o = this.options[this.at];
    input.setAttribute("aria-activedescendant", o.id);
    o.scrollIntoView({ block: "nearest" });
  },

  /** Opens option `i`'s session (or hit). */
  go(i) {
    const o = this.options[i];
    if (!o) return;
    const href = o.dataset.href;
    this.opener = null;
    this.close();
    navigate(href);
  },

  async keydown(e) {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (this.at >= 0) this.select(this.at + (e.key === "ArrowDown" ? 1 : -1));
    } else if (e.key === "Enter") {
      e.preventDefault();
      // Typed and Enter at once: the answer first.
      if (this.pending) {
        const seq = this.seq;
        await this.pending;
        if (seq !== this.seq) return;
      }
      this.go(this.at);
    } else if (e.key === "Tab") {
      // The box is all there is to the palette: the keyboard stays in it.
      e.preventDefault();
    }
  },
};

$("palette-input").addEventListener("input", () => palette.typed());
$("palette-input").addEventListener("keydown", (e) => palette.keydown(e));
$("palette").addEventListener("close", () => palette.closed());
$("palette").addEventListener("click", (e) => {
  if (e.target.id === "palette") palette.close();
});
