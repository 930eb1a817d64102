// A conversation: a session's history, a page at a time (the newest first, older pages as it scrolls
// up, newer ones read forward when it opened at an entry), kept live from the events socket by
// catching up from a cursor; and its chat's sends (composer.js), shown at once as pending and
// retired by `reconcile` when the transcript holds them. Opened at an entry (`?cursor=`), it reads
// around it; its find bar (find.js) steps through a query's hits, opening it at each. The composer is
// shown only where the server runs an engine (else a line says why and how); a session whose entries
// are all on side chains says so, and offers them.
//
// A long session is walked: Start reads its oldest page at once (`from=start`) and pages forward as
// it scrolls down, End its newest; what is indexed meanwhile beyond the stretch on screen is left to
// the page that reaches it. The place a person was (the entry at the top of their view) is kept per
// session and opened again; the focused mode (`?focus=1`) folds tool calls, results and thinking to
// a line each; the outline lists the prompts, each a jump to its turn; a turn's figures (tokens, time)
// stand under its last answer (outline.js).

import { ApiError, get, post, query } from "./api.js";
import { Composer, noEngine } from "./composer.js";
import { FindBar } from "./find.js";
import { Header } from "./header.js";
import { OutlinePanel, figures, fold, place } from "./outline.js";
import { link, openPhoto } from "./page.js";
import { reconcile } from "./reconcile.js";
import * as render from "./render.js";
import { PAGE, call, engine, known, limits } from "./server.js";
import { sidebar } from "./sidebar.js";

/** Compares two entries' places in the conversation: `order` (`[at, file, line]`) element by
 * element, then the cursor. */
function compareOrder(a, b) {
  for (let i = 0; i < 3; i++) {
    if (a.order[i] < b.order[i]) return -1;
    if (a.order[i] > b.order[i]) return 1;
  }
  return a.cursor - b.cursor;
}

/**
 * A conversation: a session's history (newest page first, older pages as you scroll up, newer ones
 * live) and the chat's pending sends, reconciled.
 */
export class Conversation {
  /** `find`: a query to find in it at once (the search hit it was opened from had it). */
  constructor(main, { sessionId = null, chatId = null, cursor = null, sidechains = false, find = null }) {
    this.sessionId = sessionId;
    this.chatId = chatId || (sessionId && /^[A-Za-z0-9._:-]{1,120}$/.test(sessionId) ? `session-${sessionId}` : null);
    this.before = null; // pass as before for the page before what is loaded; null at the start
    this.after = null; // pass as after to catch up
    this.hasMoreAfter = false; // opened at an entry: newer pages remain to be read forward
    this.entries = new Map(); // cursor -> entry
    this.placed = []; // [{ entry, item }] of the entries on screen, in conversation order
    this.first = null; // the first and last loaded entries in conversation order
    this.last = null;
    this.pending = new Map(); // clientMessageId -> pending send
    this.sidechains = sidechains;
    this.loadingOlder = false;
    this.catchingUp = null;
    this.closed = false;
    this.generation = 0; // a page asked for before the history was laid anew is not shown
    this.asked = 0; // the entries asked for by goTo
    this.settled = false; // opened: scrolling now moves the place kept for the session
    this.focus = new URLSearchParams(location.search).get("focus") === "1";
    this.byAnswer = new Map(); // the cursor of a turn's last answer -> the outline's turn

    this.outline = new OutlinePanel({
      onJump: (cursor) => this.jumpToTurn(cursor),
      onClose: () => this.showOutline(false),
    });
    this.header = new Header({
      sessionId,
      sidechains,
      onSidechains: (checked) => {
        this.sidechains = checked;
        this.reload();
      },
      focus: this.focus,
      onFocus: () => this.toggleFocus(),
      onOutline: () => this.showOutline(!this.outline.open),
      outlineId: this.outline.element.id,
    });
    this.banner = render.el("p", "banner", "");
    this.banner.hidden = true;
    this.list = render.el("ol", "entries");
    this.pendingList = render.el("ol", "entries pending-list");
    this.status = render.el("p", "status", "");
    this.scroller = render.el("div", "scroller", this.status, this.list, this.pendingList);
    // Scrolled by the keyboard too, even where it holds nothing else that takes the focus.
    this.scroller.tabIndex = 0;
    this.scroller.setAttribute("role", "region");
    this.scroller.setAttribute("aria-label", "Conversation");
    this.scroller.addEventListener("scroll", () => this.onScroll());
    // Start and End, over the conversation's corner.
    const jump = (label, name, go) => {
      const b = render.el("button", `jump ${name}`, label);
      b.type = "button";
      b.addEventListener("click", go);
      return b;
    };
    this.walk = render.el(
      "div",
      "walk",
      jump("⤒ Start", "to-start", () => this.start()),
      jump("⤓ End", "to-end", () => this.end()),
    );
    this.walk.setAttribute("role", "group");
    this.walk.setAttribute("aria-label", "Go to the start or the end");
    this.walk.hidden = !sessionId;
    this.composer = new Composer(
      {
        chatId: this.chatId,
        sessionId: () => this.sessionId,
        pending: this.pending,
        changed: () => this.renderPending(),
        recorded: (record) => {
          if (!this.sessionId && record.sessionId) this.sessionId = record.sessionId;
          this.reconcile();
        },
        scrollToBottom: () => this.scrollToBottom(),
      },
      { limits: () => limits, call, openPhoto },
    );
    this.findBar = new FindBar({
      sessionId: () => this.sessionId,
      goTo: (at, q) => this.goTo(at, q),
      closed: () => this.keepInUrl({ q: null }),
    });
    this.section = render.el(
      "section",
      "conversation",
      this.header.element,
      this.findBar.element,
      this.banner,
      render.el("div", "conv-body", render.el("div", "scroll-wrap", this.scroller, this.walk), this.outline.element),
      this.composer.form,
    );
    this.section.classList.toggle("focus", this.focus);
    main.append(this.section);
    // No composer until the server has said it runs an engine; without one, why not instead.
    this.composer.form.hidden = true;
    known.then(() => {
      if (engine) this.composer.form.hidden = false;
      else this.composer.form.replaceWith(noEngine());
    });
    this.open(cursor, find);
  }

  close() {
    this.closed = true;
    this.header.close();
    clearTimeout(this.outlineTimer);
    clearTimeout(this.placeTimer);
  }

  /** Loads the first page (newest, or around `cursor`) and the pending sends. */
  async open(cursor, find) {
    this.header.showUsage(this.sessionId);
    try {
      if (this.chatId) {
        const boot = await call(() => get(`/api/chat/bootstrap${query({ chatId: this.chatId })}`));
        if (this.closed) return;
        for (const p of boot.pending) this.pending.set(p.clientMessageId, { ...p });
        if (!this.sessionId && boot.sessionId) this.sessionId = boot.sessionId;
        if (!cursor && boot.sessionId === this.sessionId && boot.entries.length) {
          this.show(boot, "newest");
        }
      }
      // Where the person was, unless a link names an entry.
      const kept = cursor === null && this.sessionId && this.entries.size === 0 ? place.get(this.sessionId) : null;
      let restored = false;
      if (this.sessionId && this.entries.size === 0) {
        if (cursor !== null) await this.openAround(cursor);
        else if (kept !== null) restored = await this.restore(kept);
        else await this.loadPage({}, "newest");
      }
      this.loadOutline();
      if (!this.sessionId) {
        await known;
        this.status.textContent = engine
          ? "A new chat: send a message to start it."
          : "No chat can be started here: this server runs no engine.";
      }
      this.hintSideChains();
      this.reconcile();
      this.renderPending();
      if (cursor === null && !restored) this.scrollToBottom();
      this.settled = true;
      sidebar.highlight();
      if (find && this.sessionId && !this.closed) this.findBar.open(find, cursor);
    } catch (e) {
      this.fail(e);
    }
  }

  fail(e) {
    this.status.textContent = e instanceof ApiError && e.status === 404 ? "No such session." : e.message || String(e);
    this.status.classList.add("error");
  }

  /** A session that shows nothing without its side chains, but has some: says so, and offers them
   * (a line of its own under the status line, gone once an entry is shown). */
  async hintSideChains() {
    if (this.hint) this.hint.remove();
    this.hint = null;
    if (!this.sessionId || this.sidechains || this.entries.size || this.closed) return;
    const sessionId = this.sessionId;
    const generation = this.generation;
    try {
      const page = await call(() => get(`/api/sessions/${encodeURIComponent(sessionId)}/history${query({ limit: 1, sidechains: "true" })}`));
      if (this.closed || generation !== this.generation || this.entries.size || !page.entries.length || this.hint) return;
      this.hint = render.el(
        "p",
        "status side-chain-hint",
        "Every entry of this session is on a side chain (a sub-agent's work), and side chains are hidden. ",
        link(`/sessions/${encodeURIComponent(sessionId)}${query({ sidechains: "true" })}`, "Show side chains"),
      );
      this.status.after(this.hint);
    } catch {
      // No hint: the history said what it could.
    }
  }

  historyUrl(params) {
    return `/api/sessions/${encodeURIComponent(this.sessionId)}/history${query({ limit: PAGE, sidechains: this.sidechains ? "true" : "", view: "true", ...params })}`;
  }

  async loadPage(params, where) {
    const generation = this.generation;
    const page = await call(() => get(this.historyUrl(params)));
    if (!this.closed && generation === this.generation) this.show(page, where);
    return page;
  }

  /** Opens where the person was: the page before entry `cursor` and the one from it, that entry at
   * the top of the view. False where it is no entry of the session now (the newest page instead). */
  async restore(cursor) {
    try {
      await this.loadPage({ before: cursor }, "newest");
      await this.loadPage({ from: cursor }, "forward");
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 400)) throw e;
      place.set(this.sessionId, null);
      this.clear();
      await this.loadPage({}, "newest");
      return false;
    }
    const item = this.itemNear(cursor);
    if (item) item.scrollIntoView({ block: "start" });
    return true;
  }

  /** The start of the session: its oldest page, read at once (not every page in between), newer
   * pages as it scrolls down. */
  async start() {
    if (!this.sessionId) return;
    this.keepInUrl({ cursor: null });
    if (this.before === null && this.entries.size) {
      this.scroller.scrollTop = 0;
      return;
    }
    this.asked++;
    this.clear();
    try {
      await this.loadPage({ from: "start" }, "forward");
      this.reconcile();
      this.renderPending();
      this.scroller.scrollTop = 0;
      this.remember();
    } catch (e) {
      this.fail(e);
    }
  }

  /** The end of the session: its newest page (read anew where the newest is not on screen). */
  async end() {
    if (!this.sessionId) return;
    this.keepInUrl({ cursor: null });
    if (!this.hasMoreAfter && this.entries.size) {
      this.scrollToBottom();
      return;
    }
    this.asked++;
    this.clear();
    try {
      await this.loadPage({}, "newest");
      this.reconcile();
      this.renderPending();
      this.scrollToBottom();
      this.remember();
    } catch (e) {
      this.fail(e);
    }
  }

  /** The focused mode on or off, kept in the URL; the entry at the top of the view stays there. */
  toggleFocus() {
    const top = this.topItem();
    this.focus = !this.focus;
    this.section.classList.toggle("focus", this.focus);
    this.header.setFocus(this.focus);
    this.keepInUrl({ focus: this.focus ? "1" : null });
    if (top) top.scrollIntoView({ block: "start" });
  }

  /** Opens (`open`) or closes the outline; the keyboard goes into it, and back to the conversation. */
  showOutline(open) {
    if (open === this.outline.open) return;
    this.outline.show(open);
    this.header.setOutline(open);
    if (open) {
      if (!this.turns) this.loadOutline();
      this.outline.focus();
    } else {
      this.header.outlineButton.focus();
    }
  }

  /** Opens the conversation at a turn's prompt; on a phone the outline's drawer gives way. */
  jumpToTurn(cursor) {
    this.outline.mark(cursor);
    if (window.matchMedia("(max-width: 700px)").matches) this.showOutline(false);
    this.goTo(cursor);
  }

  /** The outline and the turns' figures, from the index or a team's hub. At most once a second
   * while lines arrive. */
  loadOutline() {
    if (!this.sessionId || this.outlineTimer) return;
    this.outlineTimer = setTimeout(async () => {
      this.outlineTimer = null;
      await known;
      if (this.closed) return;
      try {
        const answer = await call(() => get(`/api/sessions/${encodeURIComponent(this.sessionId)}/outline`));
        if (this.closed) return;
        this.turns = answer.turns;
        this.byAnswer = new Map(answer.turns.filter((t) => t.answerCursor !== null).map((t) => [t.answerCursor, t]));
        this.outline.fill(answer.turns);
        this.keepingView(() => {
          for (const { entry, item } of this.placed) this.figure(entry, item);
        });
      } catch {
        this.header.noOutline();
      }
    }, this.outlineLoaded ? 1000 : 0);
    this.outlineLoaded = true;
  }

  /** Runs `change` (lines put in or taken out above what is on screen) with the view held: at the
   * end if it was at the end, else the entry a hit or link opened (or the one at the top of the
   * view) where it was. The scroller does no anchoring of its own (`overflow-anchor: none`). */
  keepingView(change) {
    const s = this.scroller;
    const atEnd = s.scrollHeight - s.scrollTop - s.clientHeight < 2;
    const anchor = this.list.querySelector(":scope > li.target") || this.topItem();
    const before = anchor ? anchor.getBoundingClientRect().top : 0;
    change();
    if (atEnd && !this.list.querySelector(":scope > li.target")) s.scrollTop = s.scrollHeight;
    else if (anchor && anchor.isConnected) s.scrollTop += anchor.getBoundingClientRect().top - before;
  }

  /** Puts the figures of the turn whose last answer `entry` is under its item (or takes old ones away). */
  figure(entry, item) {
    const old = item.querySelector(":scope > .turn-figures");
    if (old) old.remove();
    const turn = this.byAnswer.get(entry.cursor);
    const line = turn ? figures(turn) : "";
    if (line) item.append(render.el("div", "turn-figures", line));
  }

  /** The first entry at the top of the view, if any. */
  topItem() {
    const top = this.scroller.getBoundingClientRect().top;
    for (const { item } of this.placed) {
      if (!item.hidden && item.getBoundingClientRect().bottom > top + 1) return item;
    }
    return null;
  }

  /** Keeps where the person is in this session: the entry at the top of the view, or nothing at
   * the end (the session opens at its newest then, as it would). */
  remember() {
    if (!this.sessionId || !this.settled || this.closed) return;
    if (!this.hasMoreAfter && this.atBottom()) {
      place.set(this.sessionId, null);
      return;
    }
    const item = this.topItem();
    if (item) place.set(this.sessionId, Number(item.dataset.cursor));
  }

  /** A key of the conversation's own (app.js asks): true where it did something with it. */
  key(k) {
    if (!this.sessionId) return false;
    if (k === "g" || k === "Home") this.start();
    else if (k === "G" || k === "End") this.end();
    else if (k === "t") this.toggleFocus();
    else if (k === "o") this.showOutline(!this.outline.open);
    else if (k === "Escape" && this.outline.open) this.showOutline(false);
    else return false;
    return true;
  }

  /** Opens at an entry: the page before it, and it with the ones after it; marks it. Returns false
   * where the history was laid anew meanwhile (another entry was asked for); marks it only where
   * `still()` holds (no entry on screen was asked for since). */
  async openAround(cursor, still = () => true) {
    const generation = this.generation;
    await this.loadPage({ before: cursor }, "newest");
    if (generation !== this.generation) return false;
    await this.loadPage({ from: cursor }, "forward");
    if (generation !== this.generation) return false;
    if (still()) this.mark(this.itemNear(cursor));
    return true;
  }

  /** The item of entry `cursor`, or where it would be when it is not on screen (a line no one
   * reads, or a side chain's while they are hidden): the next item on screen, else the last. */
  itemNear(cursor) {
    const exact = this.list.querySelector(`:scope > li[data-cursor="${cursor}"]`);
    // A result shown in its call's card: the call's entry.
    if (exact && exact.dataset.joinedTo) return this.list.querySelector(`:scope > li[data-cursor="${exact.dataset.joinedTo}"]`) || exact;
    if (exact || this.placed.length === 0) return exact;
    const e = this.entries.get(cursor);
    const next = this.placed.find((p) => !p.item.hidden && (e ? compareOrder(p.entry, e) >= 0 : p.entry.cursor >= cursor));
    return (next || this.placed[this.placed.length - 1]).item;
  }

  /** Marks `item` as the entry looked for (the only one) and brings it into view. */
  mark(item) {
    for (const li of this.list.querySelectorAll(":scope > li.target")) li.classList.remove("target");
    if (!item) return;
    item.classList.add("target");
    item.scrollIntoView({ block: "center" });
  }

  /** Opens the conversation at entry `cursor`: where it is on screen already, else read anew around
   * it (the page before it and the one from it, older and newer ones as it scrolls); marks it, and
   * keeps it in the URL with the find bar's query `q`. */
  async goTo(cursor, q) {
    this.keepInUrl({ cursor, q });
    // The entry asked for last is the one marked, whichever read ends last.
    const asked = ++this.asked;
    if (this.entries.has(cursor) || this.list.querySelector(`:scope > li[data-cursor="${cursor}"]`)) {
      this.mark(this.itemNear(cursor));
      return;
    }
    this.clear();
    try {
      if (!(await this.openAround(cursor, () => asked === this.asked))) return;
      this.reconcile();
      this.renderPending();
    } catch (e) {
      this.fail(e);
    }
  }

  /** Puts `changes` (null: left out) in the URL's query, for a reload or a link to open here. */
  keepInUrl(changes) {
    const params = new URLSearchParams(location.search);
    for (const [k, v] of Object.entries(changes)) {
      if (v === null || v === undefined || v === "") params.delete(k);
      else params.set(k, String(v));
    }
    const search = params.toString();
    history.replaceState(history.state, "", `${location.pathname}${search ? `?${search}` : ""}`);
  }

  /** Shows the find bar with the keyboard in it (Ctrl-F, `f`): false where there is nothing to
   * find in (a chat not started). */
  find() {
    if (!this.sessionId) return false;
    this.findBar.focus();
    return true;
  }

  /** The find bar's next (1) or previous (-1) hit (`n`, `N`): false when it is not open. */
  findStep(step) {
    return this.findBar.step(step);
  }

  /** Closes the find bar (Esc): false when it was not open. */
  closeFind() {
    if (!this.findBar.isOpen) return false;
    this.findBar.close();
    return true;
  }

  /** Takes every entry off screen, and what was read of the history; pages asked for before are not
   * shown. */
  clear() {
    this.generation++;
    this.entries.clear();
    this.placed = [];
    this.list.replaceChildren();
    this.before = this.after = this.first = this.last = null;
    this.hasMoreAfter = false;
  }

  reload() {
    this.clear();
    this.loadPage({}, "newest").then(() => {
      this.hintSideChains();
      this.reconcile();
      this.renderPending();
      this.scrollToBottom();
    }, (e) => this.fail(e));
  }

  /**
   * Puts a page's entries on screen, each in its place in the conversation: `where` is "newest"
   * (the first page), "older" (a page before), "forward" (an entry and those after it) or "after"
   * (a catch-up, whose entries may belong anywhere: one outside the stretch loaded so far is left
   * to the page that reaches it).
   */
  show(page, where) {
    if (page.sessionId) this.header.setTitle(page.sessionId);
    // What is on screen stays where it is while older entries go in above it: measured from the
    // bottom before any change, put back after all of them (the status line above the list too).
    const fromBottom = this.scroller.scrollHeight - this.scroller.scrollTop;
    let fresh = page.entries.filter((e) => !this.entries.has(e.cursor));
    if (where === "after") {
      fresh = fresh.filter(
        (e) => (this.before === null || this.first === null || compareOrder(e, this.first) > 0) &&
          (!this.hasMoreAfter || this.last === null || compareOrder(e, this.last) < 0),
      );
    }
    for (const e of fresh) {
      this.entries.set(e.cursor, e);
      if (this.first === null || compareOrder(e, this.first) < 0) this.first = e;
      if (this.last === null || compareOrder(e, this.last) > 0) this.last = e;
      const item = render.entry(e, openPhoto, (agent) => this.subagentHref(agent));
      if (item) {
        this.place(e, item);
        this.join(item);
        fold(item);
        this.figure(e, item);
      }
    }
    if (where === "older" || where === "newest") this.before = page.before;
    if (where === "forward") this.hasMoreAfter = page.next !== null && page.next !== undefined;
    if (where !== "older" && page.after !== null && page.after !== undefined) {
      this.after = this.after === null ? page.after : Math.max(this.after, page.after);
    }
    this.status.textContent = this.before === null && this.entries.size ? "The start of this session." : "";
    if (this.hint && this.entries.size) {
      this.hint.remove();
      this.hint = null;
    }
    this.status.classList.remove("error");
    if (where === "older") this.scroller.scrollTop = this.scroller.scrollHeight - fromBottom;
  }

  /** Where a sub-agent's entries are read: this session with side chains, at its first entry. */
  subagentHref(agent) {
    return `/sessions/${encodeURIComponent(this.sessionId)}${query({ cursor: agent.first, sidechains: "true" })}`;
  }

  /** Puts each tool result under its call, in the call's card, wherever both are on screen: a
   * result may come on a later page or catch-up than its call, or on screen first when older pages
   * load as it scrolls up (then it waits as an entry of its own). An entry left with nothing else
   * to show is hidden, and stands for its call's entry (`itemNear`). */
  join(item) {
    for (const result of item.querySelectorAll(":scope > .bubble > details.result[data-call-id]")) {
      const card = this.list.querySelector(`.tool-card[data-call-id="${CSS.escape(result.dataset.callId)}"]`);
      if (card) this.joinResult(card, result);
    }
    for (const card of item.querySelectorAll(".tool-card[data-call-id]")) {
      const result = this.list.querySelector(`:scope > li > .bubble > details.result[data-call-id="${CSS.escape(card.dataset.callId)}"]`);
      if (result) this.joinResult(card, result);
    }
  }

  /** Moves `result` (in its entry's bubble) into the call's `card`. */
  joinResult(card, result) {
    const from = result.closest("li");
    const to = card.closest("li");
    if (!from || !to || from === to || card.querySelector(":scope > details.result")) return;
    card.append(result);
    // A sub-agent's link stays with the result that named it.
    const link = from.querySelector(":scope > a.subagent:not(.parent)");
    if (link) card.append(link);
    fold(from);
    fold(to);
    const bubble = from.querySelector(":scope > .bubble");
    if (bubble && bubble.children.length === 0) {
      from.hidden = true;
      from.classList.add("joined");
      from.dataset.joinedTo = to.dataset.cursor;
    }
  }

  /** Puts an entry's item on screen in its place in the conversation. */
  place(e, item) {
    let low = 0;
    let high = this.placed.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (compareOrder(this.placed[mid].entry, e) < 0) low = mid + 1;
      else high = mid;
    }
    const next = this.placed[low];
    this.placed.splice(low, 0, { entry: e, item });
    this.list.insertBefore(item, next ? next.item : null);
  }

  /** Moves the keyboard's place to the next (`step` 1) or previous (-1) message. */
  step(step) {
    const items = [...this.list.querySelectorAll(":scope > li.entry:not([hidden])")];
    if (!items.length) return;
    let at = items.indexOf(this.list.querySelector(":scope > li.entry.focused"));
    if (at < 0) {
      // From the first message in view.
      const top = this.scroller.getBoundingClientRect().top;
      at = items.findIndex((li) => li.getBoundingClientRect().bottom > top);
      at = step > 0 ? at - 1 : at;
    }
    const next = items[Math.max(0, Math.min(items.length - 1, at + step))];
    for (const li of items) li.classList.remove("focused");
    next.classList.add("focused");
    next.tabIndex = -1;
    next.focus({ preventScroll: true });
    next.scrollIntoView({ block: "nearest" });
  }

  onScroll() {
    clearTimeout(this.placeTimer);
    this.placeTimer = setTimeout(() => this.remember(), 250);
    if (this.scroller.scrollTop < 300 && this.before !== null && !this.loadingOlder) this.loadOlder();
    const nearBottom = this.scroller.scrollHeight - this.scroller.scrollTop - this.scroller.clientHeight < 300;
    if (nearBottom && this.hasMoreAfter && !this.loadingNewer) this.loadNewer();
  }

  async loadOlder() {
    this.loadingOlder = true;
    try {
      await this.loadPage({ before: this.before }, "older");
    } catch (e) {
      this.fail(e);
    } finally {
      this.loadingOlder = false;
    }
    // A short page may leave the top in view: keep going.
    if (this.scroller.scrollTop < 300 && this.before !== null && !this.closed) this.loadOlder();
  }

  /** Opened at an entry: reads the next stretch forward. */
  async loadNewer() {
    this.loadingNewer = true;
    try {
      await this.loadPage({ from: this.last.cursor }, "forward");
    } catch (e) {
      this.fail(e);
    } finally {
      this.loadingNewer = false;
    }
  }

  /** Fetches what was indexed since the last page, wherever it belongs. One at a time. */
  catchUp() {
    if (!this.sessionId) return Promise.resolve();
    if (this.catchingUp) {
      this.catchUpAgain = true;
      return this.catchingUp;
    }
    this.catchingUp = (async () => {
      try {
        do {
          this.catchUpAgain = false;
          const stick = this.atBottom();
          const page = await this.loadPage(this.after === null ? {} : { after: this.after }, this.after === null ? "newest" : "after");
          // A full page may have more behind it.
          if (page.entries.length >= PAGE) this.catchUpAgain = true;
          this.reconcile();
          this.renderPending();
          if (stick && page.entries.length) this.scrollToBottom();
        } while (this.catchUpAgain && !this.closed);
      } catch (e) {
        this.fail(e);
      } finally {
        this.catchingUp = null;
      }
    })();
    return this.catchingUp;
  }

  atBottom() {
    return this.scroller.scrollHeight - this.scroller.scrollTop - this.scroller.clientHeight < 80;
  }

  scrollToBottom() {
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  /** Retires every pending send the loaded entries back, and tells the server. */
  reconcile() {
    const accepted = [...this.pending.values()].filter((p) => p.acceptedAt);
    if (accepted.length === 0) return;
    const { retired } = reconcile([...this.entries.values()], accepted);
    if (retired.length === 0) return;
    for (const r of retired) this.pending.delete(r.clientMessageId);
    const ids = retired.map((r) => r.clientMessageId);
    call(() => post("/api/chat/retire", { chatId: this.chatId, clientMessageIds: ids })).catch(() => {});
  }

  renderPending() {
    const items = [...this.pending.values()].map((p) => render.pending(p, openPhoto, (id) => this.composer.retry(id)));
    this.pendingList.replaceChildren(...items);
  }

  /** Something happened on the server. */
  onEvent(event) {
    switch (event.type) {
      case "entries-appended":
        if (event.sessionId === this.sessionId) {
          if (event.replaced) this.reload();
          else this.catchUp();
          this.header.showUsage(this.sessionId);
          this.loadOutline();
        }
        break;
      case "session-gone":
        if (event.sessionId === this.sessionId) {
          this.banner.textContent = "This session's transcript was deleted; its history is kept here.";
          this.banner.hidden = false;
        }
        break;
      case "session-forgotten":
        if (event.sessionId === this.sessionId) {
          this.banner.textContent = "This session was forgotten: its history is no longer kept here.";
          this.banner.hidden = false;
        }
        break;
      case "session-bound":
        if (event.chatId === this.chatId && !this.sessionId) {
          this.sessionId = event.sessionId;
          this.status.textContent = "";
          this.catchUp();
        }
        break;
      case "chat-user-message":
        if (event.message.chatId === this.chatId && !this.pending.has(event.message.clientMessageId) && event.message.state === "pending") {
          // Sent from elsewhere (another tab), or this tab's own send answered over the socket first.
          if (!this.composer.sentHere.has(event.message.clientMessageId)) {
            this.pending.set(event.message.clientMessageId, { ...event.message });
            this.reconcile();
            this.renderPending();
          }
        }
        break;
      case "engine-failed": {
        const p = event.chatId === this.chatId && this.pending.get(event.clientMessageId);
        if (p) {
          p.engineError = event.error;
          this.renderPending();
        }
        break;
      }
      case "chat-retired":
        if (event.chatId === this.chatId) {
          for (const id of event.clientMessageIds) this.pending.delete(id);
          this.renderPending();
        }
        break;
      default:
    }
  }

  /** After the socket came back: what happened while it was down. */
  onReconnect() {
    this.catchUp();
  }
}
