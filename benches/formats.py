#!/usr/bin/env python3
"""Driver for formats.sh: indexes each format's image corpus (WORK/FORMAT) as `--root FORMAT:DIR`
with `--vault off`, each run from an empty data directory, RUNS times with the formats taking turns
(compare.py's `measure`), and prints the median time, MB/s of the corpus's bytes, peak RSS, the
photos the index holds (the same in every format), and each format's throughput against the first
one's (Claude Code's)."""
import os
import shutil
import sqlite3
import sys

sys.dont_write_bytecode = True  # no __pycache__ in benches/ from importing compare.py
import compare  # noqa: E402


def main():
    binary, work, runs, formats = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    tools, sizes, files = [], {}, {}
    for fmt in formats:
        root = os.path.join(work, fmt)
        paths = compare.corpus_files(root)
        sizes[fmt] = sum(os.path.getsize(p) for p in paths)
        files[fmt] = len(paths)
        data = os.path.join(work, "data-" + fmt)
        tools.append((fmt, lambda d=data: shutil.rmtree(d, ignore_errors=True),
                      [binary, "index", "--root", f"{fmt}:{root}", "--data-dir", data, "--vault", "off"]))
    compare.RUNS = runs
    results = compare.measure(tools)
    base = sizes[formats[0]] / results[0][1]
    print(f"{'format':8} {'files':>5} {'MB':>7} {'median s':>9} {'MB/s':>7} {'peak RSS MB':>12} {'photos':>7}  "
          f"vs {formats[0]} (median of {runs} runs)")
    for fmt, t, rss in results:
        conn = sqlite3.connect(f"file:{os.path.join(work, 'data-' + fmt, 'index.sqlite3')}?mode=ro", uri=True)
        photos = conn.execute("SELECT count(*) FROM media WHERE ordinal IS NOT NULL").fetchone()[0]
        conn.close()
        rate = sizes[fmt] / t
        print(f"{fmt:8} {files[fmt]:5} {sizes[fmt] / 1e6:7.1f} {t:9.3f} {rate / 1e6:7.0f} {rss:12.1f} {photos:7}  "
              f"{rate / base:.2f}x")


if __name__ == "__main__":
    main()
