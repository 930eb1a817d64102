#!/usr/bin/env python3
"""The export's memory: peak RSS of `scrollback export` for sessions of 250, 1,000 and 4,000 photos.

    python3 benches/export_bench.py BIN [PHOTO_KB]

Writes one Claude Code session per size into a temporary tree (each photo a distinct PNG of about
PHOTO_KB KiB, default 40, pasted by the person with a line of text, and an answer after it), indexes
the tree with `BIN index`, then runs `BIN export SESSION --format F -o PATH` for html, md and jsonl,
three times each, and prints each run's peak RSS and time beside the session's size. The peak is
GNU time's `%M` (`apt-get install time`): a child's own `ru_maxrss` from Python's wait4 would start at
Python's size, since Linux carries the forking process's high-water mark across `execve`. Photos are streamed into the file one at a time, so the peak should stay
flat as the session grows; a peak that grows with the session is the defect this measures.
"""

import base64
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib

SIZES = [250, 1000, 4000]


def png(seed, kib):
    """A valid RGB PNG of random pixels, about `kib` KiB (noise does not compress)."""
    side = max(8, int((kib * 1024 / 3) ** 0.5))
    rows = b"".join(b"\x00" + os.urandom(side * 3) for _ in range(side))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 1)) + chunk(b"IEND", b"")


def write_session(path, session, photos, kib):
    with open(path, "w") as f:
        parent = None
        for i in range(photos):
            uuid = f"{session[:8]}-0000-4000-8000-{i:012}"
            ts = f"2026-11-01T{10 + i // 3600 % 10:02}:{i // 60 % 60:02}:{i % 60:02}.000Z"
            data = base64.b64encode(png(i, kib)).decode()
            user = {"type": "user", "sessionId": session, "uuid": uuid, "parentUuid": parent, "timestamp": ts,
                    "cwd": "/work/bench", "message": {"role": "user", "content": [
                        {"type": "text", "text": f"photo {i}: what is in it?"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}]}}
            answer = {"type": "assistant", "sessionId": session, "uuid": uuid[:-12] + f"{i + 500000:012}",
                      "parentUuid": uuid, "timestamp": ts, "message": {"role": "assistant", "model": "claude-opus-4-6",
                                                                       "content": [{"type": "text", "text": f"**Noise** number {i}."}]}}
            f.write(json.dumps(user, separators=(",", ":")) + "\n")
            f.write(json.dumps(answer, separators=(",", ":")) + "\n")
            parent = answer["uuid"]


GNU_TIME = "/usr/bin/time"


def run(cmd, env, work):
    """Runs `cmd`, and answers its wall time and its peak RSS in MiB."""
    report = os.path.join(work, "time.out")
    started = time.perf_counter()
    done = subprocess.run([GNU_TIME, "-f", "%M", "-o", report, *cmd], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{done.stderr.decode(errors='replace')}")
    with open(report) as f:
        return elapsed, int(f.read().split()[-1]) / 1024


def main():
    binary = os.path.abspath(sys.argv[1])
    if not os.access(GNU_TIME, os.X_OK):
        sys.exit(f"{GNU_TIME} (GNU time) is needed for the peak RSS: apt-get install time")
    kib = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    with tempfile.TemporaryDirectory() as work:
        transcripts = os.path.join(work, ".claude", "projects")
        os.makedirs(os.path.join(transcripts, "bench"))
        sessions = {}
        for n in SIZES:
            session = f"e{n:07}-0000-4000-8000-000000000000"
            path = os.path.join(transcripts, "bench", f"{session}.jsonl")
            write_session(path, session, n, kib)
            sessions[n] = (session, os.path.getsize(path))
        env = dict(os.environ, HOME=work, SCROLLBACK_DATA_DIR=os.path.join(work, "data"), RUST_LOG="scrollback=error")
        for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
            env.pop(var, None)
        subprocess.run([binary, "index", "--transcripts", transcripts], env=env, check=True, stdout=subprocess.DEVNULL)
        print(f"{'photos':>7} {'session':>9} {'format':>6}  peak RSS (MiB), 3 runs   median time")
        for n in SIZES:
            session, size = sessions[n]
            for fmt in ("html", "md", "jsonl"):
                out = os.path.join(work, f"out-{n}.{fmt}")
                runs = [run([binary, "export", session, "--format", fmt, "-o", out], env, work) for _ in range(3)]
                peaks = " ".join(f"{rss:6.1f}" for _, rss in runs)
                print(f"{n:>7} {size / 2**20:7.1f}MB {fmt:>6}  {peaks}       {statistics.median(t for t, _ in runs):.2f} s"
                      f"  ({os.path.getsize(out) / 2**20:.1f} MB file{', photos beside it' if fmt == 'md' else ''})")


if __name__ == "__main__":
    main()
