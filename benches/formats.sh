#!/usr/bin/env bash
# Times `scrollback index` on compare.sh's image corpus (~300 MB, mostly base64 photos) written in
# each agent's JSONL format: the same sessions, texts and photos as Claude Code's, as Codex, Gemini
# CLI, Qwen Code, Factory Droid, Pi and Copilot CLI write them (`gen_corpus.py image OUT MB FORMAT`).
# Each format is indexed as `--root FORMAT:DIR` from an empty data directory with `--vault off`,
# RUNS times, the formats taking turns (so that a slow minute on a shared machine falls on all of
# them). Prints each format's median time, MB/s, peak RSS and photos indexed, and its throughput
# against Claude Code's. Cursor keeps no photos in its transcripts, so it has no image corpus.
#
#   benches/formats.sh [WORK_DIR [BINARY [RUNS]]]
#
# Defaults: a fresh temporary directory, a release build of this checkout, 7 runs. The corpora
# (~2.4 GB: Codex's is twice the others, as it writes each pasted photo twice) are kept in WORK_DIR
# and written only where missing. Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
binary=${2:-}
runs=${3:-7}
mkdir -p "$work"
if [ -z "$binary" ]; then
  cargo build --release --quiet
  binary="${CARGO_TARGET_DIR:-target}/release/scrollback"
fi
formats="claude codex gemini qwen droid pi copilot"
for f in $formats; do
  [ -d "$work/$f" ] || python3 benches/gen_corpus.py image "$work/$f" 300 "$f"
done
# Only the root given is read.
unset SCROLLBACK_TRANSCRIPTS SCROLLBACK_DATA_DIR
python3 benches/formats.py "$binary" "$work" "$runs" $formats
