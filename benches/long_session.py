#!/usr/bin/env python3
"""What a line costs the writer in a long session, against a short one, side by side in one run.

    python3 benches/long_session.py BINARY [--long 50000] [--short 50] [--appends 20] [--file-lines 100000]

Each turn is what Claude Code writes for one exchange: the person's prompt, the answer (its
`usage` and `requestId`, a Bash call), the call's result, seven minutes after the last turn.

1. Appends: two sessions, of --short and --long entries, indexed by `scrollback index`; then
   `scrollback serve` over them. A turn (4 lines) is appended to each in turn, --appends times; for
   each, the server's CPU time (utime + stime from /proc/PID/stat, clock ticks) until the turn is
   found by a search for its own word, and the time from the write to that answer. Printed: the
   medians of each session and their difference.
2. One long file: --file-lines lines in one transcript against the same lines in 100 transcripts,
   each indexed by `serve` as it finds them (a live index, not a bulk load: the data directory
   already has an index), the time until every session's entries are counted by /api/sessions.

Everything runs in a temporary directory with HOME set inside it, on 127.0.0.1 only."""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

START = 1_796_083_200  # 2026-12-01T00:00:00Z


def stamp(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(seconds))


def turn(session, i, word="answer"):
    """Turn `i` of `session`: four lines, as Claude Code writes them."""
    at = START + i * 7 * 60
    base = {"sessionId": session, "cwd": "/w/app", "version": "2.1.3", "gitBranch": "main"}

    def line(kind, n, seconds, message, **extra):
        return json.dumps({**base, "type": kind, "uuid": f"{session}-{i}-{n}", "timestamp": stamp(at + seconds),
                           "message": message, **extra}) + "\n"

    return (line("user", 0, 0, {"role": "user", "content": f"question {i} about the parser"})
            + line("assistant", 1, 20, {
                "id": f"msg_{session}_{i}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": f"{word} {i}: the offset is read before the header"},
                            {"type": "tool_use", "id": f"toolu_{session}_{i}", "name": "Bash",
                             "input": {"command": "cargo test -p parser"}}],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 4, "cache_creation_input_tokens": 1200, "cache_read_input_tokens": 30000,
                          "output_tokens": 250, "service_tier": "standard"}}, requestId=f"req_{session}_{i}")
            + line("user", 2, 40, {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_{session}_{i}", "content": "test result: ok",
                 "is_error": False}]})
            + line("assistant", 3, 60, {
                "id": f"msg_{session}_{i}b", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "The tests pass."}], "stop_reason": "end_turn",
                "usage": {"input_tokens": 4, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 31200,
                          "output_tokens": 40, "service_tier": "standard"}}, requestId=f"req_{session}_{i}b"))


def ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def get(base, path):
    with urllib.request.urlopen(base + path, timeout=60) as r:
        return json.loads(r.read())


class Server:
    def __init__(self, binary, work, root, data):
        env = dict(os.environ, HOME=work, RUST_LOG="scrollback=warn", NO_COLOR="1")
        for var in ("SCROLLBACK_DATA_DIR", "SCROLLBACK_TRANSCRIPTS", "SCROLLBACK_LISTEN", "SCROLLBACK_TOKEN"):
            env.pop(var, None)
        self.proc = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0", "--root", f"claude:{root}",
                                      "--data-dir", data, "--vault", "off"],
                                     env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.base = None
        for line in self.proc.stderr:
            m = re.match(r"(http://127\.0\.0\.1:\d+)/\s*$", line)
            if m:
                self.base = m.group(1)
                break
        if self.base is None:
            sys.exit("scrollback serve exited before listening")
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def found(server, word):
    answer = get(server.base, f"/api/search?q={urllib.parse.quote(word)}&limit=1")
    return bool(answer.get("hits") or answer.get("sessions"))


def appends(binary, work, short, long_, n):
    root = os.path.join(work, "appends")
    os.makedirs(os.path.join(root, "p"))
    paths = {}
    for name, entries in (("short", short), ("long", long_)):
        paths[name] = os.path.join(root, "p", f"{name}.jsonl")
        with open(paths[name], "w") as f:
            for i in range(max(1, entries // 4)):
                f.write(turn(name, i))
    data = os.path.join(work, "appends-data")
    subprocess.run([binary, "index", "--root", f"claude:{root}", "--data-dir", data, "--vault", "off"],
                   check=True, capture_output=True, env=dict(os.environ, HOME=work))
    server = Server(binary, work, root, data)
    cost = {"short": [], "long": []}
    seen = {"short": [], "long": []}
    try:
        for k in range(n):
            for name, entries in (("short", short), ("long", long_)):
                word = f"zq{name}{k}x"
                before = ticks(server.proc.pid)
                wrote = time.monotonic()
                with open(paths[name], "a") as f:
                    f.write(turn(name, entries // 4 + k, word))
                while not found(server, word):
                    if time.monotonic() - wrote > 60:
                        sys.exit(f"the turn appended to the {name} session was not found in 60 s")
                    time.sleep(0.002)
                seen[name].append(time.monotonic() - wrote)
                time.sleep(0.3)  # the writer's work after the answer, and the server at rest again
                cost[name].append(ticks(server.proc.pid) - before)
    finally:
        server.close()
    hz = os.sysconf("SC_CLK_TCK")
    print(f"a turn appended to a session of {short} entries and to one of {long_}, {n} times each, side by side:")
    for name, entries in (("short", short), ("long", long_)):
        print(f"  {entries:>7} entries: CPU {1000 * statistics.mean(cost[name]) / hz:6.1f} ms (mean), "
              f"found by search after {1000 * statistics.median(seen[name]):6.1f} ms (median)")
    print(f"  difference: CPU {1000 * (statistics.mean(cost['long']) - statistics.mean(cost['short'])) / hz:.1f} ms, "
          f"found {1000 * (statistics.median(seen['long']) - statistics.median(seen['short'])):.1f} ms")


def one_file(binary, work, lines):
    turns = lines // 4
    results = {}
    for shape, files in (("one file", 1), ("100 files", 100)):
        root = os.path.join(work, f"tree-{files}")
        os.makedirs(os.path.join(root, "p"))
        data = os.path.join(work, f"data-{files}")
        # An index that already exists (of one small session): what follows is live indexing.
        with open(os.path.join(root, "p", "seed.jsonl"), "w") as f:
            f.write(turn("seed", 0))
        subprocess.run([binary, "index", "--root", f"claude:{root}", "--data-dir", data, "--vault", "off"],
                       check=True, capture_output=True, env=dict(os.environ, HOME=work))
        server = Server(binary, work, root, data)
        try:
            staging = os.path.join(work, f"staging-{files}")
            os.makedirs(staging)
            per = turns // files
            for j in range(files):
                with open(os.path.join(staging, f"s{j}.jsonl"), "w") as f:
                    for i in range(per):
                        f.write(turn(f"s{j}", i))
            before = ticks(server.proc.pid)
            start = time.monotonic()
            for j in range(files):
                os.rename(os.path.join(staging, f"s{j}.jsonl"), os.path.join(root, "p", f"s{j}.jsonl"))
            want = files * per * 4
            while True:
                listed = get(server.base, "/api/sessions?limit=200")["sessions"]
                if sum(s["entries"] for s in listed if s["id"] != "seed") >= want:
                    break
                if time.monotonic() - start > 600:
                    sys.exit(f"{shape}: not indexed in 600 s")
                time.sleep(0.05)
            results[shape] = (time.monotonic() - start, (ticks(server.proc.pid) - before) / os.sysconf("SC_CLK_TCK"))
        finally:
            server.close()
    print(f"{lines} lines indexed live by serve:")
    for shape, (wall, cpu) in results.items():
        print(f"  {shape:>9}: {wall:6.2f} s wall, {cpu:6.2f} s CPU")
    print(f"  one file / 100 files: {results['one file'][0] / results['100 files'][0]:.2f}x wall")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("--short", type=int, default=50)
    ap.add_argument("--long", type=int, default=50000)
    ap.add_argument("--appends", type=int, default=20)
    ap.add_argument("--file-lines", type=int, default=100000)
    ap.add_argument("--skip-file", action="store_true", help="measure the appends only")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="long-session-")
    try:
        appends(args.binary, work, args.short, args.long, args.appends)
        if not args.skip_file:
            one_file(args.binary, work, args.file_lines)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
