// The composer: the message box of a chat, with photos staged by picking, pasting or dropping
// them, checked against the server's limits; a send shown at once as pending, then recorded (the
// server's record replaces it), and a failed one retried under the same clientMessageId. It shares
// the conversation's map of pending sends; the conversation renders and reconciles them.

import { post } from "./api.js";
import { el, formatBytes, photo } from "./render.js";
import { onHub } from "./server.js";

/** The photo types a person can send. */
export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/** Reads a file or blob as a data URL. */
function dataUrlOf(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

/** What stands in the composer's place where the server runs no engine: why, and how to start one. */
export function noEngine() {
  if (onHub()) {
    return el("p", "no-engine", "This server reads a team's hub, which is read-only: send from the host's own server.");
  }
  // On a phone, the first sentence alone: one line, not four, under what is being read.
  return el(
    "p",
    "no-engine",
    el("span", "why", "Read only: this server runs no engine."),
    " ",
    el("span", "how", "To send from here, start it with ", el("code", null, "scrollback serve --engine CMD"), " (or ", el("code", null, "--demo"), ")."),
  );
}

export class Composer {
  /**
   * @param {object} chat what the composer needs of its conversation: `chatId`, `sessionId()`,
   *   `pending` (clientMessageId -> pending send), `changed()` (render the pending sends),
   *   `recorded(record)` (a send was stored), `scrollToBottom()`
   * @param {object} env `limits()` (the server's), `call(fn)` (an API call that signs in on a 401),
   *   `openPhoto(src)`
   */
  constructor(chat, env) {
    this.chat = chat;
    this.env = env;
    this.staged = [];
    this.sentHere = new Set();
    this.form = this.build();
  }

  /** The form: staged photos, an error line, the photo button, the text and the send button. */
  build() {
    const form = el("form", "composer");
    const textarea = el("textarea");
    textarea.rows = 2;
    textarea.placeholder = this.chat.chatId ? "Write a message; paste or drop photos" : "This session cannot take messages here";
    textarea.setAttribute("aria-label", "Message");
    const files = el("input");
    files.type = "file";
    files.accept = IMAGE_TYPES.join(",");
    files.multiple = true;
    files.hidden = true;
    const attach = el("button", "attach", "Photo");
    attach.type = "button";
    attach.addEventListener("click", () => files.click());
    const send = el("button", "send", "Send");
    send.type = "submit";
    this.stagedBox = el("div", "staged");
    this.error = el("p", "error");
    this.error.hidden = true;
    form.append(this.stagedBox, this.error, el("div", "row", attach, textarea, send), files);
    if (!this.chat.chatId) {
      for (const c of [textarea, attach, send]) c.disabled = true;
    }
    files.addEventListener("change", () => {
      this.stage([...files.files]);
      files.value = "";
    });
    textarea.addEventListener("paste", (e) => {
      const images = [...e.clipboardData.items].filter((i) => i.kind === "file").map((i) => i.getAsFile()).filter(Boolean);
      if (images.length) {
        e.preventDefault();
        this.stage(images);
      }
    });
    form.addEventListener("dragover", (e) => e.preventDefault());
    form.addEventListener("drop", (e) => {
      e.preventDefault();
      this.stage([...e.dataTransfer.files]);
    });
    textarea.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        form.requestSubmit();
      }
    });
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.submit(textarea);
    });
    return form;
  }

  say(message) {
    this.error.textContent = message;
    this.error.hidden = !message;
  }

  /** Stages photos to send, each checked against the server's limits. */
  async stage(list) {
    const limits = this.env.limits();
    for (const file of list) {
      if (!IMAGE_TYPES.includes(file.type)) {
        this.say(`${file.name || "That file"} is not a PNG, JPEG, GIF or WebP photo.`);
        continue;
      }
      if (file.size > limits.maxImageBytes) {
        this.say(`${file.name || "That photo"} is ${formatBytes(file.size)}; at most ${formatBytes(limits.maxImageBytes)}.`);
        continue;
      }
      if (this.staged.length >= limits.maxImages) {
        this.say(`At most ${limits.maxImages} photos in one message.`);
        break;
      }
      const dataUrl = await dataUrlOf(file);
      this.staged.push({ dataUrl, mimeType: file.type });
      const remove = el("button", "remove", "×");
      remove.type = "button";
      remove.title = "Remove";
      const thumb = el("span", "thumb", photo(dataUrl, "photo to send", this.env.openPhoto), remove);
      remove.addEventListener("click", () => {
        this.staged = this.staged.filter((s) => s.dataUrl !== dataUrl);
        thumb.remove();
      });
      this.stagedBox.append(thumb);
    }
  }

  /** Sends what is written and staged, if anything and within the limits. */
  submit(textarea) {
    const text = textarea.value;
    if (!text.trim() && this.staged.length === 0) return;
    if (new TextEncoder().encode(text).length > this.env.limits().maxText) {
      this.say(`The message is longer than ${formatBytes(this.env.limits().maxText)}.`);
      return;
    }
    this.say("");
    const images = this.staged.map((s) => ({ dataUrl: s.dataUrl, mimeType: s.mimeType }));
    this.staged = [];
    this.stagedBox.replaceChildren();
    textarea.value = "";
    this.send({ clientMessageId: crypto.randomUUID(), text, images });
  }

  /** Shows a send at once, then records it; a failure offers a retry with the same id. */
  async send({ clientMessageId, text, images }) {
    const { pending } = this.chat;
    this.sentHere.add(clientMessageId);
    const local = { clientMessageId, text, images, acceptedAt: null, local: true };
    pending.set(clientMessageId, local);
    this.chat.changed();
    this.chat.scrollToBottom();
    const body = {
      clientMessageId,
      chatId: this.chat.chatId,
      text,
      images: images.map((i) => ({ url: i.dataUrl, mimeType: i.mimeType })),
    };
    const sessionId = this.chat.sessionId();
    if (sessionId) body.sessionId = sessionId;
    try {
      const record = await this.env.call(() => post("/api/chat/send", body));
      if (!pending.has(clientMessageId)) return;
      // The server's record, with this page's own photos still shown from their data URLs.
      const shown = { ...record, images: record.images.map((image, i) => ({ ...image, dataUrl: images[i] && images[i].dataUrl })) };
      pending.set(clientMessageId, shown);
      this.chat.recorded(record);
    } catch (e) {
      const p = pending.get(clientMessageId);
      if (p) p.error = `Not sent: ${e.message}`;
    }
    this.chat.changed();
  }

  /** Sends a pending message again under its own id. */
  retry(clientMessageId) {
    const p = this.chat.pending.get(clientMessageId);
    if (!p) return;
    const images = (p.images || []).map((i) => ({ dataUrl: i.dataUrl, mimeType: i.mimeType }));
    if (p.engineError || images.some((i) => !i.dataUrl)) {
      // Accepted already: the server has the record; sending it again under the same id returns it.
      // Its photos come back from the server.
      this.resend(p);
      return;
    }
    delete p.error;
    this.send({ clientMessageId, text: p.text, images });
  }

  async resend(p) {
    const images = await Promise.all(
      (p.images || []).map(async (i) => {
        if (i.dataUrl) return { dataUrl: i.dataUrl, mimeType: i.mimeType };
        const blob = await (await fetch(i.url, { credentials: "same-origin" })).blob();
        return { dataUrl: await dataUrlOf(blob), mimeType: i.mimeType };
      }),
    );
    delete p.error;
    this.send({ clientMessageId: p.clientMessageId, text: p.text, images });
  }
}
