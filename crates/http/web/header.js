// A session's header in its conversation: one line (its title, a person's own if they gave one;
// its agent, project and time; the focused mode's toggle and the outline's button) and a details
// toggle that holds the rest: the controls to rename and
// pin it, the side chains toggle, what it is (agent, project, git branch, times, counts), its tokens
// and cost from the usage ledger, its id, the command that resumes it in its agent's CLI (with a
// copy button), and its exports (HTML, Markdown, JSONL).

import { get, put, query } from "./api.js";
import * as render from "./render.js";
import { agentName, call, known, onHub } from "./server.js";
import { sidebar } from "./sidebar.js";
import { sessionLine } from "./usage.js";

let detailsIds = 0;

/** A project's short name (render.projectName). */
const shortProject = render.projectName;

/** A timestamp to the minute: `2026-11-01 10:00`. */
function minute(t) {
  return t ? t.slice(0, 16).replace("T", " ") : null;
}

/** A conversation's header, `element`: for `sessionId`, or null for a new chat (named by `setTitle` once it has one). */
export class Header {
  /** `sidechains`: whether the toggle starts checked; `onSidechains(checked)` is told when it changes.
   * `focus`: whether the focused mode is on, `onFocus()` toggles it; `onOutline()` opens or closes
   * the outline, the element `outlineId`. */
  constructor({ sessionId, sidechains, onSidechains, focus = false, onFocus = () => {}, onOutline = () => {}, outlineId = null }) {
    this.closed = false;
    this.title = render.el("h1", "view-title", sessionId ? "Session" : "New chat");
    const toggle = render.el("input");
    toggle.type = "checkbox";
    toggle.checked = sidechains;
    toggle.addEventListener("change", () => onSidechains(toggle.checked));
    // The one line keeps its height while the rest loads (a page scrolled back must not move).
    this.meta = render.el("span", "head-meta", "");
    this.usage = render.el("p", "meta-text usage-line", "");
    this.usage.hidden = true;
    this.about = render.el("p", "meta-text about-line", "");
    this.actions = render.el("div", "conv-actions unfilled");
    if (sessionId) {
      for (const label of ["Rename", "Pin"]) this.actions.append(render.el("button", "small", label));
    }
    this.facts = render.el("dl", "facts");
    this.details = render.el(
      "div",
      "head-details",
      render.el("div", "head-controls", this.actions, render.el("label", "toggle", toggle, " Side chains")),
      this.about,
      this.usage,
      this.facts,
    );
    this.details.id = `session-details-${++detailsIds}`;
    this.details.hidden = true;
    this.toggle = render.el("button", "small details-toggle", "Details");
    this.toggle.type = "button";
    this.toggle.setAttribute("aria-expanded", "false");
    this.toggle.setAttribute("aria-controls", this.details.id);
    this.toggle.addEventListener("click", () => this.showDetails(this.details.hidden));
    this.toggle.hidden = !sessionId;
    // The focused mode: only what the person and the agent said, the rest folded to a line.
    this.focusButton = render.el("button", "small focus-toggle", "Focused");
    this.focusButton.type = "button";
    this.focusButton.title = "Only what the person and the agent said: tool calls, results and thinking folded to a line (t)";
    this.focusButton.addEventListener("click", () => onFocus());
    this.setFocus(focus);
    this.outlineButton = render.el("button", "small outline-toggle", "Outline");
    this.outlineButton.type = "button";
    this.outlineButton.title = "Every prompt of this session, to go to any turn (o)";
    if (outlineId) this.outlineButton.setAttribute("aria-controls", outlineId);
    this.outlineButton.addEventListener("click", () => onOutline());
    this.setOutline(false);
    this.focusButton.hidden = this.outlineButton.hidden = !sessionId;
    this.element = render.el(
      "header",
      "conv-head",
      render.el("div", "head-line", this.title, this.meta, this.focusButton, this.outlineButton, this.toggle),
      this.details,
    );
  }

  /** Shows the focused mode on (`on`) or off. */
  setFocus(on) {
    this.focusButton.setAttribute("aria-pressed", String(on));
  }

  /** Shows the outline open (`open`) or closed. */
  setOutline(open) {
    this.outlineButton.setAttribute("aria-expanded", String(open));
  }

  /** The outline cannot be had (the server did not answer it): no button for it. */
  noOutline() {
    this.outlineButton.hidden = true;
  }

  /** Opens (`open`) or closes the details. */
  showDetails(open) {
    this.details.hidden = !open;
    this.toggle.setAttribute("aria-expanded", String(open));
    this.element.classList.toggle("open", open);
  }

  /** The conversation closed: nothing more is shown. */
  close() {
    this.closed = true;
    clearTimeout(this.usageTimer);
  }

  /** The header's tokens and cost, from the usage ledger (again at most once a second while lines arrive). */
  showUsage(sessionId) {
    if (!sessionId || this.usageTimer) return;
    this.usageTimer = setTimeout(async () => {
      this.usageTimer = null;
      try {
        const line = await sessionLine(call, sessionId);
        if (this.closed) return;
        this.usage.textContent = line || "";
        this.usage.hidden = !line;
      } catch {
        this.usage.hidden = true;
      }
    }, this.usageShown ? 1000 : 0);
    this.usageShown = true;
  }

  /** The session's header: its title (a person's own, if they gave one), agent, project, git
   * branch, times and counts, and the controls to rename, pin and export it. */
  async setTitle(sessionId) {
    if (this.titled) return;
    this.titled = true;
    this.title.textContent = sessionId;
    try {
      const about = await call(() => get(`/api/sessions/${encodeURIComponent(sessionId)}/about`));
      await known;
      if (!this.closed) this.showAbout(about);
    } catch {
      // The header keeps the id.
    }
  }

  showAbout(about) {
    this.title.textContent = render.sessionTitle(about);
    this.title.title = about.transcriptTitle ? `The transcript's title: ${about.transcriptTitle}` : "";
    const span = (a, b) => {
      const t = (x) => (x ? x.slice(0, 16).replace("T", " ") : null);
      return a && b ? `${t(a)} – ${t(b)}` : t(a || b);
    };
    const main = about.entries - (about.sidechainEntries || 0);
    this.about.textContent = [
      agentName(about.agent),
      about.project,
      about.gitBranch ? `branch ${about.gitBranch}` : null,
      span(about.firstTimestamp, about.lastTimestamp),
      render.many(main, "entry", "entries"),
      render.many(about.images, "photo"),
    ]
      .filter(Boolean)
      .join(" · ");
    this.meta.textContent = [agentName(about.agent), shortProject(about.project), minute(about.lastTimestamp || about.firstTimestamp)].filter(Boolean).join(" · ");
    this.meta.title = this.about.textContent;
    this.showFacts(about);
    this.actions.classList.remove("unfilled");
    // A team's hub is read-only: no one's marks are changed there.
    if (onHub()) {
      this.actions.replaceChildren();
      return;
    }
    const button = (label, onClick, extra = {}) => {
      const b = render.el("button", "small", label);
      b.type = "button";
      for (const [k, v] of Object.entries(extra)) b.setAttribute(k, v);
      b.addEventListener("click", onClick);
      return b;
    };
    const mark = async (change) => {
      const updated = await call(() => put(`/api/sessions/${encodeURIComponent(about.id)}/marks`, change));
      this.showAbout({ ...about, title: updated.title || about.transcriptTitle || about.title, transcriptTitle: updated.title ? about.transcriptTitle || about.title : null, pinned: updated.pinned });
      sidebar.refreshSoon();
    };
    const rename = button("Rename", () => {
      const input = render.el("input", "rename-input");
      input.value = about.title || "";
      input.setAttribute("aria-label", "The session's title");
      input.maxLength = 200;
      const save = render.el("button", "small", "Save");
      save.type = "submit";
      const cancel = button("Cancel", () => this.showAbout(about));
      const form = render.el("form", "rename", input, save, cancel);
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        mark({ title: input.value.trim() || null }).catch((err) => alert(err.message));
      });
      this.actions.replaceChildren(form);
      input.focus();
      input.select();
    });
    const pin = button(about.pinned ? "Unpin" : "Pin", () => mark({ pinned: !about.pinned }).catch((err) => alert(err.message)), { "aria-pressed": String(!!about.pinned) });
    this.actions.replaceChildren(rename, pin);
  }

  /** The details' facts: the session's id, the command that resumes it, its exports, where it was
   * forked from. */
  showFacts(about) {
    const rows = [["Session", render.el("code", "session-id", about.id)]];
    if (about.host) rows.push(["Host", render.el("span", "host", about.host)]);
    if (about.resume) {
      const cmd = render.el("code", "resume", about.resume);
      const said = render.el("span", "copied meta-text", "");
      said.setAttribute("role", "status");
      const copy = render.el("button", "small copy", "Copy");
      copy.type = "button";
      copy.setAttribute("aria-label", "Copy the resume command");
      copy.addEventListener("click", async () => {
        said.textContent = (await copyText(about.resume)) ? "Copied" : "Select it and copy";
      });
      rows.push(["Resume", render.el("span", "resume-row", cmd, " ", copy, " ", said)]);
    }
    const exports = render.el("span", "exports");
    // Every format, on a team's hub too (its JSONL is the lines its hosts stored).
    const formats = [["html", "HTML"], ["markdown", "Markdown"], ["jsonl", "JSONL"]];
    for (const [format, label] of formats) {
      const a = render.el("a", "export", label);
      a.href = `/api/sessions/${encodeURIComponent(about.id)}/export${query({ format })}`;
      a.download = "";
      exports.append(a, " ");
    }
    rows.push(["Export", exports]);
    if (about.forkedFrom) {
      const a = render.el("a", null, about.forkedFrom);
      a.href = `/sessions/${encodeURIComponent(about.forkedFrom)}`;
      a.dataset.link = "";
      rows.push(["Forked from", a]);
    }
    this.facts.replaceChildren(...rows.flatMap(([k, v]) => [render.el("dt", null, k), render.el("dd", null, v)]));
  }
}

/** Puts `value` on the clipboard: true if it went. */
async function copyText(value) {
  try {
    await navigator.clipboard.writeText(value);
    return true;
  } catch {
    // No clipboard API (an insecure origin): the old way, through a selected text field.
    const field = render.el("textarea");
    field.value = value;
    field.setAttribute("readonly", "");
    field.style.position = "fixed";
    field.style.opacity = "0";
    document.body.append(field);
    field.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch {
      ok = false;
    }
    field.remove();
    return ok;
  }
}
