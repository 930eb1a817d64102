// The search page: a full-text search over every session, its results as conversations: a card per
// session with its best hit and how many more it has (listed on demand), best first or newest first,
// with its filters (agent, project, who said it, dates) and the order in the URL, a page of sessions
// at a time. Each hit opens its session at that entry with the query, which the find bar (find.js)
// steps through. Also the lines of a hit that the command palette (palette.js) shows.

import { ApiError, get, query } from "./api.js";
import { $, link, navigate } from "./page.js";
import * as render from "./render.js";
import { agentName, call, fillAgents, known } from "./server.js";

/** The filters a search takes besides its words, as the URL and the API name them. */
export const FILTERS = ["agent", "project", "role", "since", "until"];

/** Where a hit opens: its session at its entry, with the query for the find bar. */
export function hitHref(hit, q) {
  return `/sessions/${encodeURIComponent(hit.sessionId)}${query({ cursor: hit.cursor, q })}`;
}

/** A time as the viewer writes it: `2026-11-01 08:00`. */
export function when(timestamp) {
  return timestamp ? timestamp.slice(0, 16).replace("T", " ") : null;
}

/** A project's short name (render.projectName). */
export const folder = render.projectName;

/** A hit's words: its snippet (the server's escaped HTML, matches in <mark>: render.snippet), after
 * the tool's name where it is in a tool's input or output ("Bash · …", one line). */
export function hitLine(hit) {
  const line = render.el("span", hit.in === "tool" ? "hit-line tool-hit" : "hit-line");
  if (hit.in === "tool") line.append(render.el("span", "hit-tool", hit.tool || "Tool output"), " · ");
  line.append(render.snippet(hit.snippet));
  return line;
}

/** Who said a hit (none for a tool's input or output), and when. */
function hitMeta(hit) {
  const who = hit.in === "tool" ? null : hit.role === "user" ? "you" : hit.role;
  return render.el("span", "hit-meta", [who, when(hit.timestamp)].filter(Boolean).join(" · "));
}

/** How many lists of other hits the page made: each list's id. */
let lists = 0;

/** `/search?q=&sort=&agent=&project=&role=&since=&until=` (and `limit`, sessions a page): sessions
 * with hits, each a card. */
export class Search {
  constructor(main, params) {
    const q = params.get("q") || "";
    this.q = q;
    this.closed = false;
    const f = {};
    for (const key of FILTERS) f[key] = params.get(key) || "";
    this.filters = f;
    this.sort = params.get("sort") === "recent" ? "recent" : "";
    // Sessions a page (the API's default unless the URL says).
    this.limit = /^\d{1,3}$/.test(params.get("limit") || "") ? params.get("limit") : "";
    main.append(render.el("h1", "view-title", `Search: ${q}`));
    const form = this.form(f);
    this.readAs = render.el("div", "search-read");
    this.readAs.hidden = true;
    this.list = render.el("ol", "results");
    this.status = render.el("p", "status", "Searching…");
    this.status.setAttribute("role", "status");
    this.more = render.el("button", "more-results", "More results");
    this.more.type = "button";
    this.more.hidden = true;
    this.more.addEventListener("click", () => this.load(this.next));
    main.append(render.el("section", "search", form, this.readAs, this.status, this.list, this.more));
    this.next = null;
    this.shown = 0;
    this.load(null);
  }

  close() {
    this.closed = true;
  }

  /** The filters and the order, in the URL when applied. */
  form(f) {
    const field = (labelText, control) => render.el("label", null, labelText, " ", control);
    const select = (name, options, value) => {
      const s = render.el("select");
      s.name = name;
      for (const [v, label] of options) {
        const o = render.el("option", null, label);
        o.value = v;
        s.append(o);
      }
      s.value = value;
      return s;
    };
    const date = (name) => {
      const i = render.el("input");
      i.type = "date";
      i.name = name;
      i.value = f[name];
      return i;
    };
    const projects = [["", "All projects"], ...[...$("filter-project").options].map((o) => o.value).filter(Boolean).map((p) => [p, p])];
    if (f.project && !projects.some(([p]) => p === f.project)) projects.push([f.project, f.project]);
    const agentSelect = select("agent", [["", "All agents"]], f.agent);
    fillAgents(agentSelect, f.agent);
    const sort = select("sort", [["", "Relevance"], ["recent", "Newest"]], this.sort);
    const apply = render.el("button", null, "Filter");
    apply.type = "submit";
    const form = render.el(
      "form",
      "search-filters",
      field("Sort by", sort),
      field("Agent", agentSelect),
      field("Project", select("project", projects, f.project)),
      field("Said by", select("role", [["", "Anyone"], ["user", "You"], ["assistant", "The assistant"]], f.role)),
      field("From", date("since")),
      field("To", date("until")),
      apply,
    );
    const go = () => {
      const data = new FormData(form);
      const next = { q: this.q };
      for (const key of ["sort", ...FILTERS]) if (data.get(key)) next[key] = data.get(key);
      navigate(`/search${query(next)}`);
    };
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      go();
    });
    // The order applies at once: nothing else to fill in.
    sort.addEventListener("change", go);
    return form;
  }

  /** A page of sessions from `cursor` (null: the first), appended. */
  async load(cursor) {
    this.more.disabled = true;
    try {
      const [page] = await Promise.all([
        call(() => get(`/api/search${query({ q: this.q, ...this.filters, sort: this.sort, limit: this.limit, cursor })}`)),
        known,
      ]);
      if (this.closed) return;
      if (cursor === null) this.showRead(page.query);
      for (const s of page.sessions) this.list.append(this.card(s));
      this.shown += page.sessions.length;
      this.next = page.next || null;
      this.more.hidden = !this.next;
      const n = this.shown;
      this.status.textContent = n === 0 ? "No hits." : `${render.many(n, "session")}${this.next ? " so far" : ""} with hits`;
    } catch (e) {
      if (this.closed) return;
      this.status.textContent = e instanceof ApiError ? e.message : String(e);
      this.status.classList.add("error");
    } finally {
      this.more.disabled = false;
    }
  }

  /** How the server read the query, when not as typed, and what it says of it. */
  showRead(read) {
    if (!read) return;
    const lines = [];
    if (read.readAs && read.readAs !== this.q.trim()) lines.push(render.el("p", "read-as", "Searched for: ", render.el("code", null, read.readAs)));
    for (const note of read.notes || []) lines.push(render.el("p", "search-note", note));
    this.readAs.replaceChildren(...lines);
    this.readAs.hidden = lines.length === 0;
  }

  /** One session's card: its title, agent, project and time, its best hit, and its other hits on
   * demand. */
  card(s) {
    // On a team's hub, the host whose session it is.
    const meta = [s.best && s.best.host, agentName(s.agent), folder(s.project), when(s.lastTimestamp)].filter(Boolean).join(" · ");
    const best = link(
      hitHref(s.best, this.q),
      render.el("span", "hit-title", s.pinned ? render.el("span", "pin", "📌 ") : null, render.sessionTitle(s)),
      render.el("span", "meta", meta),
      render.el("span", "hit best", hitLine(s.best), hitMeta(s.best)),
    );
    best.classList.add("card-link");
    const item = render.el("li", "result", best);
    item.dataset.session = s.sessionId;
    if (s.best && s.best.host) item.dataset.host = s.best.host;
    if (s.lastTimestamp) item.dataset.last = s.lastTimestamp;
    item.dataset.hits = String(s.hits);
    if (s.hits > 1) item.append(this.others(s));
    return item;
  }

  /** "N more hits in this session": a button that lists them, in conversation order. */
  others(s) {
    const n = s.hits - 1;
    const label = `${render.many(n, "more hit", "more hits")} in this session`;
    const button = render.el("button", "more-hits", label);
    button.type = "button";
    button.setAttribute("aria-expanded", "false");
    const list = render.el("ol", "other-hits");
    list.id = `other-hits-${++lists}`;
    list.hidden = true;
    button.setAttribute("aria-controls", list.id);
    const status = render.el("p", "status", "");
    status.hidden = true;
    let loaded = false;
    const more = render.el("button", "small more-other-hits", "More");
    more.type = "button";
    more.hidden = true;
    let next = null;
    const fetchPage = async () => {
      more.disabled = true;
      try {
        const page = await call(() =>
          get(`/api/search${query({ q: this.q, ...this.filters, session: s.sessionId, sort: "conversation", group: "none", limit: 100, cursor: next })}`),
        );
        if (this.closed) return;
        for (const hit of page.hits) {
          if (hit.cursor === s.best.cursor) continue;
          const a = link(hitHref(hit, this.q), hitLine(hit), hitMeta(hit));
          a.classList.add("hit");
          list.append(render.el("li", null, a));
        }
        next = page.next || null;
        more.hidden = !next;
        status.hidden = true;
      } catch (e) {
        status.textContent = e instanceof ApiError ? e.message : String(e);
        status.classList.add("error");
        status.hidden = false;
      } finally {
        more.disabled = false;
      }
    };
    more.addEventListener("click", fetchPage);
    button.addEventListener("click", async () => {
      const open = button.getAttribute("aria-expanded") !== "true";
      button.setAttribute("aria-expanded", String(open));
      button.textContent = open ? "Hide the other hits" : label;
      list.hidden = !open;
      if (open && !loaded) {
        loaded = true;
        await fetchPage();
      }
    });
    return render.el("div", "others", button, list, more, status);
  }
}
