#!/usr/bin/env bash
# Times `scrollback index` against DuckDB's read_json_auto (into a table) and against `cat`, side by
# in one run, on five generated corpora: image-heavy (~300 MB, mostly base64), text (~200k lines),
# the same kind of lines in Chinese and Japanese (~50k lines), a 1 GB tree of Codex CLI rollouts
# with photos, and that tree compressed to `.jsonl.zst` as Codex does. Prints a table of median wall
# time, throughput, peak RSS and the ratios, Codex's throughput against the image corpus's, and how
# long the last photo of the largest compressed rollout takes to serve.
#
#   benches/compare.sh [WORK_DIR [BASELINE_BINARY]]   (default: a fresh temporary directory)
#
# With BASELINE_BINARY (e.g. a release build of the commit before a change), that binary is timed
# too, taking turns with this one, and both indexes' sizes are printed: before and after, one run.
#
# Needs python3 and pip (DuckDB is installed from PyPI if missing). Builds scrollback in release mode.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
mkdir -p "$work"
python3 -c 'import duckdb' 2>/dev/null || python3 -m pip install --quiet duckdb
python3 -c 'import zstandard' 2>/dev/null || python3 -m pip install --quiet zstandard
cargo build --release --quiet
[ -d "$work/image" ] || python3 benches/gen_corpus.py image "$work/image" 300
[ -d "$work/text" ] || python3 benches/gen_corpus.py text "$work/text" 200000
[ -d "$work/cjk" ] || python3 benches/gen_corpus.py cjk "$work/cjk" 50000
[ -d "$work/codex" ] || python3 benches/gen_corpus.py codex "$work/codex" 1000
[ -d "$work/codex-zst" ] || python3 benches/gen_corpus.py zst "$work/codex" "$work/codex-zst"
python3 benches/compare.py "${CARGO_TARGET_DIR:-target}/release/scrollback" "$work" ${2:+"$2"}

