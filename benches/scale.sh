#!/usr/bin/env bash
# How indexing grows with a heavy user's history (#36's growth curve): scrollback beside agentsview
# and DuckDB, one tool at a time, on trees of gen_corpus.py --profile text (seed 11, 60 lines a
# session) of 2,000, 5,000, 10,000 and 20,000 sessions (about 88 to 875 MB):
#   1. writes each tree into WORK_DIR/tree-N, unless it is there already;
#   2. for each size, from empty data directories: `scrollback index --vault off` (wall time, MB/s,
#      peak RSS, index size and its share of the tree), `agentsview sync --full` without its daemon
#      (wall time, peak RSS, database size) and DuckDB's read_json_auto into a table (wall time, RSS);
#   3. at the largest size, scrollback's no-op re-run (median of 3) and the CPU an idle `serve` uses
#      over 60 s once its catch-up is over (clock ticks from /proc/PID/stat, % of a core);
#   4. prints a Markdown table (with agentsview's time over scrollback's, and scrollback's MB/s at
#      each size over the smallest's: the goal is 0.7 or more at 20,000) and the no-op and idle
#      lines, and writes every run to WORK_DIR/scale.json with the CPU other processes used
#      meanwhile (the machine may be shared: that says which runs were crowded).
# The full run takes about 10 minutes on 2 cores (agentsview's 20,000 alone 2-3 minutes).
#
#   benches/scale.sh [WORK_DIR [SCROLLBACK_BINARY [OPTIONS]]]
#       (default: target/bench/scale, a release build; OPTIONS go to benches/scale.py:
#        --sizes 2000,5000,..., --runs K (medians), --idle-seconds S, --noop-runs K,
#        --skip-agentsview, --skip-duckdb, --keep-data, --json FILE)
#
# Installs agentsview 0.46.1 from PyPI if `agentsview --version` is not that one (or set AGENTSVIEW
# to its path), and DuckDB if missing. Builds scrollback in release mode unless a binary is given.
# Every tool runs with HOME set to WORK_DIR/home: no real transcripts are read.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-${CARGO_TARGET_DIR:-target}/bench/scale}
mkdir -p "$work"
bin=${2:-}
if [ -z "$bin" ]; then
  cargo build --release --quiet
  bin="${CARGO_TARGET_DIR:-target}/release/scrollback"
fi
skip_av= skip_duck=
for arg in "${@:3}"; do
  case $arg in
    --skip-agentsview) skip_av=1 ;;
    --skip-duckdb) skip_duck=1 ;;
  esac
done
av=${AGENTSVIEW:-agentsview}
if [ -z "$skip_av" ] && ! "$av" --version 2>/dev/null | grep -q 'v0\.46\.1\b'; then
  python3 -m pip install --quiet agentsview==0.46.1
  av=agentsview
fi
if [ -z "$skip_duck" ]; then
  python3 -c 'import duckdb' 2>/dev/null || python3 -m pip install --quiet duckdb
fi
python3 benches/scale.py "$bin" "$work" --agentsview "$av" "${@:3}"
