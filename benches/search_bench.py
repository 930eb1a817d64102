#!/usr/bin/env python3
"""Driver for benches/search.sh: search over HTTP on a heavy user's year of Claude Code sessions,
scrollback against agentsview, side by side in one run.

    python3 benches/search_bench.py SCROLLBACK_BINARY WORK_DIR [--runs N] [--warmup N] [--limit N]
                                    [--sessions N] [--lines-per-session N] [--seed N] [--json FILE]
                                    [--reindex] [--no-agentsview] [--hub URL]

1. The tree: WORK_DIR/tree, written by `gen_corpus.py --profile text` (default: seed 11, 20,000
   sessions of 60 lines) unless it is there already (WORK_DIR/tree.json records how it was made; a
   tree made otherwise is an error, not silently reused).
2. The indexes, each built once into an empty directory and then reused (`--reindex` builds them
   again): scrollback's `index` into WORK_DIR/data-scrollback-<first 12 hex of the binary's sha256>
   (one per binary, so a build before and after a change each keep theirs), and agentsview's
   `sync --full` (AGENTSVIEW_NO_DAEMON=1) into WORK_DIR/data-agentsview. The wall time, peak RSS,
   and index size of that cold build are kept beside them (WORK_DIR/index-*.json) and reported.
3. Both servers on 127.0.0.1: `scrollback serve` on the same data directory and tree (the index is
   already up to date), and `agentsview serve --no-sync` (no sync, no file watching, no daemon).
   Both run with HOME set to WORK_DIR/home, so no agent's real transcripts are read, and agentsview
   with its telemetry and update check off.
4. Each query of the set, over one kept-alive HTTP connection per server: WARMUP runs, then RUNS
   runs, the two servers taking turns, each asking for a first page of LIMIT (default 20):
   scrollback `GET /api/search?q=Q&limit=20`, agentsview `GET /api/v1/search?q=Q&limit=20`. The time
   is the client's wall time from sending the request to having read the whole body. The results
   counted are the page's `sessions` (scrollback grouped by session), or `hits` (the flat list of
   scrollback before grouping: entries, not sessions), or `results` (agentsview, one per session).
   With --hub URL (an empty PostgreSQL database; benches/hub.sh makes one), the index is also pushed
   there (`scrollback push`, timed) and `scrollback serve --postgres URL` answers the same queries
   beside `serve`, the three (or two) taking turns; then a history page (the newest 100 entries of
   a session from the middle of the list) and the overview (`/api/stats`, whose count is the
   messages it counts) are timed on both scrollback servers the same way. With
   --agentsview-pg URL2 too, agentsview's database is pushed to another empty database (`agentsview
   pg push --no-vectors`, timed) and `agentsview pg serve` answers the queries beside them.
5. A Markdown table on stdout, and every figure (each run's time included) in WORK_DIR/search.json
   (or --json FILE).

p99 over 30 runs is the slowest run but nearly. Everything listens on 127.0.0.1 only.
"""
import argparse
import hashlib
import http.client
import json
import math
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))

# (kind, query). Common words are in a large share of the tree's lines; the rare ones are names the
# generator gives two or three sessions each (with the default seed 11: 2, 3 and 3 sessions); the
# last is in none.
QUERIES = [
    ("common", "the"),
    ("common", "file"),
    ("common", "error"),
    ("common", "test"),
    ("common", "import"),
    ("common", "function"),
    ("common", "build"),
    ("common", "config"),
    ("mid", "cargo"),
    ("mid", "async"),
    ("mid", "mutex"),
    ("mid", "E0502"),
    ("rare", "lowiltraka"),
    ("rare", "AuditWorkerJwtAccount"),
    ("rare", "hash_team_quota_widget"),
    ("none", "xylophonequartz"),
    ("punctuated", "gpt-5"),
    ("punctuated", "C++"),
    ("punctuated", "don't"),
    ("punctuated", "claude-code"),
    ("punctuated", "node.js"),
    ("phrase", '"race condition"'),
    ("phrase", '"connection pool"'),
    ("phrase", '"deep link"'),
    ("phrase", '"single source of truth"'),
    ("words", "file error"),
    ("words", "the test"),
    ("words", "async cargo build"),
    ("words", "connection pool timeout"),
    ("words", "mutex lock thread"),
]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def tree_stats(tree):
    files = 0
    size = 0
    for d, _, names in os.walk(tree):
        for n in names:
            if n.endswith(".jsonl"):
                files += 1
                size += os.path.getsize(os.path.join(d, n))
    du = subprocess.run(["du", "-sk", tree], capture_output=True, text=True, check=True).stdout.split()[0]
    return {"files": files, "bytes": size, "du_kb": int(du), "projects": len(os.listdir(tree))}


def make_tree(work, args):
    tree = os.path.join(work, "tree")
    stamp = os.path.join(work, "tree.json")
    want = {"profile": "text", "seed": args.seed, "sessions": args.sessions, "lines_per_session": args.lines_per_session}
    if os.path.isdir(tree):
        have = json.load(open(stamp)) if os.path.exists(stamp) else None
        if have is not None and {k: have.get(k) for k in want} != want:
            sys.exit(f"{tree} was made with {have}, not {want}: use another WORK_DIR")
        if have is None:
            print(f"reusing {tree} (no tree.json beside it: assumed to be made with {want})", file=sys.stderr)
        return tree, (have or {}).get("seconds")
    partial = tree + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    print(f"writing the tree into {tree} ...", file=sys.stderr)
    start = time.perf_counter()
    subprocess.run([sys.executable, os.path.join(HERE, "gen_corpus.py"), "--profile", "text", "--seed", str(args.seed),
                    "--sessions", str(args.sessions), "--lines-per-session", str(args.lines_per_session), partial], check=True)
    seconds = time.perf_counter() - start
    os.rename(partial, tree)
    with open(stamp, "w") as f:
        json.dump(dict(want, seconds=round(seconds, 1)), f)
    return tree, seconds


def run_timed(argv, env, log):
    """Runs argv to its end; returns (wall seconds, peak RSS MB of the child)."""
    start = time.perf_counter()
    with open(log, "w") as out:
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)} failed; see {log}")
    return elapsed, usage.ru_maxrss / 1024


def dir_bytes(path, skip=()):
    total = 0
    for d, dirs, names in os.walk(path):
        dirs[:] = [x for x in dirs if x not in skip]
        total += sum(os.path.getsize(os.path.join(d, n)) for n in names if not os.path.islink(os.path.join(d, n)))
    return total


def file_bytes(paths):
    return sum(os.path.getsize(p) for p in paths if os.path.exists(p))


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def scrollback_index(binary, work, tree, env, reindex):
    digest = sha256(binary)[:12]
    data = os.path.join(work, f"data-scrollback-{digest}")
    stamp = os.path.join(work, f"index-scrollback-{digest}.json")
    if reindex or not os.path.exists(stamp):
        shutil.rmtree(data, ignore_errors=True)
        log = os.path.join(work, f"index-scrollback-{digest}.log")
        print(f"scrollback: indexing into {data} ...", file=sys.stderr)
        seconds, rss = run_timed([binary, "index", "--data-dir", data, "--root", f"claude:{tree}"], env, log)
        db = os.path.join(data, "index.sqlite3")
        info = {"binary": os.path.abspath(binary), "sha256": sha256(binary),
                "version": subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip(),
                "data_dir": data, "cold_index_seconds": round(seconds, 2), "peak_rss_mb": round(rss, 1),
                "index_bytes": file_bytes([db, db + "-wal", db + "-shm"]),
                "data_dir_bytes_without_vault": dir_bytes(data, skip=("vault",)),
                "summary": open(log).read().strip().splitlines()[-1:]}
        with open(stamp, "w") as f:
            json.dump(info, f, indent=1)
    return json.load(open(stamp))


def agentsview_env(work, tree):
    home = os.path.join(work, "home")
    os.makedirs(home, exist_ok=True)
    return dict(os.environ, HOME=home, AGENTSVIEW_NO_DAEMON="1", AGENTSVIEW_DATA_DIR=os.path.join(work, "data-agentsview"),
                CLAUDE_PROJECTS_DIR=tree, AGENTSVIEW_TELEMETRY_ENABLED="false", DO_NOT_TRACK="1",
                AGENTSVIEW_DISABLE_UPDATE_CHECK="1", AGENTSVIEW_NO_BROWSER="1")


def agentsview_index(agentsview, work, tree, reindex):
    data = os.path.join(work, "data-agentsview")
    stamp = os.path.join(work, "index-agentsview.json")
    env = agentsview_env(work, tree)
    if reindex or not os.path.exists(stamp):
        shutil.rmtree(data, ignore_errors=True)
        log = os.path.join(work, "index-agentsview.log")
        print(f"agentsview: syncing into {data} ...", file=sys.stderr)
        seconds, rss = run_timed([agentsview, "sync", "--full"], env, log)
        db = os.path.join(data, "sessions.db")
        info = {"binary": shutil.which(agentsview) or agentsview,
                "version": subprocess.run([agentsview, "--version"], capture_output=True, text=True, env=env).stdout.strip(),
                "data_dir": data, "cold_index_seconds": round(seconds, 2), "peak_rss_mb": round(rss, 1),
                "index_bytes": file_bytes([db, db + "-wal", db + "-shm"]),
                "data_dir_bytes": dir_bytes(data),
                "summary": [x for x in open(log).read().strip().splitlines() if x.startswith(("Sync complete", "Database:"))]}
        with open(stamp, "w") as f:
            json.dump(info, f, indent=1)
    return json.load(open(stamp)), env


class Client:
    """One kept-alive HTTP/1.1 connection to 127.0.0.1:port."""

    def __init__(self, port):
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def get(self, path):
        """(status, body bytes, seconds from sending the request to the last byte of the body)."""
        start = time.perf_counter()
        try:
            self.conn.request("GET", path, headers={"Accept": "application/json"})
            resp = self.conn.getresponse()
            body = resp.read()
        except (http.client.HTTPException, OSError):
            # The server closed the kept-alive connection: once more on a new one (not timed as one).
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            start = time.perf_counter()
            self.conn.request("GET", path, headers={"Accept": "application/json"})
            resp = self.conn.getresponse()
            body = resp.read()
        return resp.status, body, time.perf_counter() - start


def wait_for(port, path, proc, log, seconds=600):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"the server on port {port} exited ({proc.returncode}); see {log}")
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            c.request("GET", path)
            r = c.getresponse()
            r.read()
            c.close()
            if r.status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    sys.exit(f"the server on port {port} never answered {path}; see {log}")


def settle(procs, quiet=0.05, seconds=600):
    """Waits until the servers' processes use less than `quiet` of a core over a second (a server
    just started may still be looking over the tree or building what it keeps in memory)."""
    def cpu():
        total = 0
        for p in procs:
            fields = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / os.sysconf("SC_CLK_TCK")
    deadline = time.time() + seconds
    before = cpu()
    while time.time() < deadline:
        time.sleep(1)
        now = cpu()
        if now - before < quiet:
            return
        before = now


def count(body):
    d = json.loads(body)
    for key in ("sessions", "hits", "results"):
        if isinstance(d.get(key), list):
            return len(d[key]), key
    return None, None


def pct(values, p):
    """Nearest rank."""
    values = sorted(values)
    return values[max(0, math.ceil(p * len(values)) - 1)]


def summary(times, status, body):
    ms = [t * 1000 for t in times]
    n, unit = count(body) if status == 200 else (None, None)
    out = {"status": status, "results": n, "unit": unit, "p50_ms": round(pct(ms, 0.5), 2), "p99_ms": round(pct(ms, 0.99), 2),
           "mean_ms": round(statistics.mean(ms), 2), "runs_ms": [round(x, 3) for x in ms]}
    if status != 200:
        out["error"] = body.decode(errors="replace")[:300]
    return out


def fmt_ms(x):
    return f"{x:,.1f}" if x >= 10 else f"{x:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("work")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--sessions", type=int, default=20000)
    ap.add_argument("--lines-per-session", type=int, default=60)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--json", help="where the results go (default WORK_DIR/search.json)")
    ap.add_argument("--reindex", action="store_true", help="build both indexes again, into empty directories")
    ap.add_argument("--no-agentsview", action="store_true", help="scrollback alone")
    ap.add_argument("--agentsview", default=os.environ.get("AGENTSVIEW", "agentsview"), help="the agentsview command")
    ap.add_argument("--hub", help="also push the index to this empty PostgreSQL database (a postgres:// URL) and time "
                    "`serve --postgres` on it beside `serve`, with a history page and the overview from each")
    ap.add_argument("--agentsview-pg", help="also push agentsview's database to this empty PostgreSQL database "
                    "(`agentsview pg push`) and time `agentsview pg serve` on it")
    args = ap.parse_args()
    work = os.path.abspath(args.work)
    binary = os.path.abspath(args.binary)
    os.makedirs(work, exist_ok=True)

    tree, gen_seconds = make_tree(work, args)
    tree_info = tree_stats(tree)
    home = os.path.join(work, "home")
    os.makedirs(home, exist_ok=True)
    sb_env = dict(os.environ, HOME=home, RUST_LOG="scrollback=warn")
    sb_index = scrollback_index(binary, work, tree, sb_env, args.reindex)
    av_index, av_env = (None, None) if args.no_agentsview else agentsview_index(args.agentsview, work, tree, args.reindex)

    procs = []
    hub_push = None
    av_pg_push = None
    try:
        sb_port = free_port()
        sb_log = os.path.join(work, "serve-scrollback.log")
        sb = subprocess.Popen([binary, "serve", "--data-dir", sb_index["data_dir"], "--root", f"claude:{tree}",
                               "--listen", f"127.0.0.1:{sb_port}"], env=sb_env, stdout=subprocess.DEVNULL,
                              stderr=open(sb_log, "w"))
        procs.append(sb)
        wait_for(sb_port, "/api/sessions?limit=1", sb, sb_log)
        servers = [("scrollback", Client(sb_port), "/api/search?limit=%d&q=" % args.limit)]
        if av_index:
            av_port = free_port()
            av_log = os.path.join(work, "serve-agentsview.log")
            av = subprocess.Popen([args.agentsview, "serve", "--no-sync", "--no-browser", "--no-update-check",
                                   "--host", "127.0.0.1", "--port", str(av_port)], env=av_env,
                                  stdout=open(av_log, "w"), stderr=subprocess.STDOUT)
            procs.append(av)
            wait_for(av_port, "/api/v1/search?q=the&limit=1", av, av_log)
            servers.append(("agentsview", Client(av_port), "/api/v1/search?limit=%d&q=" % args.limit))
        if args.hub:
            print("scrollback: pushing the index to the hub ...", file=sys.stderr)
            started = time.monotonic()
            subprocess.run([binary, "push", "--data-dir", sb_index["data_dir"], "--postgres", args.hub, "--host", "bench"],
                           env=sb_env, check=True, stdout=subprocess.DEVNULL)
            hub_push = time.monotonic() - started
            hub_port = free_port()
            hub_log = os.path.join(work, "serve-hub.log")
            hub = subprocess.Popen([binary, "serve", "--postgres", args.hub, "--data-dir", os.path.join(work, "data-hub-reader"),
                                    "--listen", f"127.0.0.1:{hub_port}"], env=sb_env, stdout=subprocess.DEVNULL,
                                   stderr=open(hub_log, "w"))
            procs.append(hub)
            wait_for(hub_port, "/api/sessions?limit=1", hub, hub_log)
            servers.append(("hub", Client(hub_port), "/api/search?limit=%d&q=" % args.limit))
        av_pg_push = None
        if args.agentsview_pg and av_index:
            print("agentsview: pg push ...", file=sys.stderr)
            pg_env = dict(av_env, AGENTSVIEW_PG_URL=args.agentsview_pg, AGENTSVIEW_PG_MACHINE="bench")
            started = time.monotonic()
            subprocess.run([args.agentsview, "pg", "push", "--no-vectors"], env=pg_env, check=True,
                           stdout=open(os.path.join(work, "pg-push-agentsview.log"), "w"), stderr=subprocess.STDOUT)
            av_pg_push = time.monotonic() - started
            pg_port = free_port()
            pg_log = os.path.join(work, "pg-serve-agentsview.log")
            pg = subprocess.Popen([args.agentsview, "pg", "serve", "--no-browser", "--no-update-check",
                                   "--host", "127.0.0.1", "--port", str(pg_port)], env=pg_env,
                                  stdout=open(pg_log, "w"), stderr=subprocess.STDOUT)
            procs.append(pg)
            wait_for(pg_port, "/api/v1/search?q=the&limit=1", pg, pg_log)
            servers.append(("agentsview-pg", Client(pg_port), "/api/v1/search?limit=%d&q=" % args.limit))
        # scrollback's serve first looks over the tree for anything new since the index: let both settle.
        settle(procs)

        rows = []
        for kind, q in QUERIES:
            quoted = urllib.parse.quote(q, safe="")
            times = {name: [] for name, _, _ in servers}
            last = {}
            for _ in range(args.warmup):
                for name, client, path in servers:
                    last[name] = client.get(path + quoted)
            for _ in range(args.runs):
                for name, client, path in servers:
                    status, body, t = client.get(path + quoted)
                    times[name].append(t)
                    last[name] = (status, body, t)
            row = {"kind": kind, "q": q}
            for name, _, _ in servers:
                row[name] = summary(times[name], last[name][0], last[name][1])
            rows.append(row)
            print(f"{q:28} " + "  ".join(f"{name} p50 {row[name]['p50_ms']} ms ({row[name]['results']})" for name, _, _ in servers),
                  file=sys.stderr)
        if args.hub:
            # A history page (the newest 100 entries) of a session of the middle of the list, from each.
            status, body, _ = servers[0][1].get("/api/sessions?limit=500")
            listed = json.loads(body)["sessions"]
            sid = urllib.parse.quote(listed[len(listed) // 2]["id"], safe="")
            # And the overview (all of it, UTC), whose result is the messages it counts.
            pages = [("history page", "(100 entries)", f"/api/sessions/{sid}/history?limit=100",
                      lambda b: len(b.get("entries", []))),
                     ("overview", "(/api/stats)", "/api/stats?tz=0", lambda b: b["totals"]["messages"])]
            for kind, q, path, results in pages:
                times = {name: [] for name, _, _ in servers if name in ("scrollback", "hub")}
                last = {}
                for n in range(args.warmup + args.runs):
                    for name, client, _ in servers:
                        if name in times:
                            last[name] = client.get(path)
                            if n >= args.warmup:
                                times[name].append(last[name][2])
                row = {"kind": kind, "q": q}
                for name in times:
                    row[name] = summary(times[name], last[name][0], last[name][1])
                    row[name]["results"] = results(json.loads(last[name][1])) if last[name][0] == 200 else 0
                rows.append(row)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()

    names = [name for name, _, _ in servers]
    print()
    print(f"Search over HTTP, first page of {args.limit}, {args.runs} runs after {args.warmup} warm-up runs, "
          f"one kept-alive connection each, client-side wall time (ms). Tree: {tree_info['files']:,} sessions, "
          f"{tree_info['bytes'] / 1e6:,.1f} MB ({tree}).")
    print()
    other = next((n for n in names if n != "scrollback"), None)
    # The ratios shown: the first other server's to scrollback's, and agentsview's PostgreSQL's to the hub's.
    ratios = ([(other, "scrollback")] if other else []) + ([("agentsview-pg", "hub")] if {"agentsview-pg", "hub"} <= set(names) else [])
    head = "| query | kind |" + "".join(f" {n} p50 | p99 | results |" for n in names)
    head += "".join(f" {a} p50 ÷ {b} p50 |" for a, b in ratios)
    print(head)
    print("|---|---|" + "---|---|---|" * len(names) + "---|" * len(ratios))
    for row in rows:
        cells = [f"`{row['q']}`", row["kind"]]
        for name in names:
            r = row.get(name)
            if r is None:
                cells += ["—", "—", "—"]
                continue
            cells += [fmt_ms(r["p50_ms"]), fmt_ms(r["p99_ms"]),
                      str(r["results"]) if r["status"] == 200 else f"HTTP {r['status']}"]
        for top, bottom in ratios:
            a, b = row.get(bottom), row.get(top)
            cells.append(f"{b['p50_ms'] / a['p50_ms']:.2f}x" if a and b and a["status"] == b["status"] == 200 else "—")
        print("| " + " | ".join(cells) + " |")
    print()
    if hub_push is not None:
        print(f"The hub: the index pushed in {hub_push:.1f} s; `serve --postgres` over it (a local PostgreSQL).")
    if av_pg_push is not None:
        print(f"agentsview's PostgreSQL: `agentsview pg push --no-vectors` took {av_pg_push:.1f} s; `agentsview pg serve` over it.")
    units = {row["scrollback"]["unit"] for row in rows if row["scrollback"].get("unit")}
    if other == "hub" and len(names) == 2:
        print(f"Results: both are {', '.join(sorted(units)) or '—'} (`sessions`: one a session). The last column is how many "
              "times the local index's time the hub took.")
    else:
        print(f"Results: scrollback's are {', '.join(sorted(units)) or '—'} (`sessions`: one a session; `hits`: one an entry), "
              "agentsview's are sessions. Above 1 in the last column, scrollback answered faster.")
    errors = [(row["q"], name, row[name]["error"]) for row in rows for name in names if name in row and row[name]["status"] != 200]
    for q, name, err in errors:
        print(f"- `{q}` on {name}: {err}")
    print()
    print("| index | cold build | peak RSS | index size | tree |")
    print("|---|---|---|---|---|")
    for name, info in (("scrollback", sb_index), ("agentsview", av_index)):
        if info:
            print(f"| {' '.join(info['version'].split()[:2])} | {info['cold_index_seconds']:.1f} s | {info['peak_rss_mb']:.0f} MB | "
                  f"{info['index_bytes'] / 1e6:,.1f} MB | {tree_info['bytes'] / 1e6:,.1f} MB, du {tree_info['du_kb'] / 1024:,.0f} MiB |")

    out = args.json or os.path.join(work, "search.json")
    with open(out, "w") as f:
        json.dump({"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "machine": platform.node(),
                   "cpus": os.cpu_count(), "runs": args.runs, "warmup": args.warmup, "limit": args.limit,
                   "tree": dict(tree_info, path=tree, generated_seconds=gen_seconds, seed=args.seed,
                                sessions=args.sessions, lines_per_session=args.lines_per_session),
                   "index": {"scrollback": sb_index, "agentsview": av_index}, "hub_push_seconds": hub_push,
                   "agentsview_pg_push_seconds": av_pg_push,
                   "queries": rows}, f, indent=1)
    print(f"\n(every run's time in {out})")


if __name__ == "__main__":
    main()
