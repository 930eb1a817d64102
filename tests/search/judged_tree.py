#!/usr/bin/env python3
"""Writes the "generated" tree of the judged search queries (tests/search/judged.json).

  judged_tree.py OUT_DIR

OUT_DIR/claude/<project>/<session>.jsonl are Claude Code transcripts, OUT_DIR/codex/sessions/... a
Codex CLI rollout and OUT_DIR/gemini/tmp/<project>/chats/... a Gemini CLI chat: index them with
--root claude:OUT_DIR/claude --root codex:OUT_DIR/codex --root gemini:OUT_DIR/gemini.

Each session is written to test one thing the ranking should get right: words next to each other
(or a quoted phrase) above the same words far apart; what the person typed and what the agent said
above tool output that repeats the same words; the newer of two otherwise equal sessions first;
punctuated words (gpt-5, C++, config.yaml, paths, URLs, error names); prefixes, OR, -exclude; and
the fields agent:, project:, role:, tool:, after:, before:. Everything is fixed (session ids,
uuids, timestamps, the filler text), so the tree is the same on every run and the judgments in
judged.json stay true. Python 3 standard library only.
"""
import json
import os
import random
import sys
import uuid
from datetime import datetime, timedelta, timezone

# Filler: neutral words that none of the judged queries look for (checked below).
FILLER = ("we the a of and to in is it that was for on are with as be this have from or by one had not but what "
          "all were when there can an your which their said if do will each about how up out them then she many "
          "some so these would other into has more her two like him see could no make than been its who now "
          "people my made over did down only way may water long little very after words called just where most "
          "know get through much go good new our me man too any day same right look think also around another "
          "came come work three must because does part even place well such here why things help put years "
          "different away again off went old number garden window river paper table yellow orange quiet "
          "morning evening simple careful gentle steady").split()

# Words a judged query of the generated tree looks for: filler must never hold one.
QUERY_WORDS = {"deep", "link", "connection", "pool", "timeout", "flaky", "retry", "migration", "rollback",
               "weekly", "report", "cron", "invoice", "pdf", "export", "gpt", "5", "c", "config", "yaml",
               "src", "auth", "session", "rs", "err_connection_refused", "https", "api", "example", "com",
               "v2", "orders", "typeerror", "cannot", "read", "properties", "undefined", "kubectl",
               "kubernetes", "serialization", "serializer", "serialize", "postgres", "mysql", "docker",
               "compose", "pytest", "fixtures", "bash", "crash", "billing", "service"}
assert not QUERY_WORDS & set(FILLER), QUERY_WORDS & set(FILLER)

NS = uuid.UUID("6f1d3c52-0b7e-4c1a-9a39-5d2a4e1c7b00")


def sid(n):
    """The fixed id of generated session n."""
    return "9d0c0000-0000-4000-8000-%012d" % n


def filler(seed, words):
    rng = random.Random(seed)
    return " ".join(rng.choice(FILLER) for _ in range(words)) + "."


class Claude:
    """One Claude Code transcript, written a line at a time."""

    def __init__(self, n, project, start):
        self.id = sid(n)
        self.cwd = "/home/dev/" + project
        self.project = project
        self.t = datetime.fromisoformat(start).replace(tzinfo=timezone.utc)
        self.lines = []
        self.parent = None
        self.tool = 0

    def _line(self, kind, message, extra=None):
        uid = str(uuid.uuid5(NS, "%s/%d" % (self.id, len(self.lines))))
        line = {"parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": self.cwd,
                "sessionId": self.id, "version": "2.1.39", "gitBranch": "main", "type": kind,
                "message": message, "uuid": uid,
                "timestamp": self.t.strftime("%Y-%m-%dT%H:%M:%S.000Z")}
        line.update(extra or {})
        self.lines.append(line)
        self.parent = uid
        self.t += timedelta(seconds=30)

    def user(self, text):
        self._line("user", {"role": "user", "content": text})
        return self

    def assistant(self, text):
        self._line("assistant", {"role": "assistant", "id": "msg_%d" % len(self.lines), "model": "claude-sonnet-4-5",
                                 "type": "message", "content": [{"type": "text", "text": text}]})
        return self

    def tool_call(self, name, tool_input, output):
        self.tool += 1
        call = "toolu_%s_%d" % (self.id[-4:], self.tool)
        self._line("assistant", {"role": "assistant", "id": "msg_%d" % len(self.lines), "model": "claude-sonnet-4-5",
                                 "type": "message",
                                 "content": [{"type": "tool_use", "id": call, "name": name, "input": tool_input}]})
        self._line("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": output}]},
                   {"toolUseResult": {"stdout": output, "stderr": "", "interrupted": False}} if name == "Bash" else None)
        return self

    def chatter(self, seed, turns=2):
        """Neutral turns, so that no session is only its topic."""
        for i in range(turns):
            self.user(filler("%s/u%d" % (seed, i), 14))
            self.assistant(filler("%s/a%d" % (seed, i), 40))
        return self

    def write(self, out):
        path = os.path.join(out, "claude", "-home-dev-" + self.project, self.id + ".jsonl")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            for line in self.lines:
                f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")


def log(lines):
    return "\n".join(lines)


def claude_sessions():
    s = []
    # --- deep link: the phrase (typed, then said) against the two words far apart ---
    s.append(Claude(1, "mobile-app", "2026-03-10T09:00:00")
             .user("The deep link to the settings screen opens the home screen instead on Android. Can you trace why?")
             .assistant("I'll look at the intent filters in the manifest first.")
             .tool_call("Read", {"file_path": "/home/dev/mobile-app/android/app/src/main/AndroidManifest.xml"},
                        "<manifest>\n  <activity android:name=\".MainActivity\">\n    <intent-filter>\n"
                        "      <data android:scheme=\"myapp\" android:pathPrefix=\"/settings\"/>\n    </intent-filter>\n"
                        "  </activity>\n</manifest>")
             .assistant("The intent filter for the settings path has no host, so Android falls back to the launcher "
                        "activity. I added the host and the settings screen opens now.")
             .chatter("s1"))
    s.append(Claude(2, "mobile-app", "2026-03-12T09:00:00")
             .user("Tapping the notification opens the wrong screen on Android.")
             .assistant("That notification carries a deep link, and the router registers its path with a typo: "
                        "/setings instead of /settings. Fixed the route.")
             .chatter("s2"))
    s.append(Claude(3, "api-gateway", "2026-03-14T09:00:00")
             .user("Write a design note on the caching layer for the gateway.")
             .assistant("Start with a deep look at how entries expire and who evicts them. " + filler("s3/long", 220)
                        + " Finally, link the benchmark numbers from the wiki page at the end of the note.")
             .chatter("s3"))
    s.append(Claude(4, "data-pipeline", "2026-03-16T09:00:00")
             .user("How deep is the backlog in the ingest queue right now?")
             .assistant("About forty thousand messages, draining at two hundred a second. " + filler("s4/a", 60))
             .user(filler("s4/u", 20))
             .assistant("Here is a link to the queue dashboard so you can watch it drain.")
             .chatter("s4"))
    s.append(Claude(44, "api-gateway", "2026-03-18T09:00:00")
             .user("Go deep on the eviction code first; the wiki needs a link to the benchmark afterwards.")
             .assistant("Read the eviction code and added the benchmark to the wiki.")
             .chatter("s44"))
    # --- connection pool timeout: three words together against three words apart in one entry ---
    s.append(Claude(5, "api-gateway", "2026-03-20T09:00:00")
             .user("The connection pool timeout is too short: requests fail under load after two seconds.")
             .assistant("Raising the pool timeout to thirty seconds and capping connections at fifty.")
             .chatter("s5"))
    s.append(Claude(6, "infra", "2026-03-22T09:00:00")
             .user("Give me a summary of last week's incidents.")
             .assistant("The connection from the office network dropped twice at night. " + filler("s6/a", 120)
                        + " The pool of build machines is shared with the nightly jobs. " + filler("s6/b", 120)
                        + " Each nightly job has a timeout of forty minutes.")
             .chatter("s6"))
    s.append(Claude(45, "infra", "2026-03-24T09:00:00")
             .user("The connection dropped, the worker pool restarted, then the job hit its timeout.")
             .assistant("The three were one outage: the network blip took the workers down with it.")
             .chatter("s45"))
    # --- flaky retry: typed by the person, said by the agent, only in big tool output ---
    s.append(Claude(7, "api-gateway", "2026-04-02T09:00:00")
             .user("The retry logic in the upload client is flaky on CI. Make the backoff deterministic.")
             .assistant("The backoff uses wall-clock jitter; I'll inject a seeded clock instead.")
             .tool_call("Edit", {"file_path": "/home/dev/api-gateway/upload/backoff.go",
                                 "old_string": "jitter := rand.Int63n(base)", "new_string": "jitter := clock.Jitter(base)"},
                        "The file /home/dev/api-gateway/upload/backoff.go has been updated.")
             .chatter("s7"))
    s.append(Claude(8, "data-pipeline", "2026-04-04T09:00:00")
             .user("Why does the upload test fail about one run in ten?")
             .assistant("It is flaky because the retry fires before the mock server is listening. Waiting for the "
                        "readiness probe before the first attempt fixes it.")
             .chatter("s8"))
    s.append(Claude(9, "infra", "2026-04-06T09:00:00")
             .user("Run the whole test suite and tell me if it is green.")
             .tool_call("Bash", {"command": "make test", "description": "Run every test"},
                        log(["RETRY test_sync_%d (attempt 2/3): marked flaky, retry scheduled" % i for i in range(30)]
                            + ["retry budget used: 30 of 40; flaky tests: 30", "ok: 412 passed"]))
             .assistant("All green: 412 passed.")
             .chatter("s9"))
    s.append(Claude(10, "mobile-app", "2026-04-08T09:00:00")
             .user("Build the release bundle.")
             .tool_call("Bash", {"command": "./gradlew bundleRelease", "description": "Build the release bundle"},
                        log(["> Task :app:download%d mirror flaky, retry 1 of 3 ... retry 2 of 3 ... ok" % i for i in range(30)]
                            + ["TypeError: x is not a function (lint plugin, ignored)", "BUILD SUCCESSFUL in 4m"]))
             .assistant("The bundle is built.")
             .chatter("s10"))
    # --- migration rollback: typed, against a migration log that repeats both words ---
    s.append(Claude(12, "billing-service", "2026-04-12T09:00:00")
             .user("The migration rollback for the invoices table drops the wrong index. Fix the down migration.")
             .assistant("The down step drops ix_invoices_customer instead of ix_invoices_due_date; corrected it.")
             .chatter("s12"))
    s.append(Claude(13, "billing-service", "2026-04-13T09:00:00")
             .user("Apply the pending schema changes.")
             .tool_call("Bash", {"command": "alembic upgrade head", "description": "Apply migrations"},
                        log(["INFO  Running upgrade %03d -> %03d, migration step; rollback point saved" % (i, i + 1)
                             for i in range(40)] + ["INFO  migration done, 40 rollback points"]))
             .assistant("Forty schema changes applied.")
             .chatter("s13"))
    # --- equal sessions at different dates: the newer first ---
    for n, start in ((14, "2026-02-02T09:00:00"), (15, "2026-05-04T09:00:00")):
        s.append(Claude(n, "billing-service", start)
                 .user("Set up the weekly report cron job to email the finance team every Monday.")
                 .assistant("Added a cron entry for Mondays at seven and a mail step after the report is built.")
                 .chatter("weekly"))
    for n, start in ((16, "2026-01-15T09:00:00"), (17, "2026-03-15T09:00:00"), (18, "2026-06-15T09:00:00")):
        s.append(Claude(n, "billing-service", start)
                 .user("The invoice PDF export cuts off the last line item.")
                 .assistant("The page break ignored the footer height; the export keeps the last line item now.")
                 .chatter("invoice"))
    # --- punctuated words ---
    s.append(Claude(19, "data-pipeline", "2026-04-20T09:00:00")
             .user("Switch the summarizer from gpt-4o to gpt-5 and compare what each costs a day.")
             .assistant("Switched to gpt-5; it costs about a third more a day on our volume.")
             .chatter("s19"))
    s.append(Claude(20, "data-pipeline", "2026-04-21T09:00:00")
             .user("The gpt wrapper gives up after 5 attempts; make it 3.")
             .assistant("Lowered the attempts to 3.")
             .chatter("s20"))
    s.append(Claude(21, "infra", "2026-04-22T09:00:00")
             .user("Port the checksum routine to C++ so the agent can load it as a native module.")
             .assistant("Ported it to C++17 with a small pybind11 wrapper.")
             .chatter("s21"))
    s.append(Claude(22, "infra", "2026-04-23T09:00:00")
             .user("Rewrite the checksum in C, then compare it with the Rust version.")
             .assistant("The C version is twelve percent faster on large inputs.")
             .chatter("s22"))
    s.append(Claude(23, "api-gateway", "2026-04-24T09:00:00")
             .user("config.yaml is ignored when I pass --profile staging.")
             .assistant("The profile flag replaces the search path, so config.yaml in the working directory is "
                        "never read; I made the profile layer on top of it instead.")
             .chatter("s23"))
    s.append(Claude(24, "infra", "2026-04-25T09:00:00")
             .user("Move the yaml linter config into the repo root.")
             .assistant("Moved it; the linter finds it from any folder now.")
             .chatter("s24"))
    s.append(Claude(25, "api-gateway", "2026-04-26T09:00:00")
             .user("The panic comes from src/auth/session.rs line 88 when the cookie is empty.")
             .assistant("An empty cookie reached the parser unchecked; it returns a 401 now.")
             .chatter("s25"))
    s.append(Claude(26, "api-gateway", "2026-04-27T09:00:00")
             .user("Rotate the signing key used in src/auth/token.rs and send it to https://api.example.com/v1/login.")
             .assistant("Rotated the key; the login endpoint accepts the new one.")
             .chatter("s26"))
    s.append(Claude(27, "mobile-app", "2026-04-28T09:00:00")
             .user("The emulator shows net::ERR_CONNECTION_REFUSED when the app calls the local API.")
             .assistant("The emulator reaches the host at 10.0.2.2, not localhost; changed the base address.")
             .chatter("s27"))
    s.append(Claude(28, "api-gateway", "2026-04-29T09:00:00")
             .user("Calls to https://api.example.com/v2/orders return 404 since the deploy.")
             .assistant("The deploy dropped the v2 prefix from the router; restored it.")
             .chatter("s28"))
    s.append(Claude(29, "mobile-app", "2026-04-30T09:00:00")
             .user("TypeError: Cannot read properties of undefined (reading 'map') in the cart screen.")
             .assistant("The cart is undefined until the first fetch returns; it defaults to an empty list now.")
             .chatter("s29"))
    # --- prefixes ---
    s.append(Claude(30, "infra", "2026-05-01T09:00:00")
             .user("kubectl rollout restart hangs on the worker deployment.")
             .assistant("A finalizer on the old replica set blocks it; removed the finalizer.")
             .chatter("s30"))
    s.append(Claude(31, "infra", "2026-05-02T09:00:00")
             .user("Write the kubernetes manifests for the ingest worker.")
             .assistant("Wrote a deployment, a service account and a pod disruption budget.")
             .chatter("s31"))
    s.append(Claude(32, "data-pipeline", "2026-05-03T09:00:00")
             .user("Serialization of the event payload drops the timezone.")
             .assistant("The serializer wrote naive datetimes; it writes offsets now.")
             .chatter("s32"))
    # --- OR and -exclude ---
    s.append(Claude(33, "billing-service", "2026-05-05T09:00:00")
             .user("Postgres vacuum is blocking the nightly job.")
             .assistant("Autovacuum on the ledger table held a lock; scheduled it outside the job's window.")
             .chatter("s33"))
    s.append(Claude(34, "api-gateway", "2026-05-06T09:00:00")
             .user("The MySQL replica lags by minutes after the bulk import.")
             .assistant("The import ran as one transaction; batching it keeps the replica within seconds.")
             .chatter("s34"))
    s.append(Claude(35, "infra", "2026-05-07T09:00:00")
             .user("The docker image is two gigabytes; slim it down with a multi-stage build.")
             .assistant("The runtime stage copies only the binary now: 48 megabytes.")
             .chatter("s35"))
    s.append(Claude(36, "infra", "2026-05-08T09:00:00")
             .user("docker compose up fails because the db service starts too late.")
             .assistant("Added a healthcheck to db and depends_on with condition service_healthy.")
             .chatter("s36"))
    # --- tool: a command run against the same word said ---
    s.append(Claude(37, "data-pipeline", "2026-05-09T09:00:00")
             .user("Run the tests for the parser.")
             .tool_call("Bash", {"command": "pytest tests/parser -q", "description": "Run the parser tests"},
                        "............\n12 passed in 0.41s")
             .assistant("12 passed.")
             .chatter("s37"))
    s.append(Claude(38, "data-pipeline", "2026-05-10T09:00:00")
             .user("Should we move from unittest to pytest fixtures for the parser tests?")
             .assistant("Yes: pytest fixtures would remove the setUp duplication in nine test classes.")
             .chatter("s38"))
    # --- crash report: one Gemini session (below) and this one ---
    s.append(Claude(40, "mobile-app", "2026-05-12T09:00:00")
             .user("Attach the crash report to the bug ticket for the image decoder.")
             .assistant("Attached it and linked the ticket from the release notes.")
             .chatter("s40"))
    # --- Chinese and Japanese, written without spaces ---
    s.append(Claude(41, "data-pipeline", "2026-05-13T09:00:00")
             .user("数据库迁移失败了，回滚也没有成功。请检查一下迁移脚本。")
             .assistant("迁移脚本里的外键顺序不对，我已经调整了，现在可以正常回滚。")
             .chatter("s41"))
    s.append(Claude(42, "data-pipeline", "2026-05-14T09:00:00")
             .user("Summarise this log for me.")
             .tool_call("Read", {"file_path": "/home/dev/data-pipeline/logs/worker.log"},
                        log(["2026-05-14 03:%02d 数据库连接超时，正在重试" % i for i in range(20)]))
             .assistant("The worker lost its database twenty times around three in the morning.")
             .chatter("s42"))
    s.append(Claude(43, "mobile-app", "2026-05-15T09:00:00")
             .user("インデックスを再構築してください。検索が遅いです。")
             .assistant("インデックスを再構築しました。検索は速くなりました。")
             .chatter("s43"))
    return s


def codex_rollout(out):
    """A Codex CLI rollout: a retry added to the invoice webhook sender (project api-gateway)."""
    thread = sid(11)
    t = datetime(2026, 4, 10, 9, 0, 0, tzinfo=timezone.utc)
    lines = []

    def add(kind, payload):
        nonlocal t
        lines.append({"timestamp": t.strftime("%Y-%m-%dT%H:%M:%S.000Z"), "type": kind, "payload": payload})
        t += timedelta(seconds=30)

    add("session_meta", {"id": thread, "timestamp": "2026-04-10T09:00:00.000Z", "cwd": "/home/dev/api-gateway",
                         "originator": "codex_cli_rs", "cli_version": "0.128.0", "model_provider": "openai"})
    ask = "Add a retry with exponential backoff to the invoice webhook sender."
    add("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": ask}]})
    add("event_msg", {"type": "user_message", "message": ask, "images": []})
    add("response_item", {"type": "function_call", "name": "exec_command", "call_id": "c1",
                          "arguments": json.dumps({"cmd": "rg -n send_webhook", "workdir": "/home/dev/api-gateway"})})
    add("response_item", {"type": "function_call_output", "call_id": "c1",
                          "output": "webhooks/sender.go:41: func send_webhook(ctx context.Context, body []byte) error {"})
    said = "Added a retry with backoff capped at one minute to send_webhook."
    add("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": said}]})
    add("event_msg", {"type": "agent_message", "message": said})
    path = os.path.join(out, "codex", "sessions", "2026", "04", "10", "rollout-2026-04-10T09-00-00-%s.jsonl" % thread)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")


def gemini_chat(out):
    """A Gemini CLI chat: a crash report explained (project mobile-app)."""
    session = sid(39)
    lines = [
        {"sessionId": session, "projectHash": "9d0c" * 16, "startTime": "2026-05-11T09:00:00.000Z",
         "lastUpdated": "2026-05-11T09:01:00.000Z", "kind": "main"},
        {"id": "u1", "timestamp": "2026-05-11T09:00:00.000Z", "type": "user",
         "content": [{"text": "Explain the crash report from the Android emulator."}]},
        {"id": "m1", "timestamp": "2026-05-11T09:00:30.000Z", "type": "gemini",
         "content": "The crash report shows an out-of-memory error in the image decoder while it scales a photo.",
         "model": "gemini-2.5-pro"},
        {"id": "u2", "timestamp": "2026-05-11T09:01:00.000Z", "type": "user", "content": [{"text": filler("s39/u", 14)}]},
        {"id": "m2", "timestamp": "2026-05-11T09:01:30.000Z", "type": "gemini", "content": filler("s39/a", 40),
         "model": "gemini-2.5-pro"},
    ]
    path = os.path.join(out, "gemini", "tmp", "mobile-app", "chats", "session-2026-05-11T09-00-9d0c0039.jsonl")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    for session in claude_sessions():
        session.write(out)
    codex_rollout(out)
    gemini_chat(out)


if __name__ == "__main__":
    main()
