// The overview at `/` (/?range=&since=&until=&agent=&project=), a dashboard of /api/stats in the
// browser's time zone (whole hours): a range preset (7, 30 or 90 days, a year, all; by default the
// shortest of 30 days, 90 days and a year that holds the latest activity, or all where the whole
// history is shorter), cards of totals in compact numbers (the
// exact figure on hover), a calendar of the last 365 days, sessions, messages, tokens and cost per
// day, a heatmap of weekday by hour, activity by hour, the top projects, agents and models, tool use
// with failure rates, response times per model, recent edits, and the longest and costliest
// sessions: panels in a grid that uses the width, each titled above, each table its first ten rows
// and a button for the rest. Agents go by their display names (/api/info's, server.js). Live: loaded
// again (at most every two seconds) when lines arrive or a session is forgotten. Every string from
// the server goes in as text; charts are chart.js's plain SVG and a CSS grid. With nothing indexed,
// status.js's empty state. On a team's hub (serve --postgres), the figures of every host, each
// session with its host.
import { get, query } from "./api.js";
import { barChart, calendar, heatmap } from "./chart.js";
import { el } from "./dom.js";
import { link } from "./page.js";
import { agentName, known } from "./server.js";
import { noSessions } from "./status.js";
import { filterForm, usd } from "./usage.js";

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/** The range presets: the `range` of the URL, its label, and its days (none: all). */
export const RANGES = [
  ["7d", "7 days", 7],
  ["30d", "30 days", 30],
  ["90d", "90 days", 90],
  ["1y", "Year", 365],
  ["all", "All", null],
];

/** How many rows a table shows before its "more" button. */
const SHOWN = 10;

/** How many rows of each top list the page asks /api/stats for (the rest behind "more"). */
const LIMIT = 100;

/** The browser's offset from UTC, in whole hours (as /api/stats takes it). */
export function tzHours() {
  return Math.max(-12, Math.min(14, Math.round(-new Date().getTimezoneOffset() / 60)));
}

/** Today (`YYYY-MM-DD`) in the time zone `tz` hours from UTC. */
function today(tz) {
  return new Date(Date.now() + tz * 3600000).toISOString().slice(0, 10);
}

/** The day `n` days after `day` (`YYYY-MM-DD`; `n` may be negative). */
function addDays(day, n) {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

const COMPACT = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });
const COMPACT_USD = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", notation: "compact", maximumFractionDigits: 1 });

/** `n` compactly: 96.6M, 1.1K. */
function compact(n) {
  return COMPACT.format(Number(n || 0));
}

/** `n` with thousands separators. */
function exact(n) {
  return Number(n || 0).toLocaleString("en-US");
}

/** `n` compactly, its exact figure as the title (on hover). */
function number(n) {
  const span = el("span", "num-value", compact(n));
  span.title = exact(n);
  return span;
}

/** A sum in dollars: as usage.js writes it below $1,000, compactly from there ($1.2K). */
function dollars(v) {
  return Math.abs(v || 0) < 1000 ? usd(v) : COMPACT_USD.format(v);
}

/** A cost: compact dollars with the exact sum as the title, "unpriced" when no response has a price,
 * and how many are unpriced in the title. */
function cost(row) {
  const all = row.responses > 0 && row.unpricedResponses === row.responses;
  const span = el("span", "num-value", all ? "unpriced" : dollars(row.cost));
  const unpriced = row.unpricedResponses ? ` (${exact(row.unpricedResponses)} responses unpriced)` : "";
  span.title = all ? `${exact(row.responses)} responses, none priced` : `${usd(row.cost)}${unpriced}`;
  return span;
}

/** A count on a chart's axis: a whole number (an axis up to 1 session has no half a session). */
function count(v) {
  if (Number.isInteger(v)) return compact(v);
  return v < 10 ? "" : compact(Math.round(v));
}

function percent(x) {
  return `${(100 * (x || 0)).toFixed(1)}%`;
}

/** A name cut to one line (ellipsis by CSS), the whole as its title. */
function name(value) {
  const span = el("span", "cut", value);
  span.title = value;
  return span;
}

/** A path by its last part (main.rs), or its last two where `others` end in the same last part
 * (…/a/main.rs); the whole as its title. */
function shortPath(path, others = []) {
  const parts = (p) => String(p).split(/[\\/]/).filter(Boolean);
  const own = parts(path);
  const last = own[own.length - 1];
  const twin = others.some((o) => o !== path && parts(o).pop() === last);
  const shown = own.length < 2 ? String(path) : twin ? `…/${own.slice(-2).join("/")}` : last;
  const span = el("span", "cut", shown);
  span.title = path;
  return span;
}

/** A panel of the grid: a title above its content. */
function panel(title, className, ...children) {
  return el("section", `panel ${className || ""}`.trim(), el("h2", "panel-title", title), ...children);
}

/**
 * A table in a panel, its caption the title above it: a head and rows of cells (strings or nodes;
 * `nums` columns right-aligned, `names` columns cut to one line), the first ten rows and a button
 * that shows the rest; `wide`, two columns of the grid where it has them.
 */
function table(caption, head, rows, { nums = [], names = [0], wide = true } = {}) {
  const cls = (i) => (nums.includes(i) ? "num" : names.includes(i) ? "name" : null);
  const th = el("tr", null, ...head.map((h, i) => el("th", cls(i), h)));
  const body = rows.map((cells) => el("tr", null, ...cells.map((c, i) => el("td", cls(i), c))));
  if (!rows.length) body.push(el("tr", null, el("td", "empty", "None in these dates.")));
  if (!rows.length) body[0].firstChild.colSpan = head.length;
  const t = el("table", "usage-table overview-table", el("caption", null, caption), el("thead", null, th), el("tbody", null, ...body));
  const box = el("section", `panel table-panel${wide ? " span-2" : ""}`, t);
  if (rows.length > SHOWN) {
    for (const tr of body.slice(SHOWN)) tr.hidden = true;
    const more = el("button", "more", `Show all ${rows.length}`);
    more.type = "button";
    more.setAttribute("aria-expanded", "false");
    more.addEventListener("click", () => {
      const open = more.getAttribute("aria-expanded") !== "true";
      for (const tr of body.slice(SHOWN)) tr.hidden = !open;
      more.setAttribute("aria-expanded", String(open));
      more.textContent = open ? `Show the top ${SHOWN}` : `Show all ${rows.length}`;
    });
    box.append(more);
  }
  return box;
}

/** A session's link, cut to one line; on a team's hub, with the host whose session it is. */
function sessionLink(s) {
  const a = link(`/sessions/${encodeURIComponent(s.sessionId)}`, s.title || s.sessionId);
  a.title = s.host ? `${s.title || s.sessionId} on ${s.host}` : s.title || s.sessionId;
  return el("span", "cut", a, s.host ? el("span", "meta-text", ` on ${s.host}`) : null);
}

export class OverviewPage {
  constructor(main, params, { call, navigate, projects, fillAgents }) {
    this.main = main;
    this.call = call;
    this.navigate = navigate;
    this.filters = {
      since: params.get("since") || "",
      until: params.get("until") || "",
      agent: params.get("agent") || "",
      project: params.get("project") || "",
    };
    // Dates given win over a preset; no preset (or an unknown one): resolved at the first load.
    const asked = params.get("range");
    this.range = this.filters.since || this.filters.until ? null : RANGES.some(([r]) => r === asked) ? asked : "";
    this.form = filterForm({ ...this.filters, range: this.range }, "/", { navigate, projects, fillAgents });
    this.presets = el("nav", "range-presets");
    this.presets.setAttribute("aria-label", "Range");
    this.body = el("div", "overview-body", el("p", "status", "Loading…"));
    this.section = el(
      "section",
      "usage overview",
      el("div", "overview-head", el("h1", "view-title", "Overview"), this.presets),
      this.form,
      this.body,
    );
    main.append(this.section);
    this.timer = null;
    this.closed = false;
    this.last = 0;
    this.drawPresets();
    // The charts are drawn at the width they are shown at: again when it changes.
    this.resized = () => {
      clearTimeout(this.redraw);
      this.redraw = setTimeout(() => {
        if (!this.closed && this.stats) this.render(this.stats, this.year);
      }, 50);
    };
    window.addEventListener("resize", this.resized);
    this.load();
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.redraw);
    window.removeEventListener("resize", this.resized);
  }

  /** The presets as links that keep the agent and the project; the one shown is the current. */
  drawPresets() {
    const keep = { agent: this.filters.agent, project: this.filters.project };
    this.presets.replaceChildren(
      ...RANGES.map(([range, label]) => {
        const a = link(`/${query({ range, ...keep })}`, label);
        a.className = "range";
        a.dataset.range = range;
        if (range === this.range) a.setAttribute("aria-current", "true");
        return a;
      }),
    );
  }

  /** The /api/stats query of the agent and project filters, the time zone and `extra`. */
  url(extra) {
    const f = { tz: String(tzHours()), limit: String(LIMIT), agent: this.filters.agent, project: this.filters.project, ...extra };
    return `/api/stats${query(f)}`;
  }

  /** The range the overview opens on, for a history of active `days` (YYYY-MM-DD): see `load`. */
  static opening(days, tz) {
    if (!days.length) return "all";
    const sorted = [...days].sort();
    const [first, last] = [sorted[0], sorted[sorted.length - 1]];
    for (const range of ["30d", "90d", "1y"]) {
      const { since } = OverviewPage.days(range, tz);
      if (first >= since) return "all";
      if (last >= since) return range;
    }
    return "all";
  }

  /** The days of range preset `range` ending today: {since, until}, or none for all. */
  static days(range, tz) {
    const days = RANGES.find(([r]) => r === range)?.[2];
    if (!days) return {};
    const end = today(tz);
    return { since: addDays(end, 1 - days), until: end };
  }

  async load() {
    this.last = Date.now();
    await known;
    try {
      const tz = tzHours();
      const fetch = (extra) => this.call(() => get(this.url(extra)));
      let stats;
      if (this.range === null) {
        stats = await fetch({ since: this.filters.since, until: this.filters.until });
      } else if (this.range === "") {
        // No preset asked: the shortest of 30 days, 90 days and a year that holds the latest
        // activity (a history that ended two months ago opens on its last work, not on zeros),
        // or all where the whole history is shorter than that range, or older than a year.
        const all = await fetch({});
        this.range = OverviewPage.opening(all.days.map((d) => d.day), tz);
        stats = this.range === "all" ? all : await fetch(OverviewPage.days(this.range, tz));
        this.drawPresets();
      } else {
        stats = await fetch(OverviewPage.days(this.range, tz));
      }
      // The calendar: the last 365 days, whatever the range.
      const year = this.range === "1y" ? stats : await fetch(OverviewPage.days("1y", tz));
      if (this.closed) return;
      this.stats = stats;
      this.year = year;
      // Nothing indexed at all (not a filter that matches nothing): the roots looked in, and how to add one.
      if (stats.totals.sessions === 0 && year.totals.sessions === 0 && !Object.values(this.filters).some(Boolean) && this.range === "all") {
        this.body.replaceChildren(noSessions());
        return;
      }
      this.render(stats, year);
    } catch (e) {
      if (this.closed) return;
      this.body.replaceChildren(el("p", "status error", `The overview could not be loaded: ${e.message}`));
    }
  }

  render(s, year) {
    const t = s.totals;
    const card = (key, value, label, detail) => {
      const box = el("div", "stat-card", el("dt", null, label), el("dd", "stat-value", value), detail ? el("dd", "meta-text", detail) : null);
      box.dataset.stat = key;
      return box;
    };
    const unpriced = t.unpricedResponses && t.unpricedResponses < t.responses ? `${compact(t.unpricedResponses)} responses unpriced` : null;
    const cards = el(
      "dl",
      "stat-cards",
      card("sessions", number(t.sessions), "Sessions"),
      card("messages", number(t.messages), "Messages", `${compact(t.prompts)} prompts`),
      card("tokens", number(t.tokens), "Tokens", `${compact(t.responses)} responses`),
      card("cost", cost(t), "Cost", unpriced),
      card("tools", number(t.toolCalls), "Tool calls", `${percent(t.toolCalls ? t.toolFailures / t.toolCalls : 0)} failed`),
    );
    // Charts are drawn once their panels are in place, at the width they are shown at.
    const draws = [];
    const chart = (title, className, draw) => {
      const box = panel(title, `chart-panel ${className || ""}`);
      draws.push([box, draw]);
      return box;
    };
    const days = s.days;
    const labels = days.map((d) => d.day);
    const short = (d) => d.slice(5);
    const zone = `UTC${s.filter.tzHours >= 0 ? "+" : ""}${s.filter.tzHours}`;
    const perDay = (title, key, format) =>
      chart(`${title} per day`, null, (width) => barChart({ title: `${title} per day (${zone})`, labels, values: days.map((d) => d[key]), format, short, width }));
    const hours = [...Array(24).keys()].map((h) => String(h).padStart(2, "0"));
    const top = (list, cell) => list.map((p) => [cell(p.name), number(p.sessions), number(p.messages), number(p.tokens), cost(p)]);
    const secs = (v) => (v == null ? "longer" : `≤ ${v} s`);
    const when = (ts) => {
      const span = el("span", null, ts.slice(5, 16).replace("T", " "));
      span.title = ts;
      return span;
    };
    const yearDays = year.days;
    const active = yearDays.filter((d) => d.messages > 0).length;
    const yearMessages = yearDays.reduce((sum, d) => sum + d.messages, 0);
    this.body.replaceChildren(
      cards,
      panel(
        "The last 365 days",
        "calendar-panel wide",
        calendar({
          days: yearDays.map((d) => ({ day: d.day, count: d.messages })),
          label: `Messages per day over the last 365 days: ${exact(yearMessages)} messages on ${exact(active)} days`,
          unit: "messages",
        }),
      ),
      perDay("Messages", "messages", count),
      perDay("Sessions", "sessions", count),
      perDay("Tokens", "tokens", count),
      perDay("Cost", "cost", usd),
      chart("Messages by weekday and hour", null, (width) => heatmap({ title: "Messages by weekday and hour", rows: WEEKDAYS, columns: hours, counts: s.heatmap, width })),
      chart("Messages by hour of the day", null, (width) => barChart({ title: "Messages by hour of the day", labels: hours, values: s.hours, format: count, width })),
      table("Agents", ["Agent", "Sessions", "Msgs", "Tokens", "Cost"], top(s.agents, (n) => name(n ? agentName(n) : "(none)")), { nums: [1, 2, 3, 4], wide: false }),
      table("Top projects", ["Project", "Sessions", "Msgs", "Tokens", "Cost"], top(s.projects, (n) => (n ? shortPath(n, s.projects.map((p) => p.name || "")) : name("(none)"))), { nums: [1, 2, 3, 4] }),
      table("Top models", ["Model", "Responses", "Tokens", "Cost"], s.models.map((m) => [name(m.name || "(no model)"), number(m.responses), number(m.tokens), cost(m)]), {
        nums: [1, 2, 3],
      }),
      table("Tool use", ["Tool", "Calls", "Failed", "Rate"], s.tools.map((x) => [name(x.tool), number(x.calls), number(x.failures), percent(x.failureRate)]), {
        nums: [1, 2, 3],
        wide: false,
      }),
      table(
        "Response time",
        ["Model", "Count", "Median", "90%", "99%"],
        s.responseTimes.map((r) => [name(r.model || "(unknown)"), number(r.responses), secs(r.p50), secs(r.p90), secs(r.p99)]),
        { nums: [1, 2, 3, 4] },
      ),
      table(
        "Recent edits",
        ["File", "When", "Lines", "Session"],
        s.recentEdits.map((e) => [shortPath(e.path), when(e.timestamp), `+${e.added} −${e.removed}`, sessionLink(e)]),
        { nums: [2], names: [0, 3] },
      ),
      table(
        "Longest sessions",
        ["Session", "Agent", "Msgs", "Cost"],
        s.longestSessions.map((x) => [sessionLink(x), agentName(x.agent), number(x.messages), cost(x)]),
        { nums: [2, 3] },
      ),
      table(
        "Costliest sessions",
        ["Session", "Agent", "Tokens", "Cost"],
        s.costliestSessions.map((x) => [sessionLink(x), agentName(x.agent), number(x.tokens), cost(x)]),
        { nums: [2, 3] },
      ),
    );
    for (const [box, draw] of draws) {
      const style = getComputedStyle(box);
      const inner = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      box.append(draw(Math.max(200, Math.floor(inner || 600))));
    }
  }

  /** Lines arrived, or a session was forgotten: loaded again, at most every two seconds. */
  onEvent(event) {
    if (event.type !== "entries-appended" && event.type !== "session-forgotten" && event.type !== "session-gone") return;
    if (this.timer) return;
    const wait = Math.max(0, 2000 - (Date.now() - this.last));
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.closed) this.load();
    }, wait);
  }

  onReconnect() {
    this.load();
  }
}
