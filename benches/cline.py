#!/usr/bin/env python3
"""What a rewrite of a long Cline task costs the writer.

`cline.py BINARY [MESSAGES] [RUNS]`: writes a Cline task of MESSAGES messages (default 2,000) into
a temporary `tasks/` folder as the extension writes it (`api_conversation_history.json`, one JSON
array, compact; the person's turns with the editor's state, a 200 KB photo every hundredth; the
answers with a tool call; `ui_messages.json` with an API request's counts per answer), indexes it
from an empty data directory (vault off), then writes the conversation again with one more message,
as the extension does after each, and indexes that: the file is read again whole. Prints the
median of RUNS (default 3) of both, and the size of the file read again.

The extension writes its task files whole, so each change is read whole: a task's rewrite costs in
proportion to its length, and its life in proportion to the square of it."""
import base64
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def write_task(task, messages):
    random.seed(1)
    os.makedirs(task, exist_ok=True)
    photo = base64.b64encode(random.randbytes(200_000)).decode()
    words = "the quick brown fox jumps over a lazy dog while parsing lines of code in rust and python".split()
    conversation, panel = [], []
    t = 1_780_308_000_000
    for i in range(messages):
        text = " ".join(random.choice(words) for _ in range(120))
        if i % 2 == 0:
            content = [
                {"type": "text", "text": f"<feedback>\n{text}\n</feedback>"},
                {"type": "text", "text": "<environment_details>\n# Current Working Directory (/w/app) Files\nsrc/\n</environment_details>"},
            ]
            if i % 100 == 0:
                content.insert(1, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": photo}})
            conversation.append({"role": "user", "ts": t + i * 1000, "content": content})
        else:
            conversation.append({"role": "assistant", "id": f"a{i}", "ts": t + i * 1000, "content": [
                {"type": "text", "text": text},
                {"type": "tool_use", "id": f"t{i}", "name": "read_file", "input": {"path": "src/lib.rs"}}]})
            counts = {"request": text[:200], "tokensIn": 10, "tokensOut": 100, "cacheWrites": 0, "cacheReads": 5000}
            panel.append({"ts": t + i * 1000, "type": "say", "say": "api_req_started", "text": json.dumps(counts)})
            panel.append({"ts": t + i * 1000 + 1, "type": "say", "say": "text", "text": text})
    with open(os.path.join(task, "api_conversation_history.json"), "w") as f:
        json.dump(conversation, f, separators=(",", ":"))
    with open(os.path.join(task, "ui_messages.json"), "w") as f:
        json.dump(panel, f, separators=(",", ":"))
    return conversation


def index(binary, tasks, data):
    start = time.monotonic()
    subprocess.run([binary, "index", "--root", f"cline:{tasks}", "--data-dir", data, "--vault", "off"],
                   check=True, capture_output=True)
    return time.monotonic() - start


def main():
    binary = os.path.abspath(sys.argv[1])
    messages = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    first, again = [], []
    with tempfile.TemporaryDirectory() as work:
        tasks = os.path.join(work, "tasks")
        task = os.path.join(tasks, "1780308000000")
        api = os.path.join(task, "api_conversation_history.json")
        for _ in range(runs):
            shutil.rmtree(tasks, ignore_errors=True)
            data = os.path.join(work, "data")
            shutil.rmtree(data, ignore_errors=True)
            conversation = write_task(task, messages)
            first.append(index(binary, tasks, data))
            conversation.append({"role": "assistant", "id": "last", "ts": 1_780_400_000_000,
                                 "content": [{"type": "text", "text": "one more"}]})
            with open(api, "w") as f:
                json.dump(conversation, f, separators=(",", ":"))
            again.append(index(binary, tasks, data))
        size = os.path.getsize(api)
    print(f"a Cline task of {messages} messages ({size / 1e6:.1f} MB): indexed in {statistics.median(first):.2f} s, "
          f"written again with one more message and read again whole in {statistics.median(again):.2f} s "
          f"(medians of {runs}, whole process)")


if __name__ == "__main__":
    main()
