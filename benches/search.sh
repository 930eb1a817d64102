#!/usr/bin/env bash
# Search over HTTP against agentsview, side by side in one run, on a heavy user's year of Claude Code
# sessions (gen_corpus.py --profile text: 20,000 sessions of 60 lines, about 875 MB, seed 11):
#   1. writes the tree into WORK_DIR/tree, unless it is there already;
#   2. indexes it with `scrollback index` and with `agentsview sync --full` (no daemon), each once into
#      an empty directory, then reuses both indexes; their cold build time, peak RSS and size are kept;
#   3. serves each on 127.0.0.1 (`scrollback serve`, `agentsview serve --no-sync`) and times a set of
#      queries (common, mid-frequency and rare words, phrases, words with punctuation, several words)
#      asking each for a first page of 20, 30 runs after 3 warm-up runs, the two taking turns;
#   4. prints p50 and p99 (ms), the results and the ratio per query as a Markdown table, and writes
#      every figure to WORK_DIR/search.json.
#
#   benches/search.sh [WORK_DIR [SCROLLBACK_BINARY [OPTIONS]]]
#       (default: target/bench/search, a release build; OPTIONS go to benches/search_bench.py:
#        --runs N, --warmup N, --limit N, --reindex, --no-agentsview, --json FILE, and the tree's
#        --sessions N, --lines-per-session N, --seed N)
#
# Installs agentsview 0.46.1 from PyPI if `agentsview --version` is not that one (or set AGENTSVIEW
# to its path). Builds scrollback in release mode unless a binary is given.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-${CARGO_TARGET_DIR:-target}/bench/search}
mkdir -p "$work"
bin=${2:-}
if [ -z "$bin" ]; then
  cargo build --release --quiet
  bin="${CARGO_TARGET_DIR:-target}/release/scrollback"
fi
av=${AGENTSVIEW:-agentsview}
if ! "$av" --version 2>/dev/null | grep -q 'v0\.46\.1\b'; then
  python3 -m pip install --quiet agentsview==0.46.1
  av=agentsview
fi
python3 benches/search_bench.py "$bin" "$work" --agentsview "$av" "${@:3}"
