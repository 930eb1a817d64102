#!/usr/bin/env python3
"""Driver for benches/scale.sh: how indexing grows with a heavy user's history, scrollback beside
agentsview and DuckDB, one tool at a time (never two at once).

    python3 benches/scale.py SCROLLBACK_BINARY WORK_DIR [--sizes 2000,5000,10000,20000] [--runs K]
                             [--idle-seconds S] [--noop-runs K] [--skip-agentsview] [--skip-duckdb]
                             [--agentsview CMD] [--seed N] [--lines-per-session N] [--keep-data] [--json FILE]

1. The trees: WORK_DIR/tree-N for each size N, written by `gen_corpus.py --profile text --seed 11
   --sessions N --lines-per-session 60` unless there already (WORK_DIR/tree-N.json records how; a tree
   made otherwise is an error, not silently reused).
2. For each size, smallest first, K runs (default 1; medians of wall time, the highest peak RSS),
   the tools taking turns, each from an empty data directory:
   - scrollback: `index --root claude:TREE --data-dir D --vault off`: wall time, peak RSS, MB/s of
     the tree, the index's size (index.sqlite3 and its -wal) and its share of the tree;
   - agentsview: `sync --full` with AGENTSVIEW_NO_DAEMON=1, AGENTSVIEW_DATA_DIR=D and
     CLAUDE_PROJECTS_DIR=TREE: wall time, peak RSS, the database's size (sessions.db and its -wal);
     every file it leaves in D is listed in the JSON;
   - DuckDB: `CREATE TABLE t AS SELECT * FROM read_json_auto('TREE/**/*.jsonl')` into a new
     database file, as benches/compare.py does: wall time, peak RSS.
   Each tool runs with HOME set to WORK_DIR/home, so none reads an agent's real transcripts.
   Wall time and peak RSS are the child's (os.wait4's rusage), as in benches/compare.py.
3. At the largest size, on scrollback's index of it: the no-op re-run (`index` again on the same data
   directory, median of --noop-runs, default 3), then `serve` on 127.0.0.1:0: once its catch-up is
   over (GET /api/status counts N sessions, then a second with under 5% of a core) its utime+stime
   from /proc/PID/stat over --idle-seconds (default 60), as clock ticks and % of one core; then
   SIGTERM.
4. A Markdown table on stdout (one row per size), the no-op and idle lines, and every figure, each
   run's included, in WORK_DIR/scale.json (or --json FILE). scrollback's linearity: each size's MB/s
   divided by the smallest size's (the goal: the largest at 0.7 or more).

The data directories are removed once a size is measured (--keep-data keeps them), but for
scrollback's at the largest size. Everything listens on 127.0.0.1 only.
"""
import argparse
import http.client
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OTHERS = []

DUCK_SCRIPT = (
    "import duckdb,sys; c=duckdb.connect(sys.argv[2]); "
    "c.execute(\"CREATE TABLE t AS SELECT * FROM read_json_auto('\" + sys.argv[1] + \"/**/*.jsonl', "
    "format='newline_delimited', maximum_object_size=1000000000)\"); "
    "print(c.execute('SELECT count(*) FROM t').fetchone()[0])"
)


def make_tree(work, n, seed, lines):
    tree = os.path.join(work, f"tree-{n}")
    stamp = tree + ".json"
    want = {"profile": "text", "seed": seed, "sessions": n, "lines_per_session": lines}
    if os.path.isdir(tree):
        have = json.load(open(stamp)) if os.path.exists(stamp) else None
        if have is not None and {k: have.get(k) for k in want} != want:
            sys.exit(f"{tree} was made with {have}, not {want}: use another WORK_DIR")
        if have is None:
            print(f"reusing {tree} (no {os.path.basename(stamp)} beside it: assumed made with {want})", file=sys.stderr)
        return tree
    partial = tree + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    print(f"writing {tree} ...", file=sys.stderr)
    start = time.perf_counter()
    subprocess.run([sys.executable, os.path.join(HERE, "gen_corpus.py"), "--profile", "text", "--seed", str(seed),
                    "--sessions", str(n), "--lines-per-session", str(lines), partial], check=True)
    seconds = time.perf_counter() - start
    os.rename(partial, tree)
    with open(stamp, "w") as f:
        json.dump(dict(want, seconds=round(seconds, 1)), f)
    return tree


def tree_stats(tree):
    files = size = 0
    for d, _, names in os.walk(tree):
        for name in names:
            if name.endswith(".jsonl"):
                files += 1
                size += os.path.getsize(os.path.join(d, name))
    return {"files": files, "bytes": size, "projects": len(os.listdir(tree))}


def busy_seconds():
    """CPU seconds the whole machine has spent busy since boot (all cores: /proc/stat less idle and iowait)."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:8]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def run_timed(argv, env, log):
    """Runs argv to its end, its output into log; returns (wall seconds, peak RSS MB, exit code).
    OTHERS gets the CPU the rest of the machine used meanwhile, as % of one core: other agents'
    builds on a shared machine make a run slow, and this says when."""
    busy = busy_seconds()
    start = time.perf_counter()
    with open(log, "w") as out:
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    others = busy_seconds() - busy - usage.ru_utime - usage.ru_stime
    OTHERS.append(round(max(0.0, 100 * others / wall), 1))
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def listing(path):
    """{relative path: bytes} of every file under path."""
    out = {}
    for d, _, names in os.walk(path):
        for name in names:
            p = os.path.join(d, name)
            if not os.path.islink(p):
                out[os.path.relpath(p, path)] = os.path.getsize(p)
    return out


def remove(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    else:
        for p in (path, path + ".wal"):
            if os.path.exists(p):
                os.remove(p)


def tail(log, n=5):
    with open(log, errors="replace") as f:
        return [line.rstrip() for line in f.read().strip().splitlines()[-n:]]


def run_scrollback(binary, tree, data, env, log):
    remove(data)
    seconds, rss, code = run_timed([binary, "index", "--root", f"claude:{tree}", "--data-dir", data, "--vault", "off"], env, log)
    files = listing(data)
    return {"seconds": seconds, "peak_rss_mb": rss, "exit": code,
            "index_bytes": files.get("index.sqlite3", 0) + files.get("index.sqlite3-wal", 0),
            "files": files, "output": tail(log), "others_core_percent": OTHERS[-1]}


def run_agentsview(agentsview, tree, data, env, log):
    remove(data)
    env = dict(env, AGENTSVIEW_NO_DAEMON="1", AGENTSVIEW_DATA_DIR=data, CLAUDE_PROJECTS_DIR=tree,
               AGENTSVIEW_TELEMETRY_ENABLED="false", DO_NOT_TRACK="1", AGENTSVIEW_DISABLE_UPDATE_CHECK="1",
               AGENTSVIEW_NO_BROWSER="1")
    seconds, rss, code = run_timed(agentsview + ["sync", "--full"], env, log)
    files = listing(data)
    text = open(log, errors="replace").read()
    return {"seconds": seconds, "peak_rss_mb": rss, "exit": code,
            "db_bytes": files.get("sessions.db", 0) + files.get("sessions.db-wal", 0),
            "files": files, "others_core_percent": OTHERS[-1],
            "summary": [x for x in text.splitlines() if x.startswith(("Sync complete", "Database:"))],
            "error_lines": [x for x in text.splitlines() if re.search(r"\b(error|failed|warn)", x, re.I)][:20]}


def run_duckdb(tree, db, env, log):
    remove(db)
    seconds, rss, code = run_timed([sys.executable, "-c", DUCK_SCRIPT, tree, db], env, log)
    out = tail(log)
    rows = int(out[-1]) if code == 0 and out and out[-1].isdigit() else None
    size = os.path.getsize(db) if os.path.exists(db) else 0
    return {"seconds": seconds, "peak_rss_mb": rss, "exit": code, "rows": rows, "db_bytes": size, "others_core_percent": OTHERS[-1],
            "output": out if code else []}


def agg(runs, keys=("seconds",)):
    """Median of each key over the runs that succeeded, the highest peak RSS, the last run's sizes."""
    ok = [r for r in runs if r["exit"] == 0]
    if not ok:
        return {"failed": True, "exit": runs[-1]["exit"]}
    out = {k: statistics.median(r[k] for r in ok) for k in keys}
    out["peak_rss_mb"] = max(r["peak_rss_mb"] for r in ok)
    for k in ("index_bytes", "db_bytes", "rows"):
        if k in ok[-1]:
            out[k] = ok[-1][k]
    out["failed_runs"] = len(runs) - len(ok)
    return out


def proc_ticks(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (all threads)


def get_json(port, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        c.request("GET", path, headers={"Accept": "application/json"})
        r = c.getresponse()
        body = r.read()
        return r.status, json.loads(body) if r.status == 200 else body.decode(errors="replace")
    finally:
        c.close()


def serve_idle(binary, tree, data, env, n, idle_seconds, work):
    """Starts `serve` on the data directory, waits for its catch-up, then measures its CPU over
    idle_seconds; stops it with SIGTERM."""
    log = os.path.join(work, "serve-scrollback.log")
    start = time.perf_counter()
    proc = subprocess.Popen([binary, "serve", "--root", f"claude:{tree}", "--data-dir", data, "--vault", "off",
                             "--listen", "127.0.0.1:0"], env=env, stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    result = {"log": log}
    try:
        port = None
        while port is None:
            if proc.poll() is not None:
                sys.exit(f"scrollback serve exited ({proc.returncode}); see {log}")
            if time.perf_counter() - start > 120:
                sys.exit(f"scrollback serve never said where it listens; see {log}")
            m = re.search(r"^http://127\.0\.0\.1:(\d+)/$", open(log, errors="replace").read(), re.M)
            port = int(m.group(1)) if m else None
            time.sleep(0.1)
        status = None
        while True:
            if proc.poll() is not None:
                sys.exit(f"scrollback serve exited ({proc.returncode}); see {log}")
            if time.perf_counter() - start > 1800:
                sys.exit(f"scrollback serve's catch-up took over 30 minutes (last status {status}); see {log}")
            try:
                code, status = get_json(port, "/api/status")
            except OSError:
                code = None
            if code == 200 and status.get("sessions") == n:
                break
            time.sleep(0.5)
        result["sessions_seen_seconds"] = round(time.perf_counter() - start, 2)
        result["status"] = {k: status.get(k) for k in ("writer", "watcher", "transcripts", "sessions", "entries", "indexBytes", "version")}
        # The catch-up's last batch and the start's look over the tree: until a second under 5% of a core.
        hz = os.sysconf("SC_CLK_TCK")
        before = proc_ticks(proc.pid)
        while time.perf_counter() - start < 1800:
            time.sleep(1)
            now = proc_ticks(proc.pid)
            if now - before < 0.05 * hz:
                break
            before = now
        result["settled_seconds"] = round(time.perf_counter() - start, 2)
        t0, c0, busy = time.perf_counter(), proc_ticks(proc.pid), busy_seconds()
        series = []
        last = c0
        for _ in range(idle_seconds):
            time.sleep(1)
            now = proc_ticks(proc.pid)
            series.append(now - last)
            last = now
        wall = time.perf_counter() - t0
        ticks = last - c0
        others = busy_seconds() - busy - ticks / hz
        result.update(others_core_percent=round(max(0.0, 100 * others / wall), 1), idle_seconds=round(wall, 2), ticks=ticks, clk_tck=hz,
                      cpu_seconds=ticks / hz, core_percent=100 * ticks / hz / wall, ticks_per_second=series)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        result["exit"] = proc.returncode
    return result


def agentsview_command(name):
    """The agentsview program: the Go binary inside the PyPI package when that is what `name` runs
    (its Python entry only execs it), so that no interpreter start is timed; else `name` itself."""
    if name == "agentsview":
        try:
            import agentsview  # noqa: the PyPI package
            binary = os.path.join(os.path.dirname(agentsview.__file__), "bin", "agentsview")
            if os.access(binary, os.X_OK):
                return [binary]
        except ImportError:
            pass
    return [name]


def fmt(x, spec, missing="—"):
    return missing if x is None else format(x, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("work")
    ap.add_argument("--sizes", default="2000,5000,10000,20000", help="sessions per tree, comma-separated")
    ap.add_argument("--runs", type=int, default=1, help="runs per tool and size (medians)")
    ap.add_argument("--noop-runs", type=int, default=3)
    ap.add_argument("--idle-seconds", type=int, default=60)
    ap.add_argument("--skip-agentsview", action="store_true")
    ap.add_argument("--skip-duckdb", action="store_true")
    ap.add_argument("--agentsview", default=os.environ.get("AGENTSVIEW", "agentsview"), help="the agentsview command")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--lines-per-session", type=int, default=60)
    ap.add_argument("--keep-data", action="store_true", help="keep every data directory and database")
    ap.add_argument("--json", help="where the results go (default WORK_DIR/scale.json)")
    args = ap.parse_args()
    sizes = sorted({int(x) for x in args.sizes.split(",") if x.strip()})
    work = os.path.abspath(args.work)
    binary = os.path.abspath(args.binary)
    os.makedirs(work, exist_ok=True)
    home = os.path.join(work, "home")
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ, HOME=home, RUST_LOG="scrollback=warn")
    agentsview = None if args.skip_agentsview else agentsview_command(args.agentsview)

    info = {"binary": binary,
            "version": subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip(),
            "agentsview": agentsview and {
                "command": agentsview,
                "version": subprocess.run(agentsview + ["--version"], capture_output=True, text=True, env=env).stdout.strip()},
            "duckdb": None if args.skip_duckdb else subprocess.run(
                [sys.executable, "-c", "import duckdb; print(duckdb.__version__)"], capture_output=True, text=True).stdout.strip(),
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "loadavg_at_start": os.getloadavg()},
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "args": vars(args)}
    out_path = args.json or os.path.join(work, "scale.json")
    results = {"info": info, "sizes": []}

    trees = {n: make_tree(work, n, args.seed, args.lines_per_session) for n in sizes}
    for n in sizes:
        tree = trees[n]
        stats = tree_stats(tree)
        sb_data = os.path.join(work, f"data-scrollback-{n}")
        av_data = os.path.join(work, f"data-agentsview-{n}")
        duck_db = os.path.join(work, f"duckdb-{n}.duckdb")
        runs = {"scrollback": [], "agentsview": [], "duckdb": []}
        for k in range(args.runs):
            print(f"{n} sessions ({stats['bytes'] / 1e6:.0f} MB), run {k + 1}/{args.runs}: scrollback ...", file=sys.stderr)
            runs["scrollback"].append(run_scrollback(binary, tree, sb_data, env, os.path.join(work, f"index-scrollback-{n}.log")))
            if agentsview:
                print(f"{n} sessions: agentsview ...", file=sys.stderr)
                runs["agentsview"].append(run_agentsview(agentsview, tree, av_data, env, os.path.join(work, f"sync-agentsview-{n}.log")))
            if not args.skip_duckdb:
                print(f"{n} sessions: duckdb ...", file=sys.stderr)
                runs["duckdb"].append(run_duckdb(tree, duck_db, env, os.path.join(work, f"duckdb-{n}.log")))
        entry = {"sessions": n, "tree": stats, "runs": runs,
                 "scrollback": agg(runs["scrollback"]),
                 "agentsview": agg(runs["agentsview"]) if agentsview else None,
                 "duckdb": agg(runs["duckdb"]) if not args.skip_duckdb else None}
        sb = entry["scrollback"]
        if not sb.get("failed"):
            sb["mb_per_s"] = stats["bytes"] / 1e6 / sb["seconds"]
            sb["index_to_tree"] = sb["index_bytes"] / stats["bytes"]
        results["sizes"].append(entry)
        if n == sizes[-1] and not sb.get("failed"):
            print(f"{n} sessions: scrollback's no-op re-run x{args.noop_runs} ...", file=sys.stderr)
            noop = [run_scrollback_again(binary, tree, sb_data, env, os.path.join(work, "noop-scrollback.log"))
                    for _ in range(args.noop_runs)]
            results["noop"] = {"sessions": n, "runs": noop, "seconds": statistics.median(r["seconds"] for r in noop),
                               "peak_rss_mb": max(r["peak_rss_mb"] for r in noop)}
            if args.idle_seconds > 0:
                print(f"{n} sessions: scrollback serve, idle for {args.idle_seconds} s ...", file=sys.stderr)
                results["idle"] = dict(serve_idle(binary, tree, sb_data, env, n, args.idle_seconds, work), sessions=n)
        if not args.keep_data:
            remove(av_data)
            remove(duck_db)
            if n != sizes[-1]:
                remove(sb_data)
        with open(out_path, "w") as f:
            json.dump(results, f, indent=1)

    base = next((e["scrollback"]["mb_per_s"] for e in results["sizes"] if "mb_per_s" in e["scrollback"]), None)
    print("| sessions | tree MB | scrollback s | MB/s | RSS MB | index MB | index ÷ tree | agentsview s | RSS MB | db MB "
          "| DuckDB s | RSS MB | agentsview ÷ scrollback time | rate ÷ smallest's |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for e in results["sizes"]:
        sb, av, dk = e["scrollback"], e["agentsview"] or {}, e["duckdb"] or {}
        ok_sb, ok_av, ok_dk = not sb.get("failed"), av and not av.get("failed"), dk and not dk.get("failed")
        if ok_sb:
            e["linearity"] = sb["mb_per_s"] / base
        if ok_sb and ok_av:
            e["agentsview_to_scrollback"] = av["seconds"] / sb["seconds"]
        skip = lambda d: "skipped" if not d else "failed"  # noqa: E731
        cells = [f"{e['sessions']:,}", f"{e['tree']['bytes'] / 1e6:.0f}"]
        cells += [f"{sb['seconds']:.1f}", f"{sb['mb_per_s']:.1f}", f"{sb['peak_rss_mb']:.0f}", f"{sb['index_bytes'] / 1e6:.0f}",
                  f"{sb['index_to_tree']:.2f}"] if ok_sb else ["failed"] * 5
        cells += [f"{av['seconds']:.1f}", f"{av['peak_rss_mb']:.0f}", f"{av['db_bytes'] / 1e6:.0f}"] if ok_av else [skip(av)] * 3
        cells += [f"{dk['seconds']:.1f}", f"{dk['peak_rss_mb']:.0f}"] if ok_dk else [skip(dk)] * 2
        cells.append(f"{e['agentsview_to_scrollback']:.2f}x" if "agentsview_to_scrollback" in e else "—")
        cells.append(f"{e['linearity']:.2f}x" if "linearity" in e else "—")
        print("| " + " | ".join(cells) + " |")
    runs_note = f"median of {args.runs} runs" if args.runs > 1 else "one run"
    print(f"\nWall times: {runs_note} each, one tool at a time, from an empty data directory; RSS is the highest peak; "
          f"MB are 10^6 bytes of the tree's .jsonl files; index = index.sqlite3 + -wal (--vault off); "
          f"agentsview's db = sessions.db + -wal.")
    print(f"Other processes' CPU during a run (the machine is shared): up to {max(OTHERS, default=0):.0f}% of a core "
          f"(each run's in scale.json, others_core_percent).")
    if "noop" in results:
        r = results["noop"]
        print(f"No-op re-run at {r['sessions']:,} sessions (`index` again on the same data directory): "
              f"{r['seconds']:.2f} s (median of {len(r['runs'])}), peak RSS {r['peak_rss_mb']:.0f} MB")
    if "idle" in results:
        r = results["idle"]
        print(f"`serve` idle at {r['sessions']:,} sessions: {r['ticks']} ticks ({r['cpu_seconds']:.2f} s of CPU at "
              f"{r['clk_tck']} Hz) over {r['idle_seconds']:.0f} s = {r['core_percent']:.2f}% of a core "
              f"(measured from {r['settled_seconds']:.0f} s after start; all {r['sessions']:,} sessions counted at "
              f"{r['sessions_seen_seconds']:.0f} s; other processes meanwhile: {r['others_core_percent']:.0f}% of a core)")
    results["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    results["loadavg_at_end"] = os.getloadavg()
    with open(out_path, "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nEvery run: {out_path}")


def run_scrollback_again(binary, tree, data, env, log):
    seconds, rss, code = run_timed([binary, "index", "--root", f"claude:{tree}", "--data-dir", data, "--vault", "off"], env, log)
    if code != 0:
        sys.exit(f"scrollback's no-op re-run failed; see {log}")
    return {"seconds": seconds, "peak_rss_mb": rss, "output": tail(log, 2), "others_core_percent": OTHERS[-1]}


if __name__ == "__main__":
    main()
