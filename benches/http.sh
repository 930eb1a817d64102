#!/usr/bin/env bash
# The HTTP hot paths, side by side in one run (issue #4):
#   1. one 1 MB photo through /api/session-media/... against the same photo, pre-decoded, as a
#      static file served by nginx (Debian nginx-light) on loopback: wrk requests/s;
#   2. a history page of 100 entries from a 100,000-entry session: wrk latency percentiles;
#   3. the server's peak RSS while 64 connections download a 20 MB photo.
#
#   benches/http.sh [WORK_DIR]
#
# Installs wrk and nginx-light with apt-get if they are missing. Builds scrollback in release mode.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
mkdir -p "$work"
if ! command -v wrk > /dev/null || ! command -v nginx > /dev/null; then
  apt-get update -qq && apt-get install -y -qq wrk nginx-light > /dev/null
fi
cargo build --release --quiet
python3 benches/http_bench.py target/release/scrollback "$work"
