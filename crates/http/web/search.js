// The search page: the hits of a full-text search over every session, with its filters (agent,
// project, who said it, dates) in the URL; each hit opens its session at that entry.

import { ApiError, get, query } from "./api.js";
import { $, link, navigate } from "./page.js";
import * as render from "./render.js";
import { agentName, call, fillAgents, known } from "./server.js";

/** `/search?q=&agent=&project=&role=&since=&until=`: full-text hits, each with its session's title,
 * agent, project and time; each opens its session at that entry. The filters are in the URL. */
export class Search {
  constructor(main, params) {
    const q = params.get("q") || "";
    const f = {};
    for (const key of ["agent", "project", "role", "since", "until"]) f[key] = params.get(key) || "";
    main.append(render.el("h1", "view-title", `Search: ${q}`));
    const field = (labelText, control) => render.el("label", null, labelText, " ", control);
    const select = (name, options) => {
      const s = render.el("select");
      s.name = name;
      for (const [value, label] of options) {
        const o = render.el("option", null, label);
        o.value = value;
        s.append(o);
      }
      s.value = f[name];
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
    const agentSelect = select("agent", [["", "All agents"]]);
    fillAgents(agentSelect, f.agent);
    const apply = render.el("button", null, "Filter");
    apply.type = "submit";
    const form = render.el(
      "form",
      "search-filters",
      field("Agent", agentSelect),
      field("Project", select("project", projects)),
      field("Said by", select("role", [["", "Anyone"], ["user", "You"], ["assistant", "The assistant"]])),
      field("From", date("since")),
      field("To", date("until")),
      apply,
    );
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const data = new FormData(form);
      const next = { q };
      for (const key of Object.keys(f)) if (data.get(key)) next[key] = data.get(key);
      navigate(`/search${query(next)}`);
    });
    const list = render.el("ol", "hits");
    const status = render.el("p", "status", "Searching…");
    main.append(form, status, list);
    Promise.all([call(() => get(`/api/search${query({ q, ...f, group: "none", limit: 100 })}`)), known])
      .then(([{ hits }]) => {
        status.textContent = hits.length === 1 ? "1 hit" : hits.length ? `${hits.length} hits` : "No hits.";
        for (const hit of hits) {
          const href = `/sessions/${encodeURIComponent(hit.sessionId)}${query({ cursor: hit.cursor })}`;
          const when = hit.timestamp ? hit.timestamp.slice(0, 16).replace("T", " ") : "";
          const project = hit.project ? hit.project.split("/").filter(Boolean).pop() : null;
          const meta = [agentName(hit.agent), project, hit.role === "user" ? "you" : hit.role, when].filter(Boolean).join(" · ");
          list.append(
            render.el(
              "li",
              "hit",
              link(href, render.el("span", "hit-title", hit.title || hit.sessionId), render.snippet(hit.snippet), render.el("span", "meta", meta)),
            ),
          );
        }
      })
      .catch((e) => {
        status.textContent = e instanceof ApiError ? e.message : String(e);
        status.classList.add("error");
      });
  }
}
