#!/usr/bin/env bash
# Two builds' pushes of one tree, side by side: each build indexes TREE (as Claude Code's, vault
# off) into a data directory of its own, then pushes it RUNS times into a fresh database of a
# throwaway PostgreSQL cluster, the builds taking turns; prints each push's wall, user and system
# time and peak RSS, then the size of each build's first hub.
#
#   benches/push_pair.sh TREE RUNS BEFORE_BINARY AFTER_BINARY
#
# Needs Debian's postgresql package (run as root, the cluster runs as the `postgres` user, as in
# push.sh). A tree with usage and tool calls: `python3 benches/gen_corpus.py --profile text --seed 11
# --sessions 2000 --lines-per-session 60 TREE`.
set -euo pipefail
[ $# -eq 4 ] || { sed -n 2,11p "$0" >&2; exit 2; }
tree=$1 runs=$2 before=$3 after=$4
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
[ -x "$pgbin/initdb" ] || { echo "needs PostgreSQL (apt install postgresql)" >&2; exit 1; }
work=$(mktemp -d /tmp/scrollback-push-pair.XXXXXX)
as=()
if [ "$(id -u)" = 0 ]; then chown postgres "$work"; as=(runuser -u postgres --); fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"${as[@]}" "$pgbin/initdb" -D "$work/pg" -U hub --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
"${as[@]}" "$pgbin/pg_ctl" -D "$work/pg" -l "$work/log" -o "-p $port -k $work -c listen_addresses=127.0.0.1" -w start >/dev/null
trap '"${as[@]}" "$pgbin/pg_ctl" -D "$work/pg" -m fast -w stop >/dev/null; rm -rf "$work"' EXIT
for build in before after; do
  "${!build}" index --data-dir "$work/data-$build" --root "claude:$tree" --vault off >/dev/null 2>&1
done
for run in $(seq 1 "$runs"); do
  for build in before after; do
    db="hub_${build}_$run"
    psql -q -h 127.0.0.1 -p "$port" -U hub -d postgres -c "CREATE DATABASE $db" >/dev/null
    /usr/bin/time -o "$work/time" -f "%e s wall, %U s user, %S s system, %M KB peak RSS" \
      "${!build}" push --data-dir "$work/data-$build" --postgres "postgres://hub@127.0.0.1:$port/$db" --host bench >/dev/null
    echo "$build, run $run: $(cat "$work/time")"
  done
done
for build in before after; do
  echo "$build's hub: $(psql -h 127.0.0.1 -p "$port" -U hub -d postgres -Atc "SELECT pg_size_pretty(pg_database_size('hub_${build}_1'))")"
done
