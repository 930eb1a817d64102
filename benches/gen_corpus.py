#!/usr/bin/env python3
"""Writes a synthetic transcript tree for benchmarks, shaped like Claude Code's.

  gen_corpus.py image OUT_DIR [MB]     image-heavy: user lines with ~1 MB pasted photos (default 300 MB)
  gen_corpus.py text  OUT_DIR [LINES]  text: user/assistant/tool lines, no photos (default 200000 lines)
  gen_corpus.py cjk   OUT_DIR [LINES]  the same lines in Chinese and Japanese, written without spaces
                                       and as UTF-8, as Claude Code writes them (default 50000 lines)

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


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("image", "text", "cjk"):
        sys.exit(__doc__)
    kind, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    if kind == "image":
        image_corpus(out, int(sys.argv[3]) if len(sys.argv) > 3 else 300)
    elif kind == "text":
        text_corpus(out, int(sys.argv[3]) if len(sys.argv) > 3 else 200_000)
    else:
        LANGUAGE.update(words=CJK_WORDS, joiner="")
        text_corpus(out, int(sys.argv[3]) if len(sys.argv) > 3 else 50_000)


if __name__ == "__main__":
    main()
