#!/usr/bin/env python3
"""The time of a `search_history` call over MCP, beside `/api/search` over HTTP, on one index.

    python3 benches/mcp_search.py BIN DATA_DIR TRANSCRIPTS [ROUNDS]

DATA_DIR is an index of the Claude Code tree TRANSCRIPTS, as benches/compare.sh leaves them (its
text corpus: `$work/data-text` and `$work/text`). Starts `BIN serve` on the index (the writer),
then `BIN mcp` over stdio with the official Python SDK (`pip install mcp`) as a reader beside it,
and times each query ROUNDS times (default 20) both ways, alternating: the median and p90 of a call,
as the client sees it (JSON-RPC over a pipe, against an HTTP GET). Everything is on 127.0.0.1.
"""

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

QUERIES = ["index", "photos seeking", "\"one image at a time\"", "cursor OR page", "tok*", "sqlite warp", "media bytes"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


async def main():
    bin_, data, tree = sys.argv[1], sys.argv[2], sys.argv[3]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 20
    port = free_port()
    home = tempfile.mkdtemp()
    env = {"HOME": home, "PATH": os.environ["PATH"], "RUST_LOG": "scrollback=warn"}
    serve = subprocess.Popen(
        [bin_, "serve", "--data-dir", data, "--root", f"claude:{tree}", "--listen", f"127.0.0.1:{port}"],
        env=env, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"{base}/api/sessions?limit=1", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        params = StdioServerParameters(command=bin_, args=["mcp", "--data-dir", data, "--root", f"claude:{tree}"], env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                mcp_times, http_times, hits = [], [], {}
                for q in QUERIES:
                    args = {"query": q, "limit": 20, "include_active": True}
                    # Warm both (the page cache, SQLite's) before timing.
                    await session.call_tool("search_history", args)
                    urllib.request.urlopen(f"{base}/api/search?limit=20&q={urllib.parse.quote(q)}").read()
                    for _ in range(rounds):
                        t = time.perf_counter()
                        r = await session.call_tool("search_history", args)
                        mcp_times.append(time.perf_counter() - t)
                        t = time.perf_counter()
                        body = urllib.request.urlopen(f"{base}/api/search?limit=20&q={urllib.parse.quote(q)}").read()
                        http_times.append(time.perf_counter() - t)
                    assert not r.is_error, r
                    same = [(h["sessionId"], h["cursor"]) for h in r.structured_content["hits"]] == [
                        (h["sessionId"], h["cursor"]) for h in json.loads(body)["hits"]]
                    hits[q] = (len(r.structured_content["hits"]), same)
    finally:
        serve.terminate()
        serve.wait()
    for q, (n, same) in hits.items():
        print(f"{q!r}: {n} hits, the same as /api/search: {same}")
    print(f"search_history over MCP (stdio): median {statistics.median(mcp_times) * 1000:.2f} ms, "
          f"p90 {pct(mcp_times, 0.9) * 1000:.2f} ms, {len(mcp_times)} calls")
    print(f"/api/search over HTTP:           median {statistics.median(http_times) * 1000:.2f} ms, "
          f"p90 {pct(http_times, 0.9) * 1000:.2f} ms, {len(http_times)} calls")


asyncio.run(main())
