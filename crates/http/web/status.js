// How the server stands, from /api/status: the status page at /status (the roots and what each
// holds, the data directory, the index, the vault, the push, the engine, the version), and the help
// an empty viewer gives (the roots that were looked in, and how to add one). Every string from the
// server goes in as text.

import { get } from "./api.js";
import { el, formatBytes, many, time } from "./dom.js";
import { link } from "./page.js";
import { agentName, agentNames, call, known, onHub } from "./server.js";

/** How a root is added, for the empty states and the status page. */
const ADD_ROOT = "scrollback serve --root FORMAT:DIR";

/** A command, shown as code. */
const code = (text) => el("code", null, text);

/** One root: its agent, its directory, whether it exists, and what the index holds from it. */
function root(r) {
  let held = "does not exist";
  if (r.exists) {
    held = r.transcripts === null ? "exists" : `${many(r.transcripts, "transcript")}, ${many(r.sessions, "session")}`;
  }
  return el("li", r.exists ? "root" : "root missing", el("span", "root-agent", agentName(r.agent)), " ", el("span", "root-dir", r.dir), " ", el("span", "root-held", `(${held})`));
}

/** The line on adding a root, naming the agents the server reads (from /api/info, once known). */
function addRoot() {
  const names = agentNames();
  const format = names ? `FORMAT is an agent's name: ${names}` : "FORMAT is an agent's name";
  return el("p", null, "Add a directory with ", code(ADD_ROOT), ` (${format}; `, code("--root"), " may be given again), or try ", code("scrollback serve --demo"), ".");
}

/** What an empty viewer says: no sessions yet, the roots it looked in, and how to add one. */
export function noSessions() {
  const box = el("div", "empty-help", el("p", null, "No sessions yet."));
  known
    .then(() => {
      if (onHub()) throw new HubNote();
      return Promise.all([call(() => get("/api/status")), known]);
    })
    .then(([status]) => {
      const roots = status.roots || [];
      box.append(
        roots.length ? el("p", null, "Looked for transcripts in:") : el("p", null, "No directory of transcripts is followed."),
        el("ul", "roots", ...roots.map(root)),
        addRoot(),
        el("p", null, "The ", link("/status", "status page"), " says more."),
      );
    })
    .catch((e) => {
      if (e instanceof HubNote) box.append(el("p", null, "This server reads a team's hub, and no host has pushed to it yet: ", code("scrollback push --postgres URL"), " on a host sends its sessions."));
      else box.append(el("p", "error", `The status could not be read: ${e.message}`));
    });
  return box;
}

/** Not an error: the server reads a team's hub, which has no index status of its own. */
class HubNote extends Error {}

/** A line of the status page's list. */
function row(term, ...value) {
  return [el("dt", null, term), el("dd", null, ...value)];
}

/** A team's hub's status: its hosts, when each pushed and what its sessions hold. A hub has no
 * index, writer or vault of its own: each host's server shows those. */
function hubStatus(s) {
  const count = (n) => Number(n).toLocaleString("en-US");
  const cell = (text, cls) => el("td", cls || null, text);
  const hosts = el(
    "table",
    "usage-table hub-hosts",
    el("caption", null, "Hosts"),
    el("thead", null, el("tr", null, ...["Host", "Sessions", "Entries", "Photos", "First push (UTC)", "Last push (UTC)"].map((h) => el("th", null, h)))),
    el(
      "tbody",
      null,
      ...s.hosts.map((h) =>
        el("tr", null, cell(h.name), cell(count(h.sessions), "num"), cell(count(h.entries), "num"), cell(count(h.photos), "num"), cell(time(h.firstPushAt)), cell(time(h.lastPushAt) || "not yet ended")),
      ),
    ),
  );
  return [
    el("p", "status hub-note", "This server reads a team's hub, read-only: each host's own server shows how its index, writer, vault and push stand."),
    el(
      "dl",
      "status-list",
      ...row("Version", s.version),
      ...row("Hub schema", String(s.schemaVersion)),
      ...row("Photos held", `${many(s.blobs, "photo")}, ${formatBytes(s.blobBytes)}`),
    ),
    s.hosts.length ? hosts : el("p", null, "No host has pushed to it yet: ", code("scrollback push --postgres URL"), " on a host sends its sessions."),
  ];
}

/** The status page at /status. `openKeys()` opens the keyboard's help. */
export class StatusPage {
  constructor(main, { openKeys }) {
    this.openKeys = openKeys;
    this.body = el("div", "status-body", el("p", "status", "Loading…"));
    main.append(el("section", "status-page", el("h1", "view-title", "Status"), this.body));
    this.timer = null;
    this.closed = false;
    this.load();
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
  }

  async load() {
    await known;
    let s;
    try {
      [s] = await Promise.all([call(() => get("/api/status")), known]);
    } catch (e) {
      if (!this.closed) this.body.replaceChildren(el("p", "status error", `The status could not be read: ${e.message}`));
      return;
    }
    if (this.closed) return;
    if (s.store === "hub") {
      this.body.replaceChildren(...hubStatus(s));
      return;
    }
    const count = (n) => (n === null || n === undefined ? "unknown" : Number(n).toLocaleString("en-US"));
    const writer = s.writer.state === "failed" ? `stopped: ${s.writer.error}` : s.writer.state === "running" ? `running (${s.watcher || "no watcher"})` : "none";
    const vault = !s.vault
      ? "unknown"
      : s.vault.state === "on"
        ? `on: ${many(s.vault.links, "link")}; ${formatBytes(s.vault.onlyInVaultBytes)} of deleted transcripts only the vault holds`
        : `off: ${s.vault.off}`;
    const push = s.push
      ? [`${s.push.state} to ${s.push.hub}${s.push.lastPushAt ? `, last at ${s.push.lastPushAt}` : ""}${s.push.error ? `: ${s.push.error}` : ""}`]
      : ["none"];
    const engine = s.engine
      ? ["on: messages can be sent from a session"]
      : ["none: this server takes no message. Start it with ", code("scrollback serve --engine CMD"), " (or ", code("--demo"), ") to send from the viewer."];
    const list = el(
      "dl",
      "status-list",
      ...row("Version", s.version),
      ...row("Data directory", el("span", "path", s.dataDir)),
      ...row("Index", s.indexBytes === null ? "damaged" : `${formatBytes(s.indexBytes)}: ${many(s.sessions, "session")}, ${count(s.entries)} entries, ${many(s.photos, "photo")}, ${many(s.invalidLines, "invalid line")}`),
      ...row("Free space", s.freeBytes === null ? "unknown" : formatBytes(s.freeBytes)),
      ...row("Transcripts", s.transcripts ? `${count(s.transcripts.live)} followed, ${count(s.transcripts.gone)} gone (their history kept)` : "unknown"),
      ...row("Indexer", writer),
      ...row("Vault", vault),
      ...row("Push", ...push),
      ...row("Engine", ...engine),
      ...row("Sends pending", count(s.acceptancesPending)),
    );
    const parts = [];
    if (s.indexDamage) {
      parts.push(el("p", "banner", `The index is damaged (${s.indexDamage}): run scrollback check, then scrollback rebuild.`));
    }
    const keys = el("button", null, "Keyboard shortcuts (?)");
    keys.type = "button";
    keys.addEventListener("click", () => this.openKeys());
    parts.push(
      list,
      el("h2", null, "Transcript roots"),
      el("ul", "roots", ...(s.roots || []).map(root)),
      addRoot(),
      el("p", null, keys),
    );
    if (s.vault && s.vault.broken && s.vault.broken.length) {
      parts.splice(1, 0, el("ul", "error", ...s.vault.broken.map((b) => el("li", null, b))));
    }
    this.body.replaceChildren(...parts);
  }

  /** What the index holds changes with new lines: the page is read again, at most once a second. */
  onEvent(event) {
    if (!["entries-appended", "session-gone", "session-forgotten"].includes(event.type) || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.closed) this.load();
    }, 1000);
  }

  onReconnect() {
    this.load();
  }
}
