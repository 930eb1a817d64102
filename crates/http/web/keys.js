// The keyboard's help, opened by `?` (and from the status page): every key the viewer answers, as
// app.js, conversation.js, find.js, palette.js and composer.js handle them. A modal dialog: the keyboard goes into it,
// Esc or its button closes it, and the keyboard goes back where it was.

import { el } from "./dom.js";
import { $ } from "./page.js";

/** [keys, what they do], in groups. Keep in step with the handlers named above. */
const KEYS = [
  ["Anywhere", [
    [["?"], "Show these keys"],
    [["Ctrl", "K"], "Go to a session: the palette (⌘K on a Mac)"],
    [["/"], "Search every session"],
    [["Esc"], "Close the photo, the palette, the find bar, the outline or this help"],
  ]],
  ["In a session", [
    [["j"], "Next message"],
    [["k"], "Previous message"],
    [["g"], "The start of the session (also Home)"],
    [["Shift", "G"], "The end of the session (also End)"],
    [["t"], "Focused mode: tool calls, results and thinking folded to a line"],
    [["o"], "The outline: every prompt, to go to its turn"],
    [["f"], "Find in this session (also Ctrl-F, ⌘F)"],
    [["n"], "Next hit of the find bar"],
    [["Shift", "N"], "Previous hit"],
    [["Enter"], "In the message box: send (Shift-Enter: a new line)"],
  ]],
  ["In the palette", [
    [["↑"], "Previous session or hit"],
    [["↓"], "Next session or hit"],
    [["Enter"], "Open it"],
  ]],
];

function table() {
  const groups = KEYS.map(([title, keys]) =>
    el(
      "tbody",
      null,
      el("tr", null, el("th", "keys-group", title)),
      ...keys.map(([combo, what]) => {
        const chord = el("td", "keys-chord");
        combo.forEach((k, i) => chord.append(...(i ? [" + "] : []), el("kbd", null, k)));
        return el("tr", null, chord, el("td", null, what));
      }),
    ),
  );
  for (const g of groups) g.firstChild.firstChild.colSpan = 2;
  return el("table", "keys-table", el("caption", "visually-hidden", "Keyboard shortcuts"), ...groups);
}

export const keys = {
  /** What had the keyboard before the help opened: it gets it back. */
  returnTo: null,

  open() {
    const dialog = $("keys");
    if (dialog.open) return;
    if (!$("keys-list").firstChild) {
      $("keys-list").append(table());
      dialog.addEventListener("close", () => {
        const back = this.returnTo;
        this.returnTo = null;
        if (back && back.isConnected && typeof back.focus === "function") back.focus();
      });
    }
    this.returnTo = document.activeElement;
    dialog.showModal();
    $("keys-close").focus();
  },
};
