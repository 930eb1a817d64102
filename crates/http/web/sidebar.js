// The sessions list in the sidebar: the pinned first, then a page at a time of the rest, found by
// title or text, project and agent, the session on screen marked, reloaded soon after live events;
// and the sidebar's toggle on a narrow screen. app.js sets `sidebar.ready` at start (the first load).

import { get, query } from "./api.js";
import { $, link, view } from "./page.js";
import * as render from "./render.js";
import { PAGE, agentName, call, onHub } from "./server.js";

export const sidebar = {
  next: null,
  /** The sessions listed, by id (the palette finds titles among them at once). */
  sessions: new Map(),
  projects: new Set(),
  hosts: new Set(),
  loading: false,
  refreshTimer: null,

  async load(more = false) {
    if (this.loading) return;
    this.loading = true;
    const status = $("sessions-status");
    try {
      const filters = { q: $("filter-text").value.trim(), project: $("filter-project").value, agent: $("filter-agent").value };
      if ($("filter-host").value) filters.host = $("filter-host").value;
      // The sessions a person pinned come first, once; the rest in their order. (A team's hub holds
      // no one's pins.)
      const [pins, page] = await Promise.all([
        more || filters.q || onHub() ? null : call(() => get(`/api/sessions${query({ ...filters, pinned: "true" })}`)),
        call(() => get(`/api/sessions${query({ ...filters, cursor: more ? this.next : "", limit: PAGE })}`)),
      ]);
      const list = $("sessions");
      if (!more) {
        list.replaceChildren();
        this.pinned = new Set();
        this.sessions = new Map();
      }
      for (const s of pins ? pins.sessions : []) {
        this.pinned.add(s.id);
        list.append(this.item(s));
      }
      for (const s of page.sessions) if (!this.pinned.has(s.id)) list.append(this.item(s));
      this.next = page.next;
      $("more-sessions").hidden = !page.next;
      status.hidden = list.children.length > 0;
      status.textContent = "No sessions yet.";
      this.highlight();
      return page;
    } catch (e) {
      status.hidden = false;
      status.textContent = e.message;
    } finally {
      this.loading = false;
    }
  },

  item(s) {
    this.sessions.set(s.id, s);
    if (s.project && !this.projects.has(s.project)) {
      this.projects.add(s.project);
      const option = render.el("option", null, /^[0-9a-f]{64}$/i.test(s.project) ? render.projectName(s.project) : s.project);
      option.value = s.project;
      $("filter-project").append(option);
    }
    // On a team's hub, each session's host, and a filter of them.
    if (s.host && !this.hosts.has(s.host)) {
      this.hosts.add(s.host);
      const option = render.el("option", null, s.host);
      option.value = s.host;
      $("filter-host").append(option);
      $("filter-host").hidden = false;
    }
    const title = render.el("span", "title", s.pinned ? render.el("span", "pin", "📌 ") : null, render.sessionTitle(s));
    const meta = render.el(
      "span",
      "meta",
      [s.host, agentName(s.agent), render.projectName(s.project), s.lastTimestamp ? s.lastTimestamp.slice(0, 16).replace("T", " ") : null]
        .filter(Boolean)
        .join(" · "),
    );
    const main = s.entries - (s.sidechainEntries || 0);
    const side = s.sidechainEntries ? ` (+${s.sidechainEntries} in side chains)` : "";
    const counts = render.el("span", "counts", `${render.many(main, "entry", "entries")}${side} · ${render.many(s.images, "photo")}`, s.gone ? render.el("span", "gone", "transcript gone") : null);
    const li = render.el("li", null, link(`/sessions/${encodeURIComponent(s.id)}`, title, meta, counts));
    li.dataset.session = s.id;
    if (s.host) li.dataset.host = s.host;
    if (s.agent) li.dataset.agent = s.agent;
    if (s.pinned) li.classList.add("pinned");
    return li;
  },

  /** Marks the session on screen, and brings it into the list's view once each time another opens
   * (not at each reload, which would undo the person's scrolling). */
  highlight() {
    const current = view && view.sessionId;
    for (const li of $("sessions").children) {
      li.classList.toggle("current", li.dataset.session === current);
      if (li.dataset.session === current && this.scrolledTo !== current) {
        this.scrolledTo = current;
        li.scrollIntoView({ block: "nearest" });
      }
    }
    if (!current) this.scrolledTo = null;
  },

  /** Reloads the first page soon (many events come in bursts). */
  refreshSoon() {
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => {
      if (!this.next || $("sessions").children.length <= PAGE) this.load();
    }, 400);
  },
};

let filterTimer = null;
$("filter-text").addEventListener("input", () => {
  clearTimeout(filterTimer);
  filterTimer = setTimeout(() => sidebar.load(), 250);
});
$("filter-project").addEventListener("change", () => sidebar.load());
$("filter-agent").addEventListener("change", () => sidebar.load());
$("filter-host").addEventListener("change", () => sidebar.load());
$("more-sessions").addEventListener("click", () => sidebar.load(true));
$("toggle-sidebar").addEventListener("click", () => {
  const open = document.body.classList.toggle("sidebar-open");
  $("toggle-sidebar").setAttribute("aria-expanded", String(open));
  // Hidden, the list could not bring the open session into view: it does as it opens.
  const current = open && $("sessions").querySelector("li.current");
  if (current) current.scrollIntoView({ block: "nearest" });
});
export function closeSidebar() {
  document.body.classList.remove("sidebar-open");
  $("toggle-sidebar").setAttribute("aria-expanded", "false");
}
