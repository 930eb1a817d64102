// What the page asks of the server, and knows of it: every API call goes through `call` (a 401
// opens the token dialog, then the call is retried); the size of a page of sessions or entries; and
// /api/info's send limits, agents and engine, asked once at start.

import { Unauthorized, get, post } from "./api.js";
import * as render from "./render.js";
import { $ } from "./page.js";

export const PAGE = 50;

/** The server's limits for sends (from /api/info; these are its defaults). */
export let limits = { maxImages: 8, maxImageBytes: 5 << 20, maxText: 64 << 10 };

/** Runs an API call; a 401 opens the token dialog, then retries. */
export async function call(fn) {
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (!(e instanceof Unauthorized)) throw e;
      await login();
    }
  }
}

/** Told once a person has signed in: app.js reconnects the events socket. */
let signedIn = () => {};

export function onSignIn(fn) {
  signedIn = fn;
}

let loggingIn = null;
function login() {
  if (loggingIn) return loggingIn;
  loggingIn = new Promise((resolve) => {
    const dialog = $("login");
    const form = $("login-form");
    const error = $("login-error");
    error.hidden = true;
    form.onsubmit = async (e) => {
      e.preventDefault();
      try {
        await post("/api/login", { token: $("login-token").value });
        dialog.close();
        loggingIn = null;
        resolve();
        signedIn();
      } catch (err) {
        error.textContent = err instanceof Unauthorized ? "That is not the token." : err.message;
        error.hidden = false;
      }
    };
    dialog.showModal();
  });
  return loggingIn;
}

/** The agents whose transcripts the server reads, from /api/info: `[{ name, displayName }]`, in the
 * server's order (its format registry's). */
let agents = [];

/** How an agent is named to people: its display name, else its name. */
export function agentName(name) {
  const agent = agents.find((a) => a.name === name);
  return agent ? agent.displayName : name;
}

/** The agents' names as a sentence lists them ("claude, codex or gemini"), in the server's order;
 * empty until /api/info has answered. */
export function agentNames() {
  const names = agents.map((a) => a.name);
  return names.length > 1 ? `${names.slice(0, -1).join(", ")} or ${names[names.length - 1]}` : names.join("");
}

/** Once the agents are known, appends an option for each to `select` (after its "All agents"), and
 * selects `value`. */
export function fillAgents(select, value = select.value) {
  return known.then(() => {
    for (const agent of agents) {
      const option = render.el("option", null, agent.displayName);
      option.value = agent.name;
      select.append(option);
    }
    select.value = value;
  });
}

/** Whether an engine runs sent messages (from /api/info): without one the server takes no message,
 * and the page offers no composer and no New chat. Known once `known` has settled. */
export let engine = false;

/** What the server reads (from /api/info): `index`, or `hub` for a team's hub (`serve --postgres`),
 * which is read-only: the page then offers nothing that would change something, and shows each
 * session's host. Known once `known` has settled. */
export let store = "index";

/** Whether the server reads a team's hub. */
export function onHub() {
  return store === "hub";
}

/** /api/info, asked once (by `learn`, at start): the send limits, the agents, the engine and the store. */
export let known = null;

export function learn() {
  known = call(() => get("/api/info"))
    .then((info) => {
      if (info && info.limits) limits = info.limits;
      if (info && Array.isArray(info.agents)) agents = info.agents;
      engine = Boolean(info && info.engine);
      if (info && info.store) store = info.store;
    })
    .catch(() => {});
  return known;
}
