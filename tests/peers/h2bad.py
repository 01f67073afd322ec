#!/usr/bin/python3
"""h2bad.py -- a misbehaving HTTP/2 gRPC peer for yangblast's tests.

Speaks h2c (prior knowledge) through python3-h2, answers every request
with a gRPC-shaped response and misbehaves as --mode says:

  ok               a proper answer: :status 200, one message, trailers
                   grpc-status 0.  The message is a SetResponse with one
                   UpdateResult for /gnmi.gNMI/Set, an empty message
                   (valid Get/CapabilityResponse) otherwise.
  goaway-after:N   per connection: after N answered streams, a GOAWAY
                   (NO_ERROR) whose last-stream-id is the highest stream
                   received so far; the streams up to it are still
                   answered, the later ones ignored (the client must treat
                   them as refused); the socket is closed once the last of
                   them is answered.
  rst              headers and half the message, then RST_STREAM
                   INTERNAL_ERROR (a reset in the middle of the response)
  oversized[:B]    one message of B bytes (default 1 MiB): a valid
                   CapabilityResponse (gNMI_version = B-ish bytes of 'x'),
                   grpc-status 0
  no-status        :status 200 and the message, END_STREAM on the data: no
                   trailers, so no grpc-status
  non200[:CODE]    :status CODE (default 404), trailers-only, END_STREAM
  silent           accepts the connection and never sends a byte (no
                   SETTINGS: the HTTP/2 session is never ready)
  hoard:B          every stream gets :status 200 and the prefix of one
                   B-byte message at once (a valid CapabilityResponse, as
                   oversized), then the message's bytes round-robin over
                   all open streams as fast as flow control allows, then
                   grpc-status 0: a client that buffers every response
                   holds streams x B bytes.  Streams the client resets are
                   dropped.

Usage:
  /usr/bin/python3 h2bad.py --mode MODE [--port N] [--stats FILE]
        [--max-seconds S] [--abort-every N]

--abort-every N: the 1st, (N+1)th, ... connection is aborted with an RST
(SO_LINGER 0) as soon as it is accepted, without reading, so the client's
first write races the reset; the others are served by MODE (counted in
stats "aborted").
"listening PORT" is printed on stdout once serving.  --stats: JSON
{mode, connections, requests, answered, goaways, resets, ignored,
client_resets, bytes_sent},
rewritten atomically on every change.  Exits 0 on SIGTERM / SIGINT /
--max-seconds (default 60).
"""
import argparse
import json
import os
import signal
import socket
import struct
import sys
import threading
import time

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import hyperframe.frame

from gnmi_common import varint


def grpc_frame(msg):
    return struct.pack(">BI", 0, len(msg)) + msg


class Stats:
    def __init__(self, path, mode):
        self.path = path
        self.lock = threading.Lock()
        self.d = {"mode": mode, "connections": 0, "requests": 0, "answered": 0,
                  "goaways": 0, "resets": 0, "ignored": 0,
                  "client_resets": 0, "bytes_sent": 0, "aborted": 0}
        self._write()

    def add(self, key, n=1):
        with self.lock:
            self.d[key] += n
            self._write()

    def _write(self):
        if not self.path:
            return
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.d, f, indent=1, sort_keys=True)
        os.replace(tmp, self.path)


class Conn:
    def __init__(self, sock, args, stats):
        self.sock = sock
        self.args = args
        self.stats = stats
        self.h2 = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        self.paths = {}
        self.answered = 0
        self.max_seen = 0
        self.goaway_last = None   # set once the GOAWAY went out
        self.pending = set()      # streams <= goaway_last not answered yet

    def flush(self):
        data = self.h2.data_to_send()
        if data:
            self.sock.sendall(data)

    def send_message(self, sid, payload, end_stream):
        """Sends payload in frames that fit the peer's limits."""
        off = 0
        while off < len(payload):
            n = min(len(payload) - off, self.h2.max_outbound_frame_size,
                    self.h2.local_flow_control_window(sid))
            if n <= 0:
                raise RuntimeError("flow control window exhausted")
            last = off + n == len(payload)
            self.h2.send_data(sid, payload[off:off + n], end_stream=end_stream and last)
            off += n
            self.flush()

    def answer(self, sid):
        mode = self.args.mode
        path = self.paths.pop(sid, "")
        if mode.startswith("non200"):
            code = mode.split(":", 1)[1] if ":" in mode else "404"
            self.h2.send_headers(sid, [(":status", code),
                                       ("content-type", "application/grpc")],
                                 end_stream=True)
            self.flush()
            self.stats.add("answered")
            return
        if mode.startswith("oversized"):
            size = int(mode.split(":", 1)[1]) if ":" in mode else 1 << 20
            msg = b"\x1a" + varint(size) + b"x" * size
        elif path == "/gnmi.gNMI/Set":
            msg = b"\x12\x00"  # SetResponse{response: [UpdateResult{}]}
        else:
            msg = b""
        body = grpc_frame(msg)
        self.h2.send_headers(sid, [(":status", "200"),
                                   ("content-type", "application/grpc")])
        if mode == "rst":
            self.send_message(sid, body[:max(1, len(body) // 2)], False)
            self.h2.reset_stream(sid, error_code=h2.errors.ErrorCodes.INTERNAL_ERROR)
            self.flush()
            self.stats.add("resets")
            self.stats.add("answered")
            return
        if mode == "no-status":
            self.send_message(sid, body, True)
            self.stats.add("answered")
            return
        self.send_message(sid, body, False)
        self.h2.send_headers(sid, [("grpc-status", "0")], end_stream=True)
        self.flush()
        self.stats.add("answered")

    def on_request_done(self, sid):
        if self.goaway_last is not None:
            if sid > self.goaway_last:
                self.stats.add("ignored")
                return
            self.answer(sid)
            self.pending.discard(sid)
            return
        self.answer(sid)
        self.answered += 1
        mode = self.args.mode
        if mode.startswith("goaway-after:") and self.answered >= int(mode.split(":", 1)[1]):
            # last-stream-id = the stream just answered: requests already
            # received above it were not processed, so a correct client
            # retries them on a new connection.
            self.goaway_last = sid
            self.pending = {s for s in self.paths if s <= self.goaway_last}
            # Raw frame: python-h2's close_connection() would end the state
            # machine, and the streams below last-stream-id still need answers.
            self.flush()
            self.sock.sendall(hyperframe.frame.GoAwayFrame(
                0, last_stream_id=self.goaway_last, error_code=0).serialize())
            self.stats.add("goaways")

    def hoard(self):
        """--mode hoard:B (see the module doc)."""
        import select
        size = int(self.args.mode.split(":", 1)[1])
        msg = b"\x1a" + varint(size) + b"x" * size
        body = grpc_frame(msg)
        out = {}      # stream id -> bytes of body sent
        self.h2.initiate_connection()
        self.flush()
        while True:
            progress = False
            for sid in list(out):
                off = out[sid]
                n = min(len(body) - off, self.h2.max_outbound_frame_size,
                        self.h2.local_flow_control_window(sid))
                if n > 0:
                    self.h2.send_data(sid, body[off:off + n])
                    out[sid] = off + n
                    self.stats.d["bytes_sent"] += n
                    progress = True
                if out[sid] == len(body):
                    self.h2.send_headers(sid, [("grpc-status", "0")], end_stream=True)
                    del out[sid]
                    self.stats.add("answered")
                self.flush()
            r, _, _ = select.select([self.sock], [], [], 0 if progress else 5)
            if not r:
                if progress:
                    continue
                return
            data = self.sock.recv(65536)
            if not data:
                return
            for ev in self.h2.receive_data(data):
                if isinstance(ev, h2.events.RequestReceived):
                    self.stats.add("requests")
                    self.h2.send_headers(ev.stream_id, [(":status", "200"),
                                                        ("content-type", "application/grpc")])
                    self.h2.send_data(ev.stream_id, body[:5])
                    out[ev.stream_id] = 5
                elif isinstance(ev, h2.events.DataReceived):
                    if ev.flow_controlled_length:
                        self.h2.acknowledge_received_data(ev.flow_controlled_length,
                                                          ev.stream_id)
                elif isinstance(ev, h2.events.StreamReset):
                    out.pop(ev.stream_id, None)
                    self.stats.add("client_resets")
                elif isinstance(ev, h2.events.ConnectionTerminated):
                    self.flush()
                    return
            self.flush()

    def run(self):
        if self.args.mode.startswith("hoard:"):
            self.hoard()
            return
        if self.args.mode == "silent":
            while self.sock.recv(65536):
                pass
            return
        self.h2.initiate_connection()
        self.flush()
        while True:
            if self.goaway_last is not None and not self.pending:
                time.sleep(0.05)  # let the client read the last answers first
                return
            try:
                data = self.sock.recv(65536)
            except OSError:
                return
            if not data:
                return
            try:
                events = self.h2.receive_data(data)
            except h2.exceptions.ProtocolError:
                self.flush()
                return
            for ev in events:
                if isinstance(ev, h2.events.RequestReceived):
                    self.stats.add("requests")
                    self.max_seen = max(self.max_seen, ev.stream_id)
                    self.paths[ev.stream_id] = dict(ev.headers).get(":path", "")
                elif isinstance(ev, h2.events.DataReceived):
                    if ev.flow_controlled_length:
                        self.h2.acknowledge_received_data(ev.flow_controlled_length,
                                                          ev.stream_id)
                elif isinstance(ev, h2.events.StreamEnded):
                    try:
                        self.on_request_done(ev.stream_id)
                    except h2.exceptions.StreamClosedError:
                        pass
                elif isinstance(ev, h2.events.StreamReset):
                    self.paths.pop(ev.stream_id, None)
                    self.pending.discard(ev.stream_id)
                elif isinstance(ev, h2.events.ConnectionTerminated):
                    self.flush()
                    return
            self.flush()


def serve_conn(sock, args, stats):
    stats.add("connections")
    try:
        Conn(sock, args, stats).run()
    except (OSError, RuntimeError, h2.exceptions.H2Error):
        pass
    finally:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--stats")
    ap.add_argument("--max-seconds", type=float, default=60.0)
    ap.add_argument("--abort-every", type=int, default=0)
    args = ap.parse_args()
    ok = ("ok", "rst", "no-status", "silent")
    if args.mode not in ok and not args.mode.startswith(("goaway-after:", "oversized", "non200",
                                                         "hoard:")):
        ap.error("unknown --mode " + args.mode)
    stats = Stats(args.stats, args.mode)
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", args.port))
    ls.listen(128)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, lambda *_: os._exit(0))
    threading.Timer(args.max_seconds, lambda: os._exit(0)).start()
    print("listening", ls.getsockname()[1], flush=True)
    accepted = 0
    while True:
        s, _ = ls.accept()
        accepted += 1
        if args.abort_every > 0 and accepted % args.abort_every == 1 % args.abort_every:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
            stats.add("aborted")
            continue
        threading.Thread(target=serve_conn, args=(s, args, stats), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
