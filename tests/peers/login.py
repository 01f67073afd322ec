#!/usr/bin/python3
"""A login-token HTTP/1.1 peer for chain tests (tests/run/chain_values.sh).

POST /login answers 200 with a new token twice: in the JSON body
({"session": {"token": T1}}) and in the X-Auth-Token header (T2).  A
request to any other path is answered 200 when it carries
"Authorization: Bearer T1" or "X-Auth-Token: T2" of a login, else 401.
Each token is good for one request.  GET /big?n=N is a login whose JSON
answer ({"pad": "xx...", "token": T1}) is N bytes long.  On exit (SIGTERM or --max-seconds)
writes --stats FILE: {"logins": N, "good": N, "bad": N, "bad_values": [...]
(the first 5 values that were refused, to show what was sent), "issued":
[the first 2000 tokens handed out, so a test can look for them where they
must never appear]}.
Prints "listening PORT" when ready (tests/peers/peer.sh)."""
import argparse
import json
import secrets
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
stats = {"logins": 0, "good": 0, "bad": 0, "bad_values": [], "issued": []}
tokens = set()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, code, body, headers=()):
        b = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/yang-data+json")
        self.send_header("Content-Length", str(len(b)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(b)

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        if self.command == "POST" and self.path == "/login":
            t1, t2 = secrets.token_hex(16), secrets.token_urlsafe(24)
            with lock:
                stats["logins"] += 1
                tokens.update(("bearer " + t1, "x " + t2))
                if len(stats["issued"]) < 2000:
                    stats["issued"] += [t1, t2]
            self.reply(200, {"session": {"token": t1, "ttl": 60}}, [("X-Auth-Token", t2)])
            return
        if self.command == "GET" and self.path.startswith("/big?n="):
            # a login whose answer is padded to n bytes (the chain's cap)
            t1 = secrets.token_hex(16)
            with lock:
                stats["logins"] += 1
                tokens.add("bearer " + t1)
                stats["issued"].append(t1)
            pad = int(self.path[7:]) - len('{"pad":"","token":""}') - len(t1)
            self.send_response(200)
            b = ('{"pad":"%s","token":"%s"}' % ("x" * max(pad, 0), t1)).encode()
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)
            return
        auth = self.headers.get("Authorization") or ""
        x = self.headers.get("X-Auth-Token")
        keys = []
        if auth.startswith("Bearer "):
            keys.append("bearer " + auth[7:])
        if x is not None:
            keys.append("x " + x)
        with lock:
            ok = bool(keys) and all(k in tokens for k in keys)
            for k in keys:
                tokens.discard(k)
            stats["good" if ok else "bad"] += 1
            if not ok and len(stats["bad_values"]) < 5:
                stats["bad_values"].append([auth, x])
        if ok:
            self.reply(200, {"ok": True})
        else:
            self.reply(401, {"error": "bad token"})

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stats", required=True)
    ap.add_argument("--max-seconds", type=float, default=60)
    a = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True

    def stop(*_):
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    t = threading.Timer(a.max_seconds, stop)
    t.daemon = True
    t.start()
    print("listening %d" % srv.server_address[1], flush=True)
    srv.serve_forever()
    with lock:
        with open(a.stats, "w") as f:
            json.dump(stats, f)
    sys.exit(0)


if __name__ == "__main__":
    main()
