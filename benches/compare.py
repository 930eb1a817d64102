#!/usr/bin/env python3
"""Driver for compare.sh: runs each tool on each corpus, measures wall time and peak RSS per run
(os.wait4's rusage of the child), and prints medians and ratios. Every run of scrollback starts from
an empty data directory, like DuckDB's from an empty database. Given a third argument, another
scrollback binary (a baseline: the build before a change), it runs that too, taking turns, and
prints both indexes' sizes."""
import os
import shutil
import statistics
import subprocess
import sys
import time

RUNS = 3


def corpus_files(root):
    out = []
    for d, _, files in os.walk(root):
        out += [os.path.join(d, f) for f in files if f.endswith(".jsonl")]
    return sorted(out)


def run(argv):
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{argv[0]} failed: {err}")
    return elapsed, usage.ru_maxrss / 1024  # MB


def measure(tools):
    """Runs each tool RUNS times, the tools taking turns (so that a slow minute on a shared machine
    falls on all of them); returns (name, median seconds, peak RSS MB) per tool."""
    times = {name: [] for name, _, _ in tools}
    rss = {name: [] for name, _, _ in tools}
    for _ in range(RUNS):
        for name, setup, argv in tools:
            setup()
            t, m = run(argv)
            times[name].append(t)
            rss[name].append(m)
    return [(name, statistics.median(times[name]), max(rss[name])) for name, _, _ in tools]


def main():
    binary, work = sys.argv[1], sys.argv[2]
    baseline = sys.argv[3] if len(sys.argv) > 3 else None
    duck_script = (
        "import duckdb,sys; c=duckdb.connect(sys.argv[2]); "
        "c.execute(\"CREATE TABLE t AS SELECT * FROM read_json_auto('\" + sys.argv[1] + \"/**/*.jsonl', "
        "format='newline_delimited', maximum_object_size=1000000000)\")"
    )
    print(f"{'corpus':8} {'tool':12} {'median s':>9} {'MB/s':>8} {'peak RSS MB':>12}  ratio")
    for corpus in ("image", "text", "cjk"):
        root = os.path.join(work, corpus)
        if not os.path.isdir(root):
            continue
        files = corpus_files(root)
        size = sum(os.path.getsize(f) for f in files)
        data = os.path.join(work, f"data-{corpus}")
        data_before = os.path.join(work, f"data-{corpus}-baseline")
        duck = os.path.join(work, f"{corpus}.duckdb")

        def fresh(path):
            return lambda: shutil.rmtree(path, ignore_errors=True)

        def fresh_duck():
            for p in (duck, duck + ".wal"):
                if os.path.exists(p):
                    os.remove(p)

        tools = [
            ("cat", lambda: None, ["sh", "-c", 'cat "$@" > /dev/null', "cat"] + files),
            ("scrollback", fresh(data), [binary, "index", "--transcripts", root, "--data-dir", data]),
        ]
        if baseline:
            tools.append(("baseline", fresh(data_before), [baseline, "index", "--transcripts", root, "--data-dir", data_before]))
        tools.append(("duckdb", fresh_duck, [sys.executable, "-c", duck_script, root, duck]))
        results = measure(tools)
        ours = results[1][1]
        for name, t, rss in results:
            ratio = f"{t / ours:.2f}x scrollback's time" if name != "scrollback" else ""
            print(f"{corpus:8} {name:12} {t:9.3f} {size / t / 1e6:8.0f} {rss:12.1f}  {ratio}")
        for name, d in [("scrollback", data)] + ([("baseline", data_before)] if baseline else []):
            db = os.path.getsize(os.path.join(d, "index.sqlite3"))
            print(f"{corpus:8} {name}: corpus {size / 1e6:.1f} MB in {len(files)} files; index {db / 1e6:.1f} MB "
                  f"({100 * db / size:.1f}% of the corpus)")


if __name__ == "__main__":
    main()
