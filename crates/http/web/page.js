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

/** The side, in CSS pixels, a small photo is scaled up to in the lightbox (or the screen's, if less):
 * an 8×8 image shown at its natural size is a dot. */
const SMALL_PHOTO_SHOWN = 480;

/** Opens a photo full size: a large one fits the screen; a small one is scaled up to a size one
 * can see (its pixels kept sharp, not blurred, when it grows to twice its size or more). */
export function openPhoto(src) {
  const img = $("lightbox-img");
  img.classList.remove("scaled", "pixelated");
  img.style.removeProperty("width");
  const fit = () => {
    const { naturalWidth: w, naturalHeight: h } = img;
    if (!w || !h || Math.max(w, h) >= SMALL_PHOTO_SHOWN) return;
    const box = Math.min(SMALL_PHOTO_SHOWN, window.innerWidth * 0.92, window.innerHeight * 0.86);
    const scale = box / Math.max(w, h);
    if (scale <= 1) return;
    img.style.width = `${Math.round(w * scale)}px`;
    img.classList.add("scaled");
    if (scale >= 2) img.classList.add("pixelated");
  };
  img.onload = fit;
  // The same photo again: no new load to wait for.
  if (img.getAttribute("src") === src && img.complete) fit();
  else img.src = src;
  $("lightbox").showModal();
}
