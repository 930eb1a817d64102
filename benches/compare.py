#!/usr/bin/env python3
"""Driver for compare.sh: runs each tool on each corpus, measures wall time and peak RSS per run
(os.wait4's rusage of the child), and prints medians and ratios. Every run of scrollback starts from
an empty data directory, like DuckDB's from an empty database."""
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


def measure(name, setup, argv):
    times, rss = [], []
    for _ in range(RUNS):
        setup()
        t, m = run(argv)
        times.append(t)
        rss.append(m)
    return name, statistics.median(times), max(rss)


def main():
    binary, work = sys.argv[1], sys.argv[2]
    duck_script = (
        "import duckdb,sys; c=duckdb.connect(sys.argv[2]); "
        "c.execute(\"CREATE TABLE t AS SELECT * FROM read_json_auto('\" + sys.argv[1] + \"/**/*.jsonl', "
        "format='newline_delimited', maximum_object_size=1000000000)\")"
    )
    print(f"{'corpus':8} {'tool':12} {'median s':>9} {'MB/s':>8} {'peak RSS MB':>12}  ratio")
    for corpus in ("image", "text"):
        root = os.path.join(work, corpus)
        files = corpus_files(root)
        size = sum(os.path.getsize(f) for f in files)
        data = os.path.join(work, f"data-{corpus}")
        duck = os.path.join(work, f"{corpus}.duckdb")

        def fresh_data():
            shutil.rmtree(data, ignore_errors=True)

        def fresh_duck():
            for p in (duck, duck + ".wal"):
                if os.path.exists(p):
                    os.remove(p)

        results = [
            measure("cat", lambda: None, ["sh", "-c", 'cat "$@" > /dev/null', "cat"] + files),
            measure("scrollback", fresh_data, [binary, "index", "--transcripts", root, "--data-dir", data]),
            measure("duckdb", fresh_duck, [sys.executable, "-c", duck_script, root, duck]),
        ]
        ours = results[1][1]
        for name, t, rss in results:
            ratio = f"{t / ours:.2f}x scrollback's time" if name != "scrollback" else ""
            print(f"{corpus:8} {name:12} {t:9.3f} {size / t / 1e6:8.0f} {rss:12.1f}  {ratio}")
        db = os.path.join(data, "index.sqlite3")
        print(f"{corpus:8} corpus {size / 1e6:.1f} MB in {len(files)} files; index {os.path.getsize(db) / 1e6:.1f} MB "
              f"({100 * os.path.getsize(db) / size:.1f}% of the corpus)")


if __name__ == "__main__":
    main()
