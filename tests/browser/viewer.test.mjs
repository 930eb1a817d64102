// The viewer's scenarios in real headless Chromium (Debian's /usr/bin/chromium, started by
// playwright-core; nothing downloads a browser). Run by tests/browser.rs, which writes the fixture
// trees and passes SCROLLBACK_BIN, SCROLLBACK_FIXTURES, SCROLLBACK_SHOTS and SCROLLBACK_SESSION.
// Each scenario starts the real `scrollback serve` on 127.0.0.1:0 over a fresh copy of its tree,
// asserts on the DOM and on the requests the page made, and saves a screenshot.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, chmodSync, appendFileSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { chromium } from "playwright-core";

const BIN = process.env.SCROLLBACK_BIN;
const FIXTURES = process.env.SCROLLBACK_FIXTURES;
const SHOTS = process.env.SCROLLBACK_SHOTS;
const SESSION = process.env.SCROLLBACK_SESSION;
const CHROMIUM = process.env.SCROLLBACK_CHROMIUM || "/usr/bin/chromium";
// A team's hub (an empty PostgreSQL database) for scenario 47, when tests/browser.rs could start one;
// and the URL its databases' names follow, for the scenarios run again over a hub (view1, view2, ...).
const HUB = process.env.SCROLLBACK_HUB;
const HUB_DATABASES = process.env.SCROLLBACK_HUB_DATABASES;
assert.ok(BIN && FIXTURES && SHOTS && SESSION, "run by tests/browser.rs (cargo test)");

const temps = [];
const servers = [];
let browser;

after(async () => {
  if (browser) await browser.close();
  for (const s of servers) s.kill();
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

function temp() {
  const dir = mkdtempSync(join(tmpdir(), "scrollback-browser-"));
  temps.push(dir);
  return dir;
}

/** Starts `scrollback serve` over a copy of fixture `name` (or an empty tree). */
async function startServer(name, { args = [], engine = null, port = 0, dirs = null, roots = [] } = {}) {
  const base = dirs ? dirs.base : temp();
  const transcripts = join(base, "projects");
  const data = join(base, "data");
  if (!dirs && name) cpSync(join(FIXTURES, name), transcripts, { recursive: true });
  const engineArgs = engine ? ["--engine", engine(transcripts, base)] : [];
  // Roots of other formats, as FORMAT:DIR with DIR inside the copied tree.
  const rootArgs = roots.flatMap((r) => ["--root", r.replace(/^([a-z]+):/, `$1:${transcripts}/`)]);
  const proc = spawn(BIN, ["serve", "--transcripts", transcripts, "--data-dir", data, "--listen", `127.0.0.1:${port}`, ...rootArgs, ...engineArgs, ...args], {
    env: { ...process.env, HOME: base, RUST_LOG: "scrollback=warn" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  servers.push(proc);
  const url = await new Promise((resolve, reject) => {
    let err = "";
    proc.stderr.on("data", (chunk) => {
      err += chunk;
      // The start ends with the viewer's address, alone on its line.
      const m = err.match(/^(http:\/\/[0-9.:]+)\/$/m);
      if (m) resolve(m[1]);
    });
    proc.on("exit", (code) => reject(new Error(`serve exited (${code}): ${err}`)));
  });
  const server = {
    url,
    proc,
    base,
    transcripts,
    data,
    file: join(transcripts, "p", `${SESSION}.jsonl`),
    stop() {
      return new Promise((resolve) => {
        proc.once("exit", resolve);
        proc.kill("SIGKILL");
      });
    },
  };
  // The catch-up runs beside the server: wait until the sessions are listed.
  for (let i = 0; i < 200 && name; i++) {
    const res = await fetch(`${url}/api/sessions`, { headers: args.includes("--token") ? { Authorization: `Bearer ${args[args.indexOf("--token") + 1]}` } : {} });
    if (res.ok && (await res.json()).sessions.length > 0) break;
    await sleep(50);
  }
  return server;
}

let hubDatabases = 0;

/**
 * Starts `scrollback serve --postgres` over a team's hub that holds fixture `name` alone: the fixture
 * indexed by a host and pushed into a database of its own.
 */
async function startHubServer(name) {
  const base = temp();
  const transcripts = join(base, "projects");
  cpSync(join(FIXTURES, name), transcripts, { recursive: true });
  const data = join(base, "data");
  const hub = `${HUB_DATABASES}view${++hubDatabases}`;
  for (const args of [["index", "--transcripts", transcripts, "--data-dir", data], ["push", "--data-dir", data, "--postgres", hub, "--host", "laptop"]]) {
    const run = spawnSync(BIN, args, { env: { ...process.env, HOME: base, RUST_LOG: "scrollback=warn" }, encoding: "utf8" });
    assert.equal(run.status, 0, `${args[0]}: ${run.stderr}`);
  }
  const server = await startServer(null, { args: ["--postgres", hub] });
  return { ...server, host: "laptop" };
}

/**
 * A scenario that only reads, run twice: over `serve` on fixture `name`, and again (numbered `Nh.`)
 * over `serve --postgres` on a team's hub that holds the same fixture.
 */
function readScenario(title, name, body) {
  test(title, async () => body(await startServer(name)));
  test(`${title.replace(/^(\d+)\./, "$1h.")} (over a team's hub)`, { skip: !HUB_DATABASES && "no PostgreSQL" }, async () => {
    // Its screenshots beside the index's, not over them (the scenarios run one at a time).
    shotSuffix = "-hub";
    try {
      await body(await startHubServer(name));
    } finally {
      shotSuffix = "";
    }
  });
}

/** What a screenshot's name ends with: "-hub" while a scenario runs again over a team's hub. */
let shotSuffix = "";

/** An engine that waits `delayMs` before the demo engine writes the transcript. */
function delayedEngine(delayMs) {
  return (transcripts, base) => {
    const script = join(base, "engine.sh");
    writeFileSync(script, `#!/bin/sh\nsleep ${delayMs / 1000}\nexec "${BIN}" demo-engine --transcripts "${transcripts}" --project p --reply-delay-ms 100\n`);
    chmodSync(script, 0o755);
    return script;
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, fn, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await sleep(50);
  }
}

async function newPage(viewport = { width: 1280, height: 800 }) {
  if (!browser) {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"],
    });
  }
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  // Everything that went wrong: console errors, page errors, failed requests, error answers.
  const problems = [];
  const requests = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("request", (r) => requests.push(r.url()));
  track(page);
  page.on("requestfailed", (r) => {
    const error = r.failure() && r.failure().errorText;
    // A request the test's own reload or navigation cut short is not the page's failure.
    if (navigating.has(page) && error === "net::ERR_ABORTED") return;
    problems.push(`failed: ${r.url()} ${error}`);
  });
  page.on("response", (r) => {
    if (r.status() >= 400) problems.push(`${r.status()}: ${r.url()}`);
  });
  return { page, context, problems, requests };
}

/** The requests each page has in flight. */
const inFlight = new WeakMap();

/** Keeps count of a page's requests in flight, the live stream aside (it stays open for as long as
 * the page), for [`quiet`]. */
function track(page) {
  const flying = new Set();
  inFlight.set(page, flying);
  page.on("request", (r) => {
    if (r.resourceType() !== "eventsource") flying.add(r);
  });
  page.on("requestfinished", (r) => flying.delete(r));
  page.on("requestfailed", (r) => flying.delete(r));
}

/** Waits until a page has had no request in flight for 300 ms. Playwright's "networkidle" load
 * state is reached once per navigation, so waiting for it later returns at once, even while the
 * page is fetching what a scroll or a key asked for. */
async function quiet(page) {
  const flying = inFlight.get(page);
  let since = Date.now();
  await until("no request in flight", async () => {
    if (flying.size) since = Date.now();
    return Date.now() - since >= 300;
  });
}

/** Reloads once the page's requests are done: a reload aborts those in flight, which is the
 * test's doing, not a failure of the page. */
async function reload(page) {
  await quiet(page);
  navigating.add(page);
  try {
    await page.reload();
  } finally {
    navigating.delete(page);
  }
}

/** Pages the test is reloading or sending elsewhere: a request in flight then is aborted. */
const navigating = new WeakSet();

/** Opens another page once this one's requests are done, for the same reason: `/` opens the newest
 * session by itself, and its photos may still be loading when the test goes elsewhere. */
async function goElsewhere(page, url) {
  await quiet(page);
  navigating.add(page);
  try {
    await page.goto(url);
  } finally {
    navigating.delete(page);
  }
}

async function shot(page, name) {
  await page.screenshot({ path: join(SHOTS, `${name}${shotSuffix}.png`) });
}

/** The same view at a phone's width: nothing wider than the screen, and a screenshot of it. The
 * viewport is put back afterwards. */
async function phoneShot(page, name) {
  const laptop = page.viewportSize();
  await page.setViewportSize({ width: 390, height: 844 });
  await sleep(150);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `${name}: nothing wider than a 390 px screen (${overflow} px over)`);
  await shot(page, name);
  await page.setViewportSize(laptop);
}

const photoRequests = (requests) => requests.filter((u) => new URL(u).pathname.startsWith("/api/session-media/"));
const scroller = (page) => page.locator(".scroller");
const countEntries = (page) => page.locator("ol.entries:not(.pending-list) > li").count();

/** Scrolls the conversation up step by step until its first entry is loaded and in view. */
async function scrollToStart(page) {
  for (let i = 0; i < 400; i++) {
    const done = await page.evaluate(() => {
      const s = document.querySelector(".scroller");
      s.scrollBy(0, -600);
      return s.scrollTop === 0 && document.querySelector(".scroller .status").textContent.includes("start of this session");
    });
    if (done) return;
    await sleep(60);
  }
  throw new Error("never reached the start of the session");
}

readScenario("1. photos load lazily, one request each, 304 or cache after a reload, at their stored size", "photos40", async (server) => {
  const sizes = JSON.parse(readFileSync(join(FIXTURES, "photos40", "sizes.json"), "utf8"));
  const expected = new Map(sizes.map((s) => [s.ordinalOf, s]));
  const { page, problems, requests, context } = await newPage();
  const statuses = new Map();
  page.on("response", (r) => {
    if (new URL(r.url()).pathname.startsWith("/api/session-media/")) statuses.set(r.url(), [...(statuses.get(r.url()) || []), r.status()]);
  });
  await page.goto(`${server.url}/sessions/${SESSION}`);
  await page.locator("img.photo").first().waitFor();
  await sleep(1000);
  const onOpen = new Set(photoRequests(requests));
  const inPage = await page.locator("img.photo").count();
  assert.ok(onOpen.size > 0 && onOpen.size < inPage, `on open, only photos near the view are requested (${onOpen.size} of the ${inPage} on the first page)`);
  await scrollToStart(page);
  assert.equal(await page.locator("img.photo").count(), 40, "every photo has its <img>");
  await until("all 40 photos requested", () => new Set(photoRequests(requests)).size === 40);
  await until("all 40 photos answered", () => [...statuses.values()].length === 40);
  for (const [url, s] of statuses) assert.deepEqual(s, [200], `${url} requested once, answered 200`);
  assert.equal(photoRequests(requests).length, 40, "no photo requested twice");
  // Every photo at its stored size, once it has loaded.
  const natural = await page.$$eval("img.photo", (imgs) =>
    Promise.all(imgs.map(async (img) => {
      img.scrollIntoView();
      await img.decode().catch(() => {});
      return { src: img.getAttribute("src"), w: img.naturalWidth, h: img.naturalHeight };
    })),
  );
  for (const { src, w, h } of natural) {
    const uuid = src.split("/")[4];
    const size = expected.get(uuid);
    assert.ok(size, `a photo of the fixture: ${src}`);
    assert.deepEqual([w, h], [size.width, size.height], `${src} shows at its stored size`);
  }
  await shot(page, "1-photos");

  // After a reload: each photo comes from the browser's cache or as a 304, never as a new 200.
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  const fromCache = new Set();
  const again = [];
  cdp.on("Network.requestServedFromCache", (e) => fromCache.add(e.requestId));
  cdp.on("Network.responseReceived", (e) => {
    if (new URL(e.response.url).pathname.startsWith("/api/session-media/")) again.push(e);
  });
  await reload(page);
  await page.locator("img.photo").first().waitFor();
  await scrollToStart(page);
  await sleep(500);
  assert.ok(again.length > 0, "photos were shown again after the reload");
  for (const e of again) {
    const cached = e.response.fromDiskCache || e.response.fromMemoryCache || fromCache.has(e.requestId);
    assert.ok(cached || e.response.status === 304, `${e.response.url}: ${e.response.status} not from cache`);
  }
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

readScenario("2. scrolling up loads older pages to the first entry, none twice, the view held", "history", async (server) => {
  const { page, problems, context } = await newPage();
  // The turns' figures (from the outline) come late: held back until the view has left the end,
  // they go in while the first older page loads (as on a busy machine), and the view holds.
  let letOutline;
  const outlineHeld = new Promise((resolve) => (letOutline = resolve));
  await context.route((u) => u.pathname.endsWith("/outline"), async (route) => {
    await outlineHeld;
    await route.continue();
  });
  await page.goto(`${server.url}/sessions/${SESSION}`);
  await until("the newest page", async () => (await countEntries(page)) >= 50);
  // The entry at the top of the view stays where it is while an older page goes in above it. It
  // is the one at the top once the view is near the top: one below the view moves when figures go
  // in under the entries above it.
  let held = 0;
  for (let i = 0; i < 20; i++) {
    const before = await countEntries(page);
    const probe = await page.evaluate(() => {
      const s = document.querySelector(".scroller");
      s.scrollTop = Math.min(s.scrollTop, 250);
      const top = s.getBoundingClientRect().top;
      const items = [...document.querySelectorAll("ol.entries > li:not([hidden])")];
      const anchor = items.find((li) => li.getBoundingClientRect().bottom > top + 1);
      return { cursor: anchor.dataset.cursor, expected: anchor.getBoundingClientRect().top };
    });
    if (i === 0) {
      letOutline();
      await until("the turns' figures", async () => (await page.locator(".turn-figures").count()) > 0);
    }
    const grew = await until("an older page", async () => (await countEntries(page)) > before || (await page.locator(".scroller .status").textContent()).includes("start"), 5000);
    if ((await countEntries(page)) === before) break;
    const now = await page.evaluate((c) => document.querySelector(`li[data-cursor="${c}"]`).getBoundingClientRect().top, probe.cursor);
    assert.ok(Math.abs(now - probe.expected) <= 2, `entry ${probe.cursor} stayed at ${probe.expected}px (now ${now}px)`);
    held += grew ? 1 : 0;
  }
  await scrollToStart(page);
  assert.ok(held >= 3, `older pages were loaded while the view held (${held})`);
  const cursors = await page.$$eval("ol.entries > li", (lis) => lis.map((li) => li.dataset.cursor));
  assert.equal(cursors.length, 300, "every entry, to the first");
  assert.equal(new Set(cursors).size, 300, "no entry twice");
  const first = await page.locator("ol.entries > li").first().textContent();
  assert.match(first, /entry 1 of the long session/);
  await shot(page, "2-history-start");
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

test("3. a failed upload reads [image not displayed]; a PDF is a link that downloads", async () => {
  const server = await startServer("failed");
  const { page, problems, context } = await newPage();
  await page.goto(`${server.url}/sessions/${SESSION}`);
  await page.locator(".failed").first().waitFor();
  assert.equal(await page.locator(".failed").first().textContent(), "[image not displayed]");
  const link = page.locator("a.attachment");
  assert.match(await link.textContent(), /PDF document/);
  assert.match(await link.getAttribute("href"), /^\/api\/media\/[0-9a-f]{64}$/);
  const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
  assert.match(download.suggestedFilename(), /\.pdf$/);
  const bytes = readFileSync(await download.path());
  assert.ok(bytes.subarray(0, 5).toString() === "%PDF-", "the PDF's own bytes");
  await shot(page, "3-failed-and-pdf");
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

test("4. hostile transcript text renders as text: no script runs, nothing is fetched", async () => {
  const server = await startServer("hostile");
  const { page, problems, requests, context } = await newPage();
  await page.goto(`${server.url}/sessions/${SESSION}`);
  await until("the hostile lines", async () => (await countEntries(page)) >= 9);
  await page.locator("details").first().click();
  await page.locator("text=click me").first().click().catch(() => {});
  await sleep(500);
  assert.equal(await page.evaluate(() => window.__pwned), undefined, "no payload ran");
  const body = await page.locator("ol.entries:not(.pending-list)").textContent();
  assert.ok(body.includes("<script>window.__pwned = 'script'</script>"), "the script is shown as text");
  assert.ok(body.includes("<img src=x onerror="), "the img tag is shown as text");
  assert.equal(await page.locator("ol.entries script, ol.entries iframe, ol.entries svg, ol.entries a[href^='javascript']").count(), 0);
  const fetchedX = requests.filter((u) => /\/x$/.test(new URL(u).pathname) || u.startsWith("javascript"));
  assert.deepEqual(fetchedX, [], "no request to x");
  assert.equal(await page.locator(".failed").count(), 2, "images pointing elsewhere are not loaded");
  await shot(page, "4-hostile");
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

/** Pastes images into the composer's text box, as a clipboard paste does. */
async function paste(page, images) {
  await page.evaluate(async (list) => {
    const dt = new DataTransfer();
    for (const { b64, name } of list) {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      dt.items.add(new File([bytes], name, { type: "image/png" }));
    }
    const event = new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true });
    document.querySelector(".composer textarea").dispatchEvent(event);
  }, images);
}

const PNG_A = readFileSync(new URL("./fixtures/a.png", import.meta.url)).toString("base64");
const PNG_B = readFileSync(new URL("./fixtures/b.png", import.meta.url)).toString("base64");

test("5. a send with two pasted photos: pending at once, once across a reload, then retired", async () => {
  const server = await startServer("history", { engine: delayedEngine(4000) });
  const { page, problems, context } = await newPage();
  await page.goto(`${server.url}/sessions/${SESSION}`);
  await until("the history", async () => (await countEntries(page)) >= 50);
  await paste(page, [{ b64: PNG_A, name: "a.png" }, { b64: PNG_B, name: "b.png" }]);
  await until("two staged photos", async () => (await page.locator(".staged img").count()) === 2);
  await page.locator(".composer textarea").fill("two photos of the harbour");
  await page.locator(".composer textarea").press("Enter");
  const pendingItem = page.locator("li.pending");
  await pendingItem.first().waitFor();
  assert.equal(await pendingItem.count(), 1, "pending at once");
  assert.equal(await pendingItem.locator("img").count(), 2, "with its own photos");
  assert.match(await pendingItem.locator("img").first().getAttribute("src"), /^data:image\/png;base64,/);
  await until("accepted", async () => (await pendingItem.textContent()).includes("waiting for the transcript"));
  // Reload before the engine has written the transcript.
  await reload(page);
  await until("pending after the reload", async () => (await page.locator("li.pending").count()) === 1);
  const srcs = await page.locator("li.pending img").evaluateAll((imgs) => imgs.map((i) => i.getAttribute("src")));
  assert.equal(srcs.length, 2);
  for (const src of srcs) assert.match(src, /^\/api\/media\/[0-9a-f]{64}$/, "after a reload, the photos come from the server");
  assert.equal(await page.locator("ol.entries:not(.pending-list) li", { hasText: "two photos of the harbour" }).count(), 0, "not in the transcript yet");
  await shot(page, "5-pending-after-reload");
  // The engine writes the line: the message is retired and shown once, with the transcript's URLs.
  await until("the transcript's line", async () => (await page.locator("ol.entries:not(.pending-list) li.user", { hasText: "two photos of the harbour" }).count()) === 1, 20000);
  await until("retired", async () => (await page.locator("li.pending").count()) === 0);
  assert.equal(await page.locator("li.user", { hasText: "two photos of the harbour" }).count(), 1, "shown once");
  const sent = await page.locator("ol.entries li.user", { hasText: "two photos of the harbour" }).locator("img").evaluateAll((imgs) => imgs.map((i) => i.getAttribute("src")));
  assert.equal(sent.length, 2);
  for (const src of sent) assert.match(src, /^\/api\/session-media\//, "the transcript's photo URLs");
  await shot(page, "5-retired");
  // The engine's reply follows the line: let it arrive before reloading.
  await until("the engine's reply", async () => (await page.locator("li.assistant", { hasText: "(demo engine)" }).count()) === 1, 20000);
  await reload(page);
  await page.locator("ol.entries li").first().waitFor();
  await sleep(500);
  assert.equal(await page.locator("li.pending").count(), 0);
  const boot = await (await fetch(`${server.url}/api/chat/bootstrap?chatId=session-${SESSION}`)).json();
  assert.deepEqual(boot.pending, [], "pending is empty on the server after the reload");
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

test("6. the same text sent twice is two messages, both retired by two entries", async () => {
  const server = await startServer("history", { engine: delayedEngine(1500) });
  const { page, problems, context } = await newPage();
  await page.goto(`${server.url}/sessions/${SESSION}`);
  await until("the history", async () => (await countEntries(page)) >= 50);
  for (let i = 0; i < 2; i++) {
    await page.locator(".composer textarea").fill("same words twice");
    await page.locator(".composer textarea").press("Enter");
  }
  await until("two pending", async () => (await page.locator("li.pending", { hasText: "same words twice" }).count()) === 2);
  await until("both in the transcript", async () => (await page.locator("ol.entries:not(.pending-list) li.user", { hasText: "same words twice" }).count()) === 2, 30000);
  await until("both retired", async () => (await page.locator("li.pending").count()) === 0);
  assert.equal(await page.locator("li.user", { hasText: "same words twice" }).count(), 2, "two messages, each once");
  await shot(page, "6-twice");
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

test("7. live: appended lines appear, a deleted transcript stays, a restarted server reconnects", async () => {
  let server = await startServer("history");
  const { page, problems, context } = await newPage();
  await page.goto(`${server.url}/sessions/${SESSION}`);
  await until("the history", async () => (await countEntries(page)) >= 50);
  const append = (n, text) =>
    appendFileSync(server.file, JSON.stringify({
      parentUuid: null, isSidechain: false, cwd: "/home/test/project", sessionId: SESSION, type: "assistant",
      uuid: `live-${n}`, timestamp: new Date().toISOString(), message: { role: "assistant", content: [{ type: "text", text }] },
    }) + "\n");
  const started = Date.now();
  append(1, "a line appended while the page is open");
  await until("the appended line", async () => (await page.locator("li", { hasText: "a line appended while the page is open" }).count()) === 1, 5000);
  console.log(`# live: an appended line was on screen after ${Date.now() - started} ms`);
  unlinkSync(server.file);
  await until("the gone banner", async () => await page.locator(".banner").isVisible(), 10000);
  assert.ok((await countEntries(page)) >= 51, "the history stays on screen");
  await shot(page, "7-gone");
  // Kill the server and start it again on the same address: the page reconnects by itself.
  const port = new URL(server.url).port;
  const dirs = { base: server.base };
  await server.stop();
  await until("the socket noticed", async () => !(await page.locator("#live.on").count()), 10000);
  server = await startServer(null, { port, dirs });
  await until("reconnected", async () => (await page.locator("#live.on").count()) === 1, 15000);
  cpSync(join(FIXTURES, "history", "p", `${SESSION}.jsonl`), server.file);
  append(2, "a line after the restart");
  await until("the line after the restart", async () => (await page.locator("li", { hasText: "a line after the restart" }).count()) === 1, 15000);
  await shot(page, "7-reconnected");
  // While the server was down, the browser reported the socket's failed reconnections, and the
  // sessions list's refresh that the deleted transcript set off, if it was still under way: those,
  // and only those, are expected.
  const unexpected = problems.filter(
    (p) =>
      !/WebSocket connection to 'ws:\/\/127\.0\.0\.1:\d+\/api\/events' failed/.test(p) &&
      !/^failed: http:\/\/127\.0\.0\.1:\d+\/api\/sessions\?\S* net::ERR_CONNECTION_REFUSED$/.test(p) &&
      p !== "console: Failed to load resource: net::ERR_CONNECTION_REFUSED",
  );
  assert.deepEqual(unexpected, []);
  await context.close();
  await server.stop();
});

readScenario("8. search finds a word, and its hit opens the session at that entry", "search", async (server) => {
  const { page, problems, context } = await newPage();
  await page.goto(`${server.url}/`);
  await page.locator("#search-input").fill("zebrafinch");
  await page.locator("#search-input").press("Enter");
  await page.waitForURL(/\/search\?q=zebrafinch/);
  const hit = page.locator("li.result a.card-link").first();
  await hit.waitFor();
  assert.equal(await page.locator("li.result").count(), 1, "one session");
  assert.equal(await hit.locator(".hit.best mark").textContent(), "zebrafinch");
  await shot(page, "8-search");
  await hit.click();
  await page.waitForURL(/\/sessions\/.+\?cursor=\d+&q=zebrafinch$/);
  const target = page.locator("li.target");
  await target.waitFor();
  assert.match(await target.textContent(), /zebrafinch nests/);
  assert.ok(await target.isVisible(), "the hit's entry is in view");
  await until("the find bar", async () => (await page.locator(".find-bar .find-count").textContent()) === "1 / 1");
  await shot(page, "8-hit-opened");
  await page.goBack();
  await page.waitForURL(/\/search\?q=zebrafinch/);
  await page.locator("li.result a.card-link").first().waitFor();
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

test("9. with --token the page asks for it once, then every request succeeds", async () => {
  const server = await startServer("photos40", { args: ["--token", "s3cret-token-long"] });
  const { page, problems, context } = await newPage();
  await page.goto(`${server.url}/sessions/${SESSION}`);
  await page.locator("#login-token").waitFor();
  await shot(page, "9-login");
  await page.locator("#login-token").fill("s3cret-token-long");
  await page.locator("#login-form button[type=submit]").click();
  await page.locator("img.photo").first().waitFor();
  await until("a photo loaded with the cookie", () => page.evaluate(() => [...document.querySelectorAll("img.photo")].some((i) => i.complete && i.naturalWidth > 0)));
  await until("live", async () => (await page.locator("#live.on").count()) === 1);
  const cookies = await context.cookies();
  const cookie = cookies.find((c) => c.name === "scrollback_token");
  assert.ok(cookie && cookie.httpOnly && cookie.sameSite === "Strict", "an HttpOnly, SameSite=Strict cookie");
  // Before signing in, the API answered 401: those answers are the only errors.
  const afterLogin = problems.filter((p) => !/^401: /.test(p) && !/status of 401 \(Unauthorized\)/.test(p));
  assert.deepEqual(afterLogin, []);
  await reload(page);
  await page.locator("img.photo").first().waitFor();
  assert.equal(await page.locator("#login").evaluate((d) => d.open), false, "asked once: the cookie is kept");
  await shot(page, "9-signed-in");
  await context.close();
  await server.stop();
});

test("10. a phone-width window shows the history with its photos", async () => {
  const server = await startServer("photos40");
  const { page, problems, context } = await newPage({ width: 390, height: 844 });
  await page.goto(`${server.url}/sessions/${SESSION}`);
  await page.locator("img.photo").first().waitFor();
  await until("a photo loaded", () => page.evaluate(() => [...document.querySelectorAll("img.photo")].some((i) => i.complete && i.naturalWidth > 0)));
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `nothing wider than the window (${overflow}px over)`);
  assert.equal(await page.locator("#sidebar").isVisible(), false, "the sessions are behind a button");
  await shot(page, "10-phone");
  await page.locator("#toggle-sidebar").click();
  assert.equal(await page.locator("#sidebar").isVisible(), true);
  await shot(page, "10-phone-sessions");
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

test("11. a sub-agent's entries, indexed while the page is open, appear where they happened; its tool call links to them", async () => {
  const server = await startServer("subagents");
  const { page, problems, context } = await newPage();
  await page.goto(`${server.url}/sessions/${SESSION}?sidechains=true`);
  await until("the conversation", async () => (await page.locator("li", { hasText: "The parser drops a torn last line." }).count()) === 1);
  const agentFile = join(server.transcripts, "p", SESSION, "subagents", "agent-a1.jsonl");
  mkdirSync(dirname(agentFile), { recursive: true });
  const agentLine = (n, s, kind, content) => JSON.stringify({
    parentUuid: null, isSidechain: true, agentId: "a1", cwd: "/home/test/project", sessionId: SESSION, type: kind,
    uuid: `a1-${n}`, timestamp: `2026-11-02T10:00:${String(s).padStart(2, "0")}.000Z`, message: { role: kind, content },
  }) + "\n";
  writeFileSync(agentFile, agentLine(1, 5, "user", "read the parser") + agentLine(2, 10, "assistant", [{ type: "text", text: "The sub-agent reads lines.rs" }]));
  await until("the sub-agent's entries", async () => (await page.locator("li", { hasText: "The sub-agent reads lines.rs" }).count()) === 1, 10000);
  // In the order it happened: after the Task call (10:00:02), before the answer (10:00:30); the
  // call's result (10:00:20) sits under the call, in its card.
  const texts = await page.locator("ol.entries:not(.pending-list) > li:not([hidden])").allTextContents();
  const at = (s) => texts.findIndex((t) => t.includes(s));
  assert.ok(at("Task") < at("The sub-agent reads lines.rs"), texts.join(" | "));
  assert.ok(at("The sub-agent reads lines.rs") < at("The parser drops a torn last line."), texts.join(" | "));
  assert.equal(at("the helper found it"), at("Task"), "the result is in its call's card");
  await shot(page, "11-subagent-in-place");
  // The tool call's result links to the sub-agent's first entry.
  await reload(page);
  const link = page.locator("a.subagent:not(.parent)");
  await link.waitFor();
  assert.match(await link.textContent(), /Sub-agent a1: 2 entries/);
  await link.click();
  await page.waitForURL(/\?cursor=\d+&sidechains=true/);
  const target = page.locator("li.target");
  await target.waitFor();
  assert.match(await target.textContent(), /read the parser/);
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

test("12. a session forgotten while it is open leaves the list, and its page says so", async () => {
  const server = await startServer("history");
  const { page, problems, context } = await newPage();
  await page.goto(`${server.url}/sessions/${SESSION}`);
  await until("the conversation", async () => (await page.locator("li", { hasText: "entry 300 of the long session" }).count()) === 1);
  await page.locator(`#sessions li[data-session="${SESSION}"]`).waitFor();
  const res = await fetch(`${server.url}/api/sessions/${SESSION}`, { method: "DELETE" });
  assert.equal(res.status, 200);
  assert.equal((await res.json()).entries, 300);
  const banner = page.locator(".banner");
  await until("the banner", async () => /was forgotten/.test((await banner.textContent()) || ""));
  await until("the list without it", async () => (await page.locator(`#sessions li[data-session="${SESSION}"]`).count()) === 0);
  await shot(page, "12-forgotten");
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

test("13. a Codex session shows its photos (the user's and a tool output's), and a Gemini one shows what its rewind left", async () => {
  const server = await startServer("agents", { roots: ["codex:codex", "gemini:gemini"] });
  const { page, problems, context } = await newPage();
  await page.goto(server.url + "/");
  await until("both sessions listed", async () => (await page.locator("#sessions li").count()) === 2);
  assert.match(await page.locator('#sessions li[data-agent="codex"]').textContent(), /Codex/);
  await page.locator("#filter-agent").selectOption("gemini");
  await until("the list filtered by agent", async () => (await page.locator("#sessions li").count()) === 1 && (await page.locator('#sessions li[data-agent="gemini"]').count()) === 1);

  await goElsewhere(page, `${server.url}/sessions/01a0c0de-0000-7000-8000-0000000000c1`);
  await until("the Codex conversation", async () => (await page.locator("li", { hasText: "Two sailing boats and a ferry." }).count()) === 1);
  assert.equal(await page.locator("li.entry", { hasText: "What boats are in the harbour photo?" }).count(), 1, "the event that repeats the message is not shown");
  assert.equal(await page.locator("li.entry", { hasText: "environment_context" }).count(), 0, "injected context is not shown");
  await until("both photos loaded", () => page.evaluate(() => {
    const imgs = [...document.querySelectorAll("img.photo")];
    imgs.forEach((i) => i.scrollIntoView());
    return imgs.length === 2 && imgs.every((i) => i.complete && i.naturalWidth > 0);
  }));
  const sizes = await page.evaluate(() => [...document.querySelectorAll("img.photo")].map((i) => [i.naturalWidth, i.naturalHeight]));
  assert.deepEqual(sizes, [[240, 160], [200, 120]], "the user's photo, then the tool output's, at their stored sizes");
  await shot(page, "13-codex");

  await goElsewhere(page, `${server.url}/sessions/5e55a0de-0000-4000-8000-0000000000c2`);
  await until("the Gemini conversation", async () => (await page.locator("li", { hasText: "White, flashing." }).count()) === 1);
  assert.equal(await page.locator("li", { hasText: "the rewind undoes" }).count(), 0, "what the rewind undid is not shown");
  assert.equal(await page.locator("li.note", { hasText: "Rewound" }).count(), 1, "where the rewind was is said");
  await until("the pasted photo loaded", () => page.evaluate(() => {
    const img = document.querySelector("img.photo");
    if (img) img.scrollIntoView();
    return !!img && img.complete && img.naturalWidth === 220;
  }));
  await shot(page, "13-gemini");
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

test("14. the usage page: totals, cost per day, the split by model, filters; it follows new lines; a session's header has its cost", async () => {
  const server = await startServer("history");
  const usageLine = (n, day, model, output) =>
    JSON.stringify({
      parentUuid: null, isSidechain: false, cwd: "/home/test/project", sessionId: SESSION, type: "assistant",
      uuid: `usage-${n}`, requestId: `req_${n}`, timestamp: `2026-11-${day}T10:00:00.000Z`,
      message: {
        id: `msg_${n}`, type: "message", role: "assistant", model, content: [{ type: "text", text: `answer ${n}` }],
        usage: { input_tokens: 1000, output_tokens: output, cache_read_input_tokens: 20000, cache_creation_input_tokens: 500 },
      },
    }) + "\n";
  appendFileSync(server.file, usageLine(1, "01", "claude-sonnet-4-5-20250929", 300) + usageLine(2, "02", "claude-sonnet-4-5-20250929", 200) + usageLine(3, "03", "claude-opus-4-6", 100));
  const { page, problems, context } = await newPage();
  const responses = () => page.locator(".usage-totals dd").nth(2).textContent();
  // The viewer's money (docs/usage.md): cents from a dollar up, two significant digits below.
  const dollars = (c) =>
    c >= 1 ? `$${c.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}` : `$${Number(c.toPrecision(2))}`;
  await page.goto(`${server.url}/usage`);
  await until("three responses", async () => (await responses()) === "3");
  assert.equal(await page.locator(".usage-chart rect.bar").count(), 3, "a bar per day");
  const byModel = await page.locator(".usage-table").first().locator("tbody td:first-child").allTextContents();
  assert.deepEqual(byModel.sort(), ["claude-opus-4-6", "claude-sonnet-4-5-20250929"]);
  const api = await (await fetch(`${server.url}/api/usage?by=day`)).json();
  assert.equal(api.total.responses, 3);
  assert.equal(await page.locator(".usage-totals dd").first().textContent(), dollars(api.total.cost), "the page's cost is the API's");
  await shot(page, "14-usage");
  // A new response's line: the page follows.
  appendFileSync(server.file, usageLine(4, "03", "claude-opus-4-6", 50));
  await until("the fourth response", async () => (await responses()) === "4", 10000);
  // The date filter, through the form: the URL carries it.
  await page.locator('input[name="since"]').fill("2026-11-02");
  await page.locator(".usage-filters button").click();
  await until("the filtered report", async () => page.url().includes("since=2026-11-02") && (await responses()) === "3");
  assert.equal(await page.locator(".usage-chart rect.bar").count(), 2);
  // The session's header: its tokens, cost and responses.
  await goElsewhere(page, `${server.url}/sessions/${SESSION}`);
  await until("the header's usage line", async () => /4 responses/.test((await page.locator(".usage-line").textContent()) || ""));
  const line = await page.locator(".usage-line").textContent();
  const all = await (await fetch(`${server.url}/api/usage?session=${SESSION}`)).json();
  assert.ok(line.includes(dollars(all.total.cost)) && line.includes("claude-opus-4-6"), line);
  assert.deepEqual(problems, []);
  await context.close();
  // On a phone: nothing wider than the screen.
  const phone = await newPage({ width: 390, height: 844 });
  await phone.page.goto(`${server.url}/usage`);
  await until("the phone's report", async () => (await phone.page.locator(".usage-totals dd").nth(2).textContent()) === "4");
  const wide = await phone.page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(wide <= 390, `the page is ${wide} px wide on a 390 px screen`);
  await shot(phone.page, "14-usage-phone");
  assert.deepEqual(phone.problems, []);
  await phone.context.close();
  await server.stop();
});

/** Every request the page made that left this server (or the file it was opened from). */
function foreign(requests, origin) {
  return requests.filter((u) => !u.startsWith(origin) && !u.startsWith("data:") && !u.startsWith("file:"));
}

test("15. Markdown renders with every construct, hostile Markdown runs and loads nothing, tool calls read at a glance with their diffs", async () => {
  const server = await startServer("reading", { roots: ["codex:codex", "gemini:gemini"] });
  for (const viewport of [{ width: 1280, height: 900 }, { width: 390, height: 844 }]) {
    const phone = viewport.width < 600;
    const { page, problems, context, requests } = await newPage(viewport);
    await page.goto(`${server.url}/sessions/${SESSION}`);
    await until("the rendered Markdown", async () => (await page.locator(".markdown h2", { hasText: "A heading" }).count()) === 1);
    // The session's title, made of the person's first words, reads without Markdown's marks.
    const plain = (t) => t.startsWith("A heading Some emphasis, strong and inline code. one two first second a quotation fn main()") && !/[*#`|]/.test(t);
    await until("the plain title", async () => plain(await page.locator(".view-title").textContent()));
    if (!phone) assert.ok((await page.locator("#sessions .title").allTextContents()).some(plain), "the sidebar's title");
    const md = page.locator(".markdown").first();
    for (const selector of ["em", "strong", "code", "ul li", "ol li", "blockquote", "table td", ".code-block .code-lang", "pre.code code span[class*='hl-']"]) {
      assert.ok((await md.locator(selector).count()) > 0, `Markdown has ${selector}`);
    }
    assert.equal(await md.locator(".code-lang").textContent(), "Rust");
    const safe = md.locator("a", { hasText: "safe link" });
    assert.equal(await safe.getAttribute("href"), "https://example.com/docs");
    assert.equal(await safe.getAttribute("rel"), "noopener noreferrer");
    assert.match(await md.textContent(), /\(https:\/\/example\.com\/docs\)/, "the URL is visible");
    // Hostile Markdown: shown as text, nothing runs, nothing foreign is asked for.
    const hostile = page.locator(".markdown").nth(1);
    assert.equal(await hostile.locator("a").count(), 0, "a javascript: link is no link");
    assert.equal(await hostile.locator("img, script").count(), 0);
    assert.match(await hostile.textContent(), /\[image: remote\]/);
    assert.match(await hostile.textContent(), /<script>window.__pwned='fence'<\/script>/);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    // Tool calls at a glance.
    const lines = await page.locator("details.tool.call > summary").allTextContents();
    assert.deepEqual(lines.map((l) => l.replace(/\s+/g, " ").trim()), ["Bash $ git status", "Edit src/lib.rs +2 −1", "Grep \"fn main\" in src", "WebFetch https://example.com/page"]);
    const edit = page.locator("details.tool.call", { hasText: "src/lib.rs" });
    await edit.locator("summary").click();
    const shown = phone ? ".diff-unified" : ".diff-split";
    const hidden = phone ? ".diff-split" : ".diff-unified";
    assert.ok(await edit.locator(shown).isVisible(), `${shown} on a ${viewport.width}px screen`);
    assert.ok(!(await edit.locator(hidden).isVisible()));
    assert.equal(await edit.locator(`${shown} .diff-line.add`).count(), 2);
    assert.equal(await edit.locator(`${shown} .diff-line.del`).count(), 1);
    assert.equal(await page.locator("details.result.error .result-label").textContent(), "Result: error");
    assert.match(await page.locator("details.result").first().locator("summary").textContent(), /5 lines/);
    await shot(page, `15-reading-${phone ? "phone" : "laptop"}`);
    assert.deepEqual(foreign(requests, server.url), []);
    assert.deepEqual(problems, []);
    await context.close();
  }
  // Codex's shell and patch, Gemini CLI's edit.
  const { page, problems, context } = await newPage();
  await page.goto(`${server.url}/sessions/01a0c0de-0000-7000-8000-0000000000d1`);
  await until("the Codex tool calls", async () => (await page.locator("details.tool.call").count()) === 2);
  const codex = (await page.locator("details.tool.call > summary").allTextContents()).map((l) => l.replace(/\s+/g, " ").trim());
  assert.deepEqual(codex, ["shell $ cargo test", "apply_patch src/parser.rs +2 −1"]);
  assert.equal(await page.locator(".markdown strong", { hasText: "parser" }).count(), 1, "a Codex message's Markdown");
  await page.locator("details.tool.call", { hasText: "apply_patch" }).locator("summary").click();
  assert.equal(await page.locator("details.tool.call", { hasText: "apply_patch" }).locator(".diff-split .diff-line.add").count(), 2);
  await shot(page, "15-codex-tools");
  await phoneShot(page, "15-codex-tools-phone");
  await goElsewhere(page, `${server.url}/sessions/5e55a0de-0000-4000-8000-0000000000d2`);
  await until("the Gemini tool call", async () => (await page.locator("details.tool.call").count()) === 1);
  const gemini = (await page.locator("details.tool.call > summary").textContent()).replace(/\s+/g, " ").trim();
  assert.match(gemini, /\/home\/test\/app\.py \+1 −1$/);
  await shot(page, "15-gemini-tools");
  await phoneShot(page, "15-gemini-tools-phone");
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

/** Runs axe-core (`source`) on the page: no serious or critical violation. */
async function noSeriousViolation(page, source, name) {
  const result = await page.evaluate(async (source) => {
    if (!window.axe) (0, eval)(source);
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")}`);
  }, source);
  assert.deepEqual(result, [], `axe-core on ${name}`);
}

test("16. the dark theme follows the system and its toggle; the keyboard moves and searches; axe-core finds no serious violation", async () => {
  const server = await startServer("photos40");
  const { readFileSync: read } = await import("node:fs");
  const axe = read(join(dirname(new URL(import.meta.url).pathname), "node_modules/axe-core/axe.min.js"), "utf8");
  if (!browser) await newPage().then(({ context }) => context.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "dark" });
  const page = await context.newPage();
  track(page);
  const problems = [];
  page.on("pageerror", (e) => problems.push(e.message));
  page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
  await page.goto(`${server.url}/sessions/${SESSION}`);
  await until("the history", async () => (await countEntries(page)) >= 40);
  const bg = () => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  assert.equal(await bg(), "rgb(16, 20, 27)", "the system's dark scheme");
  await page.locator("#theme").click();
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), "light");
  assert.equal(await bg(), "rgb(246, 247, 249)");
  await reload(page);
  await until("the history again", async () => (await countEntries(page)) >= 40);
  assert.equal(await bg(), "rgb(246, 247, 249)", "the choice is kept");
  await page.locator("#theme").click();
  assert.equal(await bg(), "rgb(16, 20, 27)");
  await shot(page, "16-dark");
  await phoneShot(page, "16-dark-phone");
  // Keyboard: j and k move between messages, / focuses search, Esc closes the photo.
  await page.locator("body").click({ position: { x: 5, y: 400 } });
  await page.keyboard.press("k");
  const first = await page.locator("li.entry.focused").getAttribute("data-cursor");
  await page.keyboard.press("k");
  const second = await page.locator("li.entry.focused").getAttribute("data-cursor");
  assert.notEqual(first, second);
  await page.keyboard.press("j");
  assert.equal(await page.locator("li.entry.focused").getAttribute("data-cursor"), first);
  await page.keyboard.press("/");
  assert.equal(await page.evaluate(() => document.activeElement.id), "search-input");
  await page.locator(".photo-button").last().click();
  await until("the photo open", async () => page.evaluate(() => document.getElementById("lightbox").open));
  await page.keyboard.press("Escape");
  await until("the photo closed", async () => !(await page.evaluate(() => document.getElementById("lightbox").open)));
  // axe-core on each view, in both themes.
  const audit = (name) => noSeriousViolation(page, axe, name);
  for (const theme of ["dark", "light"]) {
    await page.evaluate((t) => (document.documentElement.dataset.theme = t), theme);
    await audit(`a session (${theme})`);
    await page.keyboard.press("f");
    await until("the find bar", async () => page.locator(".find-bar").isVisible());
    await audit(`a session's find bar (${theme})`);
    await page.keyboard.press("Escape");
    await goElsewhere(page, `${server.url}/search?q=photo`);
    await until("results", async () => (await page.locator("li.result").count()) > 0);
    await page.evaluate((t) => (document.documentElement.dataset.theme = t), theme);
    await page.locator("li.result .more-hits").first().click();
    await until("the other hits", async () => (await page.locator(".other-hits a.hit").count()) > 0);
    await audit(`search (${theme})`);
    await page.keyboard.press("Control+k");
    await page.keyboard.type("photo");
    await until("the palette's options", async () => (await page.locator("#palette [role=option]").count()) > 0);
    await audit(`the palette (${theme})`);
    await page.keyboard.press("Escape");
    await goElsewhere(page, `${server.url}/usage`);
    await until("the usage page", async () => (await page.locator(".usage-totals, .usage .status").count()) > 0);
    await page.evaluate((t) => (document.documentElement.dataset.theme = t), theme);
    await audit(`usage (${theme})`);
    await goElsewhere(page, `${server.url}/sessions/${SESSION}`);
    await until("the history", async () => (await countEntries(page)) >= 40);
    await page.evaluate((t) => (document.documentElement.dataset.theme = t), theme);
  }
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

test("17. rename and pin a session from its header: kept through a restart and an index rebuild; search hits carry titles and filter", async () => {
  let server = await startServer("search");
  const { page, problems, context } = await newPage();
  await page.goto(`${server.url}/sessions/${SESSION}`);
  await until("the header", async () => /entries/.test(await page.locator(".about-line").textContent()) && (await page.locator(".conv-actions.unfilled").count()) === 0);
  assert.match(await page.locator(".about-line").textContent(), /Claude Code · \/home\/test\/project · .* · 240 entries · 0 photos/);
  // Rename and pin are among the header's details.
  await page.locator(".details-toggle").click();
  await page.locator(".conv-actions button", { hasText: "Rename" }).click();
  await page.locator(".rename-input").fill("Zebra finches");
  await page.locator(".rename button[type=submit]").click();
  await until("the new title", async () => (await page.locator(".view-title").textContent()) === "Zebra finches");
  await page.locator(".conv-actions button", { hasText: "Pin" }).click();
  await until("pinned in the list", async () => /Zebra finches/.test((await page.locator("#sessions li.pinned .title").textContent().catch(() => "")) || ""));
  await shot(page, "17-renamed-pinned");
  await phoneShot(page, "17-renamed-pinned-phone");
  // A restart, then an index rebuild (the marks are primary data beside the sends).
  const port = new URL(server.url).port;
  const dirs = { base: server.base };
  await server.stop();
  const rebuilt = spawn(BIN, ["rebuild", "--transcripts", server.transcripts, "--data-dir", server.data], { env: { ...process.env, HOME: server.base }, stdio: "ignore" });
  assert.equal(await new Promise((r) => rebuilt.on("exit", r)), 0, "scrollback rebuild");
  server = await startServer(null, { port, dirs });
  await reload(page);
  await until("the marks after the rebuild", async () => /Zebra finches/.test((await page.locator("#sessions li.pinned .title").textContent().catch(() => "")) || ""));
  await until("the title after the rebuild", async () => (await page.locator(".view-title").textContent()) === "Zebra finches");
  // Search: the session's card has its title, agent, project; its hit who said it; filters narrow it.
  await goElsewhere(page, `${server.url}/search?q=zebrafinch`);
  await until("the card", async () => (await page.locator("li.result").count()) === 1);
  assert.equal(await page.locator(".result .hit-title").textContent(), "📌 Zebra finches");
  assert.match(await page.locator(".result .card-link > .meta").textContent(), /^Claude Code · project · 2026-11-01 /);
  assert.match(await page.locator(".result .hit.best .hit-meta").textContent(), /^you · 2026-11-01 /);
  await page.locator('.search-filters select[name="role"]').selectOption("assistant");
  await page.locator(".search-filters button").click();
  await until("no assistant hit", async () => page.url().includes("role=assistant") && (await page.locator(".status", { hasText: "No hits." }).count()) === 1);
  await page.locator('.search-filters select[name="role"]').selectOption("");
  await page.locator('.search-filters input[name="since"]').fill("2026-11-02");
  await page.locator(".search-filters button").click();
  await until("no hit after the day", async () => page.url().includes("since=2026-11-02") && (await page.locator(".status", { hasText: "No hits." }).count()) === 1);
  await shot(page, "17-search-filters");
  await phoneShot(page, "17-search-filters-phone");
  assert.deepEqual(problems.filter((p) => !/WebSocket connection/.test(p) && !/ERR_CONNECTION_REFUSED|net::ERR/.test(p)), []);
  await context.close();
  await server.stop();
});

test("18. the HTML export opens from disk with the network off: every photo shows, byte-exact, and nothing is requested", async () => {
  const server = await startServer("photos40");
  const res = await fetch(`${server.url}/api/sessions/${SESSION}/export?format=html`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-disposition"), /attachment; filename=".*\.html"/);
  const html = await res.text();
  const file = join(temp(), "export.html");
  writeFileSync(file, html);
  // The photos' bytes, as the transcript has them.
  const sent = readFileSync(join(FIXTURES, "photos40", "p", `${SESSION}.jsonl`), "utf8")
    .trim()
    .split("\n")
    .flatMap((l) => (JSON.parse(l).message.content || []).filter((b) => b.type === "image").map((b) => b.source.data));
  const inline = [...html.matchAll(/src="data:image\/png;base64,([^"]+)"/g)].map((m) => m[1]);
  assert.equal(inline.length, 40);
  assert.deepEqual(inline.map((d) => Buffer.from(d, "base64").toString("hex")), sent.map((d) => Buffer.from(d, "base64").toString("hex")), "byte-exact");
  if (!browser) await newPage().then(({ context }) => context.close());
  for (const viewport of [{ width: 1280, height: 900 }, { width: 390, height: 844 }]) {
    const context = await browser.newContext({ viewport, offline: true });
    const page = await context.newPage();
    const requests = [];
    const problems = [];
    page.on("request", (r) => requests.push(r.url()));
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    page.on("pageerror", (e) => problems.push(e.message));
    await page.goto(`file://${file}`);
    const loaded = await page.evaluate(() => [...document.images].map((i) => i.complete && i.naturalWidth > 0));
    assert.equal(loaded.length, 40);
    assert.ok(loaded.every(Boolean), "every photo shows");
    assert.deepEqual(requests.filter((u) => !u.startsWith("file:") && !u.startsWith("data:")), []);
    assert.deepEqual(problems, []);
    await page.evaluate(() => window.scrollTo(0, 400));
    await shot(page, `18-export-${viewport.width < 600 ? "phone" : "laptop"}`);
    await context.close();
  }
  await server.stop();
});

// The `grouped` tree (tests/browser.rs): four sessions of different days sharing "kestrel".
const TITLED = "6e0a1000-0000-4000-8000-0000000000a1"; // "Kestrel survey plan…", 2026-10-01, 3 hits
const NEWEST = "6e0a1000-0000-4000-8000-0000000000a2"; // 2026-11-20, 1 hit
const TOOL = "6e0a1000-0000-4000-8000-0000000000a3"; // 2026-11-10, 2 hits in a tool's input and output
const LONG = "6e0a1000-0000-4000-8000-0000000000a4"; // "Long bird log", 2026-09-15, 300 entries, 4 hits

/** The search page's cards, in order: each session's id. */
const cardOrder = (page) => page.locator("li.result").evaluateAll((lis) => lis.map((li) => li.dataset.session));

/** Whether the entry marked as looked for is within the conversation's view. */
const targetInView = (page) =>
  page.evaluate(() => {
    const t = document.querySelectorAll("li.target");
    const s = document.querySelector(".scroller").getBoundingClientRect();
    if (t.length !== 1) return false;
    const r = t[0].getBoundingClientRect();
    return r.bottom > s.top && r.top < s.bottom;
  });

readScenario("19. search results as conversations: a card per session with its hit count, the others on demand, a tool's hit on one line, the query as read, more by cursor", "grouped", async (server) => {
  const { page, problems, context, requests } = await newPage();
  await page.goto(`${server.url}/search?q=kestrel`);
  await until("the cards", async () => (await page.locator("li.result").count()) === 4);
  assert.deepEqual([...(await cardOrder(page))].sort(), [TITLED, NEWEST, TOOL, LONG].sort(), "one card per session");
  assert.match(await page.locator("section.search > .status").textContent(), /^4 sessions with hits$/);
  assert.ok(await page.locator(".search-read").isHidden(), "read as typed: nothing to say");
  const more = await page.locator("li.result").evaluateAll((lis) =>
    Object.fromEntries(lis.map((li) => [li.dataset.session, li.querySelector(".more-hits") ? li.querySelector(".more-hits").textContent : null])),
  );
  assert.deepEqual(more, {
    [LONG]: "3 more hits in this session",
    [TITLED]: "2 more hits in this session",
    [TOOL]: "1 more hit in this session",
    [NEWEST]: null,
  });
  // A card: the session's title, agent, project's last folder and time; its best hit's words.
  const long = page.locator(`li.result[data-session="${LONG}"]`);
  assert.equal(await long.locator(".hit-title").textContent(), "Long bird log");
  // (Over a hub, the card names its host first.)
  const host = server.host ? `${server.host} · ` : "";
  assert.equal(await long.locator(".card-link > .meta").textContent(), `${host}Claude Code · birds · 2026-09-15 08:05`);
  assert.equal(await long.locator(".hit.best mark").textContent(), "kestrel");
  // A tool's hit: "Bash · …" on one line.
  const tool = page.locator(`li.result[data-session="${TOOL}"]`);
  assert.equal(await tool.locator(".hit.best .hit-line").textContent(), "Bash · grep -rn kestrel field-notes/");
  assert.equal(await tool.locator(".hit.best .hit-line").evaluate((e) => getComputedStyle(e).whiteSpace), "nowrap");
  // The other hits, on demand, in conversation order, without the best one.
  await long.locator(".more-hits").click();
  await until("the other hits", async () => (await long.locator(".other-hits a.hit").count()) === 3);
  assert.equal(await long.locator(".more-hits").getAttribute("aria-expanded"), "true");
  assert.deepEqual(await long.locator(".other-hits a.hit .hit-line").allTextContents(), [
    "kestrel sighting at entry 5",
    "kestrel sighting at entry 100",
    "kestrel sighting at entry 180",
  ]);
  const asked = requests.map((u) => new URL(u)).find((u) => u.pathname === "/api/search" && u.searchParams.get("session") === LONG);
  assert.ok(asked, "the session's hits were asked for");
  assert.equal(asked.searchParams.get("sort"), "conversation");
  assert.equal(asked.searchParams.get("group"), "none");
  await tool.locator(".more-hits").click();
  await until("the tool's output", async () => (await tool.locator(".other-hits a.hit").count()) === 1);
  assert.equal(await tool.locator(".other-hits .hit-line").textContent(), "Tool output · field-notes/may.md:3: kestrel pair at the quarry");
  await shot(page, "19-grouped");
  await phoneShot(page, "19-grouped-phone");
  // Closed again, and open once more without asking the server again.
  const asks = () => requests.filter((u) => u.includes(`session=${LONG}`)).length;
  const before = asks();
  await long.locator(".more-hits").click();
  assert.ok(await long.locator(".other-hits").isHidden());
  await long.locator(".more-hits").click();
  assert.equal(await long.locator(".other-hits a.hit").count(), 3);
  assert.equal(asks(), before);
  // One of them opens the session at its entry, with the query.
  await long.locator(".other-hits a.hit", { hasText: "entry 100" }).click();
  await page.waitForURL(new RegExp(`/sessions/${LONG}\\?cursor=\\d+&q=kestrel$`));
  await until("the entry", async () => /kestrel sighting at entry 100/.test((await page.locator("li.target").textContent().catch(() => "")) || ""));
  // The find bar has its hits (its request is done before the page moves on).
  await until("the find bar", async () => /^\d+ \/ 4$/.test((await page.locator(".find-bar .find-count").textContent().catch(() => "")) || ""));
  // How the query was read, when not as typed.
  await goElsewhere(page, `${server.url}/search?q=kestrel%20NOT%20falcon`);
  await until("the cards", async () => (await page.locator("li.result").count()) === 4);
  assert.equal(await page.locator(".search-read .read-as").textContent(), "Searched for: kestrel -falcon");
  // A page at a time: "More results" asks from the cursor the last page gave.
  await goElsewhere(page, `${server.url}/search?q=kestrel&limit=3`);
  await until("the first page", async () => (await page.locator("li.result").count()) === 3);
  assert.match(await page.locator("section.search > .status").textContent(), /^3 sessions so far with hits$/);
  await page.locator("button.more-results").click();
  await until("the second page", async () => (await page.locator("li.result").count()) === 4);
  assert.ok(await page.locator("button.more-results").isHidden(), "nothing more");
  assert.equal(new Set(await cardOrder(page)).size, 4, "no session twice");
  assert.ok(requests.some((u) => new URL(u).pathname === "/api/search" && new URL(u).searchParams.get("cursor") === "3"), "the next page from the cursor");
  // An impossible query: the server's message.
  await goElsewhere(page, `${server.url}/search?q=foo%3Abar`);
  await until("the message", async () => (await page.locator("section.search > .status.error").count()) === 1);
  assert.match(await page.locator("section.search > .status.error").textContent(), /foo/);
  assert.deepEqual(problems.filter((p) => !/^400: .*\/api\/search\?q=foo%3Abar/.test(p) && !/status of 400/.test(p)), []);
  await context.close();
  await server.stop();
});

test("20. search results newest first: the order in the URL, sessions by their last time; the filters still narrow", async () => {
  const server = await startServer("grouped");
  const { page, problems, context, requests } = await newPage();
  await page.goto(`${server.url}/search?q=kestrel`);
  await until("the cards", async () => (await page.locator("li.result").count()) === 4);
  const byRelevance = await cardOrder(page);
  assert.equal(await page.locator('.search-filters select[name="sort"]').inputValue(), "");
  await page.locator('.search-filters select[name="sort"]').selectOption("recent");
  await page.waitForURL(/[?&]sort=recent/);
  await until("the cards newest first", async () => (await page.locator("li.result").count()) === 4 && (await cardOrder(page)).join() !== byRelevance.join());
  const newest = await cardOrder(page);
  assert.deepEqual(newest, [NEWEST, TOOL, TITLED, LONG]);
  // By the sessions' last times, as the API gives them.
  const api = await (await fetch(`${server.url}/api/search?q=kestrel&sort=recent`)).json();
  const last = Object.fromEntries(api.sessions.map((s) => [s.sessionId, s.lastTimestamp]));
  assert.deepEqual(newest, [...newest].sort((a, b) => last[b].localeCompare(last[a])), "newest first");
  const times = await page.locator("li.result").evaluateAll((lis) => lis.map((li) => li.dataset.last));
  assert.deepEqual(times, newest.map((id) => last[id]));
  assert.notDeepEqual(newest, byRelevance, "the order changed");
  assert.ok(requests.some((u) => new URL(u).pathname === "/api/search" && new URL(u).searchParams.get("sort") === "recent"));
  assert.equal(await page.locator('.search-filters select[name="sort"]').inputValue(), "recent", "the control says so");
  await shot(page, "20-recent");
  await phoneShot(page, "20-recent-phone");
  // A filter keeps the order, and the order the filter.
  await goElsewhere(page, `${server.url}/search?q=kestrel&sort=recent&project=%2Fhome%2Ftest%2Fbirds`);
  await until("the project's cards", async () => (await page.locator("li.result").count()) === 2);
  assert.deepEqual(await cardOrder(page), [TITLED, LONG]);
  await page.locator('.search-filters input[name="until"]').fill("2026-09-30");
  await page.locator(".search-filters button").click();
  await until("the older session alone", async () => page.url().includes("until=2026-09-30") && (await cardOrder(page)).join() === LONG);
  assert.ok(page.url().includes("sort=recent"), "the order is kept");
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

readScenario("21. find in a session: opened from a hit, n and N and the buttons step through its hits in order, each entry opened and in view; Ctrl-F and f open it, Esc closes it", "grouped", async (server) => {
  const { page, problems, context } = await newPage();
  await page.goto(`${server.url}/search?q=kestrel`);
  await page.locator(`li.result[data-session="${LONG}"] a.card-link`).click();
  await page.waitForURL(new RegExp(`/sessions/${LONG}\\?cursor=\\d+&q=kestrel$`));
  const count = page.locator(".find-bar .find-count");
  const at = async (i, entry) => {
    // What the page shows, when it is not that.
    const where = () => page.evaluate(() => ({ count: document.querySelector(".find-count").textContent, url: location.search, marked: [...document.querySelectorAll("li.target")].map((li) => li.textContent) }));
    await until(`${i} / 4 at entry ${entry}`, async () =>
      (await count.textContent()) === `${i} / 4` &&
      new RegExp(`sighting at entry ${entry}$`).test(((await page.locator("li.target .bubble").textContent().catch(() => "")) || "").trim()) &&
      (await targetInView(page)),
    ).catch(async (e) => {
      throw new Error(`${e.message}: ${JSON.stringify(await where())}`);
    });
    assert.equal(await page.locator("li.target").count(), 1, "one entry marked");
    const cursor = await page.locator("li.target").getAttribute("data-cursor");
    assert.equal(new URL(page.url()).searchParams.get("cursor"), cursor, "the URL follows");
  };
  // The best hit is the last of the four.
  await at(4, 290);
  assert.equal(await page.locator(".find-bar .find-input").inputValue(), "kestrel");
  await shot(page, "21-find");
  await page.keyboard.press("n"); // round to the first: the start of the session is read
  await at(1, 5);
  await page.keyboard.press("n");
  await at(2, 100);
  await page.keyboard.press("Shift+N");
  await at(1, 5);
  await page.locator(".find-bar button[aria-label^='Next']").click();
  await at(2, 100);
  await page.locator(".find-bar button[aria-label^='Next']").click();
  await at(3, 180);
  await page.locator(".find-bar button[aria-label^='Previous']").click();
  await at(2, 100);
  await page.keyboard.press("Shift+N");
  await page.keyboard.press("Shift+N");
  await at(4, 290);
  await phoneShot(page, "21-find-phone");
  // Esc closes it, and the query leaves the URL.
  await page.keyboard.press("Escape");
  await until("the bar closed", async () => page.locator(".find-bar").isHidden());
  assert.equal(new URL(page.url()).searchParams.get("q"), null);
  await page.keyboard.press("n");
  await sleep(200);
  assert.match((await page.locator("li.target .bubble").textContent()).trim(), /entry 290$/, "n does nothing with the bar closed");
  // Ctrl-F: the bar, with the keyboard in it; a new query from the box.
  await page.keyboard.press("Control+f");
  await until("the bar open", async () => page.locator(".find-bar").isVisible());
  assert.equal(await page.evaluate(() => document.activeElement.className), "find-input");
  await page.keyboard.type("sighting");
  await page.keyboard.press("Enter");
  await at(1, 5);
  await page.keyboard.press("Enter");
  await at(2, 100);
  await page.keyboard.press("Shift+Enter");
  await at(1, 5);
  await page.keyboard.press("Escape");
  await until("the bar closed", async () => page.locator(".find-bar").isHidden());
  // f opens it too.
  await page.keyboard.press("f");
  await until("the bar open", async () => page.locator(".find-bar").isVisible());
  assert.equal(await page.evaluate(() => document.activeElement.className), "find-input");
  await page.keyboard.type("nothing-like-it");
  await page.keyboard.press("Enter");
  await until("no hits", async () => (await count.textContent()) === "No hits");
  await shot(page, "21-find-no-hits");
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

test("22. the palette: Ctrl-K opens it, a title's match first and then the text's hits, arrows and Enter or a click open one, Esc closes it and gives the keyboard back", async () => {
  const server = await startServer("grouped");
  const axe = readFileSync(join(dirname(new URL(import.meta.url).pathname), "node_modules/axe-core/axe.min.js"), "utf8");
  const { page, problems, context } = await newPage();
  await page.goto(`${server.url}/sessions/${NEWEST}`);
  await until("the sessions", async () => (await page.locator("#sessions li").count()) === 4);
  await page.locator("#search-input").focus();
  const dialog = page.locator("#palette");
  const isOpen = () => dialog.evaluate((d) => d.open);
  await page.keyboard.press("Control+k");
  await until("the palette open", isOpen);
  assert.equal(await page.evaluate(() => document.activeElement.id), "palette-input");
  assert.equal(await dialog.getAttribute("role"), "dialog");
  assert.equal(await dialog.getAttribute("aria-modal"), "true");
  await page.keyboard.type("kestrel");
  const options = dialog.locator("[role=option]");
  await until("the titles and the text's hits", async () => (await options.count()) === 5);
  const groups = await dialog.locator("[role=group]").evaluateAll((gs) => gs.map((g) => [g.getAttribute("aria-label"), [...g.querySelectorAll("[role=option]")].map((o) => o.dataset.href)]));
  assert.equal(groups.length, 2);
  assert.deepEqual(groups[0], ["Sessions", [`/sessions/${TITLED}`]], "the title's match first");
  assert.equal(groups[1][0], "In the text");
  assert.deepEqual(groups[1][1].map((h) => new URL(h, server.url).pathname.split("/")[2]).sort(), [TITLED, NEWEST, TOOL, LONG].sort());
  for (const h of groups[1][1]) assert.match(h, /\?cursor=\d+&q=kestrel$/, "a hit opens at its entry, with the query");
  assert.equal(await options.first().getAttribute("aria-selected"), "true");
  assert.equal(await page.locator("#palette-input").getAttribute("aria-activedescendant"), await options.first().getAttribute("id"));
  assert.equal(await dialog.locator("[role=option] mark").first().textContent(), "kestrel");
  // The keyboard stays in it.
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement.id), "palette-input");
  await shot(page, "22-palette");
  await phoneShot(page, "22-palette-phone");
  await noSeriousViolation(page, axe, "the palette");
  // Esc closes it; the keyboard is back where it was.
  await page.keyboard.press("Escape");
  await until("the palette closed", async () => !(await isOpen()));
  assert.equal(await page.evaluate(() => document.activeElement.id), "search-input");
  // Cmd-K; the arrows to the long session's hit; Enter opens it there, with the find bar.
  await page.locator("#search-input").blur();
  await page.keyboard.press("Meta+k");
  await until("the palette open", isOpen);
  assert.equal(await page.locator("#palette-input").inputValue(), "", "a new palette each time");
  await page.keyboard.type("kestrel");
  await until("the options", async () => (await options.count()) === 5);
  const hrefs = await options.evaluateAll((os) => os.map((o) => o.dataset.href));
  const target = hrefs.findIndex((h) => h.startsWith(`/sessions/${LONG}?`));
  for (let i = 0; i < target; i++) await page.keyboard.press("ArrowDown");
  assert.match(await dialog.locator("[role=option][aria-selected=true]").textContent(), /Long bird log/);
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowUp");
  await page.keyboard.press("Enter");
  await page.waitForURL(new RegExp(`/sessions/${LONG}\\?cursor=\\d+&q=kestrel$`));
  assert.ok(!(await isOpen()));
  await until("the find bar at the hit", async () => (await page.locator(".find-bar .find-count").textContent()) === "4 / 4" && (await targetInView(page)));
  // The mouse: a title's match opens its session.
  await page.keyboard.press("Control+k");
  await until("the palette open", isOpen);
  await page.keyboard.type("moorland");
  await until("the title's match", async () => (await dialog.locator("[role=group][aria-label=Sessions] [role=option]").count()) === 1);
  await dialog.locator("[role=group][aria-label=Sessions] [role=option]").click();
  await page.waitForURL(new RegExp(`/sessions/${NEWEST}$`));
  assert.ok(!(await isOpen()));
  await until("the session", async () => (await page.locator("li.entry", { hasText: "Notes on the moorland walk" }).count()) === 1);
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

/** axe-core's copy, for the scenarios below. */
const AXE = () => readFileSync(join(dirname(new URL(import.meta.url).pathname), "node_modules/axe-core/axe.min.js"), "utf8");

/** No serious violation on the page as it is, in the dark theme and the light one. */
async function auditBothThemes(page, name) {
  const axe = AXE();
  for (const theme of ["dark", "light"]) {
    await page.evaluate((t) => (document.documentElement.dataset.theme = t), theme);
    await noSeriousViolation(page, axe, `${name} (${theme})`);
  }
  await page.evaluate(() => delete document.documentElement.dataset.theme);
}

/** A tree of Claude Code transcripts written here, `{ "p/ID.jsonl": [line objects] }`, under a
 * server's base; the server is started over it and its sessions awaited. */
async function startOver(files, options = {}) {
  const base = temp();
  for (const [rel, lines] of Object.entries(files)) {
    const path = join(base, "projects", rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, lines.map((l) => JSON.stringify(l) + "\n").join(""));
  }
  const server = await startServer(null, { ...options, dirs: { base } });
  await until("the sessions listed", async () => (await (await fetch(`${server.url}/api/sessions`)).json()).sessions.length >= Object.keys(files).length);
  return server;
}

test("23. without an engine there is no composer and no New chat, a line says why, and a new chat's page says none can start; with one, both are there", async () => {
  const server = await startServer("history");
  const { page, problems, context } = await newPage();
  await page.goto(`${server.url}/sessions/${SESSION}`);
  await until("the history", async () => (await countEntries(page)) >= 50);
  const note = page.locator(".conversation .no-engine");
  await note.waitFor();
  assert.match(await note.textContent(), /runs no engine.*scrollback serve --engine CMD/);
  assert.equal(await page.locator(".composer").count(), 0, "no composer");
  assert.ok(await page.locator("#new-chat").isHidden(), "no New chat");
  await shot(page, "23-no-engine");
  // On a phone, one line under what is being read (it was four): why, not how.
  await page.setViewportSize({ width: 390, height: 844 });
  await until("the phone's line", async () => (await page.locator(".no-engine .how").isHidden()));
  const { lines, height, text } = await note.evaluate((p) => ({
    lines: p.querySelector(".why").getClientRects().length,
    height: p.getBoundingClientRect().height,
    text: p.innerText,
  }));
  assert.equal(text.trim(), "Read only: this server runs no engine.");
  assert.ok(lines === 1 && height < 48, `the note is one line on a phone (${lines} lines, ${height} px)`);
  await page.setViewportSize({ width: 1280, height: 800 });
  assert.ok(await note.locator(".how").isVisible(), "how to start one, on a laptop");
  await phoneShot(page, "23-no-engine-phone");
  await auditBothThemes(page, "a session without an engine");
  // A chat's own URL, opened anyway: it says no chat can start here.
  await goElsewhere(page, `${server.url}/chats/chat-by-hand`);
  await until("the new chat's line", async () => (await page.locator(".scroller .status").textContent()).includes("no engine"));
  assert.equal(await page.locator(".composer").count(), 0);
  // The server refuses a send, whatever the page does.
  const res = await fetch(`${server.url}/api/chat/send`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ clientMessageId: "m1", chatId: "chat-by-hand", text: "hello" }),
  });
  assert.equal(res.status, 409);
  assert.equal((await res.json()).error.code, "no-engine");
  const boot = await (await fetch(`${server.url}/api/chat/bootstrap?chatId=chat-by-hand`)).json();
  assert.deepEqual(boot.pending, [], "nothing stored");
  await context.close();
  await server.stop();
  // With an engine: the composer and New chat.
  const engined = await startServer("history", { engine: delayedEngine(0) });
  const second = await newPage();
  await second.page.goto(`${engined.url}/sessions/${SESSION}`);
  await second.page.locator(".composer textarea").waitFor();
  await until("New chat", async () => second.page.locator("#new-chat").isVisible());
  assert.equal(await second.page.locator(".no-engine").count(), 0);
  await shot(second.page, "23-engine");
  await phoneShot(second.page, "23-engine-phone");
  assert.deepEqual([...problems, ...second.problems], []);
  await second.context.close();
  await engined.stop();
});

test("24. an empty viewer names the roots it looked in and how to add one; usage with nothing says so; the status page shows the roots, the data directory, the index, the vault, the push, the engine and the version", async () => {
  const server = await startServer(null, { roots: ["codex:codex-sessions"] });
  const { page, problems, context } = await newPage();
  await page.goto(`${server.url}/`);
  const help = page.locator(".empty-help");
  await until("the roots looked in", async () => (await help.locator(".roots li").count()) === 2);
  const text = await help.textContent();
  assert.match(text, /No sessions yet/);
  assert.ok(text.includes(`${server.transcripts} (does not exist)`), text);
  assert.ok(text.includes(`${server.transcripts}/codex-sessions (does not exist)`), text);
  assert.match(text, /scrollback serve --root FORMAT:DIR/);
  // The agents it names are the server's own (/api/info), every one of them.
  const info = await (await fetch(`${server.url}/api/info`)).json();
  const names = info.agents.map((a) => a.name);
  assert.ok(names.length >= 8, JSON.stringify(names));
  assert.ok(text.includes(`FORMAT is an agent's name: ${names.slice(0, -1).join(", ")} or ${names.at(-1)};`), text);
  assert.doesNotMatch(text, /New chat/);
  await shot(page, "24-empty");
  await phoneShot(page, "24-empty-phone");
  await auditBothThemes(page, "the empty viewer");
  // Usage with no responses: a line, not empty tables and a cost of nothing.
  await page.locator("a.nav", { hasText: "Usage" }).click();
  await until("the usage line", async () => (await page.locator(".usage-body .status").count()) > 0 && !(await page.locator(".usage-body").textContent()).includes("Loading"));
  assert.match(await page.locator(".usage-body").textContent(), /No usage recorded yet/);
  assert.equal(await page.locator(".usage-table").count(), 0);
  assert.doesNotMatch(await page.locator(".usage-body").textContent(), /\$0\.0000/);
  await shot(page, "24-usage-empty");
  await phoneShot(page, "24-usage-empty-phone");
  await auditBothThemes(page, "usage with nothing");
  // The status page, from the top bar, at its own URL.
  await page.locator("a.nav", { hasText: "Status" }).click();
  await page.waitForURL(`${server.url}/status`);
  const list = page.locator(".status-list");
  await list.waitFor();
  const row = async (term) => (await list.locator("dt", { hasText: new RegExp(`^${term}$`) }).locator("xpath=following-sibling::dd[1]").textContent());
  assert.equal(await row("Data directory"), server.data);
  assert.match(await row("Version"), /^\d+\.\d+\.\d+/);
  assert.match(await row("Engine"), /none: .*scrollback serve --engine CMD/);
  assert.match(await row("Vault"), /^(on|off)/);
  assert.equal(await row("Push"), "none");
  assert.match(await row("Index"), /0 sessions, 0 entries/);
  // Sizes in the largest unit that keeps them at 1 or more (a disk's free space read 74712.2 MB).
  const free = await row("Free space");
  assert.match(free, /^(unknown|\d+ B|\d{1,4}\.\d [KMGTP]B)$/, free);
  assert.ok(free === "unknown" || / B$/.test(free) || Number(free.split(" ")[0]) < 1024, free);
  assert.equal(await page.locator(".status-page .roots li").count(), 2);
  await shot(page, "24-status");
  await phoneShot(page, "24-status-phone");
  await auditBothThemes(page, "the status page");
  // Opened by its URL, over a tree with a session: the root's transcripts and sessions.
  await context.close();
  await server.stop();
  const full = await startServer("history");
  const second = await newPage();
  await second.page.goto(`${full.url}/status`);
  await until("the root's counts", async () => ((await second.page.locator(".status-page .roots li").first().textContent()) || "").includes("1 transcript, 1 session)"));
  assert.match(await second.page.locator(".status-list").textContent(), /1 session, 300 entries/);
  await shot(second.page, "24-status-full");
  assert.deepEqual([...problems, ...second.problems], []);
  await second.context.close();
  await full.stop();
});

test("25. a session whose entries are all on side chains says so and offers them; one click shows them", async () => {
  const id = "5e55a000-0000-4000-8000-0000000000aa";
  const line = (n, kind, text) => ({
    parentUuid: n > 1 ? `sc-${n - 1}` : null, isSidechain: true, userType: "external", cwd: "/home/test/project", sessionId: id,
    agentId: "a1", type: kind, uuid: `sc-${n}`, timestamp: `2026-11-03T10:00:0${n}.000Z`,
    message: { role: kind, content: [{ type: "text", text }] },
  });
  const server = await startOver({ [`p/${id}.jsonl`]: [line(1, "user", "Read the parser for torn lines"), line(2, "assistant", "The sub-agent read it: the last line is kept.")] });
  const { page, problems, context } = await newPage();
  await page.goto(`${server.url}/sessions/${id}`);
  const hint = page.locator(".scroller .status", { hasText: "side chain" });
  await hint.waitFor();
  assert.equal(await countEntries(page), 0);
  await shot(page, "25-sidechains-hint");
  await phoneShot(page, "25-sidechains-hint-phone");
  await auditBothThemes(page, "a session of side chains only");
  await hint.locator("a", { hasText: "Show side chains" }).click();
  await page.waitForURL(`${server.url}/sessions/${id}?sidechains=true`);
  await until("the side chain's entries", async () => (await countEntries(page)) === 2);
  assert.equal(await page.locator(".scroller .status", { hasText: "side chain" }).count(), 0);
  await shot(page, "25-sidechains-shown");
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

test("26. ? shows every key, the keyboard goes into it, Esc closes it and gives the keyboard back; the status page opens it too", async () => {
  const server = await startServer("history");
  const { page, problems, context } = await newPage();
  await page.goto(`${server.url}/sessions/${SESSION}`);
  await until("the history", async () => (await countEntries(page)) >= 50);
  const dialog = page.locator("#keys");
  const isOpen = () => dialog.evaluate((d) => d.open);
  await page.locator("#search-input").focus();
  await page.keyboard.press("Escape");
  // `?` typed into a text box is text, not the help.
  await page.keyboard.type("?");
  assert.ok(!(await isOpen()));
  assert.equal(await page.locator("#search-input").inputValue(), "?");
  await page.locator("#search-input").fill("");
  await page.locator("body").click({ position: { x: 5, y: 400 } });
  await page.keyboard.press("?");
  await until("the keys open", isOpen);
  assert.equal(await page.evaluate(() => document.activeElement.id), "keys-close", "the keyboard is in the dialog");
  const text = await dialog.textContent();
  for (const what of ["Show these keys", "Go to a session", "Search every session", "Next message", "Previous message", "Find in this session", "Next hit", "Previous hit", "send", "The start of the session", "The end of the session", "Focused mode", "The outline"]) {
    assert.ok(text.includes(what), `the help names: ${what}`);
  }
  assert.ok((await dialog.locator("kbd").count()) >= 12);
  await shot(page, "26-keys");
  await phoneShot(page, "26-keys-phone");
  await auditBothThemes(page, "the keys' help");
  await page.keyboard.press("Escape");
  await until("the keys closed", async () => !(await isOpen()));
  // The keys work again at once: j moves to a message.
  await page.keyboard.press("k");
  assert.equal(await page.locator("li.entry.focused").count(), 1);
  // The status page's button opens it, and Close gives the keyboard back to the button.
  await goElsewhere(page, `${server.url}/status`);
  const button = page.locator("button", { hasText: "Keyboard shortcuts" });
  await button.click();
  await until("the keys open", isOpen);
  await page.locator("#keys-close").click();
  await until("the keys closed", async () => !(await isOpen()));
  assert.equal(await page.evaluate(() => document.activeElement.textContent), "Keyboard shortcuts (?)");
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});


// Reading a session (#35): the harness's own tags, a tool call and its result in one card, a
// sub-agent and its parent linked both ways, a one-line header with its details on demand, a small
// photo scaled up. Each at a laptop's width and a phone's, each with a screenshot.

const axeSource = () => readFileSync(join(dirname(new URL(import.meta.url).pathname), "node_modules/axe-core/axe.min.js"), "utf8");

/** The history of `sessionId` as the API gives it (with side chains), for an entry's cursor. */
async function historyOf(server, sessionId) {
  const res = await fetch(`${server.url}/api/sessions/${sessionId}/history?limit=500&sidechains=true`);
  return (await res.json()).entries;
}

test("40. the harness's tags read as what they are: a slash command as a chip, its output as output, an IDE selection and a system reminder folded, [Image #1] naming its photo", async () => {
  const server = await startServer("harness");
  for (const viewport of [{ width: 1280, height: 900 }, { width: 390, height: 844 }]) {
    const phone = viewport.width < 600;
    const { page, problems, context } = await newPage(viewport);
    const entries = await historyOf(server, SESSION);
    const first = entries.find((e) => e.uuid === "h1").cursor;
    await page.goto(`${server.url}/sessions/${SESSION}?cursor=${first}`);
    await until("the slash command", async () => (await page.locator(".command").count()) === 1);
    assert.equal(await page.locator(".command .command-name").textContent(), "/review");
    assert.equal(await page.locator(".command .command-args").textContent(), "src/lib.rs");
    const out = page.locator(".command-output");
    assert.equal(await out.locator("pre").textContent(), "Reviewed 3 files: no findings.");
    assert.equal(await out.locator(".output-label").textContent(), "Output");
    assert.match(await page.locator("li.entry", { has: out }).locator(".byline").textContent(), /^Command output/);
    // Context folded under what it is; the person's words on their own.
    const contexts = page.locator("details.context");
    assert.deepEqual(await contexts.locator("summary").allTextContents(), ["IDE selection", "System reminder"]);
    for (const d of await contexts.all()) assert.equal(await d.evaluate((el) => el.open), false);
    const asked = page.locator("li.entry", { hasText: "Why does this function fail?" });
    assert.equal((await asked.locator(".markdown").textContent()).trim(), "Why does this function fail?");
    await contexts.first().locator("summary").click();
    assert.match(await contexts.first().locator("pre").textContent(), /selected lines 3 to 4/);
    // The photo the text refers to: named under it, and the placeholder a chip that names it.
    const named = page.locator("figure.named-photo");
    assert.equal(await named.locator("figcaption").textContent(), "Image #1");
    assert.equal(await page.locator(".markdown .image-ref").textContent(), "Image #1");
    assert.equal(await page.locator(".markdown .image-ref").getAttribute("data-image"), "1");
    // No tag of the harness is left as text anywhere.
    const text = await page.locator("ol.entries:not(.pending-list)").textContent();
    for (const tag of ["<command-name>", "<local-command-stdout>", "<ide_selection>", "<system-reminder>", "[Image #1]"]) {
      assert.ok(!text.includes(tag), `${tag} is not shown raw`);
    }
    await page.locator("li.entry", { has: page.locator(".command") }).scrollIntoViewIfNeeded();
    if (phone) await phoneShot(page, "40-harness-phone");
    else await shot(page, "40-harness-laptop");
    assert.deepEqual(problems, []);
    await context.close();
  }
  await server.stop();
});

test("41. a tool result sits under its call in one card, a diff in place of the raw input; a result whose call is on an older page joins it when that page loads, and a live one when it arrives; a link to the result lands on the call", async () => {
  const server = await startServer("harness");
  const entries = await historyOf(server, SESSION);
  const cursorOf = (uuid) => entries.find((e) => e.uuid === uuid).cursor;
  for (const viewport of [{ width: 1280, height: 900 }, { width: 390, height: 844 }]) {
    const phone = viewport.width < 600;
    const { page, problems, context } = await newPage(viewport);
    // The newest page holds the Grep call's result; the call is on the page before it.
    const newest = (await (await fetch(`${server.url}/api/sessions/${SESSION}/history?limit=50`)).json()).entries.map((e) => e.uuid);
    assert.ok(newest.includes("h68") && !newest.includes("h67"), "the call and its result are on two pages");
    await page.goto(`${server.url}/sessions/${SESSION}`);
    await until("the newest page", async () => (await page.locator("li.entry", { hasText: "later line 117" }).count()) === 1);
    const grepResult = page.locator(`li[data-cursor="${cursorOf("h68")}"]`);
    await scrollToStart(page);
    // Its call loaded: the result is in the call's card, its own entry hidden.
    const grep = page.locator(".tool-card", { hasText: "Grep" });
    await until("the Grep result joined", async () => (await grep.locator("details.result").count()) === 1);
    assert.equal(await grepResult.isHidden(), true);
    assert.match(await grep.locator("details.result summary").textContent(), /src\/lib\.rs:3/);
    // The first exchange: two calls in one entry, each result (from the next entry) in its card.
    const edit = page.locator(".tool-card", { hasText: "Edit" });
    const bash = page.locator(".tool-card", { hasText: "cargo test" });
    assert.match(await edit.locator("details.result summary").textContent(), /has been updated/);
    assert.match(await bash.locator("details.result summary").textContent(), /12 passed/);
    assert.equal(await page.locator(`li[data-cursor="${cursorOf("h6")}"]`).isHidden(), true);
    // A diff replaces its input: no raw JSON under it.
    await edit.locator("details.call > summary").click();
    assert.equal(await edit.locator(".diff").count(), 1);
    assert.equal(await edit.locator(".tool-input").count(), 0, "the input is not repeated under its diff");
    await bash.locator("details.call > summary").click();
    assert.match(await bash.locator(".tool-input").textContent(), /"command": "cargo test"/, "a call without a diff shows its input");
    await edit.scrollIntoViewIfNeeded();
    if (phone) await phoneShot(page, "41-tool-cards-phone");
    else await shot(page, "41-tool-cards-laptop");
    // A link to the result's entry lands on its call's card.
    await goElsewhere(page, `${server.url}/sessions/${SESSION}?cursor=${cursorOf("h6")}`);
    await until("the marked call", async () => (await page.locator("li.target").count()) === 1);
    assert.equal(await page.locator(`li.target[data-cursor="${cursorOf("h5")}"]`).count(), 1, "the call's entry is marked");
    assert.deepEqual(problems, []);
    await context.close();
  }
  // Live: a call arrives, then its result, which joins it.
  const { page, problems, context } = await newPage();
  await page.goto(`${server.url}/sessions/${SESSION}`);
  await until("the newest page", async () => (await page.locator("li.entry", { hasText: "later line 117" }).count()) === 1);
  const stamp = { uuid: "h200", timestamp: "2026-11-04T10:00:00.000Z" };
  const liveLine = (uuid, ts, kind, content) => JSON.stringify({ parentUuid: null, isSidechain: false, cwd: "/home/test/project", sessionId: SESSION, type: kind, uuid, timestamp: ts, message: { role: kind, content } }) + "\n";
  appendFileSync(server.file, liveLine(stamp.uuid, stamp.timestamp, "assistant", [{ type: "tool_use", id: "live1", name: "Read", input: { file_path: "README.md" } }]));
  const card = page.locator(".tool-card", { hasText: "README.md" });
  await until("the live call", async () => (await card.count()) === 1);
  appendFileSync(server.file, liveLine("h201", "2026-11-04T10:00:01.000Z", "user", [{ type: "tool_result", tool_use_id: "live1", content: "# scrollback" }]));
  await until("the live result in its card", async () => (await card.locator("details.result").count()) === 1);
  assert.equal(await page.locator("li.entry:not([hidden])", { hasText: "# scrollback" }).count(), 1, "shown once, in the card");
  await shot(page, "41-tool-card-live");
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

test("42. a sub-agent links to the call that ran it, and the call links to the sub-agent", async () => {
  const server = await startServer("subagents");
  const agentFile = join(server.transcripts, "p", SESSION, "subagents", "agent-a1.jsonl");
  mkdirSync(dirname(agentFile), { recursive: true });
  const agentLine = (n, s, kind, content) => JSON.stringify({
    parentUuid: null, isSidechain: true, agentId: "a1", cwd: "/home/test/project", sessionId: SESSION, type: kind,
    uuid: `a1-${n}`, timestamp: `2026-11-02T10:00:${String(s).padStart(2, "0")}.000Z`, message: { role: kind, content },
  }) + "\n";
  writeFileSync(agentFile, agentLine(1, 5, "user", "read the parser") + agentLine(2, 10, "assistant", [{ type: "text", text: "The sub-agent reads lines.rs" }]));
  await until("the sub-agent indexed", async () => (await historyOf(server, SESSION)).some((e) => e.uuid === "a1-2"));
  for (const viewport of [{ width: 1280, height: 900 }, { width: 390, height: 844 }]) {
    const phone = viewport.width < 600;
    const { page, problems, context } = await newPage(viewport);
    await page.goto(`${server.url}/sessions/${SESSION}?sidechains=true`);
    // The parent's call (its result joined to it) links to the sub-agent.
    const down = page.locator(".tool-card a.subagent");
    await until("the link to the sub-agent", async () => (await down.count()) === 1);
    await down.click();
    await page.waitForURL(/\?cursor=\d+&sidechains=true/);
    await until("the sub-agent's first entry", async () => /read the parser/.test((await page.locator("li.target").textContent().catch(() => "")) || ""));
    // Its first entry links back up to the call that ran it.
    const up = page.locator("li.target a.subagent.parent");
    assert.match(await up.textContent(), /Sub-agent a1: back to the call that ran it/);
    if (phone) await phoneShot(page, "42-subagent-parent-phone");
    else await shot(page, "42-subagent-parent-laptop");
    await up.click();
    await until("the call marked", async () => /Task/.test((await page.locator("li.target").textContent().catch(() => "")) || ""));
    assert.equal(await page.locator("li.target .tool-card a.subagent").count(), 1);
    assert.deepEqual(problems, []);
    await context.close();
  }
  await server.stop();
});

test("43. the header is one line with its details on demand: id, resume command to copy, exports (Markdown too); on a phone, header and composer take at most 15% of the height", async () => {
  const server = await startServer("harness", { engine: delayedEngine(0) });
  for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
    const phone = viewport.width < 600;
    const { page, problems, context } = await newPage(viewport);
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await page.goto(`${server.url}/sessions/${SESSION}`);
    await until("the header's line", async () => /Claude Code · project · 2026-11-04 09:01/.test(await page.locator(".head-meta").textContent()));
    const head = page.locator(".conv-head");
    const line = page.locator(".head-line");
    const lineHeight = (await line.boundingBox()).height;
    assert.ok(lineHeight < 40, `one line (${lineHeight} px)`);
    assert.equal(await page.locator(".head-details").isHidden(), true, "the details wait to be asked for");
    const composer = page.locator("form.composer");
    if (phone) {
      await composer.waitFor();
      const used = (await head.boundingBox()).height + (await composer.boundingBox()).height;
      assert.ok(used <= 0.15 * 844, `header and composer take ${used} px of 844 (at most ${0.15 * 844})`);
      await phoneShot(page, "43-header-phone");
    } else {
      await shot(page, "43-header-laptop");
    }
    // The details: what it is, its id, the resume command (copied), the exports.
    const toggle = page.locator(".details-toggle");
    assert.equal(await toggle.getAttribute("aria-expanded"), "false");
    await toggle.click();
    assert.equal(await toggle.getAttribute("aria-expanded"), "true");
    const details = page.locator(".head-details");
    assert.match(await details.locator(".about-line").textContent(), /Claude Code · \/home\/test\/project · branch feature\/harness · .* · 117 entries · 1 photo$/);
    assert.equal(await details.locator(".session-id").textContent(), SESSION);
    assert.equal(await details.locator("code.resume").textContent(), `claude --resume ${SESSION}`);
    await details.locator("button.copy").click();
    await until("copied", async () => (await details.locator(".copied").textContent()) === "Copied");
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `claude --resume ${SESSION}`);
    const exports = await details.locator("a.export").evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute("href")]));
    assert.deepEqual(exports.map(([label]) => label), ["HTML", "Markdown", "JSONL"]);
    const md = await fetch(new URL(exports[1][1], server.url));
    assert.equal(md.status, 200);
    assert.match(md.headers.get("content-disposition"), /\.md"/);
    assert.match(await md.text(), /^# /);
    // Rename and pin are there too.
    assert.equal(await details.locator(".conv-actions button", { hasText: "Rename" }).isVisible(), true);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `nothing wider than the screen (${overflow} px over)`);
    await shot(page, `43-header-details-${phone ? "phone" : "laptop"}`);
    assert.deepEqual(problems, []);
    await context.close();
  }
  // Codex's and Gemini CLI's own resume commands.
  const other = await startServer("reading", { roots: ["codex:codex", "gemini:gemini"] });
  for (const [id, cmd] of [["01a0c0de-0000-7000-8000-0000000000d1", "codex resume"], ["5e55a0de-0000-4000-8000-0000000000d2", "gemini --resume"]]) {
    // (The server answers before its first catch-up ends: wait for the session to be indexed.)
    const about = await until(`${id} indexed`, async () => {
      const res = await fetch(`${other.url}/api/sessions/${id}/about`);
      return res.ok && (await res.json());
    });
    assert.equal(about.resume, `${cmd} ${id}`);
  }
  await other.stop();
  await server.stop();
});

test("44. the lightbox scales a small photo up to a size one can see", async () => {
  const server = await startServer("harness");
  for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
    const phone = viewport.width < 600;
    const { page, problems, context } = await newPage(viewport);
    const entries = await historyOf(server, SESSION);
    await page.goto(`${server.url}/sessions/${SESSION}?cursor=${entries.find((e) => e.uuid === "h4").cursor}`);
    const button = page.locator("figure.named-photo .photo-button");
    await button.waitFor();
    await button.click();
    const img = page.locator("#lightbox-img");
    await until("the photo scaled", async () => (await img.evaluate((i) => i.classList.contains("scaled"))));
    assert.equal(await img.evaluate((i) => i.naturalWidth), 8);
    const box = await img.boundingBox();
    const expected = Math.min(480, viewport.width * 0.92, viewport.height * 0.86);
    assert.ok(Math.abs(box.width - expected) <= 2, `an 8 × 8 photo shown ${box.width} px wide (expected about ${expected})`);
    assert.equal(await img.evaluate((i) => getComputedStyle(i).imageRendering), "pixelated");
    if (phone) await phoneShot(page, "44-lightbox-phone");
    else await shot(page, "44-lightbox-laptop");
    await page.keyboard.press("Escape");
    assert.deepEqual(problems, []);
    await context.close();
  }
  await server.stop();
});

test("45. reading a session: axe-core finds no serious violation in either theme, with the details, a tool card and the harness's context open", async () => {
  const server = await startServer("harness", { engine: delayedEngine(0) });
  const axe = axeSource();
  for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
    const { page, problems, context } = await newPage(viewport);
    const entries = await historyOf(server, SESSION);
    await page.goto(`${server.url}/sessions/${SESSION}?cursor=${entries.find((e) => e.uuid === "h3").cursor}`);
    await until("the cards joined", async () => (await page.locator(".tool-card details.result").count()) >= 2);
    await page.locator(".details-toggle").click();
    await until("the details filled", async () => (await page.locator(".head-details code.resume").count()) === 1);
    await page.locator("details.context").first().locator("summary").click();
    await page.locator(".tool-card", { hasText: "Edit" }).locator("details.call > summary").click();
    for (const theme of ["dark", "light"]) {
      await page.evaluate((t) => (document.documentElement.dataset.theme = t), theme);
      await noSeriousViolation(page, axe, `a session read (${theme}, ${viewport.width} px)`);
      await shot(page, `45-${theme}-${viewport.width < 600 ? "phone" : "laptop"}`);
    }
    assert.deepEqual(problems, []);
    await context.close();
  }
  await server.stop();
});

test("27. the overview at /: cards, charts on labelled axes, heatmap, tops, tool use, response times, edits and sessions equal /api/stats, follow new lines, fit a phone, pass axe-core in both themes", async () => {
  const server = await startServer("grouped");
  const axe = readFileSync(join(dirname(new URL(import.meta.url).pathname), "node_modules/axe-core/axe.min.js"), "utf8");
  const { page, problems, context } = await newPage();
  // All of the history (the default is the last 30 days of today, past the fixture's).
  await page.goto(`${server.url}/?range=all`);
  const card = (name) => page.locator(`.stat-card[data-stat=${name}] .stat-value`);
  await until("the cards", async () => (await card("messages").count()) === 1);
  // The page's figures are those of /api/stats in the page's time zone.
  const stats = () => page.evaluate(async () => {
    const tz = Math.max(-12, Math.min(14, Math.round(-new Date().getTimezoneOffset() / 60)));
    return (await fetch(`/api/stats?tz=${tz}`)).json();
  });
  const same = async () => {
    const s = await stats();
    const n = (v) => Number(v).toLocaleString("en-US");
    // Each figure as its title has it: exact (the text is compact).
    const exact = (name) => card(name).locator("span").getAttribute("title");
    const shown = { sessions: await exact("sessions"), messages: await exact("messages"), tokens: await exact("tokens"), tools: await exact("tools") };
    const want = { sessions: n(s.totals.sessions), messages: n(s.totals.messages), tokens: n(s.totals.tokens), tools: n(s.totals.toolCalls) };
    // A cell as its title has it (a cut name, a compact number), else its text.
    const rows = async (caption) => page.locator("table.overview-table", { has: page.locator(`caption:text-is("${caption}")`) }).locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((c) => c.querySelector("[title]")?.title ?? c.textContent)));
    const tools = (await rows("Tool use")).map((r) => [r[0], r[1], r[2]]);
    const wantTools = s.tools.map((t) => [t.tool, n(t.calls), n(t.failures)]);
    const longest = (await rows("Longest sessions")).map((r) => [r[0], r[2]]);
    const wantLongest = s.longestSessions.map((x) => [x.title || x.sessionId, n(x.messages)]);
    const edits = (await rows("Recent edits")).filter((r) => r.length > 1).map((r) => r[0]);
    return JSON.stringify([shown, tools, longest, edits]) === JSON.stringify([want, wantTools, wantLongest, s.recentEdits.map((e) => e.path)]) ? s : null;
  };
  const first = await until("the page's figures equal /api/stats", same);
  assert.equal(first.totals.sessions, 4);
  assert.equal(first.totals.messages, 300 + 4 + 3 + 4);
  assert.equal(await card("cost").textContent(), "$0", "no response yet: a cost of nothing");
  // Labelled axes: four charts per day, the hours, and the heatmap's weekdays.
  assert.equal(await page.locator("svg.chart:not(.heatmap)").count(), 5);
  const dayLabels = await page.locator("svg.chart").first().locator("text.axis").allTextContents();
  assert.ok(dayLabels.includes("09-15") && dayLabels.some((t) => /^\d\d-\d\d$/.test(t) && t !== "09-15"), `days on the axis: ${dayLabels}`);
  // Counts on whole numbers: an axis up to one session a day has no half a session.
  for (const chart of await page.locator("svg.chart:not(.heatmap):not(.usage-chart)").all()) {
    const ys = await chart.locator('text.axis[text-anchor="end"]').allTextContents();
    assert.ok(ys.every((t) => !/^\d+\.\d+$/.test(t)), `a count's axis: ${ys}`);
  }
  const heat = await page.locator("svg.heatmap text.axis").allTextContents();
  for (const d of ["Sun", "Wed", "Sat", "00", "12"]) assert.ok(heat.includes(d), `${d} on the heatmap: ${heat}`);
  assert.ok(await page.locator("table.overview-table caption", { hasText: "Response time" }).count());
  await shot(page, "27-overview");
  await phoneShot(page, "27-overview-phone");
  // New lines: a prompt, and an answer that edits a file and states its usage.
  const at = (s) => `2026-11-21T09:00:0${s}.000Z`;
  const line = (type, n, content, extra = {}) =>
    JSON.stringify({ type, sessionId: NEWEST, uuid: `live-${n}`, timestamp: at(n), cwd: "/home/test/moor", message: { role: type, content, ...extra } }) + "\n";
  appendFileSync(
    join(server.transcripts, "p", `${NEWEST}.jsonl`),
    line("user", 1, "Fix the walk notes") +
      line("assistant", 2, [{ type: "tool_use", id: "e9", name: "Edit", input: { file_path: "/home/test/moor/walk.md", old_string: "a\n", new_string: "b\nc\n" } }], {
        id: "msg-live", model: "claude-sonnet-4-5-20250929", usage: { input_tokens: 10, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
      }),
  );
  const after = await until("the overview followed the new lines", async () => {
    const s = await same();
    return s && s.totals.messages === first.totals.messages + 2 && s.recentEdits.length === 1 ? s : null;
  }, 15000);
  assert.equal(after.recentEdits[0].path, "/home/test/moor/walk.md");
  assert.equal(after.totals.tokens, 30);
  await shot(page, "27-overview-live");
  await phoneShot(page, "27-overview-live-phone");
  for (const theme of ["dark", "light"]) {
    await page.evaluate((t) => (document.documentElement.dataset.theme = t), theme);
    await noSeriousViolation(page, axe, `the overview (${theme})`);
  }
  await page.evaluate(() => (document.documentElement.dataset.theme = "dark"));
  await shot(page, "27-overview-dark");
  // The usage page's chart names its days.
  await goElsewhere(page, `${server.url}/usage`);
  await until("the usage chart", async () => (await page.locator("svg.usage-chart").count()) === 1);
  assert.ok((await page.locator("svg.usage-chart text.axis").allTextContents()).includes("11-21"), "the day on the usage chart");
  // Its y axis names three different sums, however small: one response of 30 tokens costs a
  // fraction of a cent, which read $0.00 at its top and its middle.
  const sums = await page.locator('svg.usage-chart text.axis[text-anchor="end"]').allTextContents();
  assert.equal(new Set(sums).size, 3, `the usage chart's y axis: ${sums}`);
  assert.ok(sums.every((t) => /^\$(0|0\.0*[1-9]\d?)$/.test(t)), `the usage chart's y axis: ${sums}`);
  const cut = await page.locator("svg.usage-chart").evaluate((chart) =>
    [...chart.querySelectorAll('text.axis[text-anchor="end"]')].filter((t) => t.getBBox().x < 0).map((t) => t.textContent),
  );
  assert.deepEqual(cut, [], "no label of the y axis starts left of the chart");
  await shot(page, "27-usage");
  await phoneShot(page, "27-usage-phone");
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

test("46. a session of each agent: what the person typed and an answer as text, every photo loaded, the agent named in the header", async () => {
  const every = JSON.parse(readFileSync(join(FIXTURES, "every", "every.json"), "utf8"));
  const server = await startServer("every", { roots: every.roots });
  await until("every session indexed", async () => {
    const res = await fetch(`${server.url}/api/sessions?limit=100`);
    return res.ok && (await res.json()).sessions.length >= every.sessions.length;
  });
  const { page, problems, context } = await newPage();
  for (const s of every.sessions) {
    await goElsewhere(page, `${server.url}/sessions/${s.session}`);
    const said = (side, words) => page.locator(`li.entry.${side} .text`, { hasText: words });
    await until(`${s.agent}: the answer "${s.answer}" as text`, async () => (await said("assistant", s.answer).count()) >= 1);
    assert.ok((await said("user", s.user).count()) >= 1, `${s.agent}: what the person typed, "${s.user}", as text`);
    // Parts, not the line: no text of the conversation is a JSON object.
    const raw = await page.locator("li.entry .text").evaluateAll((ts) => ts.map((t) => t.textContent).filter((t) => /^\s*[[{]\s*"/.test(t) || t.includes('"type":')));
    assert.deepEqual(raw, [], `${s.agent}: no raw JSON shown`);
    await until(`${s.agent}: the header names ${s.display}`, async () => (await page.locator(".head-meta").textContent()).includes(s.display));
    // Every photo written is an <img> that loaded, at its size (those in a folded tool result or
    // group once it is opened, as a reader does).
    const loaded = await until(`${s.agent}: ${s.photos.length} photos loaded`, () => page.evaluate((n) => {
      for (const d of document.querySelectorAll("li.entry details")) if (d.querySelector("img.photo")) d.open = true;
      const imgs = [...document.querySelectorAll("li.entry img.photo")];
      imgs.forEach((i) => i.scrollIntoView());
      const sizes = imgs.map((i) => [i.naturalWidth, i.naturalHeight]);
      return imgs.length >= n && imgs.every((i) => i.complete && i.naturalWidth > 0) && sizes;
    }, s.photos.length));
    for (const size of s.photos) {
      assert.ok(loaded.some(([w, h]) => w === size[0] && h === size[1]), `${s.agent}: the ${size[0]}x${size[1]} photo is shown (${JSON.stringify(loaded)})`);
    }
    await scrollToStart(page);
    await shot(page, `46-${s.agent}`);
  }
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

test("47. a team's hub: serve --postgres draws the overview of every host, lists every host's sessions with a host filter, opens one with its photos, searches all hosts, exports it in every format, shows each host's last push on the status page, and offers nothing that would change it", { skip: !HUB && "no PostgreSQL" }, async () => {
  // Two hosts index their trees and push them to the hub.
  for (const [name, host] of [["photos40", "laptop"], ["grouped", "desk"]]) {
    const base = temp();
    const transcripts = join(base, "projects");
    cpSync(join(FIXTURES, name), transcripts, { recursive: true });
    const data = join(base, "data");
    for (const args of [["index", "--transcripts", transcripts, "--data-dir", data], ["push", "--data-dir", data, "--postgres", HUB, "--host", host]]) {
      const run = spawnSync(BIN, args, { env: { ...process.env, HOME: base, RUST_LOG: "scrollback=warn" }, encoding: "utf8" });
      assert.equal(run.status, 0, `${args[0]} as ${host}: ${run.stderr}`);
    }
  }
  const server = await startServer(null, { args: ["--postgres", HUB] });
  const { page, problems, context } = await newPage();
  await page.goto(`${server.url}/?range=all`);
  // The overview draws both hosts' figures, each session in its lists with its host; and the list
  // has both hosts' sessions.
  const stats = await (await fetch(`${server.url}/api/stats?tz=0`)).json();
  assert.ok(stats.totals.sessions >= 2 && stats.longestSessions.length > 0, JSON.stringify(stats.totals));
  const sessions = page.locator('.stat-card[data-stat="sessions"] .stat-value > span');
  await sessions.waitFor();
  assert.equal(Number((await sessions.getAttribute("title")).replace(/\D/g, "")), stats.totals.sessions);
  const longest = page.locator("table.overview-table", { hasText: "Longest sessions" });
  assert.match(await longest.textContent(), / on (laptop|desk)/);
  await shot(page, "47-hub-overview");
  await page.locator('#sessions li[data-host="laptop"]').first().waitFor();
  await page.locator('#sessions li[data-host="desk"]').first().waitFor();
  assert.match(await page.locator('#sessions li[data-host="desk"] .meta').first().textContent(), /^desk · /);
  assert.ok(await page.locator("#filter-host").isVisible(), "the host filter");
  await page.locator("#filter-host").selectOption("desk");
  await until("only desk's sessions", async () => (await page.locator('#sessions li[data-host="laptop"]').count()) === 0);
  assert.ok((await page.locator('#sessions li[data-host="desk"]').count()) > 0);
  await shot(page, "47-hub-list");
  await page.locator("#filter-host").selectOption("");
  await page.locator('#sessions li[data-host="laptop"]').first().waitFor();
  // A session with its photos, and nothing that would change it: no composer, rename, pin or export.
  await goElsewhere(page, `${server.url}/sessions/${SESSION}`);
  await until("a photo shown", () => page.$$eval("img.photo", (imgs) => imgs.some((i) => i.complete && i.naturalWidth > 0)));
  assert.equal(await page.locator(".composer").count(), 0, "no composer");
  assert.match(await page.locator(".conversation .no-engine").textContent(), /team's hub, which is read-only/);
  await page.locator(".details-toggle").click();
  await until("the host in the details", async () => (await page.locator(".facts").textContent()).includes("Hostlaptop"));
  assert.equal(await page.locator(".conv-actions button").count(), 0, "no rename or pin");
  assert.deepEqual(await page.locator(".facts a.export").allTextContents(), ["HTML", "Markdown", "JSONL"], "every export");
  await shot(page, "47-hub-session");
  // Search finds in every host's sessions, and its hit opens the session at that entry.
  await page.locator("#search-input").fill("kestrel");
  await page.locator("#search-input").press("Enter");
  await until("the cards", async () => (await page.locator("li.result").count()) === 4);
  assert.equal(await page.locator('li.result[data-host="desk"]').count(), 4, "every card names its host");
  const hit = page.locator("li.result a.card-link").first();
  assert.match(await hit.locator(".meta").textContent(), /^desk · /);
  assert.match(await hit.locator(".hit.best mark").first().textContent(), /^kestrel$/i);
  await shot(page, "47-hub-search");
  await hit.click();
  await page.locator("li.target").waitFor();
  assert.match(await page.locator("li.target").textContent(), /kestrel/i);
  // The status page says a hub has no index of its own, and shows each host with its last push and
  // what its sessions hold, as the API says.
  await goElsewhere(page, `${server.url}/status`);
  await page.locator(".status-page .hub-note").waitFor();
  const status = await (await fetch(`${server.url}/api/status`)).json();
  assert.deepEqual(status.hosts.map((h) => h.name), ["desk", "laptop"]);
  const rows = page.locator("table.hub-hosts tbody tr");
  await until("both hosts", async () => (await rows.count()) === 2);
  for (const [i, h] of status.hosts.entries()) {
    const cells = await rows.nth(i).locator("td").allTextContents();
    assert.deepEqual(cells.slice(0, 4), [h.name, String(h.sessions), h.entries.toLocaleString("en-US"), String(h.photos)]);
    assert.equal(cells[5], h.lastPushAt.replace("T", " ").replace(/Z$/, ""));
  }
  assert.ok(status.hosts.find((h) => h.name === "laptop").photos > 0 && status.blobs > 0, JSON.stringify(status));
  await shot(page, "47-hub-status");
  await quiet(page);
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

const NAMES_UNTITLED = "5e55a061-0000-4000-8000-000000000001";
const NAMES_HASHED = "5e55a062-0000-4000-8000-000000000001";
const NAMES_SLUG = "5e55a063-0000-4000-8000-000000000001";
const HASH = "3f2a9c1e".repeat(8);

/** Whether `selector`'s elements all end within their sidebar, card or screen (nothing overflows). */
const fitsIn = (page, selector, within) =>
  page.locator(selector).evaluateAll((els, within) => els.every((el) => {
    const box = (el.closest(within) || document.documentElement).getBoundingClientRect();
    return el.getBoundingClientRect().right <= box.right + 1;
  }), within);

test("60. the harness's caveat is folded as context, a command's colours read as words, a result of one photo says \"1 photo\", and one of anything is counted as one", async () => {
  const server = await startServer("names", { roots: ["gemini:gemini"] });
  for (const viewport of [{ width: 1280, height: 900 }, { width: 390, height: 844 }]) {
    const phone = viewport.width < 600;
    const { page, problems, context } = await newPage(viewport);
    await page.goto(`${server.url}/sessions/${SESSION}`);
    await until("the command's output", async () => (await page.locator(".command-output").count()) === 1);
    // The caveat: folded under its name, not the person's words.
    const caveat = page.locator("details.context", { has: page.locator("summary", { hasText: /^Caveat$/ }) });
    assert.equal(await caveat.count(), 1);
    assert.equal(await caveat.evaluate((d) => d.open), false);
    assert.equal(await page.locator("li.entry.user", { hasText: "Caveat: The messages below" }).locator(".markdown").count(), 0, "not as something typed");
    // Colours: the words, no escape.
    assert.equal(await page.locator(".command-output pre").textContent(), "Set model to opusplan (default)");
    const text = await page.locator("ol.entries:not(.pending-list)").textContent();
    assert.ok(!text.includes("\u001b") && !text.includes("[22m"), "no terminal escape shown");
    // A result that is one photo.
    const result = page.locator("details.tool.result", { has: page.locator("img") });
    assert.equal(await result.locator("summary .meta-text").textContent(), "1 photo");
    // One of a thing is one: in the header's details and in the list.
    assert.match(await page.locator(".about-line").textContent(), /· 7 entries · 1 photo$/);
    assert.equal(await page.locator(`#sessions li[data-session="${SESSION}"] .counts`).textContent(), "7 entries · 1 photo");
    await result.scrollIntoViewIfNeeded();
    if (phone) await phoneShot(page, "60-harness-leftovers-phone");
    else await shot(page, "60-harness-leftovers-laptop");
    assert.deepEqual(problems, []);
    await context.close();
  }
  await server.stop();
});

test("61. names a person recognises: an untitled session by its first words in the list, the header and the palette; a Gemini project by its recorded directory or as \"gemini project 3f2a9c1e\", never its hash; nothing overflows a phone", async () => {
  const server = await startServer("names", { roots: ["gemini:gemini"] });
  await until("every session listed", async () => (await (await fetch(`${server.url}/api/sessions?limit=100`)).json()).sessions.length === 44);
  const answer = "Tidied the harbour charts and left the buoys as they were.";
  for (const viewport of [{ width: 1280, height: 900 }, { width: 390, height: 844 }]) {
    const phone = viewport.width < 600;
    const { page, problems, context } = await newPage(viewport);
    await page.goto(`${server.url}/sessions/${NAMES_UNTITLED}`);
    await until("the header's title", async () => (await page.locator(".view-title").textContent()) === answer);
    assert.equal(await page.locator(`#sessions li[data-session="${NAMES_UNTITLED}"] .title`).textContent(), answer);
    // The Gemini projects: the directory .project_root records; a hash as a short, labelled name.
    const meta = (id) => page.locator(`#sessions li[data-session="${id}"] .meta`).textContent();
    assert.match(await meta(NAMES_HASHED), /gemini project 3f2a9c1e/);
    assert.match(await meta(NAMES_SLUG), /the-lighthouse-keepers-logbook-of-every-storm/);
    const listed = await page.locator("#sessions").textContent();
    assert.ok(!listed.includes(HASH) && !listed.includes(NAMES_UNTITLED), "no hash or id in the list");
    if (phone) await page.locator("#toggle-sidebar").click();
    assert.ok(await fitsIn(page, "#sessions li a, #sessions .meta, #sessions .title", "#sidebar"), "the list's names fit its width");
    if (phone) await phoneShot(page, "61-names-sidebar-phone");
    else await shot(page, "61-names-sidebar-laptop");
    if (phone) await page.locator("#toggle-sidebar").click();
    // The header of the hashed project's session.
    await goElsewhere(page, `${server.url}/sessions/${NAMES_HASHED}`);
    await until("the header", async () => (await page.locator(".head-meta").textContent()).includes("gemini project 3f2a9c1e"));
    assert.ok(!(await page.locator(".head-meta").textContent()).includes(HASH));
    // The palette finds the untitled session by its words, and names it so.
    await page.keyboard.press("Control+k");
    await page.keyboard.type("harbour charts");
    const titles = page.locator("#palette .palette-title");
    await until("the palette's sessions", async () => (await titles.count()) >= 1);
    assert.ok((await titles.allTextContents()).includes(answer), "the palette names it by its first words");
    await page.keyboard.press("Escape");
    // The search cards: the short name, and a long directory's name within its card.
    await goElsewhere(page, `${server.url}/search?q=${encodeURIComponent("gulls OR lens")}`);
    const cards = page.locator("section.search .result");
    await until("the cards", async () => (await cards.count()) === 2);
    const metas = await cards.locator(".meta").allTextContents();
    assert.ok(metas.some((m) => m.includes("gemini project 3f2a9c1e")) && metas.every((m) => !m.includes(HASH)), JSON.stringify(metas));
    assert.ok(await fitsIn(page, "section.search .result .meta", ".result"), "the cards' names fit them");
    if (phone) await phoneShot(page, "61-names-search-phone");
    else await shot(page, "61-names-search-laptop");
    assert.deepEqual(problems, []);
    await context.close();
  }
  await server.stop();
});

test("62. the list brings the open session into view: the oldest of 44, at its bottom, on a laptop and when a phone opens the list", async () => {
  const server = await startServer("names", { roots: ["gemini:gemini"] });
  for (const viewport of [{ width: 1280, height: 700 }, { width: 390, height: 844 }]) {
    const phone = viewport.width < 600;
    const { page, problems, context } = await newPage(viewport);
    await page.goto(`${server.url}/sessions/${SESSION}`);
    await until("the list marks it", async () => (await page.locator("#sessions li.current").count()) === 1);
    if (phone) await page.locator("#toggle-sidebar").click();
    const inView = () => page.evaluate(() => {
      const li = document.querySelector("#sessions li.current").getBoundingClientRect();
      const list = document.querySelector("#sidebar").getBoundingClientRect();
      return li.top >= list.top - 1 && li.bottom <= list.bottom + 1;
    });
    await until("the open session in the list's view", inView);
    assert.ok(await page.locator("#sidebar").evaluate((s) => s.scrollTop > 0), "the list scrolled to it");
    if (phone) await phoneShot(page, "62-sidebar-current-phone");
    else await shot(page, "62-sidebar-current-laptop");
    assert.deepEqual(problems, []);
    await context.close();
  }
  await server.stop();
});

/** A tree of Claude Code sessions dated from today back: twelve projects with a session each in the
 * last two weeks (one of them calling thirteen tools and stating a million tokens), and a session
 * 60, 200 and 400 days ago; so that each range preset has its own figures. */
function dashboardTree(transcripts, { recent = true } = {}) {
  const dayAgo = (n) => new Date(Date.now() - n * 86400000).toISOString().slice(0, 10);
  const session = (project, id, daysAgo, { tools = 0, tokens = 0 } = {}) => {
    const at = (s) => `${dayAgo(daysAgo)}T12:00:${String(s).padStart(2, "0")}.000Z`;
    const cwd = `/home/test/${project}`;
    const line = (type, n, content, extra = {}) =>
      JSON.stringify({ type, sessionId: id, uuid: `${id}-${n}`, timestamp: at(n), cwd, message: { role: type, content, ...extra } });
    const lines = [line("user", 0, `Work on ${project}`)];
    const calls = [...Array(tools).keys()].map((i) => ({ type: "tool_use", id: `${id}-t${i}`, name: `Tool${String(i + 1).padStart(2, "0")}`, input: {} }));
    lines.push(
      line("assistant", 1, [{ type: "text", text: "On it." }, ...calls], {
        id: `${id}-msg`,
        model: "claude-sonnet-4-5-20250929",
        usage: { input_tokens: tokens || 10, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
      }),
    );
    calls.forEach((c, i) => lines.push(line("user", 2 + i, [{ type: "tool_result", tool_use_id: c.id, content: "done" }])));
    lines.push(line("user", 2 + tools, "Thanks"));
    const dir = join(transcripts, `-home-test-${project}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${id}.jsonl`), lines.join("\n") + "\n");
  };
  const id = (n) => `da5b0a4d-0000-4000-8000-${String(n).padStart(12, "0")}`;
  for (let i = 0; recent && i < 12; i++) {
    session(`project-with-a-rather-long-name-${String(i + 1).padStart(2, "0")}`, id(i), 2 + i, i === 0 ? { tools: 13, tokens: 1234567 } : {});
  }
  session("old-work", id(60), 60);
  session("old-work", id(200), 200);
  session("ancient", id(400), 400);
}

test("48. the overview is a dashboard: range presets in the URL, compact numbers with the exact figure on hover, a calendar of the year, top-10 tables with more, display names, nothing overflowing its card on a laptop or a phone", async () => {
  const base = temp();
  dashboardTree(join(base, "projects"));
  const server = await startServer("dashboard", { dirs: { base } });
  const axe = readFileSync(join(dirname(new URL(import.meta.url).pathname), "node_modules/axe-core/axe.min.js"), "utf8");
  const { page, problems, context } = await newPage({ width: 1440, height: 900 });
  // /api/stats as the page asks it (its time zone), for the last `days` days (none: all).
  const api = (days) =>
    page.evaluate(async (days) => {
      const tz = Math.max(-12, Math.min(14, Math.round(-new Date().getTimezoneOffset() / 60)));
      const day = (n) => new Date(Date.now() + tz * 3600000 - n * 86400000).toISOString().slice(0, 10);
      const range = days ? `&since=${day(days - 1)}&until=${day(0)}` : "";
      return (await fetch(`/api/stats?tz=${tz}&limit=100${range}`)).json();
    }, days);
  const card = (name) => page.locator(`.stat-card[data-stat=${name}] .stat-value > span`);
  const shown = async () => ({
    sessions: await card("sessions").getAttribute("title"),
    messages: await card("messages").getAttribute("title"),
    tokens: await card("tokens").getAttribute("title"),
  });
  const want = (s) => ({ sessions: s.totals.sessions.toLocaleString("en-US"), messages: s.totals.messages.toLocaleString("en-US"), tokens: s.totals.tokens.toLocaleString("en-US") });
  const current = () => page.locator('.range-presets a[aria-current="true"]').getAttribute("data-range");
  const calendarReady = async () => (await page.locator(".calendar-day[data-day]").count()) > 0;

  // By default the last 30 days: the history is longer.
  await page.goto(`${server.url}/`);
  await until("the cards and the calendar", async () => (await card("messages").count()) === 1 && calendarReady());
  assert.equal(await current(), "30d");
  const month = await api(30);
  assert.deepEqual(await shown(), want(month));
  // Each preset, in the URL, draws the figures of /api/stats over its days; they differ.
  const seen = new Set();
  for (const [range, days] of [["7d", 7], ["30d", 30], ["90d", 90], ["1y", 365], ["all", null]]) {
    await page.locator(`.range-presets a[data-range="${range}"]`).click();
    await until(`the URL says ${range}`, async () => new URL(page.url()).searchParams.get("range") === range);
    const s = await api(days);
    await until(`the figures of ${range}`, async () => (await current()) === range && JSON.stringify(await shown()) === JSON.stringify(want(s)));
    seen.add(s.totals.messages);
  }
  assert.equal(seen.size, 5, "each range its own figures");
  // A range in the URL is kept through a reload.
  await page.goto(`${server.url}/?range=90d`);
  await until("90 days from the URL", async () => (await card("messages").count()) === 1 && (await current()) === "90d");
  assert.deepEqual(await shown(), want(await api(90)));

  // Compact numbers, the exact figure as the title.
  await page.goto(`${server.url}/?range=all`);
  await until("all", async () => (await card("tokens").count()) === 1 && (await current()) === "all" && calendarReady());
  const all = await api(null);
  assert.ok(all.totals.tokens > 1000000, `tokens: ${all.totals.tokens}`);
  assert.match(await card("tokens").textContent(), /^\d+(\.\d)?M$/);
  assert.equal(await card("tokens").getAttribute("title"), all.totals.tokens.toLocaleString("en-US"));

  // The calendar: one cell per day of the last 365, each titled with its day and count, summing to the API's year.
  const year = await api(365);
  const cells = await page.locator(".calendar-day[data-day]").evaluateAll((cs) => cs.map((c) => [c.dataset.day, Number(c.dataset.count), c.title]));
  assert.equal(cells.length, 365);
  assert.deepEqual(cells.map(([d]) => d), year.days.map((d) => d.day));
  assert.equal(cells.reduce((n, [, c]) => n + c, 0), year.days.reduce((n, d) => n + d.messages, 0));
  assert.ok(cells.every(([d, c, t]) => t === `${d}: ${c.toLocaleString("en-US")} messages`), "each cell titled");
  assert.ok(cells.some(([, c]) => c > 0));
  assert.ok(await page.locator(".calendar-legend").isVisible(), "the calendar's legend");
  assert.match(await page.locator(".calendar").getAttribute("aria-label"), /messages on \d+ days/);

  // Titles above their charts.
  for (const panel of await page.locator(".chart-panel").all()) {
    const [title, chart] = await Promise.all([panel.locator(".panel-title").boundingBox(), panel.locator("svg").boundingBox()]);
    assert.ok(title.y + title.height <= chart.y + 1, "a chart's title above it");
  }

  // Top ten and more: thirteen tools and twelve projects.
  const table = (caption) => page.locator(".table-panel", { has: page.locator(`caption:text-is("${caption}")`) });
  for (const [caption, n] of [["Tool use", all.tools.length], ["Top projects", all.projects.length]]) {
    assert.ok(n > 10, `${caption}: ${n}`);
    const rows = table(caption).locator("tbody tr");
    assert.equal(await rows.count(), n);
    assert.equal(await table(caption).locator("tbody tr:visible").count(), 10);
    const more = table(caption).locator("button.more");
    assert.equal(await more.textContent(), `Show all ${n}`);
    await more.click();
    assert.equal(await table(caption).locator("tbody tr:visible").count(), n);
    await more.click();
    assert.equal(await table(caption).locator("tbody tr:visible").count(), 10);
  }
  assert.equal(await table("Agents").locator("button.more").count(), 0, "no more under a short table");

  // Display names: the agents' table and the sessions' say Claude Code, never claude.
  assert.equal(await table("Agents").locator("tbody tr td").first().textContent(), "Claude Code");
  const agentCells = await page.locator(".table-panel td").allTextContents();
  assert.ok(!agentCells.includes("claude"), "no agent by its short name");
  assert.ok((await table("Longest sessions").locator("tbody td:nth-child(2)").allTextContents()).every((t) => t === "Claude Code"));

  // Nothing wider than its card, no number on two lines, no header broken; at a laptop's width and a phone's.
  const fits = () =>
    page.evaluate(() => {
      const bad = [];
      const lines = (node) => {
        const r = document.createRange();
        r.selectNodeContents(node);
        return new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top))).size;
      };
      for (const box of document.querySelectorAll(".overview .panel, .overview .stat-card")) {
        if (box.scrollWidth > box.clientWidth + 1) bad.push(`${box.className} ${box.querySelector("h2, caption, dt")?.textContent}: ${box.scrollWidth} > ${box.clientWidth}`);
        const edge = box.getBoundingClientRect();
        for (const child of box.querySelectorAll("*")) {
          const r = child.getBoundingClientRect();
          if (r.width && (r.right > edge.right + 1 || r.left < edge.left - 1)) bad.push(`${child.tagName}.${child.className} past its card`);
        }
      }
      for (const v of document.querySelectorAll(".overview .stat-value")) {
        if (v.scrollWidth > v.clientWidth || lines(v) > 1) bad.push(`the number ${v.textContent} does not fit`);
      }
      for (const th of document.querySelectorAll(".overview th")) {
        if (th.scrollWidth > th.clientWidth || lines(th) > 1) bad.push(`the header ${th.textContent} breaks`);
      }
      return bad;
    });
  assert.deepEqual(await fits(), [], "at 1440 px");
  for (const theme of ["dark", "light"]) {
    await page.evaluate((t) => (document.documentElement.dataset.theme = t), theme);
    await noSeriousViolation(page, axe, `the dashboard (${theme})`);
  }
  await shot(page, "48-dashboard");
  await page.setViewportSize({ width: 390, height: 844 });
  await until("drawn at a phone's width", async () => (await page.locator(".chart-panel svg").first().evaluate((s) => s.getBoundingClientRect().width)) < 390);
  assert.deepEqual(await fits(), [], "at 390 px");
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `nothing wider than a phone (${overflow} px over)`);
  await shot(page, "48-dashboard-phone");
  await page.locator(".calendar").scrollIntoViewIfNeeded();
  await shot(page, "48-dashboard-phone-calendar");
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

// Long sessions to walk (#50): a session of 400 turns (2,000 entries, tool calls, usage), at a
// laptop's width and a phone's. Each opens at its newest entry.

const LONG_TURNS = () => JSON.parse(readFileSync(join(FIXTURES, "long", "turns.json"), "utf8"));
const historyRequests = (requests) => requests.filter((u) => /^\/api\/sessions\/[^/]+\/history$/.test(new URL(u).pathname));
const WIDTHS = [["laptop", { width: 1280, height: 800 }], ["phone", { width: 390, height: 844 }]];

/** The cursor of the first entry at the top of the conversation's view. */
const topCursor = (page) =>
  page.evaluate(() => {
    const top = document.querySelector(".scroller").getBoundingClientRect().top;
    const li = [...document.querySelectorAll("ol.entries:not(.pending-list) > li.entry:not([hidden])")].find((l) => l.getBoundingClientRect().bottom > top + 1);
    return li ? Number(li.dataset.cursor) : null;
  });

/** Whether the text `text` is on screen in the conversation (loaded and in the view). */
const inView = (page, text) =>
  page.evaluate((text) => {
    const s = document.querySelector(".scroller").getBoundingClientRect();
    return [...document.querySelectorAll("ol.entries > li.entry:not([hidden])")].some((li) => {
      const r = li.getBoundingClientRect();
      return li.textContent.includes(text) && r.bottom > s.top && r.top < s.bottom;
    });
  }, text);

test("63. a history whose latest work is two months old opens the overview on 90 days, with that work in its cards, not on 30 days of zeros", async () => {
  const base = temp();
  // Sessions 60, 200 and 400 days ago: nothing in the last 30 days.
  dashboardTree(join(base, "projects"), { recent: false });
  const server = await startServer("dashboard-old", { dirs: { base } });
  const { page, problems, context } = await newPage({ width: 1440, height: 900 });
  const card = (name) => page.locator(`.stat-card[data-stat=${name}] .stat-value > span`);
  const current = () => page.locator('.range-presets a[aria-current="true"]').getAttribute("data-range");
  await page.goto(`${server.url}/`);
  await until("the cards", async () => (await card("sessions").count()) === 1 && (await current()) !== null);
  assert.equal(await current(), "90d");
  assert.equal(await card("sessions").getAttribute("title"), "1", "the session of 60 days ago");
  // A range asked for in the URL still wins.
  await page.goto(`${server.url}/?range=30d`);
  await until("30 days from the URL", async () => (await current()) === "30d" && (await card("sessions").count()) === 1);
  assert.equal(await card("sessions").getAttribute("title"), "0");
  assert.deepEqual(problems, []);
  await context.close();
  await server.stop();
});

test("49. Start and End go to the first prompt and the newest entry at once (g, Home, G, End or a button), newer pages load as it scrolls down, a line indexed meanwhile is not lost, and the place is kept across a reload", async () => {
  const server = await startServer("long");
  const turns = LONG_TURNS();
  for (const [tag, viewport] of WIDTHS) {
    const { page, problems, requests, context } = await newPage(viewport);
    await page.goto(`${server.url}/sessions/${SESSION}`);
    await until("the newest answer", () => inView(page, turns[turns.length - 1].answer));
    const asked = historyRequests(requests).length;
    // Start: the first prompt, with one history request (not the 39 pages in between).
    if (tag === "laptop") {
      await page.locator(".scroller").focus();
      await page.keyboard.press("Home");
    } else {
      await page.getByRole("button", { name: "⤒ Start" }).click();
    }
    await until("the first prompt", () => inView(page, turns[0].text));
    await until("the start is said", async () => (await page.locator(".scroller .status").textContent()).includes("start of this session"));
    // (A live catch-up, `after=`, may be under way meanwhile: it is not the start's.)
    const startRequests = historyRequests(requests).slice(asked).filter((u) => !u.includes("after="));
    assert.equal(startRequests.length, 1, `one history request for the start: ${startRequests.join(", ")}`);
    assert.match(startRequests[0], /from=start/);
    assert.match(await page.locator("ol.entries > li.entry").first().textContent(), /Prompt 0:/);
    await shot(page, `49-start-${tag}`);
    // Scrolling down reads the next pages forward, each entry once.
    for (let i = 0; i < 3; i++) {
      const before = await countEntries(page);
      await page.evaluate(() => {
        const s = document.querySelector(".scroller");
        s.scrollTop = s.scrollHeight;
      });
      await until("a newer page", async () => (await countEntries(page)) > before, 5000);
    }
    const cursors = await page.$$eval("ol.entries:not(.pending-list) > li", (lis) => lis.map((li) => Number(li.dataset.cursor)));
    assert.equal(new Set(cursors).size, cursors.length, "no entry twice");
    assert.ok(cursors.length >= 150, `newer pages were read forward (${cursors.length} entries)`);
    assert.ok(await page.locator("ol.entries > li", { hasText: "Prompt 30:" }).count(), "turn 30 was reached forward");
    // A line indexed while the person reads the start: not shown out of place, and not lost.
    const appended = `a line appended while reading the start (${tag})`;
    const caughtUp = historyRequests(requests).length;
    appendFileSync(server.file, JSON.stringify({
      parentUuid: null, isSidechain: false, cwd: "/home/test/long", sessionId: SESSION, type: "assistant",
      uuid: `walk-${tag}`, timestamp: "2026-11-02T09:00:00.000Z", message: { role: "assistant", content: [{ type: "text", text: appended }] },
    }) + "\n");
    await until("the catch-up", () => historyRequests(requests).slice(caughtUp).some((u) => u.includes("after=")), 10000);
    await sleep(300);
    assert.equal(await page.locator("ol.entries > li", { hasText: appended }).count(), 0, "the new line is not put after turn 30");
    if (tag === "laptop") await page.keyboard.press("Shift+G");
    else await page.getByRole("button", { name: "⤓ End" }).click();
    await until("the appended line at the end", () => inView(page, appended));
    assert.ok(await inView(page, turns[turns.length - 1].answer), "the newest answer, at the end");
    await shot(page, `49-end-${tag}`);
    // The place: go to the start, scroll to turn 12's prompt, reload: it opens there again.
    await page.keyboard.press("g");
    await until("the first prompt", () => inView(page, turns[0].text));
    // Scrolled down as a person would, until turn 12 is read (the start is one page).
    await until("turn 12 read forward", async () => {
      if (await page.locator("ol.entries > li", { hasText: turns[12].text }).count()) return true;
      await page.evaluate(() => {
        const s = document.querySelector(".scroller");
        s.scrollTop = s.scrollHeight;
      });
      return false;
    });
    await page.locator("ol.entries > li", { hasText: turns[12].text }).evaluate((li) => li.scrollIntoView({ block: "start" }));
    const kept = await topCursor(page);
    await until("the place kept", () => page.evaluate((s) => localStorage.getItem(`scrollback-place:${s}`), SESSION).then((v) => Number(v) === kept));
    await reload(page);
    await until("the page again, at its place", async () => (await countEntries(page)) > 0 && (await topCursor(page)) === kept);
    assert.ok(await inView(page, turns[12].text), "turn 12's prompt is in view after the reload");
    assert.ok(!(await inView(page, turns[turns.length - 1].answer)), "not at the newest");
    await shot(page, `49-kept-${tag}`);
    // At the end, the place is forgotten: the session opens at its newest again.
    await page.keyboard.press("End");
    await until("the newest answer", () => inView(page, appended));
    await until("the place forgotten", () => page.evaluate((s) => localStorage.getItem(`scrollback-place:${s}`) === null, SESSION));
    await reload(page);
    await until("the newest answer after a reload", () => inView(page, appended));
    assert.deepEqual(problems, []);
    await context.close();
  }
  await server.stop();
});

test("50. the focused mode (t, or the header's toggle) folds tool calls, results and thinking to one line each that opens them, and is kept in the URL", async () => {
  const server = await startServer("long");
  const turns = LONG_TURNS();
  for (const [tag, viewport] of WIDTHS) {
    const { page, problems, context } = await newPage(viewport);
    await page.goto(`${server.url}/sessions/${SESSION}`);
    await until("the newest answer", () => inView(page, turns[turns.length - 1].answer));
    const visibleCards = () => page.locator(".tool-card").evaluateAll((cards) => cards.filter((c) => c.getClientRects().length > 0).length);
    assert.ok((await visibleCards()) > 0, "tool calls show as cards");
    const toggle = page.getByRole("button", { name: "Focused" });
    assert.equal(await toggle.getAttribute("aria-pressed"), "false");
    if (tag === "laptop") {
      await page.locator(".scroller").focus();
      await page.keyboard.press("t");
    } else {
      await toggle.click();
    }
    await until("focused", async () => (await toggle.getAttribute("aria-pressed")) === "true");
    assert.equal(new URL(page.url()).searchParams.get("focus"), "1", "the mode is in the URL");
    assert.equal(await visibleCards(), 0, "no tool card shows");
    const lines = page.locator(".fold-line");
    assert.ok((await lines.count()) > 0);
    const said = await lines.evaluateAll((ls) => ls.filter((l) => l.getClientRects().length > 0).map((l) => l.textContent));
    assert.ok(said.length > 0 && said.every((t) => /^(\d+ tool calls? \(Bash\)|1 result)$/.test(t)), `each fold is one line naming its calls: ${said.slice(0, 3)}`);
    // What was said still shows: the prompts and the answers.
    assert.ok(await inView(page, turns[turns.length - 1].answer));
    assert.ok(await page.locator("ol.entries > li", { hasText: turns[turns.length - 1].text }).isVisible());
    await shot(page, `50-focused-${tag}`);
    // One line opens its calls, and closes them again.
    const line = lines.filter({ visible: true }).last();
    const item = line.locator("xpath=ancestor::li[1]");
    await line.click();
    assert.equal(await line.getAttribute("aria-expanded"), "true");
    assert.ok((await item.locator(".tool-card").evaluateAll((cs) => cs.filter((c) => c.getClientRects().length > 0).length)) > 0, "its cards show");
    await shot(page, `50-unfolded-${tag}`);
    if (tag === "laptop") await auditBothThemes(page, "the focused mode");
    await line.click();
    assert.equal(await line.getAttribute("aria-expanded"), "false");
    // Kept across a reload (the URL), and off again by the toggle.
    await reload(page);
    await until("the newest answer", () => inView(page, turns[turns.length - 1].answer));
    assert.equal(await page.getByRole("button", { name: "Focused" }).getAttribute("aria-pressed"), "true");
    assert.equal(await visibleCards(), 0, "still focused after the reload");
    await page.getByRole("button", { name: "Focused" }).click();
    assert.equal(new URL(page.url()).searchParams.get("focus"), null);
    assert.ok((await visibleCards()) > 0, "the cards again");
    assert.deepEqual(problems, []);
    await context.close();
  }
  await server.stop();
});

test("51. the outline lists every prompt with its time and tool calls, opens a turn that is not loaded, and each turn's last answer shows its context and output tokens and how long it took", async () => {
  const server = await startServer("long");
  const turns = LONG_TURNS();
  const plural = (n) => `${n} tool call${n === 1 ? "" : "s"}`;
  for (const [tag, viewport] of WIDTHS) {
    const { page, problems, requests, context } = await newPage(viewport);
    await page.goto(`${server.url}/sessions/${SESSION}`);
    await until("the newest answer", () => inView(page, turns[turns.length - 1].answer));
    const button = page.getByRole("button", { name: "Outline", exact: true });
    assert.equal(await button.getAttribute("aria-expanded"), "false");
    if (tag === "laptop") {
      await page.locator(".scroller").focus();
      await page.keyboard.press("o");
    } else {
      await button.click();
    }
    const outline = page.locator("aside.outline");
    await until("the outline", () => outline.isVisible());
    assert.equal(await button.getAttribute("aria-expanded"), "true");
    await until("every prompt listed", async () => (await outline.locator("button.turn").count()) === turns.length);
    const listed = await outline.locator("button.turn").evaluateAll((bs) => bs.map((b) => ({ text: b.querySelector(".turn-text").textContent, meta: b.querySelector(".turn-meta").textContent })));
    listed.forEach((l, i) => {
      assert.equal(l.text, turns[i].text, `prompt ${i}`);
      assert.ok(l.meta.endsWith(plural(turns[i].toolCalls)), `prompt ${i}: ${l.meta} ends with ${plural(turns[i].toolCalls)}`);
      assert.match(l.meta, /^\d{4}-\d\d-\d\d \d\d:\d\d · /, `prompt ${i} has its time`);
    });
    assert.equal(await page.evaluate(() => document.activeElement.classList.contains("turn")), true, "the keyboard is in the outline");
    await shot(page, `51-outline-${tag}`);
    if (tag === "laptop") await auditBothThemes(page, "the outline");
    // Turn 7 is far from the newest page: a click opens it, with two history requests at most.
    const asked = historyRequests(requests).length;
    await outline.locator("button.turn").nth(7).click();
    await until("turn 7's prompt", () => inView(page, turns[7].text));
    assert.ok(historyRequests(requests).length - asked <= 2, "turn 7 was read directly");
    assert.equal(await page.locator("li.entry.target", { hasText: turns[7].text }).count(), 1, "its prompt is marked");
    if (tag === "phone") assert.ok(!(await outline.isVisible()), "on a phone the drawer gives way");
    // Its last answer's figures: context 1,722 tokens, 113 output tokens, 14 s.
    const answer = page.locator("ol.entries > li", { hasText: turns[7].answer });
    await answer.scrollIntoViewIfNeeded();
    assert.equal(await answer.locator(".turn-figures").textContent(), "context 1.7k tokens · output 113 · turn 14 s");
    // Every loaded turn's, as the fixture recorded them.
    const shown = await page.$$eval("ol.entries > li", (lis) => lis.filter((li) => li.querySelector(".turn-figures")).map((li) => [li.querySelector(".bubble").textContent, li.querySelector(".turn-figures").textContent]));
    assert.ok(shown.length >= 10, `figures under the answers on screen (${shown.length})`);
    for (const [said, line] of shown) {
      const t = turns.find((x) => said.includes(x.answer));
      assert.ok(t, `a turn's last answer: ${said}`);
      const k = t.contextTokens >= 1000 ? `${(t.contextTokens / 1000).toFixed(1)}k` : String(t.contextTokens);
      assert.equal(line, `context ${k} tokens · output ${t.outputTokens} · turn ${t.seconds} s`);
    }
    assert.equal(await page.locator("ol.entries > li .turn-figures").evaluateAll((fs) => fs.filter((f) => !/Part \d+ of the wall/.test(f.closest("li").textContent)).length), 0, "no figures under a prompt or a tool call");
    await shot(page, `51-turn-${tag}`);
    // Esc closes the outline, and the keyboard goes back to its button.
    if (!(await outline.isVisible())) await button.click();
    await page.keyboard.press("Escape");
    await until("the outline closed", async () => !(await outline.isVisible()));
    assert.equal(await page.evaluate(() => document.activeElement.textContent), "Outline");
    assert.deepEqual(problems, []);
    await context.close();
  }
  await server.stop();
});
