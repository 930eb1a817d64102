#!/usr/bin/env bash
# Times `scrollback index` against DuckDB's read_json_auto (into a table) and against `cat`, side by
# side in one run, on two generated corpora: image-heavy (~300 MB, mostly base64) and text (~200k
# lines). Prints a table of median wall time, throughput, peak RSS and the ratios.
#
#   benches/compare.sh [WORK_DIR]      (default: a fresh temporary directory)
#
# Needs python3 and pip (DuckDB is installed from PyPI if missing). Builds scrollback in release mode.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
mkdir -p "$work"
python3 -c 'import duckdb' 2>/dev/null || python3 -m pip install --quiet duckdb
cargo build --release --quiet
[ -d "$work/image" ] || python3 benches/gen_corpus.py image "$work/image" 300
[ -d "$work/text" ] || python3 benches/gen_corpus.py text "$work/text" 200000
python3 benches/compare.py target/release/scrollback "$work"
