#!/usr/bin/env python3
"""Driver for opencode.sh.

`opencode.py gen DB MB`: writes an OpenCode database of about MB megabytes at DB, as OpenCode 1.2
writes it (the tables of its first SQLite migration, WAL, each message's and part's `data` JSON
without its ids, epoch milliseconds): sessions of twenty messages, a person's question with a
pasted photo every other time (100 KB to 1.5 MB, a `file` part with a base64 data URL), the
answer's thinking, a tool call and its output, its text and its step's counts.

`opencode.py gen2 DB MB`: the same sessions as OpenCode 2 writes them (its `session_v2` and
`session_message` tables: a row a message, the answer's thinking, tool call and text inside it, a
person's photo as `files[]` `{data, mime, source}` with the bytes as base64, the answer's `tokens`).

`opencode.py run BINARY WORK RUNS`: indexes WORK/opencode (vault on, vault off), WORK/opencode2 if
it is there (vault on), and WORK/claude (vault off), each from an empty data directory, RUNS times
taking turns (compare.py's `measure`); prints the median time, MB/s, peak RSS and photos indexed
of each, OpenCode's rates against Claude Code's, the vault's size, and the median time of
`scrollback media` on the last photo of the largest OpenCode session.

`opencode.py photo BINARY MB [RUNS]`: one session whose one photo is MB megabytes of base64 in its
row; times serving it over HTTP (`GET /api/session-media/...`, checked byte for byte), the median
of RUNS (default 3). A payload is read from its row in one pass, so this grows with MB, not its
square."""
import base64
import json
import os
import random
import shutil
import sqlite3
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ in benches/ from importing compare.py
import compare  # noqa: E402

SCHEMA = """
CREATE TABLE project (id text PRIMARY KEY, worktree text NOT NULL, vcs text, name text, icon_url text,
  icon_color text, time_created integer NOT NULL, time_updated integer NOT NULL, time_initialized integer,
  sandboxes text NOT NULL);
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL REFERENCES project(id) ON DELETE CASCADE,
  parent_id text, slug text NOT NULL, directory text NOT NULL, title text NOT NULL, version text NOT NULL,
  share_url text, summary_additions integer, summary_deletions integer, summary_files integer,
  summary_diffs text, revert text, permission text, time_created integer NOT NULL,
  time_updated integer NOT NULL, time_compacting integer, time_archived integer);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL REFERENCES session(id) ON DELETE CASCADE,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL REFERENCES message(id) ON DELETE CASCADE,
  session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE INDEX message_session_idx ON message (session_id);
CREATE INDEX part_message_idx ON part (message_id);
CREATE INDEX part_session_idx ON part (session_id);
"""

WORDS = ("the build fails on the parser test because an empty line reaches the tokenizer before the "
         "header is read so the offset is wrong and the photo shows the stack trace").split()


def text(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def new_database(path, schema):
    """A new database at `path` in WAL mode with `schema` and one project; its first instant."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path):
        os.remove(path)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(schema)
    t0 = 1_780_308_000_000
    conn.execute("INSERT INTO project VALUES ('p0', '/w/app', 'git', NULL, NULL, NULL, ?, ?, NULL, '[]')", (t0, t0))
    return conn, t0


def gen(path, mb):
    rng = random.Random(38)
    conn, t0 = new_database(path, SCHEMA)
    s = 0
    while os.path.getsize(path) + os.path.getsize(path + "-wal") * (os.path.exists(path + "-wal")) < mb * 1e6:
        sid = f"ses_{s:012x}AbCdEfGhIjKlMn"
        at = t0 + s * 3_600_000
        conn.execute("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) "
                     "VALUES (?, 'p0', 'brave-otter', '/w/app', ?, '1.2.3', ?, ?)", (sid, text(rng, 5), at, at))
        for m in range(20):
            mid = f"msg_{s:06x}{m:06x}AbCdEfGhIjKlMn"
            when = at + m * 10_000
            user = m % 2 == 0
            data = ({"role": "user", "time": {"created": when}, "agent": "build",
                     "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}} if user else
                    {"role": "assistant", "time": {"created": when, "completed": when + 4000}, "parentID": mid,
                     "modelID": "claude-sonnet-4-5", "providerID": "anthropic", "mode": "build",
                     "path": {"cwd": "/w/app", "root": "/w/app"}, "cost": 0.01,
                     "tokens": {"input": 900, "output": 80, "reasoning": 0, "cache": {"read": 2000, "write": 0}}})
            conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, when, when, json.dumps(data)))
            if user:
                parts = [{"type": "text", "text": text(rng, 30) + "?"}]
                if m % 4 == 0:
                    photo = b"\x89PNG\r\n\x1a\n" + os.urandom(rng.randrange(100_000, 1_500_000))
                    parts.append({"type": "file", "mime": "image/png", "filename": "shot.png",
                                  "url": "data:image/png;base64," + base64.b64encode(photo).decode()})
            else:
                parts = [{"type": "step-start"},
                         {"type": "reasoning", "text": text(rng, 40), "time": {"start": when}},
                         {"type": "tool", "callID": f"call_{m}", "tool": "bash",
                          "state": {"status": "completed", "input": {"command": "cargo test -p parser"},
                                    "output": text(rng, 300), "title": "cargo test", "metadata": {},
                                    "time": {"start": when, "end": when + 900}}},
                         {"type": "text", "text": text(rng, 80)},
                         {"type": "step-finish", "reason": "stop", "cost": 0.01,
                          "tokens": {"input": 900, "output": 80, "reasoning": 0, "cache": {"read": 2000, "write": 0}}}]
            for k, part in enumerate(parts):
                conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                             (f"prt_{s:06x}{m:04x}{k:02x}AbCdEfGhIjKlMn", mid, sid, when, when, json.dumps(part)))
        conn.commit()
        s += 1
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    print(f"wrote {path}: {s} sessions, {os.path.getsize(path) / 1e6:.0f} MB")


SCHEMA_V2 = """
CREATE TABLE project (id text PRIMARY KEY, worktree text NOT NULL, vcs text, name text, icon_url text,
  icon_color text, time_created integer NOT NULL, time_updated integer NOT NULL, time_initialized integer,
  sandboxes text NOT NULL);
CREATE TABLE session_v2 (id text PRIMARY KEY, project_id text NOT NULL, workspace_id text, parent_id text,
  fork_session_id text, fork_boundary text, slug text NOT NULL, directory text NOT NULL, path text, title text,
  version text NOT NULL, share_url text, summary_additions integer, summary_deletions integer,
  summary_files integer, summary_diffs text, metadata text, cost real DEFAULT 0 NOT NULL,
  tokens_input integer DEFAULT 0 NOT NULL, tokens_output integer DEFAULT 0 NOT NULL,
  tokens_reasoning integer DEFAULT 0 NOT NULL, tokens_cache_read integer DEFAULT 0 NOT NULL,
  tokens_cache_write integer DEFAULT 0 NOT NULL, revert text, permission text, agent text, model text,
  time_created integer NOT NULL, time_updated integer NOT NULL, time_idle integer, time_viewed integer,
  idle_outcome text, time_compacting integer, time_archived integer, time_suspended integer,
  resume_attempts integer DEFAULT 0 NOT NULL);
CREATE TABLE session_message (id text PRIMARY KEY, session_id text NOT NULL, type text NOT NULL,
  seq integer NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE UNIQUE INDEX session_message_session_seq_idx ON session_message (session_id, seq);
CREATE INDEX session_message_session_time_created_id_idx ON session_message (session_id, time_created, id);
"""


def gen2(path, mb):
    rng = random.Random(38)
    conn, t0 = new_database(path, SCHEMA_V2)
    tokens = {"input": 900, "output": 80, "reasoning": 0, "cache": {"read": 2000, "write": 0}}
    s = 0
    while os.path.getsize(path) + os.path.getsize(path + "-wal") * (os.path.exists(path + "-wal")) < mb * 1e6:
        sid = f"ses_{s:012x}AbCdEfGhIjKlMn"
        at = t0 + s * 3_600_000
        conn.execute("INSERT INTO session_v2 (id, project_id, slug, directory, title, version, time_created, time_updated) "
                     "VALUES (?, 'p0', 'brave-otter', '/w/app', ?, '2.0.26', ?, ?)", (sid, text(rng, 5), at, at))
        for m in range(20):
            mid = f"msg_{s:06x}{m:06x}AbCdEfGhIjKlMn"
            when = at + m * 10_000
            if m % 2 == 0:
                kind = "user"
                data = {"time": {"created": when}, "text": text(rng, 30) + "?", "files": []}
                if m % 4 == 0:
                    photo = b"\x89PNG\r\n\x1a\n" + os.urandom(rng.randrange(100_000, 1_500_000))
                    data["files"].append({"data": base64.b64encode(photo).decode(), "mime": "image/png",
                                          "source": {"type": "inline"}, "name": "shot.png"})
            else:
                kind = "assistant"
                data = {"time": {"created": when, "completed": when + 4000}, "agent": "build",
                        "model": {"id": "claude-sonnet-4-5", "providerID": "anthropic"},
                        "content": [
                            {"type": "reasoning", "text": text(rng, 40)},
                            {"type": "tool", "id": f"call_{m}", "name": "shell",
                             "state": {"status": "completed", "input": {"command": "cargo test -p parser"},
                                       "content": [{"type": "text", "text": text(rng, 300)}]},
                             "time": {"created": when, "completed": when + 900}},
                            {"type": "text", "text": text(rng, 80)}],
                        "finish": "stop", "cost": 0.01, "tokens": tokens}
            conn.execute("INSERT INTO session_message VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (mid, sid, kind, m * 3, when, when, json.dumps(data)))
        conn.commit()
        s += 1
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    print(f"wrote {path}: {s} sessions, {os.path.getsize(path) / 1e6:.0f} MB")


def size_of(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def run(binary, work, runs):
    opencode, claude = os.path.join(work, "opencode"), os.path.join(work, "claude")
    opencode2 = os.path.join(work, "opencode2")
    sizes = {"opencode": os.path.getsize(os.path.join(opencode, "opencode.db")),
             "claude": sum(os.path.getsize(p) for p in compare.corpus_files(claude))}
    sizes["opencode-novault"] = sizes["opencode"]
    names = ["opencode", "opencode-novault", "claude"]
    if os.path.exists(os.path.join(opencode2, "opencode.db")):
        sizes["opencode2"] = os.path.getsize(os.path.join(opencode2, "opencode.db"))
        names.append("opencode2")
    data = {name: os.path.join(work, "data-" + name) for name in names}

    def fresh(d):
        return lambda: shutil.rmtree(d, ignore_errors=True)

    tools = [
        ("opencode", fresh(data["opencode"]),
         [binary, "index", "--root", f"opencode:{opencode}", "--data-dir", data["opencode"]]),
        ("opencode-novault", fresh(data["opencode-novault"]),
         [binary, "index", "--root", f"opencode:{opencode}", "--data-dir", data["opencode-novault"], "--vault", "off"]),
        ("claude", fresh(data["claude"]),
         [binary, "index", "--root", f"claude:{claude}", "--data-dir", data["claude"], "--vault", "off"]),
    ]
    if "opencode2" in names:
        tools.append(("opencode2", fresh(data["opencode2"]),
                      [binary, "index", "--root", f"opencode:{opencode2}", "--data-dir", data["opencode2"]]))
    compare.RUNS = runs
    results = compare.measure(tools)
    rates = {}
    print(f"{'what':17} {'MB':>7} {'median s':>9} {'MB/s':>7} {'peak RSS MB':>12} {'photos':>7}  (median of {runs} runs)")
    for name, t, rss in results:
        size = sizes[name]
        conn = sqlite3.connect(f"file:{os.path.join(data[name], 'index.sqlite3')}?mode=ro", uri=True)
        photos = conn.execute("SELECT count(*) FROM media WHERE ordinal IS NOT NULL").fetchone()[0]
        conn.close()
        rates[name] = size / t
        print(f"{name:17} {size / 1e6:7.1f} {t:9.3f} {rates[name] / 1e6:7.0f} {rss:12.1f} {photos:7}")
    print(f"OpenCode's rate against Claude Code's: {rates['opencode'] / rates['claude']:.2f}x with the vault, "
          f"{rates['opencode-novault'] / rates['claude']:.2f}x without")
    if "opencode2" in rates:
        print(f"OpenCode 2's rate against Claude Code's: {rates['opencode2'] / rates['claude']:.2f}x with the vault; "
              f"its vault's renders: {size_of(os.path.join(data['opencode2'], 'vault')) / 1e6:.0f} MB")
    print(f"the vault's renders: {size_of(os.path.join(data['opencode'], 'vault')) / 1e6:.0f} MB; "
          f"the index: {os.path.getsize(os.path.join(data['opencode'], 'index.sqlite3')) / 1e6:.1f} MB")
    conn = sqlite3.connect(f"file:{os.path.join(data['opencode'], 'index.sqlite3')}?mode=ro", uri=True)
    ref, offset = conn.execute(
        "SELECT e.session_id || '/' || e.uuid || '/' || m.ordinal, m.offset FROM media m "
        "JOIN entries e ON e.id = m.entry_id JOIN files f ON f.id = e.file_id "
        "WHERE m.ordinal IS NOT NULL AND f.size = (SELECT max(size) FROM files) ORDER BY m.offset DESC LIMIT 1"
    ).fetchone()
    conn.close()
    times = []
    for _ in range(runs):
        t, rss = compare.run([binary, "media", ref, "--data-dir", data["opencode"]])
        times.append(t)
    print(f"the last photo of the largest session ({ref}, at {offset / 1e6:.1f} MB into its render): "
          f"{statistics.median(times):.3f} s (median of {runs}), peak RSS {rss:.1f} MB")


def photo(binary, mb, runs):
    import re
    import subprocess
    import tempfile
    import time
    import urllib.request
    work = tempfile.mkdtemp()
    db = os.path.join(work, "opencode", "opencode.db")
    os.makedirs(os.path.dirname(db))
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(SCHEMA)
    t0 = 1_780_308_000_000
    sid = "ses_000000000000AbCdEfGhIjKlMn"
    conn.execute("INSERT INTO project VALUES ('p0', '/w/app', 'git', NULL, NULL, NULL, ?, ?, NULL, '[]')", (t0, t0))
    conn.execute("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) "
                 "VALUES (?, 'p0', 'brave-otter', '/w/app', 'A large photo', '1.2.3', ?, ?)", (sid, t0, t0))
    conn.execute("INSERT INTO message VALUES ('msg_0', ?, ?, ?, ?)",
                 (sid, t0, t0, json.dumps({"role": "user", "time": {"created": t0}})))
    png = b"\x89PNG\r\n\x1a\n" + os.urandom(int(mb * 1e6 * 3 / 4))
    part = {"type": "file", "mime": "image/png", "filename": "large.png",
            "url": "data:image/png;base64," + base64.b64encode(png).decode()}
    conn.execute("INSERT INTO part VALUES ('prt_0', 'msg_0', ?, ?, ?, ?)", (sid, t0, t0, json.dumps(part)))
    conn.commit()
    conn.close()
    data = os.path.join(work, "data")
    subprocess.run([binary, "index", "--root", f"opencode:{os.path.dirname(db)}", "--data-dir", data],
                   check=True, capture_output=True)
    server = subprocess.Popen([binary, "serve", "--data-dir", data, "--listen", "127.0.0.1:0"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = next(m.group(1) for line in server.stdout if (m := re.search(r"(http://127\.0\.0\.1:\d+)", line)))
        history = urllib.request.urlopen(f"{url}/api/sessions/{sid}/history").read().decode()
        ref = re.search(r'"(/api/session-media/[^"]+)"', history).group(1)
        times = []
        for _ in range(runs):
            start = time.monotonic()
            body = urllib.request.urlopen(url + ref, timeout=600).read()
            times.append(time.monotonic() - start)
            assert body == png, "the photo served is not the one in the row"
        print(f"a photo of {mb:g} MB of base64 in an OpenCode row, served over HTTP: "
              f"{statistics.median(times):.2f} s (median of {runs})")
    finally:
        server.terminate()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1] == "photo":
        photo(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 3)
    elif sys.argv[1] == "gen":
        gen(sys.argv[2], float(sys.argv[3]))
    elif sys.argv[1] == "gen2":
        gen2(sys.argv[2], float(sys.argv[3]))
    else:
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]))
