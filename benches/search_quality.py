#!/usr/bin/env python3
"""Search quality on the judged queries (tests/search/judged.json): MRR and nDCG@10.

  search_quality.py [--bin SCROLLBACK] [--tree corpus|generated] [--json OUT]
                    [--baseline OLD.json [--tolerance T]] [--min-mrr X] [--min-ndcg X]
  search_quality.py --url http://127.0.0.1:7878 --tree TREE      (a server already serving that tree)

End to end (the default): for each tree it lays the transcripts out in a temporary directory, indexes
them with `scrollback index` into a temporary data directory, starts `scrollback serve` on
127.0.0.1:0 and asks `GET /api/search?q=<query>&limit=20` for every query of the tree. The binary is
--bin, else $SCROLLBACK. HOME points into the temporary directory, so nothing of the user's is read.

The trees: "corpus" is ../shared/corpus beside the repository (or $SCROLLBACK_CORPUS, or --corpus),
skipped with a message when it is absent; "generated" is written by tests/search/judged_tree.py.

An answer becomes a ranking of sessions: the grouped answer's `sessions[].sessionId` in order, or, from
the flat answer (`hits`), each session at its first hit. A query's reciprocal rank is 1/r for the
first session at rank r with a grade above 0 (0 if none); its nDCG@10 sums (2^grade - 1) / log2(rank + 1)
over the first ten, divided by the same sum for the judged grades in the best order. A 400 (or any
failed request) is a ranking of nothing, and is listed.

--baseline compares with the --json of an earlier run: each query whose nDCG@10 fell is listed, and
the run fails (exit 1) when a tree's MRR or mean nDCG@10 fell by more than --tolerance (default 0).
--min-mrr and --min-ndcg fail it below a fixed overall figure. Python 3 standard library only.
"""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JUDGED = os.path.join(REPO, "tests", "search", "judged.json")
TREE_SCRIPT = os.path.join(REPO, "tests", "search", "judged_tree.py")
LIMIT = 20


def corpus_layout(corpus, out):
    """Lays ../shared/corpus out as the tests do: Claude Code's files as they are, Codex's samples
    named as rollouts, Gemini's JSONL chats in a chats folder. Returns the --root arguments."""
    def put(src, rel):
        dest = os.path.join(out, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(src, dest)

    real = os.path.join(corpus, "real")
    for name in sorted(os.listdir(real)):
        if name.endswith(".jsonl"):
            put(os.path.join(real, name), os.path.join("claude", "real", name))
    public = os.path.join(corpus, "public")
    for folder, _, names in os.walk(public):
        for name in names:
            if name.endswith(".jsonl"):
                put(os.path.join(folder, name), os.path.join("claude", "public", os.path.relpath(folder, public), name))
    codex = os.path.join(corpus, "fixtures", "codex")
    for sub in sorted(os.listdir(codex)):
        if not os.path.isdir(os.path.join(codex, sub)):
            continue
        for name in sorted(os.listdir(os.path.join(codex, sub))):
            if not name.endswith(".jsonl"):
                continue
            if name.startswith("synthetic-"):
                rollout = name[len("synthetic-"):]
            elif name.startswith("rollout-"):
                rollout = name
            else:
                rollout = "rollout-2026-01-01T00-00-00-%s" % name
            put(os.path.join(codex, sub, name), os.path.join("codex", "sessions", "2026", "11", "30", rollout))
    gemini = os.path.join(corpus, "fixtures", "gemini")
    for sub in sorted(os.listdir(gemini)):
        if not os.path.isdir(os.path.join(gemini, sub)):
            continue
        for name in sorted(os.listdir(os.path.join(gemini, sub))):
            if name.endswith(".jsonl"):
                put(os.path.join(gemini, sub, name), os.path.join("gemini", "tmp", "demo", "chats", name))
    return roots(out)


def generated_layout(out):
    subprocess.run([sys.executable, TREE_SCRIPT, out], check=True)
    return roots(out)


def roots(out):
    args = []
    for fmt in ("claude", "codex", "gemini"):
        if os.path.isdir(os.path.join(out, fmt)):
            args += ["--root", "%s:%s" % (fmt, os.path.join(out, fmt))]
    return args


class Server:
    """`scrollback serve` on 127.0.0.1:0 over an index built first with `scrollback index`."""

    def __init__(self, binary, work, root_args):
        data = os.path.join(work, "data")
        env = dict(os.environ, HOME=work, XDG_DATA_HOME=os.path.join(work, "xdg"), RUST_LOG="scrollback=warn",
                   NO_COLOR="1")
        for var in ("SCROLLBACK_DATA_DIR", "SCROLLBACK_TRANSCRIPTS", "SCROLLBACK_LISTEN", "SCROLLBACK_TOKEN",
                    "SCROLLBACK_ENGINE", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
            env.pop(var, None)
        common = root_args + ["--data-dir", data, "--vault", "off"]
        done = subprocess.run([binary, "index"] + common, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit("scrollback index failed:\n" + done.stderr)
        self.summary = (done.stdout.strip() or done.stderr.strip()).splitlines()[0]
        self.proc = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0", "--rescan-secs", "3600"] + common,
                                     env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.base = None
        for line in self.proc.stderr:
            # The start ends with the viewer's address, alone on its line.
            m = re.match(r"(http://127\.0\.0\.1:\d+)/\s*$", line)
            if m:
                self.base = m.group(1)
                break
        if self.base is None:
            self.proc.wait()
            sys.exit("scrollback serve exited before listening")
        # Keep reading its standard error so that it never blocks on a full pipe.
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def ask(base, query):
    """The ranking of sessions the server answers `query` with, and the error if it refused."""
    url = "%s/api/search?%s" % (base, urllib.parse.urlencode({"q": query, "limit": LIMIT}))
    try:
        with urllib.request.urlopen(url, timeout=60) as res:
            body = json.load(res)
    except urllib.error.HTTPError as e:
        text = e.read().decode("utf-8", "replace")
        try:
            error = json.loads(text).get("error", text)
            if isinstance(error, dict):
                error = error.get("message") or json.dumps(error, ensure_ascii=False)
            text = str(error)
        except (ValueError, AttributeError):
            pass
        return [], "%d %s" % (e.code, " ".join(text.split()))
    except (urllib.error.URLError, OSError, ValueError) as e:
        return [], "failed: %s" % e
    if isinstance(body.get("sessions"), list):
        return [s["sessionId"] for s in body["sessions"]], None
    ranking = []
    for hit in body.get("hits") or []:
        if hit.get("sessionId") not in ranking:
            ranking.append(hit.get("sessionId"))
    return ranking, None


def reciprocal_rank(ranking, grades):
    for i, session in enumerate(ranking):
        if grades.get(session, 0) > 0:
            return 1.0 / (i + 1), i + 1
    return 0.0, None


def ndcg(ranking, grades, k=10):
    dcg = sum((2 ** grades.get(s, 0) - 1) / math.log2(i + 2) for i, s in enumerate(ranking[:k]))
    ideal = sorted(grades.values(), reverse=True)[:k]
    best = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / best if best else 0.0


def shorten(rows):
    """A short name for every session the rows name: gNN for the generated tree's, else the first
    eight characters, with the last four too where eight are not enough to tell two apart."""
    seen = {s for r in rows for s in list(r["ranking"]) + list(r["relevant"])}
    heads = {}
    for s in seen:
        heads.setdefault(s[:8], set()).add(s)
    names = {}
    for s in seen:
        if s.startswith("9d0c0000-0000-4000-8000-") and s[-12:].isdigit():
            names[s] = "g%02d" % int(s[-12:])
        else:
            names[s] = s[:8] if len(heads[s[:8]]) == 1 else "%s..%s" % (s[:8], s[-4:])
    return names


def run_tree(tree, queries, base):
    rows = []
    for q in queries:
        ranking, error = ask(base, q["query"])
        grades = q["relevant"]
        rr, first = reciprocal_rank(ranking, grades)
        rows.append({"id": q["id"], "tree": tree, "query": q["query"], "rr": rr, "first": first,
                     "ndcg10": ndcg(ranking, grades), "ranking": ranking[:10], "error": error,
                     "relevant": grades})
    return rows


def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


def print_rows(rows):
    short = shorten(rows).get
    print("%-22s %-5s %-6s %-5s  %-34s %s" % ("query id", "RR", "nDCG", "rank", "query", "top sessions (grade)"))
    for r in rows:
        top = " ".join("%s(%d)" % (short(s), r["relevant"].get(s, 0)) for s in r["ranking"][:4])
        print("%-22s %-5.2f %-6.3f %-5s  %-34s %s" % (r["id"], r["rr"], r["ndcg10"], r["first"] or "-",
                                                     r["query"][:34], r["error"] or top or "(nothing)"))


def compare(path, summary, rows, tolerance):
    """Lists the queries whose nDCG@10 fell since the run that wrote `path`; returns the trees'
    figures that fell by more than `tolerance`."""
    with open(path, encoding="utf-8") as f:
        old = json.load(f)
    before = {(q["tree"], q["id"]): q for q in old["queries"]}
    fell = [(r, before[(r["tree"], r["id"])]) for r in rows
            if (r["tree"], r["id"]) in before and r["ndcg10"] < before[(r["tree"], r["id"])]["ndcg10"] - 1e-9]
    if fell:
        print("\nfell since %s:" % path)
        for r, b in fell:
            print("  %-22s %-34s nDCG@10 %.3f -> %.3f, RR %.2f -> %.2f" % (
                r["id"], r["query"][:34], b["ndcg10"], r["ndcg10"], b["rr"], r["rr"]))
    low = []
    for tree, now in summary.items():
        was = old["summary"].get(tree)
        if not was or tree == "overall":
            continue
        for key, name in (("mrr", "MRR"), ("ndcg10", "nDCG@10")):
            if now[key] < was[key] - tolerance:
                low.append("%s %s %.3f < %.3f" % (tree, name, now[key], was[key]))
    return low


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.environ.get("SCROLLBACK"), help="the scrollback binary (default $SCROLLBACK)")
    ap.add_argument("--url", help="ask this running server instead (with --tree: the tree it serves)")
    ap.add_argument("--tree", choices=("corpus", "generated"), help="only this tree")
    ap.add_argument("--judged", default=JUDGED, help="the judged queries (default tests/search/judged.json)")
    ap.add_argument("--corpus", default=os.environ.get("SCROLLBACK_CORPUS") or os.path.join(REPO, "..", "shared", "corpus"),
                    help="the corpus folder (default $SCROLLBACK_CORPUS, else ../shared/corpus)")
    ap.add_argument("--json", metavar="OUT", help="also write every figure to OUT as JSON")
    ap.add_argument("--baseline", metavar="OLD", help="the --json of an earlier run: exit 1 if a tree's figures fell")
    ap.add_argument("--tolerance", type=float, default=0.0, help="how far a figure may fall below --baseline")
    ap.add_argument("--min-mrr", type=float, help="exit 1 if the overall MRR is below this")
    ap.add_argument("--min-ndcg", type=float, help="exit 1 if the overall mean nDCG@10 is below this")
    ap.add_argument("--keep", action="store_true", help="keep the temporary trees and indexes (their path is printed)")
    args = ap.parse_args()
    if args.url and not args.tree:
        ap.error("--url needs --tree (the tree that server indexed)")
    if not args.url and not args.bin:
        ap.error("give the scrollback binary with --bin or $SCROLLBACK (or a running server with --url)")

    with open(args.judged, encoding="utf-8") as f:
        judged = json.load(f)["queries"]
    trees = [args.tree] if args.tree else ["corpus", "generated"]
    rows, summary, skipped = [], {}, []
    for tree in trees:
        queries = [q for q in judged if q["tree"] == tree]
        if args.url:
            rows += run_tree(tree, queries, args.url.rstrip("/"))
            continue
        if tree == "corpus" and not os.path.isdir(os.path.join(args.corpus, "real")):
            print("SKIPPED the corpus tree: %s is not here (set SCROLLBACK_CORPUS or --corpus to a copy of "
                  "shared/corpus)" % os.path.abspath(args.corpus))
            skipped.append(tree)
            continue
        work = tempfile.mkdtemp(prefix="search-quality-%s-" % tree)
        try:
            transcripts = os.path.join(work, "transcripts")
            root_args = corpus_layout(args.corpus, transcripts) if tree == "corpus" else generated_layout(transcripts)
            server = Server(args.bin, work, root_args)
            try:
                print("%s: %s" % (tree, server.summary))
                rows += run_tree(tree, queries, server.base)
            finally:
                server.close()
        finally:
            if args.keep:
                print("kept %s" % work)
            else:
                shutil.rmtree(work, ignore_errors=True)

    if not rows:
        return
    print()
    print_rows(rows)
    print()
    for tree in trees:
        mine = [r for r in rows if r["tree"] == tree]
        if not mine:
            continue
        summary[tree] = {"queries": len(mine), "mrr": mean([r["rr"] for r in mine]),
                         "ndcg10": mean([r["ndcg10"] for r in mine]), "errors": sum(1 for r in mine if r["error"])}
    summary["overall"] = {"queries": len(rows), "mrr": mean([r["rr"] for r in rows]),
                          "ndcg10": mean([r["ndcg10"] for r in rows]), "errors": sum(1 for r in rows if r["error"])}
    for name, s in summary.items():
        print("%-10s %3d queries  MRR %.3f  nDCG@10 %.3f  (%d refused or failed)" % (
            name, s["queries"], s["mrr"], s["ndcg10"], s["errors"]))
    errors = [r for r in rows if r["error"]]
    if errors:
        print("\nrefused or failed:")
        for r in errors:
            print("  %-22s %-34s %s" % (r["id"], r["query"][:34], r["error"][:100]))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"binary": args.bin, "url": args.url, "skipped": skipped, "summary": summary, "queries": rows},
                      f, ensure_ascii=False, indent=1)
            f.write("\n")
    low = compare(args.baseline, summary, rows, args.tolerance) if args.baseline else []
    if args.min_mrr is not None and summary["overall"]["mrr"] < args.min_mrr:
        low.append("MRR %.3f < %.3f" % (summary["overall"]["mrr"], args.min_mrr))
    if args.min_ndcg is not None and summary["overall"]["ndcg10"] < args.min_ndcg:
        low.append("nDCG@10 %.3f < %.3f" % (summary["overall"]["ndcg10"], args.min_ndcg))
    if low:
        sys.exit("search quality dropped: " + "; ".join(low))


if __name__ == "__main__":
    main()
