#!/usr/bin/env bash
# Times `scrollback index` on an OpenCode database of about MB megabytes (default 1000), most of it
# photos pasted into its sessions (`file` parts whose `url` is a base64 data URL), written by
# `opencode.py gen` as OpenCode 1.2 writes its tables, and the same sessions as OpenCode 2 writes
# them (`opencode.py gen2`: its `session_v2` and `session_message` rows); and, beside them in the
# same runs, Claude Code's image corpus of the same size (`gen_corpus.py image`), for the rate. Each
# is indexed from an empty data directory, RUNS times, taking turns: OpenCode with the vault on (as
# `serve` runs: each session's render is kept) and off, OpenCode 2 with the vault on, Claude Code
# with the vault off. Then the time of
# `scrollback media` on the last photo of the largest OpenCode session (read from its row by
# SQLite's blob I/O, checked whole, written out).
#
#   benches/opencode.sh [WORK_DIR [BINARY [RUNS [MB]]]]
#
# Defaults: a fresh temporary directory, a release build of this checkout, 5 runs, 1000 MB. The
# database and the corpus are kept in WORK_DIR and written only where missing. Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
binary=${2:-}
runs=${3:-5}
mb=${4:-1000}
mkdir -p "$work"
if [ -z "$binary" ]; then
  cargo build --release --quiet
  binary="${CARGO_TARGET_DIR:-target}/release/scrollback"
fi
[ -f "$work/opencode/opencode.db" ] || python3 benches/opencode.py gen "$work/opencode/opencode.db" "$mb"
[ -f "$work/opencode2/opencode.db" ] || python3 benches/opencode.py gen2 "$work/opencode2/opencode.db" "$mb"
[ -d "$work/claude" ] || python3 benches/gen_corpus.py image "$work/claude" "$mb" claude
unset SCROLLBACK_TRANSCRIPTS SCROLLBACK_DATA_DIR
python3 benches/opencode.py run "$binary" "$work" "$runs"
