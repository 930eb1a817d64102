#!/usr/bin/env python3
"""Driver for benches/http.sh. Everything listens on 127.0.0.1 only."""
import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def user_line(session, uuid, photo):
    return json.dumps({
        "type": "user", "uuid": uuid, "sessionId": session, "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": base64.b64encode(photo).decode()}},
            {"type": "text", "text": "a photo"}]}}, separators=(",", ":")) + "\n"


def text_line(session, n):
    return json.dumps({
        "type": "user" if n % 2 else "assistant", "uuid": f"t{n}", "sessionId": session,
        "timestamp": "2026-01-01T00:00:%02dZ" % (n % 60),
        "message": {"role": "user" if n % 2 else "assistant",
                    "content": [{"type": "text", "text": f"message {n} of a long session, with a few words"}]}},
        separators=(",", ":")) + "\n"


def wrk(url, connections, seconds, latency=False):
    args = ["wrk", f"-t{min(2, connections)}", f"-c{connections}", f"-d{seconds}s"] + (["--latency"] if latency else []) + [url]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    pct = dict(re.findall(r"^\s+(50|75|90|99)%\s+([\d.]+\w+)", out, re.M))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return rps, pct, int(errors.group(1)) if errors else 0


def wait_for(url):
    for _ in range(600):
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except Exception:
            time.sleep(0.1)
    sys.exit(f"{url} never answered")


def vm(pid, field):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    return 0.0


def main():
    binary, work = sys.argv[1], os.path.abspath(sys.argv[2])
    root = os.path.join(work, "projects", "p")
    data = os.path.join(work, "data")
    shutil.rmtree(os.path.join(work, "projects"), ignore_errors=True)
    shutil.rmtree(data, ignore_errors=True)
    os.makedirs(root)
    photo = os.urandom(1_000_000)
    big = os.urandom(20_000_000)
    with open(os.path.join(root, "photos.jsonl"), "w") as f:
        f.write(user_line("photos", "one-mb", photo))
        f.write(user_line("photos", "twenty-mb", big))
    with open(os.path.join(root, "long.jsonl"), "w") as f:
        for n in range(100_000):
            f.write(text_line("long", n))
    static = os.path.join(work, "static")
    os.makedirs(static, exist_ok=True)
    with open(os.path.join(static, "photo.png"), "wb") as f:
        f.write(photo)

    port, nginx_port = free_port(), free_port()
    serve = [binary, "serve", "--transcripts", os.path.join(work, "projects"), "--data-dir", data,
             "--listen", f"127.0.0.1:{port}"]
    server = subprocess.Popen(serve, stderr=subprocess.DEVNULL)
    conf = os.path.join(work, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""daemon off; worker_processes 1; pid {work}/nginx.pid; error_log {work}/nginx-error.log;
events {{ worker_connections 1024; }}
http {{ access_log off; sendfile on; types {{ image/png png; }}
  server {{ listen 127.0.0.1:{nginx_port}; root {static};
    location / {{ add_header Cache-Control "private, max-age=31536000, immutable"; }} }} }}
""")
    nginx = subprocess.Popen(["nginx", "-c", conf, "-p", work], stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for(f"{base}/api/sessions")
        while True:
            s = json.load(urllib.request.urlopen(f"{base}/api/sessions"))["sessions"]
            if {x["id"]: x["entries"] for x in s}.get("long") == 100_000 and any(x["id"] == "photos" for x in s):
                break
            time.sleep(0.2)
        wait_for(f"http://127.0.0.1:{nginx_port}/photo.png")
        media_url = f"{base}/api/session-media/photos/one-mb/0"
        assert urllib.request.urlopen(media_url).read() == photo
        ours, _, e1 = wrk(media_url, 32, 10)
        theirs, _, e2 = wrk(f"http://127.0.0.1:{nginx_port}/photo.png", 32, 10)
        print(f"1 MB photo, 32 connections, 10 s: scrollback {ours:.0f} req/s, nginx {theirs:.0f} req/s, "
              f"ratio {ours / theirs:.2f}x (non-2xx: {e1}, {e2})")
        page = json.load(urllib.request.urlopen(f"{base}/api/sessions/long/history?limit=100"))
        before = page["before"]
        history_url = f"{base}/api/sessions/long/history?limit=100&before={before - 50_000}"
        # Again with each request's server-side time logged (warp's elapsed: request in to response made).
        server.terminate()
        server.wait()
        log_path = os.path.join(work, "serve-debug.log")
        with open(log_path, "w") as log:
            server = subprocess.Popen(serve, stderr=log, env=dict(os.environ, RUST_LOG="scrollback::http=debug",
                                                                   NO_COLOR="1"))
        wait_for(f"{base}/api/sessions")
        for connections in (1, 4):
            start = os.path.getsize(log_path)
            rps, pct, e3 = wrk(history_url, connections, 10, latency=True)
            with open(log_path) as log:
                log.seek(start)
                times = sorted(int(m) for m in re.findall(r'path="/api/sessions/long/history" status=200 elapsed_us=(\d+)', log.read()))
            p = lambda q: times[min(len(times) - 1, int(q * (len(times) - 1)))] / 1000
            print(f"history page of 100 (of 100,000), {connections} connection(s): {rps:.0f} req/s; server-side p50 "
                  f"{p(0.5):.2f} ms, p99 {p(0.99):.2f} ms over {len(times)} requests; client-side p50 {pct.get('50')}, "
                  f"p99 {pct.get('99')} (non-2xx: {e3})")
        big_url = f"{base}/api/session-media/photos/twenty-mb/0"
        assert len(urllib.request.urlopen(big_url).read()) == 20_000_000
        before_kb = vm(server.pid, "VmHWM")
        rps, _, e4 = wrk(big_url, 64, 10)
        print(f"20 MB photo, 64 connections, 10 s: {rps:.1f} req/s; server peak RSS {vm(server.pid, 'VmHWM'):.1f} MB "
              f"(before the run {before_kb:.1f} MB; non-2xx: {e4})")
    finally:
        server.terminate()
        nginx.terminate()
        server.wait()
        nginx.wait()


if __name__ == "__main__":
    main()
