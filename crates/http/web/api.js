// Talking to the server: JSON requests with the API's one error shape, and the events socket with
// reconnection. No DOM here.

/** The server wants its token (401). */
export class Unauthorized extends Error {
  constructor() {
    super("a token is required");
    this.name = "Unauthorized";
  }
}

/** An error answer: `status`, and the API's `code` and `message`. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
  }
}

async function request(path, options = {}) {
  let res;
  try {
    res = await fetch(path, { credentials: "same-origin", ...options });
  } catch (e) {
    throw new ApiError(0, "network", `the server cannot be reached (${e.message})`);
  }
  if (res.status === 401) throw new Unauthorized();
  const body = await res.json().catch(() => null);
  if (!res.ok) {
    const error = body && body.error;
    throw new ApiError(res.status, error ? error.code : "http", error ? error.message : res.statusText);
  }
  return body;
}

/** GET a JSON answer. */
export function get(path) {
  return request(path);
}

/** POST a JSON body; returns the JSON answer. */
export function post(path, body) {
  return request(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** PUT a JSON body; returns the JSON answer. */
export function put(path, body) {
  return request(path, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** `?a=1&b=2` from an object, leaving out empty values. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

/**
 * The events socket. Calls `onEvent(event)` for each event and `onState(open)` when it opens or
 * closes; reconnects after a close, waiting longer each time (up to 5 s), until `close()`.
 */
export class Events {
  constructor(onEvent, onState) {
    this.onEvent = onEvent;
    this.onState = onState;
    this.delay = 250;
    this.closed = false;
    this.connect();
  }

  connect() {
    if (this.closed) return;
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(`${scheme}//${location.host}/api/events`);
    this.socket = socket;
    socket.onopen = () => {
      this.delay = 250;
      this.onState(true);
    };
    socket.onmessage = (message) => {
      let event;
      try {
        event = JSON.parse(message.data);
      } catch {
        return;
      }
      this.onEvent(event);
    };
    socket.onclose = () => {
      this.onState(false);
      if (this.closed) return;
      setTimeout(() => this.connect(), this.delay);
      this.delay = Math.min(this.delay * 2, 5000);
    };
  }

  close() {
    this.closed = true;
    if (this.socket) this.socket.close();
  }
}
