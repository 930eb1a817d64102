// The overview at `/` (/?since=&until=&agent=&project=): the figures of /api/stats in the browser's
// time zone (whole hours): totals, sessions, messages, tokens and cost per day, a heatmap of weekday
// by hour, activity by hour, the top projects, agents and models, tool use with failure rates,
// response times per model, recent edits, and the longest and costliest sessions. Live: loaded again
// (at most every two seconds) when lines arrive or a session is forgotten. Every string from the
// server goes in as text; charts are chart.js's plain SVG. With nothing indexed, status.js's empty
// state (the roots looked in, and how to add one). On a team's hub (serve --postgres), the figures
// of every host, each session with its host.
import { get, query } from "./api.js";
import { barChart, heatmap } from "./chart.js";
import { el } from "./dom.js";
import { link } from "./page.js";
import { known } from "./server.js";
import { noSessions } from "./status.js";
import { cost, filterForm, tokens, usd } from "./usage.js";

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/** The browser's offset from UTC, in whole hours (as /api/stats takes it). */
export function tzHours() {
  return Math.max(-12, Math.min(14, Math.round(-new Date().getTimezoneOffset() / 60)));
}

/** `n` compactly: 1.2k, 3.4M. */
function compact(n) {
  return Number(n || 0).toLocaleString("en-US", { notation: "compact", maximumFractionDigits: 1 });
}

/** A count on a chart's axis: a whole number (an axis up to 1 session has no half a session). */
function count(v) {
  if (Number.isInteger(v)) return compact(v);
  return v < 10 ? "" : compact(Math.round(v));
}

function percent(x) {
  return `${(100 * (x || 0)).toFixed(1)}%`;
}

/** A table with a caption, a head and rows of cells (strings or nodes; `num` cells right-aligned). */
function table(caption, head, rows, nums = []) {
  const th = el("tr", null, ...head.map((h, i) => el("th", nums.includes(i) ? "num" : null, h)));
  const body = rows.map((cells) => el("tr", null, ...cells.map((c, i) => el("td", nums.includes(i) ? "num" : null, c))));
  if (!rows.length) body.push(el("tr", null, el("td", "empty", "None in these dates.")));
  if (!rows.length) body[0].firstChild.colSpan = head.length;
  return el("table", "usage-table overview-table", el("caption", null, caption), el("thead", null, th), el("tbody", null, ...body));
}

/** A session's link; on a team's hub, with the host whose session it is. */
function sessionLink(s) {
  const a = link(`/sessions/${encodeURIComponent(s.sessionId)}`, s.title || s.sessionId);
  return s.host ? el("span", null, a, el("span", "meta-text", ` on ${s.host}`)) : a;
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
    this.form = filterForm(this.filters, "/", { navigate, projects, fillAgents });
    this.body = el("div", "overview-body", el("p", "status", "Loading…"));
    this.section = el("section", "usage overview", el("h1", "view-title", "Overview"), this.form, this.body);
    main.append(this.section);
    this.timer = null;
    this.closed = false;
    this.last = 0;
    // The charts are drawn at the width they are shown at: again when it changes.
    this.resized = () => {
      clearTimeout(this.redraw);
      this.redraw = setTimeout(() => {
        if (!this.closed && this.stats) this.render(this.stats);
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

  /** The /api/stats query of the page's filters. */
  url() {
    const f = { tz: String(tzHours()) };
    for (const [k, v] of Object.entries(this.filters)) if (v) f[k] = v;
    return `/api/stats${query(f)}`;
  }

  async load() {
    this.last = Date.now();
    await known;
    try {
      const stats = await this.call(() => get(this.url()));
      if (this.closed) return;
      this.stats = stats;
      // Nothing indexed at all (not a filter that matches nothing): the roots looked in, and how to add one.
      if (stats.totals.sessions === 0 && !Object.values(this.filters).some(Boolean)) {
        this.body.replaceChildren(noSessions());
        return;
      }
      this.render(stats);
    } catch (e) {
      if (this.closed) return;
      this.body.replaceChildren(el("p", "status error", `The overview could not be loaded: ${e.message}`));
    }
  }

  render(s) {
    // Drawn at the width they are shown at.
    const width = Math.min(760, (this.section.clientWidth || 640) - 4);
    const t = s.totals;
    const card = (name, value, label, detail) => {
      const box = el("div", "stat-card", el("dt", null, label), el("dd", "stat-value", value), detail ? el("dd", "meta-text", detail) : null);
      box.dataset.stat = name;
      return box;
    };
    const cards = el(
      "dl",
      "stat-cards",
      card("sessions", tokens(t.sessions), "Sessions"),
      card("messages", tokens(t.messages), "Messages", `${tokens(t.prompts)} prompts`),
      card("tokens", tokens(t.tokens), "Tokens", `API responses: ${tokens(t.responses)}`),
      card("cost", cost(t), "Cost"),
      card("tools", tokens(t.toolCalls), "Tool calls", `${percent(t.toolCalls ? t.toolFailures / t.toolCalls : 0)} failed`),
    );
    const days = s.days;
    const labels = days.map((d) => d.day);
    const short = (d) => d.slice(5);
    const perDay = (title, key, format) =>
      el(
        "figure",
        "usage-figure",
        barChart({ title: `${title} per day`, labels, values: days.map((d) => d[key]), format, short, width }),
        el("figcaption", null, `${title} per day (UTC${s.filter.tzHours >= 0 ? "+" : ""}${s.filter.tzHours})`),
      );
    const hours = [...Array(24).keys()].map((h) => String(h).padStart(2, "0"));
    const models = s.models.map((m) => [m.name || "(no model)", tokens(m.responses), compact(m.tokens), cost(m)]);
    const top = (list) => list.map((p) => [p.name || "(none)", tokens(p.sessions), tokens(p.messages), compact(p.tokens), cost(p)]);
    const secs = (v) => (v == null ? "longer" : `≤ ${v} s`);
    this.body.replaceChildren(
      cards,
      el("div", "overview-charts",
        perDay("Sessions", "sessions", count),
        perDay("Messages", "messages", count),
        perDay("Tokens", "tokens", count),
        perDay("Cost", "cost", usd),
      ),
      el(
        "figure",
        "usage-figure",
        heatmap({ title: "Messages by weekday and hour", rows: WEEKDAYS, columns: hours, counts: s.heatmap, width }),
        el("figcaption", null, "Messages by weekday and hour"),
      ),
      el(
        "figure",
        "usage-figure",
        barChart({ title: "Messages by hour of the day", labels: hours, values: s.hours, format: count, width }),
        el("figcaption", null, "Messages by hour of the day"),
      ),
      table("Top projects", ["Project", "Sessions", "Messages", "Tokens", "Cost"], top(s.projects), [1, 2, 3, 4]),
      table("Agents", ["Agent", "Sessions", "Messages", "Tokens", "Cost"], top(s.agents), [1, 2, 3, 4]),
      table("Top models", ["Model", "Responses", "Tokens", "Cost"], models, [1, 2, 3]),
      table(
        "Tool use",
        ["Tool", "Calls", "Failed", "Failure rate"],
        s.tools.map((x) => [x.tool, tokens(x.calls), tokens(x.failures), percent(x.failureRate)]),
        [1, 2, 3],
      ),
      table(
        "Response time",
        ["Model", "Responses", "Median", "90%", "99%"],
        s.responseTimes.map((r) => [r.model || "(unknown)", tokens(r.responses), secs(r.p50), secs(r.p90), secs(r.p99)]),
        [1, 2, 3, 4],
      ),
      table(
        "Recent edits",
        ["File", "When", "Change", "Session"],
        s.recentEdits.map((e) => [
          el("code", null, e.path),
          e.timestamp.slice(0, 16).replace("T", " "),
          `+${e.added} −${e.removed}`,
          sessionLink(e),
        ]),
      ),
      table(
        "Longest sessions",
        ["Session", "Agent", "Messages", "Cost"],
        s.longestSessions.map((x) => [sessionLink(x), x.agent, tokens(x.messages), cost(x)]),
        [2, 3],
      ),
      table(
        "Costliest sessions",
        ["Session", "Agent", "Tokens", "Cost"],
        s.costliestSessions.map((x) => [sessionLink(x), x.agent, compact(x.tokens), cost(x)]),
        [2, 3],
      ),
    );
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
