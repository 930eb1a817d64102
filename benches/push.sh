#!/usr/bin/env bash
# Push throughput to a hub (`scrollback push`), on compare.sh's text and image corpora: each corpus
# is indexed, then pushed into a fresh database of a throwaway PostgreSQL cluster (Debian's
# postgresql package; run as the `postgres` user when this runs as root), then pushed again with
# nothing new. Prints, per corpus, the index's time beside the push's (one run, side by side), lines
# and megabytes a second, and the no-op push's time.
#
#   benches/push.sh [WORK_DIR [SCROLLBACK_BINARY]]   (default: a fresh temporary directory, a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
mkdir -p "$work"
bin=${2:-}
if [ -z "$bin" ]; then
  cargo build --release --quiet
  bin="${CARGO_TARGET_DIR:-target}/release/scrollback"
fi
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
[ -x "$pgbin/initdb" ] || { echo "needs PostgreSQL (apt install postgresql)" >&2; exit 1; }
[ -d "$work/image" ] || python3 benches/gen_corpus.py image "$work/image" 300
[ -d "$work/text" ] || python3 benches/gen_corpus.py text "$work/text" 200000

pg=$(mktemp -d /tmp/scrollback-push-bench.XXXXXX)
as=()
if [ "$(id -u)" = 0 ]; then chown postgres "$pg"; as=(runuser -u postgres --); fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"${as[@]}" "$pgbin/initdb" -D "$pg/data" -U hub --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
"${as[@]}" "$pgbin/pg_ctl" -D "$pg/data" -l "$pg/log" -o "-p $port -k $pg -c listen_addresses=127.0.0.1" -w start >/dev/null
trap '"${as[@]}" "$pgbin/pg_ctl" -D "$pg/data" -m fast -w stop >/dev/null; rm -rf "$pg"' EXIT

now() { date +%s.%N; }
printf '%-7s %10s %10s %10s %12s %10s %10s\n' corpus lines MB index_s push_s lines/s MB/s
for corpus in text image; do
  data="$work/data-$corpus"
  rm -rf "$data"
  psql -q -h 127.0.0.1 -p "$port" -U hub -d postgres -c "CREATE DATABASE bench_$corpus" >/dev/null
  t0=$(now)
  "$bin" index --data-dir "$data" --root "claude:$work/$corpus" >/dev/null
  t1=$(now)
  "$bin" push --data-dir "$data" --postgres "postgres://hub@127.0.0.1:$port/bench_$corpus" --host bench > "$work/push-$corpus.out"
  t2=$(now)
  "$bin" push --data-dir "$data" --postgres "postgres://hub@127.0.0.1:$port/bench_$corpus" --host bench > "$work/noop-$corpus.out"
  t3=$(now)
  lines=$(psql -At -h 127.0.0.1 -p "$port" -U hub -d "bench_$corpus" -c "SELECT count(*) FROM entries")
  mb=$(du -sm "$work/$corpus" | cut -f1)
  python3 - "$corpus" "$lines" "$mb" "$t0" "$t1" "$t2" "$t3" <<'PY'
import sys
corpus, lines, mb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
t0, t1, t2, t3 = map(float, sys.argv[4:])
push = t2 - t1
print(f"{corpus:<7} {lines:>10} {mb:>10} {t1 - t0:>10.2f} {push:>12.2f} {lines / push:>10.0f} {mb / push:>10.1f}   (no-op push {t3 - t2:.2f} s; push/index {push / (t1 - t0):.1f}x)")
PY
  cat "$work/push-$corpus.out"
done
