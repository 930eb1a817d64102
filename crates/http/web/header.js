// A session's header in its conversation: its title (a person's own, if they gave one) with the
// controls to rename, pin and export it, the side chains toggle, the line about it (agent, project,
// git branch, times, counts) and its tokens and cost from the usage ledger.

import { get, put, query } from "./api.js";
import * as render from "./render.js";
import { agentName, call, known } from "./server.js";
import { sidebar } from "./sidebar.js";
import { sessionLine } from "./usage.js";

/** A conversation's header, `element`: for `sessionId`, or null for a new chat (named by `setTitle` once it has one). */
export class Header {
  /** `sidechains`: whether the toggle starts checked; `onSidechains(checked)` is told when it changes. */
  constructor({ sessionId, sidechains, onSidechains }) {
    this.closed = false;
    this.title = render.el("h1", "view-title", sessionId ? "Session" : "New chat");
    const toggle = render.el("input");
    toggle.type = "checkbox";
    toggle.checked = sidechains;
    toggle.addEventListener("change", () => onSidechains(toggle.checked));
    this.usage = render.el("p", "meta-text usage-line", "");
    this.usage.hidden = true;
    // The header keeps its height while these load (a page scrolled back must not move).
    this.about = render.el("p", "meta-text about-line", "\u00a0");
    this.actions = render.el("div", "conv-actions unfilled");
    if (sessionId) {
      for (const label of ["Rename", "Pin"]) this.actions.append(render.el("button", "small", label));
    } else {
      this.about.hidden = true;
    }
    this.element = render.el(
      "header",
      "conv-head",
      render.el("div", "conv-title", this.title, this.actions),
      render.el("label", "toggle", toggle, " Side chains"),
      this.about,
      this.usage,
    );
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
    this.title.textContent = about.title || about.id;
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
      `${main} entries`,
      `${about.images} photos`,
    ]
      .filter(Boolean)
      .join(" · ");
    this.about.hidden = false;
    this.actions.classList.remove("unfilled");
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
    const exports = render.el("span", "exports", "Export: ");
    for (const [format, label] of [["html", "HTML"], ["jsonl", "JSONL"]]) {
      const a = render.el("a", "export", label);
      a.href = `/api/sessions/${encodeURIComponent(about.id)}/export${query({ format })}`;
      a.download = "";
      exports.append(a, " ");
    }
    this.actions.replaceChildren(rename, pin, exports);
  }
}
