#!/usr/bin/env python3
"""Driver for compare.sh: runs each tool on each corpus, measures wall time and peak RSS per run
(os.wait4's rusage of the child), and prints medians and ratios. Every run of scrollback starts from
an empty data directory, like DuckDB's from an empty database. Given a third argument, another
scrollback binary (a baseline: the build before a change), it runs that too, taking turns, and
prints both indexes' sizes. The Codex corpora are indexed as a Codex root; the compressed one's
throughput is of its decompressed bytes."""
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

RUNS = 3


def corpus_files(root):
    out = []
    for d, _, files in os.walk(root):
        out += [os.path.join(d, f) for f in files if f.endswith(".jsonl") or f.endswith(".jsonl.zst")]
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
    throughput = {}
    for corpus in ("image", "text", "cjk", "codex", "codex-zst"):
        root = os.path.join(work, corpus)
        if not os.path.isdir(root):
            continue
        files = corpus_files(root)
        compressed = corpus == "codex-zst"
        # A compressed corpus's size is that of the same tree uncompressed.
        size = sum(os.path.getsize(f) for f in corpus_files(os.path.join(work, "codex"))) if compressed else \
            sum(os.path.getsize(f) for f in files)
        source = ["--root", f"codex:{root}/sessions"] if corpus.startswith("codex") else ["--transcripts", root]
        data = os.path.join(work, f"data-{corpus}")
        data_before = os.path.join(work, f"data-{corpus}-baseline")
        duck = os.path.join(work, f"{corpus}.duckdb")

        def fresh(path):
            return lambda: shutil.rmtree(path, ignore_errors=True)

        def fresh_duck():
            for p in (duck, duck + ".wal"):
                if os.path.exists(p):
                    os.remove(p)

        tools = [] if compressed else [("cat", lambda: None, ["sh", "-c", 'cat "$@" > /dev/null', "cat"] + files)]
        tools.append(("scrollback", fresh(data), [binary, "index", *source, "--data-dir", data]))
        # The baseline may not read what is new (a compressed tree): it is timed on the others.
        baseline_here = baseline and not compressed
        if baseline_here:
            tools.append(("baseline", fresh(data_before), [baseline, "index", *source, "--data-dir", data_before]))
        if not compressed:
            tools.append(("duckdb", fresh_duck, [sys.executable, "-c", duck_script, root, duck]))
        results = measure(tools)
        ours = next(t for name, t, _ in results if name == "scrollback")
        throughput[corpus] = size / ours / 1e6
        for name, t, rss in results:
            ratio = f"{t / ours:.2f}x scrollback's time" if name != "scrollback" else ""
            print(f"{corpus:8} {name:12} {t:9.3f} {size / t / 1e6:8.0f} {rss:12.1f}  {ratio}")
        for name, d in [("scrollback", data)] + ([("baseline", data_before)] if baseline_here else []):
            db = os.path.getsize(os.path.join(d, "index.sqlite3"))
            print(f"{corpus:8} {name}: corpus {size / 1e6:.1f} MB in {len(files)} files; index {db / 1e6:.1f} MB "
                  f"({100 * db / size:.1f}% of the corpus)")
    for corpus in ("codex", "codex-zst"):
        if corpus in throughput and "image" in throughput:
            print(f"{corpus}: scrollback's throughput {throughput[corpus]:.0f} MB/s, "
                  f"{throughput[corpus] / throughput['image']:.2f}x the image corpus's {throughput['image']:.0f} MB/s")
    for corpus in ("codex", "codex-zst"):
        last_photo(binary, work, corpus)


def last_photo(binary, work, corpus):
    """Times `scrollback media` on the last photo of the corpus's largest rollout (for the compressed
    corpus: decoded up to it, checked, then written out), RUNS times; prints the median."""
    data = os.path.join(work, f"data-{corpus}")
    if not os.path.exists(os.path.join(data, "index.sqlite3")):
        return
    conn = sqlite3.connect(f"file:{os.path.join(data, 'index.sqlite3')}?mode=ro", uri=True)
    row = conn.execute(
        "SELECT e.session_id || '/' || e.uuid || '/' || m.ordinal, f.path, m.offset FROM media m "
        "JOIN entries e ON e.id = m.entry_id JOIN files f ON f.id = e.file_id "
        "WHERE m.ordinal IS NOT NULL AND f.size = (SELECT max(size) FROM files) ORDER BY m.offset DESC LIMIT 1"
    ).fetchone()
    conn.close()
    if row is None:
        return
    ref, path, offset = row
    times = []
    for _ in range(RUNS):
        t, rss = run([binary, "media", ref, "--data-dir", data])
        times.append(t)
    print(f"{corpus}: the last photo of {os.path.basename(path)} ({os.path.getsize(path) / 1e6:.0f} MB on disk, "
          f"at offset {offset / 1e6:.0f} MB): {statistics.median(times):.3f} s (median of {RUNS}), peak RSS {rss:.1f} MB")


if __name__ == "__main__":
    main()
