// Usage: the ledger's tokens and cost (/api/usage), as a page (totals, cost per day as a chart, the
// split by model, project and agent, with filters; with no usage, a line that says so) and as a
// session header's one line. The chart is chart.js's plain SVG; every string from the server goes in
// as text.
import { get, query } from "./api.js";
import { barChart } from "./chart.js";
import { el } from "./dom.js";

/** The filter bar of the Usage and Overview pages: dates, agent and project as `filters` has them
 * (a project the list does not name still shows); Apply goes to `path` with the ones filled in. */
export function filterForm(filters, path, { navigate, projects, fillAgents }) {
  const input = (name, labelText) => {
    const i = el("input");
    i.type = "date";
    i.name = name;
    i.value = filters[name];
    return el("label", null, labelText, " ", i);
  };
  const option = (value, text) => {
    const o = el("option", null, text);
    o.value = value;
    return o;
  };
  const agent = el("select");
  agent.name = "agent";
  agent.append(option("", "All agents"));
  fillAgents(agent, filters.agent);
  const project = el("select");
  project.name = "project";
  project.append(option("", "All projects"));
  for (const p of projects()) project.append(option(p, p));
  if (filters.project && !projects().includes(filters.project)) project.append(option(filters.project, filters.project));
  project.value = filters.project;
  const apply = el("button", null, "Apply");
  apply.type = "submit";
  // The overview's range preset (`range`), kept through Apply unless dates are given.
  const range = el("input");
  range.type = "hidden";
  range.name = "range";
  range.value = filters.range || "";
  const form = el(
    "form",
    "usage-filters",
    input("since", "From"),
    input("until", "To"),
    el("label", null, "Agent ", agent),
    el("label", "wide", "Project ", project),
    filters.range ? range : null,
    apply,
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const data = new FormData(form);
    const next = {};
    for (const key of ["since", "until", "agent", "project"]) if (data.get(key)) next[key] = data.get(key);
    if (data.get("range") && !next.since && !next.until) next.range = data.get("range");
    navigate(`${path}${query(next)}`);
  });
  return form;
}

/** `n` with thousands separators. */
export function tokens(n) {
  return Number(n || 0).toLocaleString("en-US");
}

/**
 * A sum in US dollars, the viewer's one way of writing money: cents from a dollar up ($12.34,
 * $1,234.50), two significant digits below ($0.45, $0.0031, so that a chart's axis never reads
 * $0.00 twice), and $0 for nothing.
 */
export function usd(v) {
  const n = Number(v || 0);
  if (n === 0) return "$0";
  const small = Number(n.toPrecision(2));
  if (Math.abs(small) < 1) return `$${small.toLocaleString("en-US", { maximumSignificantDigits: 2 })}`;
  return `$${n.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** A cost in USD, or "unpriced" when no response of it has a price. */
export function cost(row) {
  if (row.responses > 0 && row.unpricedResponses === row.responses) return "unpriced";
  return row.unpricedResponses ? `${usd(row.cost)} + ${row.unpricedResponses} unpriced` : usd(row.cost);
}

/** One line for a session's header: its responses, tokens and cost; null when it has none. */
export async function sessionLine(call, sessionId) {
  const report = await call(() => get(`/api/usage${query({ by: "model", session: sessionId })}`));
  const t = report.total;
  if (!t.responses) return null;
  const models = report.rows.map((r) => r.key).filter(Boolean).join(", ");
  return `${tokens(t.totalTokens)} tokens (${tokens(t.inputTokens)} in, ${tokens(t.outputTokens)} out, ${tokens(
    t.cacheReadTokens,
  )} cache read, ${tokens(t.cacheWriteTokens)} cache write) · ${cost(t)} · ${t.responses} responses${models ? ` · ${models}` : ""}`;
}

/** Cost per day as bars, on labelled axes (dollars; each day, or every few), at `width` pixels. */
function chart(rows, width) {
  if (!rows.length) return el("p", "status", "No responses in these dates.");
  return barChart({
    title: "Cost per day",
    labels: rows.map((r) => r.key),
    values: rows.map((r) => r.cost),
    format: usd,
    short: (d) => (d ? d.slice(5) : "(none)"),
    width,
    className: "usage-chart",
  });
}

function table(caption, rows, name) {
  const head = el("tr", null, ...[name, "Responses", "Input", "Output", "Cache read", "Cache write", "Cost"].map((h) => el("th", null, h)));
  const body = rows.map((r) =>
    el(
      "tr",
      null,
      el("td", null, r.key || "(none)"),
      el("td", "num", tokens(r.responses)),
      el("td", "num", tokens(r.inputTokens)),
      el("td", "num", tokens(r.outputTokens)),
      el("td", "num", tokens(r.cacheReadTokens)),
      el("td", "num", tokens(r.cacheWriteTokens)),
      el("td", "num", cost(r)),
    ),
  );
  return el("table", "usage-table", el("caption", null, caption), el("thead", null, head), el("tbody", null, ...body));
}

/** The usage page at /usage?since=&until=&agent=&project=. `fillAgents(select, value)` adds an
 * option per agent the server reads to `select`, and selects `value`. */
export class UsagePage {
  constructor(main, params, { call, navigate, projects, fillAgents }) {
    this.call = call;
    this.navigate = navigate;
    this.filters = {
      since: params.get("since") || "",
      until: params.get("until") || "",
      agent: params.get("agent") || "",
      project: params.get("project") || "",
    };
    this.form = filterForm(this.filters, "/usage", { navigate, projects, fillAgents });
    this.body = el("div", "usage-body", el("p", "status", "Loading…"));
    this.section = el("section", "usage", el("h1", "view-title", "Usage"), this.form, this.body);
    main.append(this.section);
    this.timer = null;
    this.closed = false;
    this.load();
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
  }

  async load() {
    const f = {};
    for (const [k, v] of Object.entries(this.filters)) if (v) f[k] = v;
    try {
      const [days, models, projects, agents] = await Promise.all(
        ["day", "model", "project", "agent"].map((by) => this.call(() => get(`/api/usage${query({ ...f, by })}`))),
      );
      if (this.closed) return;
      const t = days.total;
      if (!t.responses) {
        // Nothing to total: said in words, not as empty tables and a cost of nothing.
        const filtered = Object.keys(f).length > 0;
        this.body.replaceChildren(
          el("p", "status", filtered ? "No usage recorded for these filters." : "No usage recorded yet."),
          el(
            "p",
            "status",
            "Usage is read from the token counts an agent writes into its transcripts with each response. " +
              (filtered ? "Widen the dates, or choose all agents and all projects." : "None of the transcripts indexed has any."),
          ),
        );
        return;
      }
      const totals = el(
        "dl",
        "usage-totals",
        el("dt", null, "Cost"),
        el("dd", null, cost(t)),
        el("dt", null, "Tokens"),
        el("dd", null, tokens(t.totalTokens)),
        el("dt", null, "Responses"),
        el("dd", null, tokens(t.responses)),
        el("dt", null, "Input / output"),
        el("dd", null, `${tokens(t.inputTokens)} / ${tokens(t.outputTokens)}`),
        el("dt", null, "Cache read / write"),
        el("dd", null, `${tokens(t.cacheReadTokens)} / ${tokens(t.cacheWriteTokens)}`),
      );
      const unpriced = Object.entries(days.unpricedModels || {});
      const notes = [el("p", "meta-text", `Prices: ${days.prices.source}, taken ${days.prices.taken}.`)];
      if (unpriced.length) {
        notes.push(el("p", "meta-text", `Unpriced (no price in the table): ${unpriced.map(([m, n]) => `${m} (${n})`).join(", ")}.`));
      }
      this.body.replaceChildren(
        totals,
        el(
          "figure",
          "usage-figure",
          chart(days.rows, Math.min(760, (this.section.clientWidth || 640) - 4)),
          el("figcaption", null, "Cost per day (UTC)"),
        ),
        table("By model", models.rows, "Model"),
        table("By project", projects.rows, "Project"),
        table("By agent", agents.rows, "Agent"),
        ...notes,
      );
    } catch (e) {
      if (!this.closed) this.body.replaceChildren(el("p", "status error", `Usage could not be loaded: ${e.message}`));
    }
  }

  /** New lines may carry usage: the page is loaded again, at most once a second. */
  onEvent(event) {
    if (event.type !== "entries-appended" && event.type !== "session-forgotten") return;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.closed) this.load();
    }, 1000);
  }

  onReconnect() {
    this.load();
  }
}
