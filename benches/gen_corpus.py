#!/usr/bin/env python3
"""Writes a synthetic transcript tree for benchmarks, shaped like Claude Code's.

  gen_corpus.py image OUT_DIR [MB]     image-heavy: user lines with ~1 MB pasted photos (default 300 MB)
  gen_corpus.py text  OUT_DIR [LINES]  text: user/assistant/tool lines, no photos (default 200000 lines)
  gen_corpus.py cjk   OUT_DIR [LINES]  the same lines in Chinese and Japanese, written without spaces
                                       and as UTF-8, as Claude Code writes them (default 50000 lines)
  gen_corpus.py codex OUT_DIR [MB]     Codex CLI rollouts (sessions/YYYY/MM/DD/rollout-*.jsonl) with
                                       photos as the image corpus has them: pasted ones (in the user's
                                       message, and repeated by its event, as Codex writes both) and
                                       screenshots in tool outputs (default 1000 MB)
  gen_corpus.py zst   IN_DIR OUT_DIR   the same tree with every rollout compressed as Codex does
                                       (zstd level 3, `<name>.jsonl.zst`); needs the `zstandard` module

Deterministic (seeded), so runs compare like with like.
"""
import base64
import json
import os
import random
import sys
import uuid

WORDS = ("the index keeps every line of the transcript and serves photos by seeking to their offset "
         "while scrolling back through history fetches one image at a time rust sqlite warp tokio "
         "function error result value table column query page cursor session entry media bytes").split()


CJK_WORDS = ("数据库 索引 性能 问题 修复 函数 返回 错误 检查 文件 会话 图片 历史 搜索 服务器 查询 "
             "データベース インデックス 再構築 写真 履歴 検索 サーバー 関数 エラー ファイル を の で して ください").split()

# The words and how they are joined, per corpus kind (set by main).
LANGUAGE = {"words": WORDS, "joiner": " "}


def sentence(rng, n):
    return LANGUAGE["joiner"].join(rng.choice(LANGUAGE["words"]) for _ in range(n))


def base_line(rng, session, kind, parent, n, cwd):
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session,
        "version": "2.1.39",
        "gitBranch": "main",
        "type": kind,
        "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
        "timestamp": "2026-01-%02dT%02d:%02d:%02d.%03dZ" % (1 + n // 86400 % 28, n // 3600 % 24, n // 60 % 60, n % 60, n % 1000),
    }


def image_corpus(out, megabytes):
    rng = random.Random(7)
    target = megabytes * 1_000_000
    written = 0
    files = 0
    while written < target:
        session = str(uuid.UUID(int=rng.getrandbits(128)))
        project = os.path.join(out, "-home-user-project-%d" % (files % 5))
        os.makedirs(project, exist_ok=True)
        path = os.path.join(project, session + ".jsonl")
        parent = None
        with open(path, "w") as f:
            for n in range(40):
                if n % 4 == 0:
                    photo = os.urandom(rng.randint(500_000, 950_000))
                    line = base_line(rng, session, "user", parent, n, "/home/user/project")
                    line["message"] = {"role": "user", "content": [
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                     "data": base64.b64encode(photo).decode()}},
                        {"type": "text", "text": "[Image #1] " + sentence(rng, 20)},
                    ]}
                else:
                    line = base_line(rng, session, "assistant", parent, n, "/home/user/project")
                    line["message"] = {"role": "assistant", "id": "msg_%d" % n, "model": "claude",
                                       "content": [{"type": "text", "text": sentence(rng, 60)}]}
                parent = line["uuid"]
                data = json.dumps(line, separators=(",", ":")) + "\n"
                f.write(data)
                written += len(data)
                if written >= target:
                    break
        files += 1


def text_corpus(out, lines):
    rng = random.Random(11)
    written = 0
    files = 0
    while written < lines:
        session = str(uuid.UUID(int=rng.getrandbits(128)))
        project = os.path.join(out, "-home-user-project-%d" % (files % 5))
        os.makedirs(project, exist_ok=True)
        parent = None
        with open(os.path.join(project, session + ".jsonl"), "w", encoding="utf-8") as f:
            for n in range(2000):
                kind = ("user", "assistant", "assistant", "user")[n % 4]
                line = base_line(rng, session, kind, parent, n, "/home/user/project")
                if n % 4 == 0:
                    line["message"] = {"role": "user", "content": sentence(rng, rng.randint(5, 40))}
                elif n % 4 == 1:
                    line["message"] = {"role": "assistant", "id": "msg_%d" % n, "model": "claude", "content": [
                        {"type": "thinking", "thinking": sentence(rng, 30), "signature": "sig"},
                        {"type": "text", "text": sentence(rng, rng.randint(20, 120))}]}
                elif n % 4 == 2:
                    line["message"] = {"role": "assistant", "id": "msg_%d" % n, "model": "claude", "content": [
                        {"type": "tool_use", "id": "toolu_%d" % n, "name": "Bash",
                         "input": {"command": "grep -rn " + rng.choice(LANGUAGE["words"]) + " src/"}}]}
                else:
                    out_text = "\n".join(sentence(rng, 12) for _ in range(rng.randint(1, 12)))
                    line["message"] = {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_%d" % (n - 1), "content": out_text}]}
                    line["toolUseResult"] = {"stdout": out_text, "stderr": "", "interrupted": False}
                parent = line["uuid"]
                f.write(json.dumps(line, separators=(",", ":"), ensure_ascii=LANGUAGE["joiner"] == " ") + "\n")
                written += 1
                if written >= lines:
                    break
        files += 1


def codex_line(n, kind, payload):
    ts = "2026-01-%02dT%02d:%02d:%02d.%03dZ" % (1 + n // 86400 % 28, n // 3600 % 24, n // 60 % 60, n % 60, n % 1000)
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload}, separators=(",", ":")) + "\n"


def codex_corpus(out, megabytes):
    rng = random.Random(13)
    target = megabytes * 1_000_000
    written = 0
    files = 0
    while written < target:
        thread = str(uuid.UUID(int=rng.getrandbits(128)))
        day = os.path.join(out, "sessions", "2026", "01", "%02d" % (1 + files % 28))
        os.makedirs(day, exist_ok=True)
        path = os.path.join(day, "rollout-2026-01-%02dT10-00-00-%s.jsonl" % (1 + files % 28, thread))
        with open(path, "w") as f:
            lines = [codex_line(0, "session_meta", {"id": thread, "cwd": "/home/user/project", "cli_version": "0.128.0",
                                                    "model_provider": "openai", "git": {"branch": "main"}})]
            # The first rollout is a long one (~230 MB; ~100 MB compressed, its photos repeated by their events): the last photo of a big
            # compressed rollout is timed on it.
            for n in range(1, 560 if files == 0 else 60):
                if n % 6 == 1:
                    url = "data:image/png;base64," + base64.b64encode(os.urandom(rng.randint(500_000, 950_000))).decode()
                    text = sentence(rng, 20)
                    lines.append(codex_line(n, "response_item", {"type": "message", "role": "user", "content": [
                        {"type": "input_text", "text": "<image name=[Image #1]>"}, {"type": "input_image", "image_url": url},
                        {"type": "input_text", "text": "</image>"}, {"type": "input_text", "text": text}]}))
                    lines.append(codex_line(n, "event_msg", {"type": "user_message", "message": text, "images": [url]}))
                elif n % 6 == 3:
                    lines.append(codex_line(n, "response_item", {"type": "function_call", "name": "view_image",
                                                                 "arguments": "{\"path\":\"shot.png\"}", "call_id": "c%d" % n}))
                    url = "data:image/png;base64," + base64.b64encode(os.urandom(rng.randint(200_000, 500_000))).decode()
                    lines.append(codex_line(n, "response_item", {"type": "function_call_output", "call_id": "c%d" % n, "output": [
                        {"type": "input_text", "text": "shot.png"}, {"type": "input_image", "image_url": url}]}))
                else:
                    text = sentence(rng, 60)
                    lines.append(codex_line(n, "response_item", {"type": "message", "role": "assistant",
                                                                 "content": [{"type": "output_text", "text": text}]}))
                    lines.append(codex_line(n, "event_msg", {"type": "agent_message", "message": text}))
                    lines.append(codex_line(n, "event_msg", {"type": "token_count", "info": {"total_token_usage": {
                        "input_tokens": 1000 * n, "cached_input_tokens": 500 * n, "output_tokens": 80 * n, "total_tokens": 1080 * n}}}))
            for line in lines:
                f.write(line)
                written += len(line)
                if written >= target:
                    break
        files += 1


def zst_corpus(src, out):
    import zstandard
    compressor = zstandard.ZstdCompressor(level=3)
    for d, _, names in os.walk(src):
        for name in names:
            if not name.endswith(".jsonl"):
                continue
            dest = os.path.join(out, os.path.relpath(d, src))
            os.makedirs(dest, exist_ok=True)
            with open(os.path.join(d, name), "rb") as f, open(os.path.join(dest, name + ".zst"), "wb") as g:
                compressor.copy_stream(f, g)


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("image", "text", "cjk", "codex", "zst"):
        sys.exit(__doc__)
    kind, out = sys.argv[1], sys.argv[2]
    if kind == "zst":
        zst_corpus(out, sys.argv[3])
        return
    os.makedirs(out, exist_ok=True)
    if kind == "codex":
        codex_corpus(out, int(sys.argv[3]) if len(sys.argv) > 3 else 1000)
    elif kind == "image":
        image_corpus(out, int(sys.argv[3]) if len(sys.argv) > 3 else 300)
    elif kind == "text":
        text_corpus(out, int(sys.argv[3]) if len(sys.argv) > 3 else 200_000)
    else:
        LANGUAGE.update(words=CJK_WORDS, joiner="")
        text_corpus(out, int(sys.argv[3]) if len(sys.argv) > 3 else 50_000)


if __name__ == "__main__":
    main()
