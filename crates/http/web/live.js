// Live updates: the events socket, whose events go to the view on screen and the sessions list, and
// the top bar's live dot. When it opens again, the view catches up on what no event told of. app.js
// starts it once the sessions are listed, and reconnects it once a person signed in.

import { Events } from "./api.js";
import { $, view } from "./page.js";
import { sidebar } from "./sidebar.js";

export const events = {
  socket: null,
  wasOpen: false,
  start() {
    this.socket = new Events(
      (event) => {
        if (view && view.onEvent) view.onEvent(event);
        const listed = ["entries-appended", "session-gone", "session-forgotten", "session-bound"];
        if (listed.includes(event.type)) sidebar.refreshSoon();
        if (event.type === "writer-failed") {
          // The server stops (a supervisor restarts it); the page reconnects when it is back.
          $("live").title = `The indexer stopped: ${event.error}. History is not updated until scrollback restarts.`;
          $("live").classList.add("failed");
        }
      },
      (open) => {
        $("live").classList.toggle("on", open);
        if (open) $("live").classList.remove("failed");
        $("live").title = open ? "Live: following the transcripts" : "Reconnecting…";
        if (open && this.wasOpen === false) {
          // What was indexed while the socket was down, or before it first opened (the page's first
          // history may already be loaded by then), is caught up: no event told of it.
          if (view && view.onReconnect && (this.everOpen || view.after != null)) view.onReconnect();
          if (this.everOpen) sidebar.refreshSoon();
        }
        if (open) this.everOpen = true;
        this.wasOpen = open;
      },
    );
  },
  reconnect() {
    if (this.socket) this.socket.close();
    this.wasOpen = false;
    this.start();
  },
};
