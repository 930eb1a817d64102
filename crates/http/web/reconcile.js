// The one comparison of a sent message's two records, in the viewer: which pending sends the
// transcript now backs. The same rule as scrollback's Rust `accept::reconcile`, checked against the
// same vectors (tests/vectors/reconcile/). Pure: no DOM, no network, no clock. Knows no transcript
// format: what a person typed is each entry's `typed`, which the server gives by its format's rule.
//
// The rule:
// - Only an entry that carries what a person typed (`typed: {text, images: [blake3 or null]}`) can
//   back a send, and it is compared by that.
// - Texts are compared after normalize(): line endings made "\n", the "[Image #N]" tokens a terminal
//   client inserts removed, trailing white space of each line and white space around the whole
//   removed.
// - The number of images is equal. Where both sides know every image's blake3, an entry whose hashes
//   are equal (in order) is preferred over one whose hashes are unknown, and that over one whose
//   hashes differ.
// - Sends are matched one to one, oldest acceptance first, each to the best unused entry, the
//   earliest among equals.
// - An entry timestamped more than TOLERANCE_MS before the acceptance cannot back it. A missing or
//   unreadable timestamp does not rule out.

export const TOLERANCE_MS = 2000;

/** Text as the transcript writer may have changed it, undone. */
export function normalize(text) {
  let s = String(text).replace(/\r\n/g, "\n").replace(/\r/g, "\n");
  s = s.replace(/\[Image #\d+\] ?/g, "");
  return s
    .split("\n")
    .map((line) => line.replace(/\s+$/u, ""))
    .join("\n")
    .trim();
}

function parseMs(s) {
  if (typeof s !== "string") return null;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? null : ms;
}


function hashRank(entryImages, sendImages) {
  const known = (h) => typeof h === "string" && h !== "";
  const sendHashes = sendImages.map((i) => (i ? i.blake3 : null));
  if (!entryImages.every(known) || !sendHashes.every(known)) return 1;
  const equal = entryImages.every((h, i) => h.toLowerCase() === sendHashes[i].toLowerCase());
  return equal ? 0 : 2;
}

/**
 * Matches pending sends with the history entries that back them.
 * @param {object[]} entries history entries as the API gives them ({cursor, uuid, timestamp, typed})
 * @param {object[]} pending pending sends as the API gives them ({clientMessageId, text, images, acceptedAt})
 * @returns {{retired: {clientMessageId: string, uuid: ?string, cursor: ?number}[], stillPending: string[]}}
 */
export function reconcile(entries, pending) {
  const typed = entries.map((e) => {
    const t = e.typed;
    if (!t || typeof t.text !== "string" || !Array.isArray(t.images)) return null;
    return { text: t.text, images: t.images, at: parseMs(e.timestamp) };
  });
  const used = entries.map(() => false);
  const order = pending.map((_, i) => i);
  const key = (i) => parseMs(pending[i].acceptedAt) ?? -Infinity;
  order.sort((a, b) => key(a) - key(b) || a - b);
  const matched = pending.map(() => null);
  for (const i of order) {
    const send = pending[i];
    const text = normalize(send.text ?? "");
    const images = Array.isArray(send.images) ? send.images : [];
    const accepted = parseMs(send.acceptedAt);
    let best = null;
    let bestRank = Infinity;
    typed.forEach((t, j) => {
      if (!t || used[j]) return;
      if (normalize(t.text) !== text || t.images.length !== images.length) return;
      if (t.at !== null && accepted !== null && t.at < accepted - TOLERANCE_MS) return;
      const rank = hashRank(t.images, images);
      if (rank < bestRank) {
        best = j;
        bestRank = rank;
      }
    });
    if (best !== null) {
      used[best] = true;
      matched[i] = best;
    }
  }
  const retired = [];
  const stillPending = [];
  pending.forEach((send, i) => {
    const j = matched[i];
    if (j === null) stillPending.push(send.clientMessageId);
    else retired.push({ clientMessageId: send.clientMessageId, uuid: entries[j].uuid ?? null, cursor: entries[j].cursor ?? null });
  });
  return { retired, stillPending };
}
