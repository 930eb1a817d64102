#!/usr/bin/env python3
"""Writes a synthetic transcript tree for benchmarks, shaped like Claude Code's.

  gen_corpus.py image OUT_DIR [MB [FORMAT]]
                                       image-heavy: user lines with ~1 MB pasted photos (default 300 MB),
                                       in the JSONL format of FORMAT: claude (the default), codex, gemini,
                                       qwen, droid, pi or copilot; the same sessions, texts and photos in
                                       each, laid out as that agent's root holds them (cursor keeps no
                                       photos in its transcripts, so it has no image corpus)
  gen_corpus.py text  OUT_DIR [LINES]  text: user/assistant/tool lines, no photos (default 200000 lines:
                                       100 sessions of 2,000), every answer with its usage and requestId
  gen_corpus.py cjk   OUT_DIR [LINES]  the same lines in Chinese and Japanese, written without spaces
                                       and as UTF-8, as Claude Code writes them (default 50000 lines)
  gen_corpus.py codex OUT_DIR [MB]     Codex CLI rollouts (sessions/YYYY/MM/DD/rollout-*.jsonl) with
                                       photos as the image corpus has them: pasted ones (in the user's
                                       message, and repeated by its event, as Codex writes both) and
                                       screenshots in tool outputs (default 1000 MB)
  gen_corpus.py zst   IN_DIR OUT_DIR   the same tree with every rollout compressed as Codex does
                                       (zstd level 3, `<name>.jsonl.zst`); needs the `zstandard` module
  gen_corpus.py gemini-rewinds OUT_DIR [TURNS]
                                       one Gemini CLI chat (`demo/chats/session-*.jsonl`) of TURNS turns
                                       (default 3000: about 2.3 MB), each answer written twice as it
                                       grows, and after every fourth turn a rewind that undoes two

  gen_corpus.py --profile text [--seed N] [--sessions N] [--lines-per-session N] [--no-usage] OUT_DIR
                                       a heavy user's year of Claude Code sessions (defaults: seed 11,
                                       20000 sessions of 60 lines: 1.2M lines, 875 MB): 30-60 projects as
                                       `-home-user-src-<name>/<session>.jsonl` (each file's mtime its
                                       last line's time), sessions over 365 days at any time of day,
                                       each a prompt (its title), then thinking and text, tool calls
                                       (Bash, Read, Edit, Write, Grep, TodoWrite) and their output.
                                       Words follow a Zipf law over a few thousand: English and
                                       programming words (common), identifiers, paths, error codes
                                       and words like gpt-5 or C++ (mid to rare), a few per-session
                                       rare names, and phrases that recur ("race condition").

Deterministic (seeded), so runs compare like with like.
"""
import base64
import calendar
import json
import os
import random
import sys
import time
import uuid

WORDS = ("the index keeps every line of the transcript and serves photos by seeking to their offset "
         "while scrolling back through history fetches one image at a time rust sqlite warp tokio "
         "function error result value table column query page cursor session entry media bytes").split()


CJK_WORDS = ("数据库 索引 性能 问题 修复 函数 返回 错误 检查 文件 会话 图片 历史 搜索 服务器 查询 "
             "データベース インデックス 再構築 写真 履歴 検索 サーバー 関数 エラー ファイル を の で して ください").split()

# The words and how they are joined, per corpus kind (set by main).
LANGUAGE = {"words": WORDS, "joiner": " "}



BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


# Where Claude Code compacts (auto-compact, near a 200k-token window): no request reads more context.
COMPACT_AT = 160_000


class Usage:
    """What Claude Code writes on every assistant line: the message's `type`, `stop_reason`,
    `stop_sequence` and `usage` (input, cache creation with its 5-minute and 1-hour split, cache
    read, output, service tier), and the line's `requestId`. Every line of one API response (a
    thinking block, the text, each tool call: Claude Code writes one line per content block) carries
    the same message id, request id and usage, as the real files do. The context grows through a
    session (cache reads) until the conversation is compacted (`COMPACT_AT`), new turns write the
    cache, and output varies with the answer.

    Drawn from an RNG of its own, so the texts and times of a tree are the same with or without usage
    (`--no-usage` writes the lighter tree of the older benchmarks)."""

    def __init__(self, seed, enabled=True):
        self.rng = random.Random(seed * 7919 + 17)
        self.enabled = enabled
        self.context = 0

    def start_session(self):
        self.context = 8000 + self.rng.randint(0, 12000)

    def response(self):
        """The request id and usage of one new API response."""
        rng = self.rng
        created = rng.randint(200, 9000) if rng.random() < 0.6 else 0
        read = self.context
        self.context += created + rng.randint(50, 900)
        if self.context > COMPACT_AT:
            # Claude Code compacts a conversation that nears the model's window: the requests after
            # it read a summary, not the whole history (no draw of the RNG, so the tree's other
            # figures stay as they were).
            self.context = 12000 + self.context % 8000
        request = "req_011C" + "".join(rng.choice(BASE58) for _ in range(20))
        usage = {"input_tokens": rng.randint(1, 12), "cache_creation_input_tokens": created, "cache_read_input_tokens": read,
                 "cache_creation": {"ephemeral_5m_input_tokens": created, "ephemeral_1h_input_tokens": 0},
                 "output_tokens": rng.randint(1, 40) if rng.random() < 0.7 else rng.randint(100, 3000),
                 "service_tier": "standard"}
        return request, usage

    def message_id(self, session, n):
        """A message id unique in the tree (`msg_%d` alone, as the lighter tree has it, repeats in
        every session)."""
        return "msg_%d" % n if not self.enabled else "msg_01%s%06d" % (session.replace("-", "")[:16], n)

    def stamp(self, line, message, response):
        """Gives one assistant line its response's fields, in the order Claude Code writes them."""
        if not self.enabled:
            line["message"] = message
            return
        request, usage = response
        ordered = {"model": message.get("model"), "id": message.get("id"), "type": "message", "role": "assistant",
                   "content": message["content"], "stop_reason": None, "stop_sequence": None, "usage": usage}
        line["message"] = ordered
        line["requestId"] = request
        if "type" in line:  # after the message and its request id, where Claude Code writes it
            line["type"] = line.pop("type")


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


def image_corpus(out, megabytes, fmt="claude"):
    """The image-heavy corpus in the JSONL format of agent `fmt` (see FORMATS): the same sessions,
    lines, texts and photos whatever the format (the photos' bytes are seeded; the corpus ends where
    Claude Code's would, so each format holds the same photos and only the envelopes differ)."""
    rng = random.Random(7)
    photo_rng = random.Random(8)
    write = FORMATS[fmt]
    target = megabytes * 1_000_000
    written = 0
    files = 0
    while written < target:
        session = str(uuid.UUID(int=rng.getrandbits(128)))
        lines = []
        parent = None
        for n in range(40):
            if n % 4 == 0:
                photo = photo_rng.randbytes(rng.randint(500_000, 950_000))
                line = base_line(rng, session, "user", parent, n, "/home/user/project")
                text = "[Image #1] " + sentence(rng, 20)
                data = base64.b64encode(photo).decode()
                line["message"] = {"role": "user", "content": [
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}},
                    {"type": "text", "text": text},
                ]}
            else:
                line = base_line(rng, session, "assistant", parent, n, "/home/user/project")
                text = sentence(rng, 60)
                data = None
                line["message"] = {"role": "assistant", "id": "msg_%d" % n, "model": "claude",
                                   "content": [{"type": "text", "text": text}]}
            parent = line["uuid"]
            lines.append((line, text, data))
            # Counted as Claude Code's line, so that every format stops at the same line.
            written += len(json.dumps(line, separators=(",", ":"))) + 1
            if written >= target:
                break
        path, body = write(out, files, session, lines)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.writelines(json.dumps(v, separators=(",", ":")) + "\n" for v in body)
        files += 1


# How each agent writes the image corpus's sessions: `(out, n, session, lines)` -> (the file's path,
# its lines as JSON values). `lines` holds (Claude Code's line, its text, its photo's base64 or
# None); the other formats take the uuid, parent, time and text from it. Cursor keeps no photos in
# its transcripts (it saves a pasted image as a file and writes the path), so it has none here.

def claude_session(out, n, session, lines):
    return os.path.join(out, "-home-user-project-%d" % (n % 5), session + ".jsonl"), [line for line, _, _ in lines]


def millis(ts):
    return calendar.timegm(time.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S")) * 1000 + int(ts[20:23])


def codex_session(out, n, session, lines):
    day = 1 + n % 28
    path = os.path.join(out, "2026", "01", "%02d" % day, "rollout-2026-01-%02dT10-00-00-%s.jsonl" % (day, session))
    body = [{"timestamp": lines[0][0]["timestamp"], "type": "session_meta",
             "payload": {"id": session, "cwd": "/home/user/project", "cli_version": "0.128.0", "model_provider": "openai"}}]
    for line, text, data in lines:
        ts = line["timestamp"]
        if data is None:
            body.append({"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "assistant",
                         "content": [{"type": "output_text", "text": text}]}})
            continue
        url = "data:image/png;base64," + data
        body.append({"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_image", "image_url": url}, {"type": "input_text", "text": text}]}})
        # Codex repeats the message, photos and all, in its event.
        body.append({"timestamp": ts, "type": "event_msg", "payload": {"type": "user_message", "message": text, "images": [url]}})
    return path, body


def gemini_session(out, n, session, lines):
    path = os.path.join(out, "%08x" % (n % 5), "chats", "session-2026-01-01T10-00-%s.jsonl" % session[:8])
    body = [{"sessionId": session, "projectHash": "%08x" % (n % 5), "startTime": lines[0][0]["timestamp"], "kind": "main"}]
    for line, text, data in lines:
        if data is None:
            body.append({"id": line["uuid"], "timestamp": line["timestamp"], "type": "gemini", "content": text,
                         "model": "gemini-2.5-pro"})
        else:
            body.append({"id": line["uuid"], "timestamp": line["timestamp"], "type": "user",
                         "content": [{"inlineData": {"mimeType": "image/png", "data": data}}, {"text": text}]})
    return path, body


def qwen_session(out, n, session, lines):
    path = os.path.join(out, "-home-user-project-%d" % (n % 5), "chats", session + ".jsonl")
    body = []
    for line, text, data in lines:
        record = {"uuid": line["uuid"], "parentUuid": line["parentUuid"], "sessionId": session,
                  "timestamp": line["timestamp"], "cwd": "/home/user/project", "version": "0.24.4", "gitBranch": "main"}
        if data is None:
            record.update(type="assistant", model="qwen3-coder-plus",
                          message={"role": "model", "parts": [{"text": text}]})
        else:
            record.update(type="user", message={"role": "user", "parts": [
                {"inlineData": {"data": data, "mimeType": "image/png"}}, {"text": text}]})
        body.append(record)
    return path, body


def droid_session(out, n, session, lines):
    path = os.path.join(out, "-home-user-project-%d" % (n % 5), session + ".jsonl")
    body = [{"type": "session_start", "id": session, "title": lines[0][1][:40], "owner": "user", "version": 2,
             "cwd": "/home/user/project"}]
    for line, text, data in lines:
        content = [{"type": "text", "text": text}]
        if data is not None:
            content.insert(0, {"type": "image", "source": {"type": "base64", "data": data, "media_type": "image/png"}})
        message = {"type": "message", "id": line["uuid"], "timestamp": line["timestamp"], "parentId": line["parentUuid"],
                   "message": {"role": "user" if data is not None else "assistant", "content": content}}
        if message["parentId"] is None:
            del message["parentId"]
        body.append(message)
    return path, body


def pi_session(out, n, session, lines):
    path = os.path.join(out, "--home-user-project-%d--" % (n % 5), "2026-01-01T00-00-00-000Z_%s.jsonl" % session)
    body = [{"type": "session", "version": 3, "id": session, "timestamp": lines[0][0]["timestamp"], "cwd": "/home/user/project"}]
    for line, text, data in lines:
        at = millis(line["timestamp"])
        if data is None:
            message = {"role": "assistant", "content": [{"type": "text", "text": text}], "api": "anthropic-messages",
                       "provider": "anthropic", "model": "claude-sonnet-4-5",
                       "usage": {"input": 100, "output": 60, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 160},
                       "stopReason": "stop", "timestamp": at}
        else:
            message = {"role": "user", "content": [{"type": "text", "text": text},
                                                   {"type": "image", "mimeType": "image/png", "data": data}], "timestamp": at}
        body.append({"type": "message", "id": line["uuid"][:8], "parentId": line["parentUuid"] and line["parentUuid"][:8],
                     "timestamp": line["timestamp"], "message": message})
    return path, body


def copilot_session(out, n, session, lines):
    path = os.path.join(out, session, "events.jsonl")
    first = lines[0][0]
    body = [{"type": "session.start", "data": {"sessionId": session, "version": 1, "producer": "copilot-agent",
             "copilotVersion": "1.0.70", "startTime": first["timestamp"], "context": {"cwd": "/home/user/project"}},
             "id": session + "-0", "timestamp": first["timestamp"], "parentId": None}]
    for line, text, data in lines:
        if data is None:
            kind, event = "assistant.message", {"messageId": line["uuid"], "content": text, "model": "claude-sonnet-4.5"}
        else:
            kind, event = "user.message", {"content": text, "attachments": [
                {"type": "blob", "data": data, "mimeType": "image/png", "displayName": "paste.png"}]}
        body.append({"type": kind, "data": event, "id": line["uuid"], "timestamp": line["timestamp"],
                     "parentId": body[-1]["id"]})
    return path, body


FORMATS = {"claude": claude_session, "codex": codex_session, "gemini": gemini_session, "qwen": qwen_session,
           "droid": droid_session, "pi": pi_session, "copilot": copilot_session}


def text_corpus(out, lines, usage=True):
    rng = random.Random(11)
    usage = Usage(11, usage)
    written = 0
    files = 0
    while written < lines:
        session = str(uuid.UUID(int=rng.getrandbits(128)))
        project = os.path.join(out, "-home-user-project-%d" % (files % 5))
        os.makedirs(project, exist_ok=True)
        parent = None
        usage.start_session()
        with open(os.path.join(project, session + ".jsonl"), "w", encoding="utf-8") as f:
            for n in range(2000):
                kind = ("user", "assistant", "assistant", "user")[n % 4]
                line = base_line(rng, session, kind, parent, n, "/home/user/project")
                if n % 4 == 0:
                    line["message"] = {"role": "user", "content": sentence(rng, rng.randint(5, 40))}
                elif n % 4 == 1:
                    response = usage.response()
                    usage.stamp(line, {"role": "assistant", "id": usage.message_id(session, n), "model": "claude", "content": [
                        {"type": "thinking", "thinking": sentence(rng, 30), "signature": "sig"},
                        {"type": "text", "text": sentence(rng, rng.randint(20, 120))}]}, response)
                elif n % 4 == 2:
                    usage.stamp(line, {"role": "assistant", "id": usage.message_id(session, n - 1) if usage.enabled else "msg_%d" % n, "model": "claude", "content": [
                        {"type": "tool_use", "id": "toolu_%d" % n, "name": "Bash",
                         "input": {"command": "grep -rn " + rng.choice(LANGUAGE["words"]) + " src/"}}]}, response)
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


# ---------------------------------------------------------------------------------------------
# `--profile text`: a heavy user's year of Claude Code sessions.


# The most frequent words, in rank order: English function words with the words every coding
# session is full of.
HEAVY_TOP = ("the to a of and in is it that for this file on with error be test as i we you not "
             "function are at by or from import but can if build have so will code an do what config "
             "there was line all which when run one up out type about then no just it's don't should "
             "need value now also fix more like use only how here let me see check cargo async "
             "return change new add call data path first because after into other some each").split()

# Programming words, and English ones, below the top.
HEAVY_PROGRAMMING = (
    "struct enum trait impl module crate package dependency version release tag branch commit merge "
    "rebase diff patch review pull push remote origin upstream main master feature flag bug issue "
    "ticket log logs logger logging debug trace warning warn info panic crash exception stack "
    "backtrace handler request response client server endpoint route router api http https url uri "
    "query param params header body json yaml toml csv sql sqlite postgres redis cache index table "
    "column row schema migration database db transaction lock mutex thread spawn await future "
    "promise callback closure lambda generic lifetime borrow reference pointer buffer stream reader "
    "writer socket port host listen bind connect timeout retry backoff limit quota token auth "
    "session cookie user admin permission role secret key env variable constant static global local "
    "scope string integer float bool boolean array vector list map dict set tuple option result "
    "null none nil undefined default init setup teardown fixture mock stub assert expect unit "
    "integration e2e ci pipeline workflow job step deploy docker container image kubernetes pod "
    "service cluster node npm yarn pnpm pip python rust go typescript javascript react vue svelte "
    "component props state hook render view layout style css html dom event listener click input form "
    "button modal page scroll window screen mobile browser chrome firefox safari test tests testing "
    "passed failed failing passes fails flaky benchmark perf performance latency throughput memory "
    "cpu disk io network parse parser parsing serialize deserialize encode decode format formatter "
    "lint linter clippy fmt rustfmt eslint prettier mypy pytest jest vitest tsc compiler compile "
    "compiled compiling warning unused deprecated refactor rename move extract inline split helper "
    "util utils lib src tests docs readme changelog license script scripts command cli flag args "
    "argument arguments output stdout stderr exit status signal process pid kill restart reload "
    "watch watcher notify poll queue worker task tasks scheduler cron interval tick clock time date "
    "timestamp timezone utc offset cursor page pagination limit sort filter search match regex "
    "pattern glob wildcard prefix suffix trim split join concat append insert delete update select "
    "upsert count sum max min avg group order").split()

HEAVY_ENGLISH = (
    "still again before over under between through during without within against around since "
    "until while though although however therefore instead maybe probably actually really already "
    "always never sometimes often usually quickly slowly correctly properly right wrong good bad "
    "better worse best same different similar simple complex easy hard clear sure likely possible "
    "look looks looking seems seem think thought know want wanted try tried trying make makes made "
    "get gets got give given take takes keep keeps kept find found show shows shown work works "
    "working worked start started stop stopped open opened close closed read write wrote written "
    "update updated remove removed create created happen happens happened mean means instead note "
    "notice noticed sorry thanks please ok okay yes great good nice perfect done next last previous "
    "current whole part both either neither every any many much few several most least enough "
    "our your their its his her them they he she us my mine again anything everything nothing "
    "something someone why where who whom whose can't isn't doesn't won't didn't wasn't aren't "
    "i'm i'll we'll let's that's there's here's what's").split()

# Words with punctuation inside, at fixed ranks (the rank each takes in the vocabulary).
HEAVY_PUNCTUATED = {"e.g.": 260, "C++": 420, "utf-8": 560, "node.js": 700, "i.e.": 820, "gpt-5": 900,
                    "gpt-4o": 1150, "claude-code": 1500, "x86_64": 1700, "c#": 1900, "a/b": 2200,
                    "pre-commit": 640, "async/await": 980, "o(n)": 2500}

# Parts of generated identifiers, paths and project names.
HEAVY_PARTS = (
    "user session cache pool token request handler parse index query buffer stream config client "
    "server worker queue event message record batch schema router page cursor photo media entry "
    "file path lock retry timeout limit state store reader writer encoder decoder frame packet "
    "socket channel task job build deploy metric trace span log error result value key map list "
    "tree node graph edge model view widget button form field column table row migration snapshot "
    "backup auth oauth jwt hash digest checksum blob chunk segment offset range window scroll render "
    "layout style theme icon image thumbnail upload download fetch sync push pull merge diff patch "
    "commit branch release version feature flag rate quota billing invoice payment order cart "
    "product price currency tax report export import filter sort search match score rank vector "
    "embedding prompt completion agent tool transcript line word text html json yaml csv sql shard "
    "replica leader follower raft heartbeat health probe signal shutdown spawn select poll future "
    "callback listener watcher debounce throttle backoff jitter account tenant org team invite "
    "email notification webhook stripe slack github gitlab oidc saml audit policy rule permission "
    "role profile avatar settings preference locale i18n timezone calendar schedule reminder").split()

HEAVY_PROJECT_NAMES = (
    "api web billing auth search infra data ml mobile cli docs payments chat notify sync media "
    "gateway analytics scheduler ingest admin dashboard storefront ledger inventory crawler indexer "
    "recommender pipeline monitor").split()
HEAVY_PROJECT_KINDS = "service app server worker tool lib sdk ui etl core bot site".split()

HEAVY_PHRASES = ("race condition|connection pool|deep link|borrow checker|feature flag|rate limit|"
                 "memory leak|off by one|edge case|happy path|code review|pull request|hot path|"
                 "cold start|source of truth|breaking change|integration test|stack trace|merge conflict|"
                 "event loop|thread pool|retry policy|exponential backoff|dark mode|load balancer|"
                 "health check|schema migration|cache invalidation|time zone|query planner|"
                 "full text search|dead code|type error|null pointer|unit tests|build cache|"
                 "dependency graph|single source of truth|backward compatible|first paint").split("|")

HEAVY_LANGS = {
    "rust": {"ext": "rs", "dirs": ["src", "src/bin", "crates/core/src", "tests"]},
    "python": {"ext": "py", "dirs": ["app", "app/api", "tests", "scripts"]},
    "typescript": {"ext": "ts", "dirs": ["src", "src/components", "src/lib", "tests"]},
    "go": {"ext": "go", "dirs": ["cmd", "internal", "pkg", "internal/store"]},
}
HEAVY_ERRORS = {
    "rust": ["E0382", "E0502", "E0499", "E0308", "E0277", "E0599", "E0425", "E0433", "E0106", "E0716", "E0597"],
    "python": ["KeyError", "TypeError", "AttributeError", "ValueError", "ModuleNotFoundError", "IndexError"],
    "typescript": ["TS2345", "TS2339", "TS7006", "TS2322", "TS2554", "TS18047"],
    "go": ["ENOENT", "EADDRINUSE", "ECONNREFUSED", "EACCES", "ETIMEDOUT"],
}
HEAVY_MODELS = ["claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-sonnet-4-20250514", "claude-haiku-4-5-20251001"]
HEAVY_START = 1735689600  # 2025-01-01T00:00:00Z; sessions spread over the 365 days from here
HEAVY_HOURS = [1, 1, 0.5, 0.3, 0.2, 0.2, 0.4, 1, 3, 6, 9, 9, 6, 7, 9, 9, 8, 6, 4, 3, 3, 3, 2.5, 1.5]


def heavy_vocabulary():
    """The vocabulary of `--profile text`, the same whatever the seed: (words by rank, rare words,
    identifiers, syllable names). Words take Zipf weights by rank (see heavy_corpus)."""
    rng = random.Random(20250101)
    parts = HEAVY_PARTS
    seen = set()

    def fresh(make):
        while True:
            w = make()
            if w not in seen:
                seen.add(w)
                return w

    def snake(k):
        return "_".join(rng.choice(parts) for _ in range(k))

    def camel(k):
        return "".join(rng.choice(parts).capitalize() for _ in range(k))

    def name():
        syl = ["ka", "lo", "mir", "ve", "tra", "zen", "qu", "ori", "dax", "pel", "sor", "ny", "bri", "ton", "esh", "wil", "gar", "fi", "mu", "rok"]
        return "".join(rng.choice(syl) for _ in range(rng.randint(2, 4)))

    top = list(HEAVY_TOP)
    seen.update(top)
    rest = [w for w in dict.fromkeys(HEAVY_PROGRAMMING + HEAVY_ENGLISH) if w not in seen]
    seen.update(rest)
    idents = []
    for n in range(2600):
        k = n % 6
        if k < 2:
            idents.append(fresh(lambda: snake(2)))
        elif k == 2:
            idents.append(fresh(lambda: camel(2)))
        elif k == 3:
            idents.append(fresh(lambda: snake(3)))
        elif k == 4:
            idents.append(fresh(lambda: "src/%s/%s.%s" % (rng.choice(parts), rng.choice(parts), rng.choice(["rs", "py", "ts", "go"]))))
        else:
            idents.append(fresh(lambda: camel(3)))
    rng.shuffle(rest)
    mid = rest[:300] + sorted(rest[300:] + idents[:250], key=lambda _: rng.random())
    tail = idents[250:]
    vocab = top + mid + tail
    for w, rank in sorted(HEAVY_PUNCTUATED.items(), key=lambda x: x[1]):
        vocab.insert(rank, w)
    rare = []
    for n in range(30000):
        k = n % 3
        rare.append(fresh(name if k == 0 else (lambda: snake(3) + "_" + rng.choice(parts)) if k == 1 else (lambda: camel(3) + rng.choice(parts).capitalize())))
    return vocab, rare, idents


class Heavy:
    """One heavy user's year of Claude Code sessions (`--profile text`)."""

    def __init__(self, seed, usage=True):
        self.rng = rng = random.Random(seed)
        self.r = rng.random
        self.usage = Usage(seed, usage)
        vocab, self.rare_pool, idents = heavy_vocabulary()
        self.vocab = vocab
        cum, total = [], 0.0
        for rank in range(len(vocab)):
            total += 1.0 / (rank + 2.7) ** 1.15
            cum.append(total)
        # One long Zipf-distributed stream of words; sentences are strided slices of it.
        self.stream = rng.choices(vocab, cum_weights=cum, k=3_000_000)
        self.phrases = HEAVY_PHRASES
        self.phrase_cum = [sum(1.0 / (i + 1) for i in range(n + 1)) for n in range(len(HEAVY_PHRASES))]
        self.projects = []
        for n in range(rng.randint(30, 60)):
            while True:
                name = rng.choice(HEAVY_PROJECT_NAMES) + "-" + rng.choice(HEAVY_PROJECT_KINDS)
                if name not in [p["name"] for p in self.projects]:
                    break
            lang = rng.choice(list(HEAVY_LANGS))
            spec = HEAVY_LANGS[lang]
            files = sorted({"%s/%s.%s" % (rng.choice(spec["dirs"]), "_".join(rng.sample(HEAVY_PARTS, rng.randint(1, 2))), spec["ext"])
                            for _ in range(rng.randint(25, 90))})
            self.projects.append({"name": name, "lang": lang, "ext": spec["ext"], "files": files,
                                  "idents": rng.sample(idents, rng.randint(60, 160)),
                                  "cwd": "/home/user/src/" + name, "folder": "-home-user-src-" + name,
                                  "crate": name.replace("-", "_")})
        self.project_cum = []
        total = 0.0
        for n in range(len(self.projects)):
            total += 1.0 / (n + 1) ** 0.9
            self.project_cum.append(total)

    # -- words --

    def pick(self, seq):
        return seq[int(self.r() * len(seq))]

    def words(self, n):
        r = self.r
        step = 1 + int(r() * 6)
        start = int(r() * (len(self.stream) - n * step))
        ws = self.stream[start:start + n * step:step]
        if r() < 0.35:
            ws[int(r() * n)] = self.pick(self.topic)
        if r() < 0.05:
            ws.insert(int(r() * n), self.rng.choices(self.phrases, cum_weights=self.phrase_cum)[0])
        if r() < 0.04:
            ws.insert(int(r() * n), self.pick(self.rare))
        return ws

    def sentence(self, lo=5, hi=22):
        ws = self.words(lo + int(self.r() * (hi - lo)))
        if ws[0].isalpha():
            ws[0] = ws[0].capitalize()
        return " ".join(ws) + self.pick((".", ".", ".", ".", "?", ":", "!"))

    def prose(self, lo, hi):
        n = lo + int(self.r() * (hi - lo))
        out = []
        while n > 0:
            k = min(n, 6 + int(self.r() * 16))
            n -= k
            out.append(self.sentence(k, k + 1))
        return " ".join(out)

    def markdown(self, lo, hi):
        r = self.r
        parts = [self.prose(lo, hi)]
        if r() < 0.2:
            parts.append("\n".join("- `%s`: %s" % (self.pick(self.topic), self.sentence(4, 14)) for _ in range(1 + int(r() * 3))))
        if r() < 0.12:
            parts.append("```%s\n%s\n```" % (self.lang, "\n".join(self.code_line() for _ in range(2 + int(r() * 5)))))
        if r() < 0.15:
            parts.append(self.prose(lo // 2, hi // 2))
        return "\n\n".join(parts)

    def ident(self):
        return self.pick(self.topic).split("/")[-1].split(".")[0]

    def code_line(self):
        r = self.r
        a, b, c = self.ident(), self.ident(), self.ident()
        lang = self.lang
        k = int(r() * 6)
        if k == 0:
            return "    // " + " ".join(self.words(4 + int(r() * 10))) if lang != "python" else "    # " + " ".join(self.words(4 + int(r() * 10)))
        if lang == "rust":
            return self.pick(("    let %s = %s.%s()?;", "fn %s(&self, %s: &%s) -> Result<()> {", "        %s.%s(%s).await?;",
                              "    if let Some(%s) = %s.get(%s) {", "use crate::%s::{%s, %s};")) % (a, b, c)
        if lang == "python":
            return self.pick(("    %s = self.%s(%s)", "def %s(self, %s, %s=None):", "        return %s.%s(%s)",
                              "    if %s is None or %s in %s:", "from .%s import %s, %s")) % (a, b, c)
        if lang == "typescript":
            return self.pick(("  const %s = await %s(%s);", "export function %s(%s: %s) {", "    return %s.%s(%s);",
                              "  if (!%s || %s === %s) {", "import { %s, %s } from './%s';")) % (a, b, c)
        return self.pick(("\t%s, err := %s(%s)", "func %s(%s *%s) error {", "\t\treturn %s.%s(%s)",
                          "\tif %s == nil || %s != %s {", "\t%s := %s.%s()")) % (a, b, c)

    def file(self):
        p = self.project
        if self.r() < 0.7:
            return self.pick(self.session_files)
        return self.pick(p["files"])

    def sha(self):
        return "%07x" % self.rng.getrandbits(28)

    # -- tools: (name, input, result text, toolUseResult, is_error) --

    def bash(self):
        r, p, lang = self.r, self.project, self.lang
        k = r()
        f = self.file()
        if k < 0.3:
            cmd = {"rust": "cargo test", "python": "pytest -q", "typescript": "npm test --", "go": "go test ./..."}[lang]
            if r() < 0.5:
                cmd += " " + self.ident()
            failed = r() < 0.3
            if lang == "rust":
                lines = ["   Compiling %s v0.%d.%d (%s)" % (p["crate"], 1 + int(r() * 9), int(r() * 20), p["cwd"]),
                         "    Finished `test` profile [unoptimized + debuginfo] target(s) in %.2fs" % (r() * 40),
                         "     Running unittests src/lib.rs (target/debug/deps/%s-%s)" % (p["crate"], self.sha() + self.sha()), "",
                         "running %d tests" % (3 + int(r() * 30))]
                lines += ["test %s::%s ... %s" % (self.ident(), self.ident(), "FAILED" if failed and r() < 0.2 else "ok") for _ in range(1 + int(r() * 4))]
                if failed:
                    lines += ["", "failures:", "", "---- %s::%s stdout ----" % (self.ident(), self.ident()),
                              "thread '%s' panicked at %s:%d:%d:" % (self.ident(), f, 1 + int(r() * 400), 5 + int(r() * 30)),
                              "assertion `left == right` failed: " + " ".join(self.words(6)), "  left: %d" % int(r() * 100), " right: %d" % int(r() * 100)]
                lines.append("test result: %s. %d passed; %d failed; 0 ignored; 0 measured; 0 filtered out; finished in %.2fs"
                             % ("FAILED" if failed else "ok", int(r() * 40), 1 if failed else 0, r() * 3))
            elif lang == "python":
                lines = ["%s %s" % ("tests/test_%s.py" % self.ident(), "".join(self.pick("....F" if failed else ".....") for _ in range(5 + int(r() * 30))))
                         for _ in range(1 + int(r() * 4))]
                if failed:
                    lines += ["=" * 20 + " FAILURES " + "=" * 20, "_" * 10 + " test_%s " % self.ident() + "_" * 10, "",
                              "    def test_%s(%s):" % (self.ident(), self.ident()), ">       assert %s == %s" % (self.ident(), self.ident()),
                              "E       %s: %s" % (self.pick(HEAVY_ERRORS["python"]), " ".join(self.words(8))), "", "%s:%d: %s" % (f, int(r() * 300), self.pick(HEAVY_ERRORS["python"]))]
                lines.append("%d passed%s in %.2fs" % (int(r() * 80), ", 1 failed" if failed else "", r() * 9))
            elif lang == "typescript":
                lines = [" %s %s (%d tests) %dms" % ("✓" if not failed else "❯", "tests/%s.test.ts" % self.ident(), 2 + int(r() * 20), int(r() * 900)) for _ in range(1 + int(r() * 4))]
                if failed:
                    lines += [" FAIL  tests/%s.test.ts > %s" % (self.ident(), " ".join(self.words(5))), "AssertionError: expected %s to equal %s" % (self.ident(), self.ident()),
                              " ❯ %s:%d:%d" % (f, int(r() * 300), int(r() * 40))]
                lines.append(" Tests  %d passed%s" % (int(r() * 90), " | 1 failed" if failed else ""))
            else:
                lines = ["ok  \tgithub.com/user/%s/%s\t%.3fs" % (p["name"], self.ident(), r()) for _ in range(1 + int(r() * 5))]
                if failed:
                    lines += ["--- FAIL: Test%s (0.00s)" % self.ident().capitalize(), "    %s:%d: %s" % (f.split("/")[-1], int(r() * 300), " ".join(self.words(8))),
                              "FAIL\tgithub.com/user/%s/%s\t0.%03ds" % (p["name"], self.ident(), int(r() * 999))]
            return cmd, "\n".join(lines), failed
        if k < 0.45:
            cmd = {"rust": "cargo build", "python": "python -m mypy app", "typescript": "npx tsc --noEmit", "go": "go build ./..."}[lang]
            if r() < 0.5:
                return cmd, {"rust": "    Finished `dev` profile [unoptimized + debuginfo] target(s) in %.2fs" % (r() * 60)}.get(lang, ""), False
            code = self.pick(HEAVY_ERRORS[lang])
            ln = 1 + int(r() * 400)
            if lang == "rust":
                a = self.ident()
                out = ["   Compiling %s v0.1.0 (%s)" % (p["crate"], p["cwd"]),
                       "error[%s]: %s `%s` %s" % (code, self.pick(("cannot borrow", "use of moved value:", "mismatched types for", "cannot find value")), a, " ".join(self.words(6))),
                       "  --> %s:%d:%d" % (f, ln, 5 + int(r() * 30)), "   |", "%d |     %s" % (ln, self.code_line().strip()),
                       "   |     %s %s" % ("-" * (3 + int(r() * 12)), " ".join(self.words(5))), "   |",
                       "   = help: " + " ".join(self.words(10)), "",
                       "For more information about this error, try `rustc --explain %s`." % code,
                       "error: could not compile `%s` (lib) due to 1 previous error" % p["crate"]]
            elif lang == "typescript":
                out = ["%s(%d,%d): error %s: %s" % (f, ln, int(r() * 40), code, " ".join(self.words(12))) for _ in range(1 + int(r() * 4))]
            elif lang == "python":
                out = ["%s:%d: error: %s  [%s]" % (f, ln, " ".join(self.words(10)), self.pick(("arg-type", "attr-defined", "return-value", "union-attr"))) for _ in range(1 + int(r() * 4))]
                out.append("Found %d errors in 1 file (checked %d source files)" % (len(out), 10 + int(r() * 90)))
            else:
                out = ["# github.com/user/%s/%s" % (p["name"], self.ident()), "%s:%d:%d: %s" % (f, ln, int(r() * 40), " ".join(self.words(10)))]
            return cmd, "\n".join(out), True
        if k < 0.6:
            n = 2 + int(r() * 4)
            return "git log --oneline -%d" % n, "\n".join("%s %s" % (self.sha(), self.sentence(4, 12)) for _ in range(n)), False
        if k < 0.7:
            out = ["diff --git a/%s b/%s" % (f, f), "index %s..%s 100644" % (self.sha(), self.sha()), "--- a/" + f, "+++ b/" + f]
            for _ in range(1 + int(r() * 1.3)):
                out.append("@@ -%d,7 +%d,8 @@ %s" % (int(r() * 300), int(r() * 300), self.code_line().strip()))
                out += [self.pick((" ", " ", "-", "+")) + self.code_line() for _ in range(2 + int(r() * 2))]
            return "git diff " + f, "\n".join(out), False
        if k < 0.8:
            w = self.ident()
            out = ["%s:%d:%s" % (self.file(), 1 + int(r() * 500), self.code_line().replace(self.ident(), w, 1)) for _ in range(1 + int(r() * 3))]
            return "rg -n %s %s" % (w, self.pick(("src", ".", "tests"))), "\n".join(out), False
        if k < 0.88:
            return "git status", "On branch %s\nChanges not staged for commit:\n%s\n\nno changes added to commit" % (
                self.branch, "\n".join("\tmodified:   " + self.file() for _ in range(1 + int(r() * 4)))), False
        if k < 0.94:
            d = f.rsplit("/", 1)[0]
            return "ls -la " + d, "\n".join("-rw-r--r--  1 user user %6d %s %s" % (int(r() * 40000), self.pick(("Mar 3", "Jun 18", "Sep 9", "Dec 1")), x.split("/")[-1])
                                            for x in p["files"][:2 + int(r() * 4)]), False
        return "curl -s localhost:8080/api/%s | jq ." % self.ident(), json.dumps(
            {self.ident(): self.sentence(3, 8), "count": int(r() * 100), "items": [self.ident() for _ in range(3)]}, indent=2), r() < 0.2

    def tool(self):
        r = self.r
        k = r()
        f = self.file()
        path = self.project["cwd"] + "/" + f
        if k < 0.38:
            cmd, out, err = self.bash()
            text = ("Exit code %d\n" % self.pick((1, 1, 2, 101)) + out) if err else out
            return "Bash", {"command": cmd, "description": self.sentence(3, 7)[:-1]}, text, {"stdout": out, "stderr": "", "interrupted": False}, err
        if k < 0.62:
            n = 2 + int(r() * 3)
            start = 1 + int(r() * 200)
            code = [self.code_line() for _ in range(n)]
            text = "\n".join("%6d\u2192%s" % (start + i, line) for i, line in enumerate(code))
            return "Read", {"file_path": path}, text, {"type": "text", "file": {"filePath": path, "numLines": n, "startLine": start, "totalLines": start + n + int(r() * 300)}}, False
        if k < 0.78:
            old = "\n".join(self.code_line() for _ in range(1 + int(r() * 2)))
            new = "\n".join(self.code_line() for _ in range(1 + int(r() * 2)))
            start = 1 + int(r() * 300)
            text = ("The file %s has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n" % path +
                    "\n".join("%6d\u2192%s" % (start + i, self.code_line()) for i in range(1 + int(r() * 2))))
            return "Edit", {"file_path": path, "old_string": old, "new_string": new}, text, {"filePath": path, "oldString": old, "newString": new, "replaceAll": False, "userModified": False}, False
        if k < 0.84:
            content = "\n".join(self.code_line() for _ in range(2 + int(r() * 5)))
            return "Write", {"file_path": path, "content": content}, "File created successfully at: " + path, {"type": "create", "filePath": path}, False
        if k < 0.93:
            w = self.ident()
            files = sorted({self.file() for _ in range(1 + int(r() * 4))})
            text = "\n".join("%s:%d:%s" % (x, 1 + int(r() * 400), self.code_line()) for x in files for _ in range(1 + int(r() * 2)))
            return "Grep", {"pattern": w, "path": self.project["cwd"], "output_mode": "content", "-n": True}, text, {"mode": "content", "numFiles": len(files), "filenames": files, "numLines": text.count("\n") + 1}, False
        todos = [{"content": self.sentence(3, 9)[:-1], "status": self.pick(("pending", "in_progress", "completed")), "activeForm": self.sentence(2, 6)[:-1]}
                 for _ in range(1 + int(r() * 3))]
        return "TodoWrite", {"todos": todos}, ("Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. "
                                               "Please proceed with the current tasks if applicable"), {"oldTodos": [], "newTodos": todos}, False

    # -- sessions --

    def title(self):
        r = self.r
        f = self.pick(self.session_files)
        a = self.ident()
        t = self.pick((
            "fix the %s in %s" % (self.pick(HEAVY_ERRORS[self.lang]), f),
            "can you look at why %s fails when %s" % (a, " ".join(self.words(5))),
            "add %s to %s" % (" ".join(self.words(3)), f),
            "the %s test is flaky, %s" % (a, " ".join(self.words(6))),
            "refactor %s so that %s" % (a, " ".join(self.words(7))),
            "there's a %s in %s" % (self.rng.choices(self.phrases, cum_weights=self.phrase_cum)[0], a),
            "I need to %s" % " ".join(self.words(8)),
            "why is %s slow? %s" % (a, " ".join(self.words(6))),
        ))
        if r() < 0.5:
            t += "\n\n" + self.prose(5, 25)
        return t

    def session(self, n_lines):
        """The lines of one session, and its last line's time."""
        rng, r = self.rng, self.r
        p = self.project = rng.choices(self.projects, cum_weights=self.project_cum)[0]
        self.lang = p["lang"]
        self.topic = rng.sample(p["idents"], 8) + rng.sample(p["files"], 2)
        self.session_files = rng.sample(p["files"], min(len(p["files"]), 3 + int(r() * 5)))
        self.rare = rng.sample(self.rare_pool, 1 + int(r() * 4))
        self.branch = "main" if r() < 0.6 else self.pick(("feature/", "fix/", "chore/")) + self.ident().replace("_", "-")
        session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        day = int(r() * 365)
        hour = rng.choices(range(24), weights=HEAVY_HOURS)[0]
        t = HEAVY_START + day * 86400 + hour * 3600 + r() * 3600
        version = "%d.%d.%d" % ((1, 0, 17 + day // 12) if day < 250 else (2, day // 290, (day * 7) % 60))
        model = self.pick(HEAVY_MODELS)
        base = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": p["cwd"], "sessionId": session,
                "version": version, "gitBranch": self.branch}
        out = []
        parent = None
        pending = None  # (tool_use id, name, result, toolUseResult, is_error)
        msg = None
        response = None  # (message id, request id, usage): the API response a line belongs to
        self.usage.start_session()
        state = "prompt"
        for n in range(n_lines):
            line = dict(base)
            line["parentUuid"] = parent
            if state == "prompt":
                line["type"] = "user"
                line["message"] = {"role": "user", "content": self.title() if n == 0 else self.prose(3, 20)}
                state = "answer"
                t += 20 + r() * 600 if n else 0
            elif state == "answer":
                msg = "msg_01%022x" % rng.getrandbits(88)
                content = []
                if r() < 0.45:
                    content.append({"type": "thinking", "thinking": self.prose(3, 12), "signature": "Eq%016x" % rng.getrandbits(64)})
                content.append({"type": "text", "text": self.markdown(3, 18)})
                line["type"] = "assistant"
                response = (msg,) + self.usage.response()
                self.usage.stamp(line, {"role": "assistant", "id": msg, "model": model, "content": content}, response[1:])
                state = "tool" if r() < 0.85 else "prompt"
                t += 2 + r() * 25
            elif state == "tool":
                name, inp, result, extra, err = self.tool()
                tid = "toolu_01%022x" % rng.getrandbits(88)
                line["type"] = "assistant"
                if response is None or response[0] != msg:
                    response = (msg,) + self.usage.response()  # a tool call in a response of its own
                self.usage.stamp(line, {"role": "assistant", "id": msg, "model": model,
                                        "content": [{"type": "tool_use", "id": tid, "name": name, "input": inp}]}, response[1:])
                pending = (tid, result, extra, err)
                state = "result"
                t += 0.5 + r() * 8
            else:
                tid, result, extra, err = pending
                block = {"tool_use_id": tid, "type": "tool_result", "content": result}
                if err:
                    block["is_error"] = True
                line["type"] = "user"
                line["message"] = {"role": "user", "content": [block]}
                line["toolUseResult"] = extra
                k = r()
                state = "tool" if k < 0.55 else "answer" if k < 0.9 else "prompt"
                if state == "tool":
                    msg = "msg_01%022x" % rng.getrandbits(88)
                t += 0.05 + r() * (40 if r() < 0.3 else 3)
            if state == "prompt" and r() < 0.03:
                t += 3600 * (1 + r() * 8)  # back after a break
            line["uuid"] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            line["timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % int((t % 1) * 1000)
            parent = line["uuid"]
            out.append(json.dumps(line, separators=(",", ":"), ensure_ascii=False))
        return p, session, "\n".join(out) + "\n", t


def heavy_corpus(out, seed, sessions, lines_per_session, usage=True):
    """`--profile text`: SESSIONS Claude Code sessions of LINES_PER_SESSION lines each, over a year
    and 30-60 projects (`<out>/-home-user-src-<name>/<session>.jsonl`, each file's mtime its last
    line's time)."""
    gen = Heavy(seed, usage)
    made = set()
    for _ in range(sessions):
        project, session, text, last = gen.session(lines_per_session)
        folder = os.path.join(out, project["folder"])
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        path = os.path.join(folder, session + ".jsonl")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        os.utime(path, (last, last))


def gemini_rewinds(out, turns):
    folder = os.path.join(out, "demo", "chats")
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(16)
    lines = [{"sessionId": "5e55a0de-0000-4000-8000-00000000rw16", "projectHash": "0f",
              "startTime": "2026-11-30T09:00:00.000Z", "kind": "main"}]
    for t in range(turns):
        ts = "2026-11-30T%02d:%02d:%02d.000Z" % (9 + t // 3600 % 12, t // 60 % 60, t % 60)
        lines.append({"id": "u%d" % t, "timestamp": ts, "type": "user",
                      "content": [{"text": sentence(rng, 20)}]})
        answer = {"id": "m%d" % t, "timestamp": ts, "type": "gemini", "content": "", "tokens": None}
        lines.append(dict(answer))
        answer.update(content=sentence(rng, 40), model="gemini-2.5-pro",
                      tokens={"input": 1000 + t, "output": 40, "cached": 0, "thoughts": 0, "tool": 0, "total": 1040 + t})
        lines.append(answer)
        if t % 4 == 3:
            lines.append({"$rewindTo": "u%d" % (t - 1)})
    with open(os.path.join(folder, "session-2026-11-30T09-00-5e55a0de.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps(line) + "\n" for line in lines)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "gemini-rewinds":
        gemini_rewinds(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 3000)
        return
    if len(sys.argv) > 1 and sys.argv[1].startswith("--"):
        import argparse
        parser = argparse.ArgumentParser(usage="gen_corpus.py --profile text [--seed N] [--sessions N] [--lines-per-session N] [--no-usage] OUT_DIR")
        parser.add_argument("--profile", choices=["text"], required=True)
        parser.add_argument("--seed", type=int, default=11)
        parser.add_argument("--sessions", type=int, default=20000)
        parser.add_argument("--lines-per-session", type=int, default=60)
        parser.add_argument("--no-usage", action="store_true",
                            help="no usage or requestId on answers: the lighter tree of the benchmarks before issue 51")
        parser.add_argument("out")
        args = parser.parse_args()
        os.makedirs(args.out, exist_ok=True)
        heavy_corpus(args.out, args.seed, args.sessions, args.lines_per_session, not args.no_usage)
        return
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
        image_corpus(out, int(sys.argv[3]) if len(sys.argv) > 3 else 300, sys.argv[4] if len(sys.argv) > 4 else "claude")
    elif kind == "text":
        text_corpus(out, int(sys.argv[3]) if len(sys.argv) > 3 else 200_000)
    else:
        LANGUAGE.update(words=CJK_WORDS, joiner="")
        text_corpus(out, int(sys.argv[3]) if len(sys.argv) > 3 else 50_000)


if __name__ == "__main__":
    main()
