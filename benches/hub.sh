#!/usr/bin/env bash
# Reading a team's hub: search and a history page from `scrollback serve --postgres` beside the
# local `scrollback serve` on the same entries, side by side in one run, on search.sh's tree (a heavy
# user's year: 20,000 Claude Code sessions, about 1.2 million entries). The index is pushed into a
# fresh database of a throwaway PostgreSQL cluster on this machine (Debian's postgresql package; run
# as the `postgres` user when this runs as root), then benches/search_bench.py times both servers
# (`--hub`), taking turns, and prints p50 and p99 per query and the push's time. agentsview 0.46.1
# (from PyPI, as search.sh installs it) runs beside them, locally and from PostgreSQL (`agentsview pg
# push` into another database of the same cluster, `agentsview pg serve`), unless NO_AGENTSVIEW=1.
#
#   benches/hub.sh [WORK_DIR [SCROLLBACK_BINARY [OPTIONS]]]
#       (default: target/bench/search, a release build; OPTIONS go to benches/search_bench.py, as
#        search.sh's: --runs N, --sessions N, ...)
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-${CARGO_TARGET_DIR:-target}/bench/search}
mkdir -p "$work"
bin=${2:-}
if [ -z "$bin" ]; then
  cargo build --release --quiet
  bin="${CARGO_TARGET_DIR:-target}/release/scrollback"
fi
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
[ -x "$pgbin/initdb" ] || { echo "needs PostgreSQL (apt install postgresql)" >&2; exit 1; }
pg=$(mktemp -d /tmp/scrollback-hub-bench.XXXXXX)
as=()
if [ "$(id -u)" = 0 ]; then chown postgres "$pg"; as=(runuser -u postgres --); fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"${as[@]}" "$pgbin/initdb" -D "$pg/data" -U hub --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
"${as[@]}" "$pgbin/pg_ctl" -D "$pg/data" -l "$pg/log" -o "-p $port -k $pg -c listen_addresses=127.0.0.1" -w start >/dev/null
trap '"${as[@]}" "$pgbin/pg_ctl" -D "$pg/data" -m fast -w stop >/dev/null; rm -rf "$pg"' EXIT
psql -q -h 127.0.0.1 -p "$port" -U hub -d postgres -c "CREATE DATABASE bench_hub" -c "CREATE DATABASE bench_agentsview" >/dev/null
hub="postgres://hub@127.0.0.1:$port/bench_hub"
if [ "${NO_AGENTSVIEW:-}" = 1 ]; then
  python3 benches/search_bench.py "$bin" "$work" --no-agentsview --hub "$hub" "${@:3}"
else
  av=${AGENTSVIEW:-agentsview}
  if ! "$av" --version 2>/dev/null | grep -q 'v0\.46\.1\b'; then
    python3 -m pip install --quiet agentsview==0.46.1
    av=agentsview
  fi
  python3 benches/search_bench.py "$bin" "$work" --agentsview "$av" --hub "$hub" \
    --agentsview-pg "postgres://hub@127.0.0.1:$port/bench_agentsview?sslmode=disable" "${@:3}"
fi
