#!/usr/bin/env python3
"""The usage ledger's speed: `GET /api/usage` over N API responses, and ccusage on the same tree.

    python3 benches/usage_bench.py BIN [N] [CCUSAGE]

Writes a Claude Code tree of N responses (default 100,000; each streamed as two lines, the way
Claude Code writes a response of two blocks, over 200 sessions, 60 days and 3 models) into a
temporary directory, indexes it with `BIN index`, then starts `BIN serve` on it and times
`/api/usage?by=day` (and by session and model) 20 times each: the median and p90 of the answer as a
client on 127.0.0.1 sees it. With CCUSAGE (the path of a ccusage binary, e.g.
tests/ccusage/node_modules/.bin/ccusage after `npm install --prefix tests/ccusage --no-save`), also times
`ccusage daily --json --offline` and `BIN usage --json` on the same tree, 3 times each, alternating,
and checks that their daily totals agree. Lines are written as Claude Code writes them, compact JSON
(ccusage 20.0.24 finds no usage in lines with a space after `:` and `,`).
"""

import datetime
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

MODELS = ["claude-opus-4-6", "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"]


def port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def write_tree(root, n):
    per_session = max(1, n // 200)
    written = 0
    session = 0
    while written < n:
        path = os.path.join(root, "projects", "bench", f"s{session:04}.jsonl")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            for i in range(min(per_session, n - written)):
                k = written + i
                day = datetime.date(2026, 1, 1) + datetime.timedelta(days=k % 60)
                ts = f"{day.isoformat()}T12:{k % 60:02}:00.000Z"
                for block, out in ((0, 3), (1, 40 + k % 500)):
                    line = {
                        "type": "assistant", "sessionId": f"s{session:04}", "uuid": f"u{k}-{block}", "timestamp": ts,
                        "cwd": f"/work/p{session % 7}", "requestId": f"req_{k}",
                        "message": {"id": f"msg_{k}", "type": "message", "role": "assistant", "model": MODELS[k % 3],
                                    "content": [{"type": "text", "text": "ok"}],
                                    "usage": {"input_tokens": 5 + k % 7, "output_tokens": out,
                                              "cache_read_input_tokens": 1000 + k % 5000,
                                              "cache_creation_input_tokens": k % 300}},
                    }
                    f.write(json.dumps(line, separators=(",", ":")) + "\n")
        written += per_session
        session += 1


def median_p90(values):
    values = sorted(values)
    return statistics.median(values), values[int(0.9 * (len(values) - 1))]


def main():
    binary = os.path.abspath(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    ccusage = sys.argv[3] if len(sys.argv) > 3 else None
    with tempfile.TemporaryDirectory() as work:
        write_tree(os.path.join(work, ".claude"), n)
        env = dict(os.environ, HOME=work, CLAUDE_CONFIG_DIR=os.path.join(work, ".claude"),
                   SCROLLBACK_DATA_DIR=os.path.join(work, "data"), RUST_LOG="scrollback=error")
        env.pop("CODEX_HOME", None)
        env.pop("GEMINI_CLI_HOME", None)
        transcripts = os.path.join(work, ".claude", "projects")
        started = time.perf_counter()
        subprocess.run([binary, "index", "--transcripts", transcripts], env=env, check=True, stdout=subprocess.DEVNULL)
        print(f"index of {n} responses ({2 * n} lines): {time.perf_counter() - started:.2f} s")
        listen = f"127.0.0.1:{port()}"
        server = subprocess.Popen([binary, "serve", "--transcripts", transcripts, "--listen", listen], env=env,
                                  stderr=subprocess.DEVNULL)
        try:
            base = f"http://{listen}"
            for _ in range(300):
                try:
                    urllib.request.urlopen(f"{base}/api/info", timeout=1)
                    break
                except OSError:
                    time.sleep(0.1)
            for by in ["day", "session", "model"]:
                times = []
                for _ in range(20):
                    t = time.perf_counter()
                    body = json.load(urllib.request.urlopen(f"{base}/api/usage?by={by}", timeout=30))
                    times.append((time.perf_counter() - t) * 1000)
                assert body["total"]["responses"] == n, body["total"]
                med, p90 = median_p90(times)
                print(f"GET /api/usage?by={by}: median {med:.1f} ms, p90 {p90:.1f} ms ({len(body['rows'])} rows)")
        finally:
            server.terminate()
            server.wait()
        if ccusage:
            ours_t, theirs_t = [], []
            for _ in range(3):
                t = time.perf_counter()
                ours = json.loads(subprocess.run([binary, "usage", "--json"], env=env, check=True,
                                                 capture_output=True).stdout)
                ours_t.append(time.perf_counter() - t)
                t = time.perf_counter()
                theirs = json.loads(subprocess.run([ccusage, "daily", "--json", "--offline", "--timezone", "UTC"],
                                                   env=env, check=True, capture_output=True).stdout)
                theirs_t.append(time.perf_counter() - t)
            a = {r["key"]: r["outputTokens"] for r in ours["rows"]}
            b = {d["period"]: d["outputTokens"] for d in theirs["daily"]}
            print(f"`scrollback usage --json` median {statistics.median(ours_t):.3f} s; "
                  f"`ccusage daily --json --offline` median {statistics.median(theirs_t):.3f} s; "
                  f"ratio {statistics.median(theirs_t) / statistics.median(ours_t):.1f}x; "
                  f"daily output tokens {'agree' if a == b else 'DIFFER'}")
            for day in sorted(set(a) | set(b)):
                if a.get(day) != b.get(day):
                    print(f"  {day}: scrollback {a.get(day)}, ccusage {b.get(day)}")


if __name__ == "__main__":
    main()
