// The viewer's start: every view has its own URL (/sessions/{id}[?cursor=N], /chats/{chatId},
// /search?q=, /usage, /status, and / for the overview), which `route` opens; in-page links, the
// back button and the top bar move between them. Also the theme and the keyboard (Ctrl-K the
// palette, Ctrl-F or f the find bar, n and N its hits, ? the keys), and at start /api/info (New chat
// only with an engine), the sessions list and the live socket. The views: conversation.js (a
// session's history and its chat), search.js, usage.js, status.js, overview.js; the sessions list is
// sidebar.js's, the socket live.js's, the palette palette.js's, the keys' help keys.js's.

import { query } from "./api.js";
import { Conversation } from "./conversation.js";
import { events } from "./live.js";
import { keys } from "./keys.js";
import { $, navigate, setRouter, setView, view } from "./page.js";
import { palette } from "./palette.js";
import { OverviewPage } from "./overview.js";
import { Search } from "./search.js";
import { call, engine, fillAgents, learn, onSignIn } from "./server.js";
import { closeSidebar, sidebar } from "./sidebar.js";
import { StatusPage } from "./status.js";
import { UsagePage } from "./usage.js";

// ---------------------------------------------------------------------------------------------
// Navigation

function route() {
  if (view && view.close) view.close();
  setView(null);
  const main = $("main");
  main.replaceChildren();
  closeSidebar();
  const path = location.pathname;
  const params = new URLSearchParams(location.search);
  let m;
  if ((m = path.match(/^\/sessions\/([^/]+)$/))) {
    const sessionId = decodeURIComponent(m[1]);
    const cursor = params.has("cursor") ? Number(params.get("cursor")) : null;
    const sidechains = params.get("sidechains") === "true";
    const find = params.get("q") || null;
    setView(new Conversation(main, { sessionId, cursor: Number.isFinite(cursor) ? cursor : null, sidechains, find }));
  } else if ((m = path.match(/^\/chats\/([^/]+)$/))) {
    setView(new Conversation(main, { chatId: decodeURIComponent(m[1]) }));
  } else if (path === "/usage") {
    const projects = () => [...$("filter-project").options].map((o) => o.value).filter(Boolean);
    setView(new UsagePage(main, params, { call, navigate, projects, fillAgents }));
  } else if (path === "/status") {
    setView(new StatusPage(main, { openKeys: () => keys.open() }));
  } else if (path === "/search") {
    $("search-input").value = params.get("q") || "";
    setView(new Search(main, params));
  } else {
    const projects = () => [...$("filter-project").options].map((o) => o.value).filter(Boolean);
    setView(new OverviewPage(main, params, { call, navigate, projects, fillAgents }));
  }
  sidebar.highlight();
}

document.addEventListener("click", (e) => {
  const a = e.target.closest("a[data-link]");
  if (!a || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
  e.preventDefault();
  navigate(a.getAttribute("href"));
});
window.addEventListener("popstate", route);
setRouter(route);
onSignIn(() => events.reconnect());

$("lightbox").addEventListener("click", (e) => {
  if (e.target.id === "lightbox" || e.target.id === "lightbox-img") $("lightbox").close();
});

$("search-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const q = $("search-input").value.trim();
  if (q) navigate(`/search${query({ q })}`);
});
$("new-chat").addEventListener("click", () => navigate(`/chats/chat-${crypto.randomUUID()}`));

// ---------------------------------------------------------------------------------------------
// Views

// ---------------------------------------------------------------------------------------------
// Comfort: the theme (the system's unless chosen, kept in localStorage) and the keyboard.

function storedTheme() {
  try {
    return localStorage.getItem("scrollback-theme");
  } catch {
    return null;
  }
}

function isDark() {
  const chosen = document.documentElement.dataset.theme;
  return chosen ? chosen === "dark" : matchMedia("(prefers-color-scheme: dark)").matches;
}

function applyTheme(theme) {
  if (theme === "dark" || theme === "light") document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
  $("theme").setAttribute("aria-pressed", String(isDark()));
}

$("theme").addEventListener("click", () => {
  const next = isDark() ? "light" : "dark";
  try {
    localStorage.setItem("scrollback-theme", next);
  } catch {
    // Not kept: this page only.
  }
  applyTheme(next);
});
applyTheme(storedTheme());

/** Whether a dialog (the photo, the token, the palette, the keys) has the page. */
const dialogOpen = () => [...document.querySelectorAll("dialog")].some((d) => d.open);

document.addEventListener("keydown", (e) => {
  if (e.defaultPrevented) return;
  const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
  if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey) {
    // Ctrl-K (Cmd-K): the palette, from anywhere. Ctrl-F (Cmd-F): the find bar of a session.
    if (key === "k" && !$("login").open && !$("lightbox").open) {
      e.preventDefault();
      palette.open();
    } else if (key === "f" && !dialogOpen() && view && view.find && view.find()) {
      e.preventDefault();
    }
    return;
  }
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === "Escape" && $("lightbox").open) {
    $("lightbox").close();
    return;
  }
  if (dialogOpen()) return;
  if (e.key === "Escape" && view && view.closeFind && view.closeFind()) {
    e.preventDefault();
    return;
  }
  const t = e.target;
  if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
  if (e.key === "?") {
    e.preventDefault();
    keys.open();
  } else if (e.key === "/") {
    e.preventDefault();
    $("search-input").focus();
  } else if ((e.key === "j" || e.key === "k") && view && view.step) {
    e.preventDefault();
    view.step(e.key === "j" ? 1 : -1);
  } else if (e.key === "f" && view && view.find && view.find()) {
    e.preventDefault();
  } else if ((e.key === "n" || e.key === "N") && view && view.findStep && view.findStep(e.key === "n" ? 1 : -1)) {
    e.preventDefault();
  } else if (view && view.key && view.key(e.key)) {
    // The view's own keys: a conversation's Start and End (g, G, Home, End), focused mode, outline.
    e.preventDefault();
  }
});

// ---------------------------------------------------------------------------------------------
// Start

// New chat only where a message can be sent: the server runs an engine.
learn().then(() => ($("new-chat").hidden = !engine));
sidebar.ready = fillAgents($("filter-agent")).then(() => sidebar.load());
// The socket opens once the server has let this page in (with a token, after signing in).
sidebar.ready.then(() => events.start());
route();
