// The page's common ground, shared by every view: its elements by id, the view on screen, moving
// from view to view (each has its own URL; app.js routes), in-page links, and the photo lightbox.

import * as render from "./render.js";

export const $ = (id) => document.getElementById(id);

/** The view on screen: it is told about events and closed when another opens. */
export let view = null;

/** Makes `next` the view on screen (app.js's router, which closed the one before). */
export function setView(next) {
  view = next;
}

/** Opens the view of the page's URL: app.js's `route`, set once at start. */
let router = () => {};

export function setRouter(route) {
  router = route;
}

export function navigate(url, { replace = false } = {}) {
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  router();
}

export function link(href, ...children) {
  const a = render.el("a", null, ...children);
  a.href = href;
  a.dataset.link = "";
  return a;
}

export function openPhoto(src) {
  $("lightbox-img").src = src;
  $("lightbox").showModal();
}
