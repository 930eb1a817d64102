//! `GET /api/openapi.json`: an OpenAPI 3 document describing every route, its parameters and its
//! responses. Kept next to the routes; schemathesis checks the server against it in CI.

use serde_json::{Value, json};

fn error_response(description: &str) -> Value {
    json!({
        "description": description,
        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } }
    })
}

fn json_response(description: &str, schema: &str) -> Value {
    json!({
        "description": description,
        "content": { "application/json": { "schema": { "$ref": format!("#/components/schemas/{schema}") } } }
    })
}

fn common_errors() -> Value {
    json!({
        "400": error_response("A malformed parameter or unknown query parameter."),
        "401": error_response("A token is configured and was not presented, or is wrong."),
        "403": error_response("The Host is not a name of this server (DNS rebinding)."),
        "404": error_response("No such route or object."),
        "405": merge(error_response("Method not allowed."), json!({ "headers": { "Allow": { "schema": { "type": "string" } } } })),
        "414": error_response("Query string too long."),
        "429": merge(
            error_response("Too many wrong tokens lately (10 a minute): no token is checked until Retry-After seconds have passed."),
            json!({ "headers": { "Retry-After": { "schema": { "type": "integer" } } } })
        )
    })
}

/// The agents' names, from the format registry; with `any`, also `""` first (a filter's "any agent").
fn agents(any: bool) -> Value {
    let any = any.then_some("");
    Value::from(any.into_iter().chain(scrollback_core::format::names()).collect::<Vec<&str>>())
}

fn merge(mut base: Value, extra: Value) -> Value {
    if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            b.insert(k.clone(), v.clone());
        }
    }
    base
}

fn limit(max: u32, default: u32) -> Value {
    json!({ "name": "limit", "in": "query", "required": false,
            "schema": { "type": "integer", "minimum": 1, "maximum": max, "default": default } })
}

/// A `since` or `until` query parameter.
fn time_param(name: &str, description: &str) -> Value {
    json!({ "name": name, "in": "query", "required": false, "description": format!("{description} A date (YYYY-MM-DD) or an RFC 3339 time."),
            "schema": { "type": "string" } })
}

fn media_responses() -> Value {
    merge(
        common_errors(),
        json!({
            "200": {
                "description": "The decoded bytes, verified against the recorded blake3.",
                "headers": {
                    "ETag": { "schema": { "type": "string" } },
                    "Cache-Control": { "schema": { "type": "string" } }
                },
                "content": { "*/*": { "schema": { "type": "string", "format": "binary" } } }
            },
            "304": { "description": "The client's copy (If-None-Match) is current." },
            "409": error_response("The transcript's bytes no longer match the recorded hash; it is being re-indexed."),
            "410": error_response("The transcript holding the payload is gone.")
        }),
    )
}

/// The answers of a route that changes state, beyond its 200.
fn state_changing_errors() -> Value {
    merge(
        common_errors(),
        json!({
            "403": error_response("A cross-site request (Origin or Sec-Fetch-Site): refused."),
            "408": error_response("The body stopped arriving (body-timeout): it has the idle timeout, and a second more for every 16 KiB that arrive."),
            "409": error_response("Disagrees with what is recorded (a clientMessageId reused for another message, a chat bound to another session)."),
            "411": error_response("A Content-Length is required."),
            "413": error_response("The body or an image is over its limit."),
            "415": error_response("The body must be Content-Type: application/json.")
        }),
    )
}

fn json_body(schema: &str, example: Value) -> Value {
    json!({
        "required": true,
        "content": { "application/json": {
            "schema": { "$ref": format!("#/components/schemas/{schema}") },
            "example": example
        } }
    })
}

/// The schemas of the chat routes (acceptances).
// One JSON literal, long for the same reason as `index_document`: a schema read in one piece.
fn chat_schemas() -> Value {
    let id = json!({ "type": "string", "pattern": "^[A-Za-z0-9._:-]{1,128}$" });
    json!({
        "AcceptedImage": {
            "type": "object", "required": ["blake3", "url", "mimeType", "bytes"],
            "properties": {
                "blake3": { "type": "string", "pattern": "^[0-9a-f]{64}$" },
                "url": { "type": "string", "description": "/api/media/{blake3}" },
                "mimeType": { "type": "string" },
                "bytes": { "type": "integer" }
            }
        },
        "Accepted": {
            "type": "object", "required": ["clientMessageId", "chatId", "sessionId", "text", "images", "acceptedAt", "state"],
            "properties": {
                "clientMessageId": { "type": "string" },
                "chatId": { "type": "string" },
                "sessionId": { "type": "string", "nullable": true, "description": "null until the chat is bound to a session." },
                "text": { "type": "string" },
                "images": { "type": "array", "items": { "$ref": "#/components/schemas/AcceptedImage" } },
                "acceptedAt": { "type": "string", "description": "UTC, RFC 3339 with milliseconds." },
                "state": { "type": "string", "enum": ["pending", "retired"] },
                "engineError": { "type": "string", "description": "Why the engine failed for this message." }
            }
        },
        "SendRequest": {
            "type": "object", "additionalProperties": false, "required": ["clientMessageId", "chatId", "text"],
            "properties": {
                "clientMessageId": id,
                "chatId": id,
                "sessionId": merge(id.clone(), json!({ "nullable": true })),
                "text": { "type": "string", "maxLength": scrollback_accept::send::MAX_TEXT, "description": "At most 64 KiB of UTF-8; may be empty when images are sent." },
                "images": { "type": "array", "maxItems": scrollback_accept::send::MAX_IMAGES, "items": {
                    "type": "object", "additionalProperties": false, "required": ["url"],
                    "properties": {
                        "url": { "type": "string", "pattern": "^[Dd][Aa][Tt][Aa]:[Ii][Mm][Aa][Gg][Ee]/[A-Za-z]+(;[^,;=]+=[^,;]*)*;[Bb][Aa][Ss][Ee]64,", "description": "A base64 data URL (RFC 2397: names in any case, parameters such as `;charset=` before `;base64`) of PNG, JPEG, GIF or WebP, of at most 5 MiB decoded, whose bytes are of its type." },
                        "mimeType": { "type": "string" }
                    }
                } }
            }
        },
        "BindRequest": {
            "type": "object", "additionalProperties": false, "required": ["sessionId"],
            "properties": { "sessionId": id }
        },
        "Bound": {
            "type": "object", "required": ["chatId", "sessionId"],
            "properties": { "chatId": { "type": "string" }, "sessionId": { "type": "string" } }
        },
        "RetireRequest": {
            "type": "object", "additionalProperties": false, "required": ["chatId", "clientMessageIds"],
            "properties": { "chatId": id, "clientMessageIds": { "type": "array", "maxItems": 1000, "items": id } }
        },
        "Retired": {
            "type": "object", "required": ["chatId", "retired"],
            "properties": { "chatId": { "type": "string" }, "retired": { "type": "array", "items": { "type": "string" } } }
        },
        "LoginRequest": {
            "type": "object", "additionalProperties": false, "required": ["token"],
            "properties": { "token": { "type": "string" } }
        },
        "Login": {
            "type": "object", "required": ["required"],
            "properties": { "required": { "type": "boolean", "description": "Whether this server needs a token at all." } }
        },
        "Info": {
            "type": "object", "required": ["version", "limits", "agents", "engine", "store"],
            "properties": {
                "version": { "type": "string" },
                "store": { "type": "string", "enum": ["index", "hub"], "description": "What this server reads: this machine's index, or a team's hub (serve --postgres), which is read-only: every request but GET, HEAD and OPTIONS is refused (400 not-served); its status is a HubStatus." },
                "engine": { "type": "boolean", "description": "Whether an engine runs sent messages (serve --engine or --demo). Without one, POST /api/chat/send is refused (409 no-engine)." },
                "agents": { "type": "array", "description": "The agents whose transcripts this server reads, as each is named in the API and shown to people.",
                    "items": { "type": "object", "required": ["name", "displayName"], "properties": {
                        "name": { "type": "string", "enum": agents(false) }, "displayName": { "type": "string" } } } },
                "limits": { "type": "object", "required": ["maxImages", "maxImageBytes", "maxText", "maxBody"],
                    "properties": {
                        "maxImages": { "type": "integer" }, "maxImageBytes": { "type": "integer" },
                        "maxText": { "type": "integer" }, "maxBody": { "type": "integer" }
                    } }
            }
        },
        "HubStatus": {
            "type": "object",
            "description": "A team's hub (serve --postgres): it has no index, writer or vault of its own; each host's own server shows those.",
            "required": ["store", "version", "schemaVersion", "hosts", "blobs", "blobBytes"],
            "properties": {
                "store": { "type": "string", "enum": ["hub"] },
                "version": { "type": "string" },
                "schemaVersion": { "type": "integer", "description": "The hub's schema version." },
                "hosts": { "type": "array", "description": "The hosts that pushed, by name: when each first pushed and last sent something (UTC), and its sessions with their entries and photos as each session counts them.",
                    "items": { "type": "object", "required": ["name", "firstPushAt", "lastPushAt", "sessions", "entries", "photos"], "properties": {
                        "name": { "type": "string" }, "firstPushAt": { "type": "string" },
                        "lastPushAt": { "type": "string", "nullable": true },
                        "sessions": { "type": "integer" }, "entries": { "type": "integer" }, "photos": { "type": "integer" } } } },
                "blobs": { "type": "integer", "description": "Payloads whose bytes the hub holds, each once." },
                "blobBytes": { "type": "integer", "description": "Their decoded bytes." }
            }
        },
        "Status": {
            "type": "object",
            "required": ["writer", "indexDamage", "watcher", "transcripts", "roots", "sessions", "entries", "invalidLines", "photos", "indexBytes", "freeBytes", "vault", "acceptancesPending", "dataDir", "version", "engine"],
            "properties": {
                "dataDir": { "type": "string", "description": "The data directory: the index, the acceptance record, the vault." },
                "version": { "type": "string" },
                "engine": { "type": "boolean", "description": "Whether an engine runs sent messages (serve --engine or --demo)." },
                "writer": { "type": "object", "required": ["state"], "properties": {
                    "state": { "type": "string", "enum": ["running", "failed", "none"] },
                    "error": { "type": "string" } } },
                "indexDamage": { "type": "string", "nullable": true, "description": "What SQLite said when a request found the index damaged (run scrollback check, then scrollback rebuild); null if none did." },
                "watcher": { "type": "string", "nullable": true, "enum": ["notify", "poll", null] },
                "transcripts": { "type": "object", "nullable": true, "required": ["live", "gone"], "properties": {
                    "live": { "type": "integer" }, "gone": { "type": "integer" } },
                    "description": "The counts below are null when the index is damaged." },
                "roots": { "type": "array", "description": "The transcript roots followed, each of one format, whether it exists now (one that does not is looked for again at each rescan), and the followed transcripts of its format under it and their sessions (null when the index is damaged).",
                    "items": { "type": "object", "required": ["agent", "dir", "exists", "transcripts", "sessions"], "properties": {
                        "agent": { "type": "string" }, "dir": { "type": "string" }, "exists": { "type": "boolean" },
                        "transcripts": { "type": "integer", "nullable": true }, "sessions": { "type": "integer", "nullable": true } } } },
                "sessions": { "type": "integer", "nullable": true },
                "agents": { "type": "object", "nullable": true, "additionalProperties": { "type": "integer" },
                    "description": "Sessions of each agent." },
                "entries": { "type": "integer", "nullable": true },
                "invalidLines": { "type": "integer", "nullable": true },
                "photos": { "type": "integer", "nullable": true },
                "indexBytes": { "type": "integer", "nullable": true },
                "freeBytes": { "type": "integer", "nullable": true },
                "vault": { "type": "object", "nullable": true, "required": ["state", "off", "links", "onlyInVaultBytes", "broken"],
                    "description": "The vault of hard links: on or off (and why), its links, the bytes of gone transcripts only it holds, and the retention check's findings.",
                    "properties": {
                        "state": { "type": "string", "enum": ["on", "off"] },
                        "off": { "type": "string", "nullable": true },
                        "links": { "type": "integer" },
                        "onlyInVaultBytes": { "type": "integer" },
                        "broken": { "type": "array", "items": { "type": "string" } }
                    } },
                "acceptancesPending": { "type": "integer" },
                "push": { "type": "object", "nullable": true, "description": "The push to a hub (serve --push); null without one.",
                    "required": ["hub", "host", "state", "lastPushAt", "error", "retryInSecs", "entriesSent", "photosSent"],
                    "properties": {
                        "hub": { "type": "string", "description": "user@host:port/dbname" },
                        "host": { "type": "string" },
                        "state": { "type": "string", "enum": ["connecting", "pushing", "current", "failing"] },
                        "lastPushAt": { "type": "string", "nullable": true },
                        "error": { "type": "string", "nullable": true },
                        "retryInSecs": { "type": "integer", "nullable": true },
                        "entriesSent": { "type": "integer" },
                        "photosSent": { "type": "integer" }
                    } }
            }
        },
        "Bootstrap": {
            "type": "object", "required": ["chatId", "sessionId", "entries", "before", "after", "pending"],
            "properties": {
                "chatId": { "type": "string" },
                "sessionId": { "type": "string", "nullable": true },
                "entries": { "type": "array", "items": { "$ref": "#/components/schemas/Entry" }, "description": "The newest history page of the chat's session, each entry with its view (empty while none is bound)." },
                "before": { "type": "integer", "nullable": true },
                "after": { "type": "integer", "nullable": true },
                "pending": { "type": "array", "items": { "$ref": "#/components/schemas/Accepted" }, "description": "Sends no client has retired, oldest first." }
            }
        }
    })
}

/// The chat routes (acceptances).
fn chat_paths() -> Value {
    json!({
        "/api/chat/send": { "post": {
            "summary": "Record a sent message durably, then run the engine. The same clientMessageId answers the same record.",
            "requestBody": json_body("SendRequest", json!({ "clientMessageId": "doc-example-1", "chatId": "doc-example", "text": "hello" })),
            "responses": merge(state_changing_errors(), json!({
                "200": json_response("The accepted record.", "Accepted"),
                "409": error_response("Disagrees with what is recorded (conflict: a clientMessageId reused for another message, a chat bound to another session), or the server runs no engine (no-engine: started without --engine or --demo; nothing is recorded)."),
                "503": error_response("As many send bodies as the server holds at once are arriving (busy, with Retry-After), or the server is stopping."),
                "507": error_response("The data directory's disk is full (disk-full): nothing was stored.")
            }))
        } },
        "/api/chats/{chatId}/session": { "post": {
            "summary": "Bind a chat to the session its engine assigned. Idempotent; another session is a 409.",
            "parameters": [ { "name": "chatId", "in": "path", "required": true, "schema": { "type": "string", "pattern": "^[A-Za-z0-9._:-]{1,128}$" } } ],
            "requestBody": json_body("BindRequest", json!({ "sessionId": "doc-example-session" })),
            "responses": merge(state_changing_errors(), json!({ "200": json_response("The binding.", "Bound") }))
        } },
        "/api/chat/bootstrap": { "get": {
            "summary": "The two records side by side: the newest history page of the chat's session and its pending sends.",
            "parameters": [ { "name": "chatId", "in": "query", "required": true, "schema": { "type": "string", "pattern": "^[A-Za-z0-9._:-]{1,128}$" } } ],
            "responses": merge(common_errors(), json!({ "200": json_response("Entries and pending sends.", "Bootstrap") }))
        } },
        "/api/login": { "post": {
            "summary": "Check the server's token and keep it in an HttpOnly, SameSite=Strict cookie (for the viewer). Needs no token itself.",
            "requestBody": json_body("LoginRequest", json!({ "token": "the-token" })),
            "responses": merge(state_changing_errors(), json!({ "200": json_response("Signed in (or no token is needed).", "Login") }))
        } },
        "/api/status": { "get": {
            "summary": "What the index holds and how the server stands: the writer (running, or failed and why), the watcher, the roots and what each holds, transcripts live and gone, sessions, entries, invalid lines, photos, the index's size, the data directory and its free space, the vault, sends pending, the push, whether an engine runs, the version.",
            "responses": merge(common_errors(), json!({ "200": { "description": "The status: an index's, or a team's hub's (serve --postgres).",
                "content": { "application/json": { "schema": { "oneOf": [
                    { "$ref": "#/components/schemas/Status" }, { "$ref": "#/components/schemas/HubStatus" } ] } } } } }))
        } },
        "/api/info": { "get": {
            "summary": "The server's version, the limits of a send, the agents it reads, and whether an engine runs sent messages.",
            "responses": merge(common_errors(), json!({ "200": json_response("Version and limits.", "Info") }))
        } },
        "/api/chat/retire": { "post": {
            "summary": "Tell the server which sends the transcript now backs (after reconciling); they leave pending.",
            "requestBody": json_body("RetireRequest", json!({ "chatId": "doc-example", "clientMessageIds": ["doc-example-1"] })),
            "responses": merge(state_changing_errors(), json!({ "200": json_response("The ids retired now.", "Retired") }))
        } }
    })
}

/// The document: the history routes and the chat routes.
pub fn document() -> Value {
    let mut doc = index_document();
    if let (Some(schemas), Some(chat)) = (doc["components"]["schemas"].as_object_mut(), chat_schemas().as_object()) {
        schemas.extend(chat.clone());
    }
    if let (Some(paths), Some(chat)) = (doc["paths"].as_object_mut(), chat_paths().as_object()) {
        paths.extend(chat.clone());
    }
    doc
}

/// The history, media, search and events routes.
// One JSON literal, long because the API is: split up, the routes it describes could no longer be
// read (and checked against the router) in one place.
fn index_document() -> Value {
    let if_none_match =
        json!({ "name": "If-None-Match", "in": "header", "required": false, "schema": { "type": "string" } });
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "scrollback",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "History, photos and search over an SQLite index of AI chat transcripts. \
                            Errors are {\"error\": {\"code\", \"message\"}}."
        },
        "components": {
            "securitySchemes": {
                "bearer": { "type": "http", "scheme": "bearer" },
                "cookie": { "type": "apiKey", "in": "cookie", "name": "scrollback_token" }
            },
            "schemas": {
                "Error": {
                    "type": "object", "required": ["error"],
                    "properties": { "error": { "type": "object", "required": ["code", "message"],
                        "properties": { "code": { "type": "string" }, "message": { "type": "string" } } } }
                },
                "Session": {
                    "type": "object", "required": ["id", "entries", "sidechainEntries", "images", "gone"],
                    "properties": {
                        "id": { "type": "string" },
                        "project": { "type": "string", "nullable": true },
                        "title": { "type": "string", "nullable": true },
                        "firstTimestamp": { "type": "string", "nullable": true },
                        "lastTimestamp": { "type": "string", "nullable": true },
                        "entries": { "type": "integer", "description": "Entries history returns with sidechains=true: invalid lines included, copies of an entry (same uuid) left out." },
                        "sidechainEntries": { "type": "integer", "description": "Of entries, those on a side chain: history without side chains returns entries - sidechainEntries." },
                        "images": { "type": "integer" },
                        "gone": { "type": "boolean", "description": "Every transcript of the session is gone; its history is kept." },
                        "agent": { "type": "string", "enum": agents(false), "description": "The agent that wrote it." },
                        "forkedFrom": { "type": "string", "nullable": true, "description": "The session it was forked from, as its transcript says." },
                        "pinned": { "type": "boolean", "description": "Pinned by a person to the top of the list (their marks: PUT /api/sessions/{sessionId}/marks)." },
                        "host": { "type": "string", "description": "On a team's hub (serve --postgres): the host whose index holds it." },
                        "transcriptTitle": { "type": "string", "nullable": true, "description": "The title the transcript gives, when a person gave the session one of their own (then in title)." }
                    }
                },
                "SessionAbout": {
                    "allOf": [ { "$ref": "#/components/schemas/Session" },
                               { "type": "object", "properties": {
                                   "gitBranch": { "type": "string", "nullable": true, "description": "The git branch the transcript names last." },
                                   "resume": { "type": "string", "nullable": true, "description": "The command that resumes the session in its agent's CLI (claude --resume ID, codex resume ID, gemini --resume ID, pi --session ID), the id quoted for a POSIX shell where it needs to be; null for an agent without one." } } } ]
                },
                "Outline": {
                    "type": "object", "additionalProperties": false, "required": ["sessionId", "turns"],
                    "properties": {
                        "sessionId": { "type": "string" },
                        "turns": { "type": "array", "items": { "$ref": "#/components/schemas/Turn" } }
                    }
                },
                "Turn": {
                    "type": "object", "additionalProperties": false,
                    "required": ["cursor", "timestamp", "text", "toolCalls", "answerCursor", "answeredAt", "responses", "contextTokens", "outputTokens"],
                    "properties": {
                        "cursor": { "type": "integer", "description": "The prompt's entry: pass as history from to open the conversation there." },
                        "timestamp": { "type": "string", "nullable": true, "description": "The prompt's time, as written." },
                        "text": { "type": "string", "description": "Its first words: at most 160 characters (then an ellipsis), white space made single spaces." },
                        "toolCalls": { "type": "integer", "description": "Tool calls from this prompt until the next." },
                        "answerCursor": { "type": "integer", "nullable": true, "description": "The turn's last answer (an assistant entry): where the viewer shows the turn's figures." },
                        "answeredAt": { "type": "string", "nullable": true, "description": "The time of the turn's last answer (an assistant entry): minus timestamp, how long the turn took." },
                        "responses": { "type": "integer", "description": "Responses the usage ledger holds for the turn." },
                        "contextTokens": { "type": "integer", "nullable": true, "description": "The context of the turn's last response: input + cache read + cache write tokens; null where none is recorded." },
                        "outputTokens": { "type": "integer", "nullable": true, "description": "The turn's output tokens, summed; null where none is recorded." }
                    }
                },
                "EntryTexts": {
                    "type": "object", "additionalProperties": false, "required": ["cursor", "texts"],
                    "properties": {
                        "cursor": { "type": "integer" },
                        "texts": { "type": "array", "items": { "type": "string" }, "description": "Each text of the entry, whole." }
                    }
                },
                "Marks": {
                    "type": "object", "required": ["sessionId", "pinned"],
                    "properties": {
                        "sessionId": { "type": "string" },
                        "title": { "type": "string", "nullable": true, "description": "The title a person gave the session (null: the transcript's)." },
                        "pinned": { "type": "boolean" },
                        "updatedAt": { "type": "string", "nullable": true }
                    }
                },
                "SessionPage": {
                    "type": "object", "required": ["sessions", "next"],
                    "properties": {
                        "sessions": { "type": "array", "items": { "$ref": "#/components/schemas/Session" } },
                        "next": { "type": "string", "nullable": true, "description": "Pass as cursor for the next page." }
                    }
                },
                "Entry": {
                    "type": "object", "required": ["cursor", "order", "line", "isSidechain"],
                    "properties": {
                        "cursor": { "type": "integer" },
                        "order": { "type": "array", "minItems": 3, "maxItems": 3, "items": {},
                                   "description": "[at, file, line]: the entry's place in the conversation, compared element by element (at as text: the latest timestamp of its file so far; file: 0 for the main transcript)." },
                        "line": { "type": "integer", "description": "1-based line number in its transcript." },
                        "uuid": { "type": "string", "nullable": true },
                        "parentUuid": { "type": "string", "nullable": true },
                        "type": { "type": "string", "nullable": true },
                        "role": { "type": "string", "nullable": true },
                        "timestamp": { "type": "string", "nullable": true },
                        "isSidechain": { "type": "boolean" },
                        "agent": { "type": "string", "description": "The agent that wrote the line: how its entry is laid out." },
                        "subagent": { "type": "object", "required": ["agentId", "first", "entries"],
                            "description": "The sub-agent this tool call ran (as its format says), and where its entries are (with sidechains=true).",
                            "properties": {
                                "agentId": { "type": "string" },
                                "first": { "type": "integer", "nullable": true, "description": "Cursor of its first entry; null if its transcript is not indexed." },
                                "entries": { "type": "integer" }
                            } },
                        "spawnedBy": { "type": "object", "required": ["agentId", "cursor"],
                            "description": "On a sub-agent's first entry (with sidechains=true): the entry that ran it, whose subagent names it back.",
                            "properties": {
                                "agentId": { "type": "string" },
                                "cursor": { "type": "integer", "nullable": true, "description": "Cursor of the entry that ran it; null if none is indexed." }
                            } },
                        "entry": { "type": "object", "description": "The stored line. Each image block where its format keeps them carries ref, url, mimeType, bytes and blake3, or failed: true and placeholder for a failed upload; other payloads carry mediaUrl." },
                        "invalid": { "type": "string", "description": "Why the line could not be indexed." },
                        "typed": { "type": "object", "required": ["text", "images"],
                            "description": "What a person typed, where the entry is a person's message (by its format's rule): what a client compares a pending send with. Absent on every other entry.",
                            "properties": {
                                "text": { "type": "string" },
                                "images": { "type": "array", "items": { "type": "string", "nullable": true },
                                            "description": "One item per image, in order: the blake3 of its bytes, or null where the entry does not know it (a failed upload)." }
                            } },
                        "view": { "$ref": "#/components/schemas/View" }
                    }
                },
                "View": {
                    "type": "object", "required": ["who", "parts"],
                    "description": "With view=true: who said the entry and what it says, in parts, as the entry's format reads its line: what the viewer lays out, knowing no format.",
                    "properties": {
                        "who": { "type": "object", "nullable": true, "required": ["name", "side"],
                            "description": "The byline and the side the entry stands on; null for a line the viewer does not show (bookkeeping).",
                            "properties": {
                                "name": { "type": "string", "description": "The byline (You, Assistant, Tool result, …); empty for a note." },
                                "side": { "type": "string", "enum": ["user", "assistant", "note"] }
                            } },
                        "parts": { "type": "array", "items": { "$ref": "#/components/schemas/ViewPart" }, "description": "In the line's order; empty where who is null." }
                    }
                },
                "ViewPart": {
                    "type": "object", "required": ["kind"],
                    "description": "One piece of an entry, by kind: text (text, and html: its Markdown as sanitised HTML, absent for a text too long to render; a text over 32768 characters is cut there, and more says how long it is whole (chars) and where GET /api/sessions/{sessionId}/entries/{cursor}/texts has it (index)), thinking (text), toolCall (id where the format gives one, tool, subject, line, added and removed for an edit, diff, input), toolResult (callId: the id of the call it answers, where the format links them; text, error, label, media), media (a photo or a file: image, url, mimeType, bytes, blake3, failed, and label where the entry's text refers to its photos by number: Image #1), note (text: plain, about the conversation), command (name, args: a command given to the agent's harness, such as a slash command), output (text, error: what such a command printed), context (label, text: plain text the harness added to a message, such as an IDE selection or a system reminder, shown folded), group (title, parts: shown folded), message (who, parts: a message quoted in the entry).",
                    "properties": {
                        "kind": { "type": "string", "enum": ["text", "thinking", "toolCall", "toolResult", "media", "note", "command", "output", "context", "group", "message"] },
                        "id": { "type": "string", "description": "A tool call's id, where its format gives one." },
                        "callId": { "type": "string", "description": "Of a tool result: the id of the call it answers." },
                        "name": { "type": "string" },
                        "args": { "type": "string" },
                        "text": { "type": "string" },
                        "html": { "type": "string" },
                        "more": { "type": "object", "required": ["chars", "index"],
                            "properties": { "chars": { "type": "integer" }, "index": { "type": "integer" } } },
                        "tool": { "type": "string" },
                        "subject": { "type": "string" },
                        "line": { "type": "string", "description": "The call at a glance: Bash $ git status, Edit src/lib.rs (+2 -1)." },
                        "added": { "type": "integer" },
                        "removed": { "type": "integer" },
                        "diff": { "type": "array", "items": { "type": "object", "required": ["op", "text"],
                            "properties": { "op": { "type": "string", "enum": [" ", "+", "-", "@"] }, "text": { "type": "string" } } } },
                        "input": { "description": "The call's input as the agent gave it." },
                        "error": { "type": "boolean" },
                        "label": { "type": "string" },
                        "media": { "type": "array", "items": { "$ref": "#/components/schemas/Media" } },
                        "image": { "type": "boolean" },
                        "url": { "type": "string", "description": "A media URL of this server (a client loads no other)." },
                        "mimeType": { "type": "string" },
                        "bytes": { "type": "integer" },
                        "blake3": { "type": "string" },
                        "failed": { "type": "boolean" },
                        "title": { "type": "string" },
                        "who": { "type": "object", "required": ["name", "side"],
                            "properties": { "name": { "type": "string" }, "side": { "type": "string", "enum": ["user", "assistant", "note"] } } },
                        "parts": { "type": "array", "items": { "$ref": "#/components/schemas/ViewPart" } }
                    }
                },
                "Media": {
                    "type": "object", "required": ["image", "failed"],
                    "description": "A photo (image) or a file to download, where the line holds one.",
                    "properties": {
                        "image": { "type": "boolean" },
                        "url": { "type": "string", "description": "A media URL of this server (a client loads no other)." },
                        "mimeType": { "type": "string" },
                        "bytes": { "type": "integer" },
                        "blake3": { "type": "string" },
                        "failed": { "type": "boolean", "description": "Nothing is behind it (a failed upload)." },
                        "label": { "type": "string", "description": "What the entry's text calls it (Image #1), where it refers to its photos by number." }
                    }
                },
                "HistoryPage": {
                    "type": "object", "required": ["sessionId", "entries", "before", "after", "next"],
                    "properties": {
                        "sessionId": { "type": "string" },
                        "entries": { "type": "array", "items": { "$ref": "#/components/schemas/Entry" }, "description": "In conversation order." },
                        "before": { "type": "integer", "nullable": true, "description": "Pass as before for the page before this one; null at the start (and for a catch-up)." },
                        "after": { "type": "integer", "nullable": true, "description": "Pass as after to catch up on entries indexed since this page." },
                        "next": { "type": "integer", "nullable": true, "description": "For a page read with from (a cursor or start): the entry after it, to pass as from; null at the newest entry and for other pages." }
                    }
                },
                "Forgotten": {
                    "type": "object", "required": ["sessionId", "entries", "photos", "transcripts", "messages", "freedBytes"],
                    "properties": {
                        "sessionId": { "type": "string" },
                        "entries": { "type": "integer" },
                        "photos": { "type": "integer", "description": "Payload rows." },
                        "transcripts": { "type": "integer", "description": "Transcripts that held only this session (remembered, not indexed again)." },
                        "messages": { "type": "integer", "description": "Sent messages of the session's chats." },
                        "freedBytes": { "type": "integer", "description": "About how many bytes: index rows, transcripts only the vault held, sent images." }
                    }
                },
                "UsageRow": {
                    "type": "object",
                    "required": ["key", "agents", "models", "first", "last", "responses", "inputTokens", "outputTokens",
                                 "cacheReadTokens", "cacheWriteTokens", "cacheWrite1hTokens", "reasoningTokens",
                                 "totalTokens", "cost", "unpricedResponses"],
                    "properties": {
                        "key": { "type": "string", "nullable": true, "description": "The group: a day, week (its Monday), month, session id, project, model or agent; null for the total and for responses without one." },
                        "title": { "type": "string", "nullable": true },
                        "project": { "type": "string", "nullable": true },
                        "agents": { "type": "array", "items": { "type": "string" } },
                        "models": { "type": "array", "items": { "type": "string" } },
                        "first": { "type": "string", "nullable": true },
                        "last": { "type": "string", "nullable": true },
                        "responses": { "type": "integer", "minimum": 0 },
                        "inputTokens": { "type": "integer", "minimum": 0, "description": "Input neither read from nor written to a cache." },
                        "outputTokens": { "type": "integer", "minimum": 0, "description": "Output, reasoning included." },
                        "cacheReadTokens": { "type": "integer", "minimum": 0 },
                        "cacheWriteTokens": { "type": "integer", "minimum": 0 },
                        "cacheWrite1hTokens": { "type": "integer", "minimum": 0 },
                        "reasoningTokens": { "type": "integer", "minimum": 0 },
                        "totalTokens": { "type": "integer", "minimum": 0 },
                        "cost": { "type": "number", "minimum": 0, "description": "USD, of the responses that have a price." },
                        "unpricedResponses": { "type": "integer", "minimum": 0, "description": "Responses with no price: not in cost." }
                    }
                },
                "Usage": {
                    "type": "object", "required": ["by", "rows", "total", "unpricedModels", "prices"],
                    "properties": {
                        "by": { "type": "string", "enum": ["day", "week", "month", "session", "project", "model", "agent"] },
                        "rows": { "type": "array", "items": { "$ref": "#/components/schemas/UsageRow" } },
                        "total": { "$ref": "#/components/schemas/UsageRow" },
                        "unpricedModels": { "type": "object", "additionalProperties": { "type": "integer" } },
                        "prices": { "type": "object", "required": ["source", "taken"],
                                    "properties": { "source": { "type": "string" }, "taken": { "type": "string" } } }
                    }
                },
                "StatsSpend": {
                    "type": "object", "required": ["responses", "tokens", "outputTokens", "cost", "unpricedResponses"],
                    "properties": {
                        "responses": { "type": "integer" },
                        "tokens": { "type": "integer", "description": "Input, output, cache read and cache write tokens." },
                        "outputTokens": { "type": "integer" },
                        "cost": { "type": "number", "description": "USD, of the priced responses." },
                        "unpricedResponses": { "type": "integer" }
                    }
                },
                "StatsTop": { "allOf": [ { "$ref": "#/components/schemas/StatsSpend" }, {
                    "type": "object", "required": ["name", "sessions", "messages"],
                    "properties": {
                        "name": { "type": "string", "nullable": true },
                        "sessions": { "type": "integer" },
                        "messages": { "type": "integer" }
                    } } ] },
                "StatsSession": { "allOf": [ { "$ref": "#/components/schemas/StatsSpend" }, {
                    "type": "object", "required": ["sessionId", "agent", "messages"],
                    "properties": {
                        "sessionId": { "type": "string" },
                        "title": { "type": "string", "nullable": true },
                        "project": { "type": "string", "nullable": true },
                        "agent": { "type": "string" },
                        "messages": { "type": "integer" },
                        "firstTimestamp": { "type": "string", "nullable": true },
                        "lastTimestamp": { "type": "string", "nullable": true },
                        "host": { "type": "string", "description": "On a team's hub (serve --postgres): the host whose session it is." }
                    } } ] },
                "Stats": {
                    "type": "object",
                    "required": ["filter", "totals", "days", "heatmap", "hours", "projects", "agents", "models", "tools",
                                 "bucketSeconds", "responseTimes", "recentEdits", "longestSessions", "costliestSessions"],
                    "properties": {
                        "filter": { "type": "object", "required": ["tzHours"], "properties": {
                            "since": { "type": "string", "nullable": true }, "until": { "type": "string", "nullable": true },
                            "tzHours": { "type": "integer" }, "project": { "type": "string", "nullable": true },
                            "agent": { "type": "string", "nullable": true } } },
                        "totals": { "allOf": [ { "$ref": "#/components/schemas/StatsSpend" }, {
                            "type": "object", "required": ["sessions", "messages", "prompts", "toolCalls", "toolFailures"],
                            "properties": { "sessions": { "type": "integer" }, "messages": { "type": "integer" },
                                            "prompts": { "type": "integer" }, "toolCalls": { "type": "integer" },
                                            "toolFailures": { "type": "integer" } } } ] },
                        "days": { "type": "array", "description": "Every day from the first to the last, in order.", "items": {
                            "allOf": [ { "$ref": "#/components/schemas/StatsSpend" }, {
                                "type": "object", "required": ["day", "sessions", "messages", "prompts"],
                                "properties": { "day": { "type": "string" }, "sessions": { "type": "integer" },
                                                "messages": { "type": "integer" }, "prompts": { "type": "integer" } } } ] } },
                        "heatmap": { "type": "array", "description": "Messages by weekday (0 Sunday) and hour.",
                                     "items": { "type": "array", "items": { "type": "integer" } } },
                        "hours": { "type": "array", "description": "Messages by hour of the day.", "items": { "type": "integer" } },
                        "projects": { "type": "array", "items": { "$ref": "#/components/schemas/StatsTop" } },
                        "agents": { "type": "array", "items": { "$ref": "#/components/schemas/StatsTop" } },
                        "models": { "type": "array", "items": { "$ref": "#/components/schemas/StatsTop" } },
                        "tools": { "type": "array", "items": { "type": "object", "required": ["tool", "calls", "failures", "failureRate"],
                            "properties": { "tool": { "type": "string" }, "calls": { "type": "integer" },
                                            "failures": { "type": "integer" }, "failureRate": { "type": "number" } } } },
                        "bucketSeconds": { "type": "array", "items": { "type": "integer" } },
                        "responseTimes": { "type": "array", "items": { "type": "object", "required": ["responses", "histogram"],
                            "properties": { "model": { "type": "string", "nullable": true }, "responses": { "type": "integer" },
                                            "p50": { "type": "integer", "nullable": true }, "p90": { "type": "integer", "nullable": true },
                                            "p99": { "type": "integer", "nullable": true },
                                            "histogram": { "type": "array", "items": { "type": "integer" } } } } },
                        "recentEdits": { "type": "array", "items": { "type": "object",
                            "required": ["timestamp", "path", "tool", "added", "removed", "sessionId"],
                            "properties": { "timestamp": { "type": "string" }, "path": { "type": "string" }, "tool": { "type": "string" },
                                            "added": { "type": "integer" }, "removed": { "type": "integer" },
                                            "sessionId": { "type": "string" }, "title": { "type": "string", "nullable": true },
                                            "project": { "type": "string", "nullable": true },
                                            "host": { "type": "string", "description": "On a team's hub: the host whose session it is." } } } },
                        "longestSessions": { "type": "array", "items": { "$ref": "#/components/schemas/StatsSession" } },
                        "costliestSessions": { "type": "array", "items": { "$ref": "#/components/schemas/StatsSession" } }
                    }
                },
                "SearchHit": {
                    "type": "object", "required": ["sessionId", "cursor", "line", "snippet", "in"],
                    "properties": {
                        "sessionId": { "type": "string" },
                        "entryUuid": { "type": "string", "nullable": true },
                        "cursor": { "type": "integer" },
                        "line": { "type": "integer" },
                        "type": { "type": "string", "nullable": true },
                        "timestamp": { "type": "string", "nullable": true },
                        "agent": { "type": "string" },
                        "role": { "type": "string", "nullable": true },
                        "title": { "type": "string", "nullable": true, "description": "The session's title." },
                        "project": { "type": "string", "nullable": true, "description": "The session's project." },
                        "tool": { "type": "string", "nullable": true, "description": "The tool the entry calls." },
                        "in": { "type": "string", "enum": ["text", "tool"], "description": "Whether the snippet is of what was said or of a tool call's input or output." },
                        "snippet": { "type": "string", "description": "HTML-escaped text, matches in <mark>." },
                        "host": { "type": "string", "description": "On a team's hub (serve --postgres): the host whose index holds it." }
                    }
                },
                "SearchHits": {
                    "type": "object", "required": ["query"],
                    "properties": {
                        "query": { "type": "object", "required": ["q", "readAs", "notes"], "properties": {
                            "q": { "type": "string" },
                            "readAs": { "type": "string", "description": "The query as it was read." },
                            "notes": { "type": "array", "items": { "type": "string" }, "description": "What was cut or read otherwise." } } },
                        "sessions": { "type": "array", "description": "Grouped: each session once, best first.", "items": {
                            "type": "object", "required": ["sessionId", "agent", "hits", "best", "pinned"],
                            "properties": {
                                "sessionId": { "type": "string" },
                                "title": { "type": "string", "nullable": true },
                                "project": { "type": "string", "nullable": true },
                                "agent": { "type": "string" },
                                "lastTimestamp": { "type": "string", "nullable": true },
                                "pinned": { "type": "boolean" },
                                "hits": { "type": "integer", "minimum": 1, "description": "Its entries that match, the best one included." },
                                "best": { "$ref": "#/components/schemas/SearchHit" }
                            } } },
                        "hits": { "type": "array", "description": "With group=none or a session: one per entry.", "items": { "$ref": "#/components/schemas/SearchHit" } },
                        "next": { "type": "string", "description": "Pass as `cursor` for the next page; absent at the end." } }
                }
            }
        },
        "security": [ {}, { "bearer": [] }, { "cookie": [] } ],
        "paths": {
            "/api/sessions": { "get": {
                "summary": "Sessions, newest first, cursor-paginated.",
                "parameters": [
                    { "name": "project", "in": "query", "required": false, "schema": { "type": "string" } },
                    { "name": "agent", "in": "query", "required": false, "schema": { "type": "string", "enum": agents(true) },
                      "description": "Only this agent's." },
                    { "name": "q", "in": "query", "required": false, "schema": { "type": "string" },
                      "description": "Full-text query (FTS5 syntax) or a substring of the title." },
                    time_param("since", "Only sessions with an entry at or after this time."),
                    time_param("until", "Only sessions with an entry before this time (a date: to the end of that day)."),
                    { "name": "cursor", "in": "query", "required": false, "schema": { "type": "string" } },
                    { "name": "host", "in": "query", "required": false, "schema": { "type": "string" },
                      "description": "On a team's hub (serve --postgres): only this host's sessions. An index holds one host's and ignores it." },
                    limit(500, 50),
                    { "name": "pinned", "in": "query", "required": false, "schema": { "type": "boolean", "default": false },
                      "description": "Only the sessions a person pinned, their latest pin first, in one page." }
                ],
                "responses": merge(common_errors(), json!({ "200": json_response("A page of sessions.", "SessionPage") }))
            } },
            "/api/sessions/{sessionId}": { "delete": {
                "summary": "Forget a session, as `scrollback forget` does: its entries, photos' rows, search rows, vault links and sent messages (with their images) go, and its transcripts are not indexed again until `scrollback unforget`.",
                "parameters": [ { "name": "sessionId", "in": "path", "required": true, "schema": { "type": "string" } } ],
                "responses": merge(common_errors(), json!({
                    "200": json_response("What was forgotten.", "Forgotten"),
                    "403": error_response("A cross-site request (Origin or Sec-Fetch-Site): refused."),
                    "503": error_response("The indexer is not running (code writer-stopped), or the index is damaged.")
                }))
            } },
            "/api/sessions/{sessionId}/history": { "get": {
                "summary": "Entries of a session in conversation order: the newest page, the oldest (from=start), the page before an entry, an entry and those after it, or a catch-up.",
                "parameters": [
                    { "name": "sessionId", "in": "path", "required": true, "schema": { "type": "string" } },
                    { "name": "before", "in": "query", "required": false, "schema": { "type": "integer", "minimum": 0 },
                      "description": "The page just before this entry (a cursor of this session)." },
                    { "name": "from", "in": "query", "required": false,
                      "schema": { "oneOf": [ { "type": "integer", "minimum": 0 }, { "type": "string", "enum": ["start"] } ] },
                      "description": "This entry (a cursor of this session) and those after it; `start`: the session's oldest page, read forward (its next goes on), without the pages in between." },
                    { "name": "after", "in": "query", "required": false, "schema": { "type": "integer", "minimum": 0 },
                      "description": "Catch up: the entries indexed since the page that gave this after, each exactly once, wherever they stand in the conversation." },
                    { "name": "sidechains", "in": "query", "required": false, "schema": { "type": "boolean", "default": false } },
                    { "name": "view", "in": "query", "required": false, "schema": { "type": "boolean", "default": false },
                      "description": "Each entry with its view: who said it and its parts (texts with their Markdown as sanitised HTML, tool calls at a glance, photos, notes), as the viewer lays them out." },
                    limit(500, 100)
                ],
                "responses": merge(common_errors(), json!({ "200": json_response("A page of entries.", "HistoryPage") }))
            } },
            "/api/sessions/{sessionId}/about": { "get": {
                "summary": "A session as listed, with a person's marks and the git branch its transcript names.",
                "parameters": [ { "name": "sessionId", "in": "path", "required": true, "schema": { "type": "string" } } ],
                "responses": merge(common_errors(), json!({ "200": json_response("The session.", "SessionAbout") }))
            } },
            "/api/sessions/{sessionId}/outline": { "get": {
                "summary": "A session's prompts (a person's words; side chains left out) in conversation order, each with its time, its first words, the tool calls until the next prompt and its turn's figures where the usage ledger records them: what the viewer's outline lists and jumps by. A team's hub answers it as the host the session is read from does.",
                "parameters": [ { "name": "sessionId", "in": "path", "required": true, "schema": { "type": "string" } } ],
                "responses": merge(common_errors(), json!({ "200": json_response("The outline.", "Outline") }))
            } },
            "/api/sessions/{sessionId}/entries/{cursor}/texts": { "get": {
                "summary": "Every text of one entry, whole, in the order a view part's more.index counts them: what the viewer's \"show all\" fetches for a text its history page cut (a view holds at most 32768 characters of one text).",
                "parameters": [
                    { "name": "sessionId", "in": "path", "required": true, "schema": { "type": "string" } },
                    { "name": "cursor", "in": "path", "required": true, "schema": { "type": "integer", "minimum": 0 } }
                ],
                "responses": merge(common_errors(), json!({ "200": json_response("The entry's texts.", "EntryTexts") }))
            } },
            "/api/sessions/{sessionId}/marks": {
                "get": {
                    "summary": "A person's marks on a session: a title of their own, pinned. Primary data, kept beside the sends; never written into a transcript; kept through a rebuild.",
                    "parameters": [ { "name": "sessionId", "in": "path", "required": true, "schema": { "type": "string" } } ],
                    "responses": merge(common_errors(), json!({ "200": json_response("The marks.", "Marks") }))
                },
                "put": {
                    "summary": "Sets a person's marks: title (a string of at most 200 characters, or null for the transcript's), pinned. A field left out is left as it is.",
                    "parameters": [ { "name": "sessionId", "in": "path", "required": true, "schema": { "type": "string" } } ],
                    "requestBody": { "required": true, "content": { "application/json": { "schema": {
                        "type": "object", "additionalProperties": false,
                        "properties": { "title": { "type": "string", "maxLength": 200, "nullable": true }, "pinned": { "type": "boolean" } } },
                        "example": { "title": "Harbour photos", "pinned": true } } } },
                    "responses": merge(common_errors(), json!({
                        "200": json_response("The marks.", "Marks"),
                        "403": error_response("A cross-site request (Origin or Sec-Fetch-Site): refused."),
                        "413": error_response("The body is too large."),
                        "415": error_response("The body is not application/json.")
                    }))
                }
            },
            "/api/sessions/{sessionId}/export": { "get": {
                "summary": "A session as a file to take away: one HTML file that opens offline (photos inline, checked against their blake3; no script), one Markdown file (photos named, not included), or the transcript's own lines (JSONL), byte for byte.",
                "parameters": [
                    { "name": "sessionId", "in": "path", "required": true, "schema": { "type": "string" } },
                    { "name": "format", "in": "query", "required": false, "schema": { "type": "string", "enum": ["html", "markdown", "md", "jsonl"], "default": "html" } },
                    { "name": "redact", "in": "query", "required": false, "schema": { "type": "boolean", "default": false },
                      "description": "Replace secrets by gitleaks' rules (listed at the top of an HTML export)." }
                ],
                "responses": merge(common_errors(), json!({
                    "200": { "description": "The file (Content-Disposition: attachment).",
                             "content": { "text/html": { "schema": { "type": "string" } }, "text/markdown": { "schema": { "type": "string" } }, "application/x-ndjson": { "schema": { "type": "string" } } } },
                    "409": error_response("A photo's bytes no longer match their recorded blake3, or the transcript changed."),
                    "503": merge(
                        error_response("As many exports as the server writes at once (2) are being written (busy): ask again after Retry-After seconds."),
                        json!({ "headers": { "Retry-After": { "schema": { "type": "integer" } } } })
                    )
                }))
            } },
            "/api/session-media/{sessionId}/{entryUuid}/{ordinal}": { "get": {
                "summary": "One image by ref: read from the transcript at its recorded offset.",
                "parameters": [
                    { "name": "sessionId", "in": "path", "required": true, "schema": { "type": "string" } },
                    { "name": "entryUuid", "in": "path", "required": true, "schema": { "type": "string" } },
                    { "name": "ordinal", "in": "path", "required": true, "schema": { "type": "integer", "minimum": 0, "maximum": 4294967295u64 } },
                    if_none_match.clone()
                ],
                "responses": media_responses()
            } },
            "/api/media/{blake3}": { "get": {
                "summary": "Any stripped payload, by the blake3 of its decoded bytes.",
                "parameters": [
                    { "name": "blake3", "in": "path", "required": true, "schema": { "type": "string", "pattern": "^[0-9a-fA-F]{64}$" } },
                    if_none_match
                ],
                "responses": media_responses()
            } },
            "/api/search": { "get": {
                "summary": "Full-text search over entries, in the query language of docs/search.md: sessions with hits (grouped, the default) or one hit per entry.",
                "parameters": [
                    { "name": "q", "in": "query", "required": true, "schema": { "type": "string", "minLength": 1 },
                      "description": "Words (any punctuation), \"phrases\", prefix*, -excluded, a OR b, agent: project: role: tool: session: after: before:. Only an impossible query is a 400." },
                    { "name": "sort", "in": "query", "required": false, "schema": { "type": "string", "enum": ["", "relevance", "recent", "conversation"] } },
                    { "name": "group", "in": "query", "required": false, "schema": { "type": "string", "enum": ["", "session", "none"] },
                      "description": "session (the default without `session`): one result per session; none: one per entry." },
                    { "name": "session", "in": "query", "required": false, "schema": { "type": "string" } },
                    { "name": "agent", "in": "query", "required": false, "schema": { "type": "string", "enum": agents(true) },
                      "description": "Only this agent's." },
                    { "name": "project", "in": "query", "required": false, "schema": { "type": "string" },
                      "description": "Only sessions of this project (working directory)." },
                    { "name": "role", "in": "query", "required": false, "schema": { "type": "string", "enum": ["", "user", "assistant"] },
                      "description": "Only entries with this role." },
                    time_param("since", "Only entries written at or after this time."),
                    time_param("until", "Only entries written before this time (a date: to the end of that day)."),
                    { "name": "cursor", "in": "query", "required": false, "schema": { "type": "string", "pattern": "^[0-9]*$" },
                      "description": "The previous page's `next`." },
                    limit(500, 20)
                ],
                "responses": merge(common_errors(), json!({ "200": json_response("Sessions with hits, or hits, in the order asked for.", "SearchHits") }))
            } },
            "/api/usage": { "get": {
                "summary": "Tokens and cost from the usage ledger (one row per API response), grouped and priced.",
                "parameters": [
                    { "name": "by", "in": "query", "required": false,
                      "schema": { "type": "string", "enum": ["", "day", "week", "month", "session", "project", "model", "agent"] },
                      "description": "Group by this (day, UTC, when empty)." },
                    time_param("since", "Only responses at or after this time (a date: from its start, UTC)."),
                    time_param("until", "Only responses before this time (a date: to the end of that day)."),
                    { "name": "agent", "in": "query", "required": false, "schema": { "type": "string", "enum": agents(true) } },
                    { "name": "project", "in": "query", "required": false, "schema": { "type": "string" } },
                    { "name": "session", "in": "query", "required": false, "schema": { "type": "string" } },
                    { "name": "model", "in": "query", "required": false, "schema": { "type": "string" } }
                ],
                "responses": merge(common_errors(), json!({ "200": json_response("The report: groups, their total, and the prices used.", "Usage") }))
            } },
            "/api/stats": { "get": {
                "summary": "The overview: sessions, messages, tokens and cost per day, activity by weekday and hour, top projects, agents and models, tool use with failure rates, response times per model, recent edits, the longest and costliest sessions.",
                "parameters": [
                    { "name": "since", "in": "query", "required": false, "schema": { "type": "string" },
                      "description": "From this day (YYYY-MM-DD, in the time zone `tz`) on." },
                    { "name": "until", "in": "query", "required": false, "schema": { "type": "string" },
                      "description": "Up to this day (YYYY-MM-DD), inclusive." },
                    { "name": "tz", "in": "query", "required": false, "schema": { "type": "string" },
                      "description": "The time zone's offset from UTC in whole hours, -12 to 14 (0 when empty)." },
                    { "name": "agent", "in": "query", "required": false, "schema": { "type": "string", "enum": agents(true) } },
                    { "name": "project", "in": "query", "required": false, "schema": { "type": "string" } },
                    { "name": "limit", "in": "query", "required": false, "schema": { "type": "integer", "minimum": 1, "maximum": scrollback_read::stats::MAX_LIMIT },
                      "description": "How many of each list (projects, agents, models, recent edits, longest and costliest sessions): 10 when empty. Tools are all listed." }
                ],
                "responses": merge(common_errors(), json!({ "200": json_response("The overview's figures.", "Stats") }))
            } },
            "/api/events": { "get": {
                "summary": "WebSocket: the event bus (entries-appended, session-gone, session-forgotten, writer-failed, chat-user-message, session-bound, engine-failed, chat-retired) as JSON text messages.",
                "responses": merge(common_errors(), json!({ "101": { "description": "Switching to the WebSocket protocol." } }))
            } },
            "/api/openapi.json": { "get": {
                "summary": "This document.",
                "responses": { "200": { "description": "OpenAPI 3.", "content": { "application/json": { "schema": { "type": "object" } } } },
                               "401": error_response("A token is configured and was not presented.") }
            } }
        }
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    /// Each route the router's table names (`warp::path!` in this crate's code), as an OpenAPI
    /// path: under `/api`, a parameter written `{}`.
    fn routed() -> BTreeSet<String> {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut routes = BTreeSet::new();
        for entry in std::fs::read_dir(&src).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            // The code, not its tests (this one names the macro too).
            let code = text.split("#[cfg(test)]").next().unwrap();
            for piece in code.split("warp::path!(").skip(1) {
                let args = &piece[..piece.find(')').unwrap()];
                let segments: Vec<String> = args
                    .split('/')
                    .map(|s| s.trim())
                    .map(|s| match s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
                        Some(literal) => literal.to_owned(),
                        None => "{}".to_owned(),
                    })
                    .collect();
                routes.insert(format!("/api/{}", segments.join("/")));
            }
        }
        routes
    }

    /// Routes the router serves that are not the API's, and why the document leaves them out.
    const NOT_THE_API: &[(&str, &str)] =
        &[("/api/mcp", "`/mcp` (no `/api` route): MCP's own protocol, which MCP documents")];

    #[test]
    fn every_route_the_router_serves_is_in_the_document_and_every_documented_path_is_routed() {
        let documented: BTreeSet<String> = super::document()["paths"]
            .as_object()
            .unwrap()
            .keys()
            .map(|path| {
                // `{sessionId}` → `{}`.
                let mut out = String::new();
                let mut in_param = false;
                for c in path.chars() {
                    match c {
                        '{' => {
                            in_param = true;
                            out.push_str("{}");
                        }
                        '}' => in_param = false,
                        c if !in_param => out.push(c),
                        _ => {}
                    }
                }
                out
            })
            .collect();
        let mut routed = routed();
        assert!(routed.len() >= 20, "the router's routes were not found: {routed:?}");
        for (route, _) in NOT_THE_API {
            assert!(routed.remove(*route), "{route} is no longer routed: take it off NOT_THE_API");
        }
        let undocumented: Vec<&String> = routed.difference(&documented).collect();
        assert!(undocumented.is_empty(), "routes the OpenAPI document does not describe: {undocumented:?}");
        let unrouted: Vec<&String> = documented.difference(&routed).collect();
        assert!(unrouted.is_empty(), "documented paths no route serves: {unrouted:?}");
    }
}
