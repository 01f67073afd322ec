#!/usr/bin/python3
"""gnmi_server.py -- a small gNMI target for yangblast's integration tests.

Built on python3-grpcio + python3-protobuf; the message classes are
generated at start by protoc from the project's own src/gnmi/*.proto (see
gnmi_common.py).  The service is registered through generic method handlers
for /gnmi.gNMI/Capabilities, Get, Set (unary) and Subscribe (bidi stream).

Usage:
  /usr/bin/python3 gnmi_server.py [--port N] [--tls CERT KEY]
        [--require-user NAME] [--require-token] [--stats FILE] [--max-seconds S]
        [--status-code N] [--delay-ms N] [--workers N] [--proto-dir DIR]

  --port N           listen on 127.0.0.1:N; 0 (default) picks a free port.
                     "listening PORT" is printed on stdout once serving.
  --tls CERT KEY     serve TLS with this PEM certificate and key; without
                     it, insecure HTTP/2 (h2c, prior knowledge)
  --require-user U   every RPC must carry metadata username=U and
                     password=$GNMI_TEST_PASSWORD, else UNAUTHENTICATED
  --require-token    every RPC must carry metadata
                     authorization="Bearer $GNMI_TEST_TOKEN", else
                     UNAUTHENTICATED
  --stats FILE       JSON statistics, rewritten atomically (temp + rename)
                     on every change and on exit
  --max-seconds S    exit by itself after S seconds (default 60)
  --status-code N    fault: every RPC fails with gRPC status N and the
                     message "bad thing: 100%" (after auth checks)
  --delay-ms N       fault: every RPC waits N ms (capped at 60000) before
                     it is handled
  --workers N        handler threads (default 32); each open Subscribe
                     stream holds one
  --log-sets FILE    append every decoded SetRequest to FILE, one JSON line
                     each: [[op, path string, value], ...]
Exits 0 on SIGTERM / SIGINT / --max-seconds.

Behaviour:
  Capabilities  models openconfig-acl (+ openconfig-interfaces), encoding
                JSON_IETF, gNMI_version "0.10.0".
  Set           JSON values (json_ietf_val / json_val; scalars accepted too)
                kept in a dict path-string -> value.  Deletes, then replaces,
                then updates, then union_replaces (spec order); one
                UpdateResult per operation with its path echoed.  A value
                that is not valid JSON -> INVALID_ARGUMENT, nothing applied.
  Get           per requested path: the stored value (json_ietf_val) at
                that exact path, or every stored entry below it; NOT_FOUND
                when there is none.
  Subscribe     ONCE: one SubscribeResponse per matching stored entry, then
                sync_response.  POLL: the same, then again on every Poll.
                STREAM: initial entries (unless updates_only) and
                sync_response, then SAMPLE subscriptions send every
                sample_interval ns (default 1 s, at least 10 ms) one
                Notification (timestamp in ns) with the matching entries;
                ON_CHANGE / TARGET_DEFINED send when the store changes;
                until the client cancels or the server stops.

Statistics JSON keys: connections (distinct context.peer() strings, i.e. TCP
connections), rpcs {method: n}, rpcs_total, set_valid, set_ops {update,
replace, delete, union_replace}, get_not_found, subscribe_modes {ONCE,
POLL, STREAM}, polls, notifications_sent, usernames {name: n} (never
passwords), metadata_keys (names only), with_credentials, bearer_ok (RPCs
whose authorization metadata was the expected bearer token), unauthenticated,
bad_requests, faults_injected, store_entries, port, tls.
"""
import argparse
import json
import os
import signal
import sys
import threading
import time
from concurrent import futures

import grpc

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gnmi_common  # noqa: E402

FAULT_MESSAGE = "bad thing: 100%"
CODES = {s.value[0]: s for s in grpc.StatusCode}


class BadRequest(Exception):
    pass


class _Undecodable:
    """Stands for a request whose bytes did not parse."""
    def __init__(self, err):
        self.err = err


def safe_parser(cls):
    def parse(b):
        try:
            return cls.FromString(b)
        except Exception as e:  # google.protobuf.message.DecodeError
            return _Undecodable(str(e))
    return parse


class Stats:
    def __init__(self, path, port, tls):
        self.path = path
        self.lock = threading.Lock()
        self.peers = set()
        self.d = {
            "port": port, "tls": tls,
            "connections": 0,
            "rpcs": {"Capabilities": 0, "Get": 0, "Set": 0, "Subscribe": 0},
            "rpcs_total": 0,
            "set_valid": 0,
            "set_ops": {"update": 0, "replace": 0, "delete": 0,
                        "union_replace": 0},
            "get_not_found": 0,
            "subscribe_modes": {"ONCE": 0, "POLL": 0, "STREAM": 0},
            "polls": 0,
            "notifications_sent": 0,
            "usernames": {},
            "metadata_keys": [],
            "with_credentials": 0,
            "bearer_ok": 0,
            "unauthenticated": 0,
            "bad_requests": 0,
            "faults_injected": 0,
            "store_entries": 0,
        }

    def update(self, fn):
        with self.lock:
            fn(self.d)
            self._write()

    def rpc(self, method, peer, md):
        def f(d):
            if peer and peer not in self.peers:
                self.peers.add(peer)
                d["connections"] = len(self.peers)
            d["rpcs"][method] += 1
            d["rpcs_total"] += 1
            keys = set(d["metadata_keys"])
            for k in md:
                if k not in keys and not k.startswith(("grpc-", ":")) and \
                        k not in ("user-agent", "te", "content-type"):
                    keys.add(k)
            d["metadata_keys"] = sorted(keys)
            if "username" in md:
                u = md["username"]
                d["usernames"][u] = d["usernames"].get(u, 0) + 1
            if "username" in md or "password" in md:
                d["with_credentials"] += 1
        self.update(f)

    def inc(self, key, n=1):
        def f(d):
            d[key] += n
        self.update(f)

    def write(self):
        with self.lock:
            self._write()

    def _write(self):
        if not self.path:
            return
        tmp = "%s.tmp.%d" % (self.path, os.getpid())
        with open(tmp, "w") as f:
            json.dump(self.d, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, self.path)


class Store:
    """path string -> (gnmi.Path, value); a version counter and a condition
    for ON_CHANGE subscribers."""
    def __init__(self):
        self.cond = threading.Condition()
        self.items = {}
        self.version = 0

    def matching(self, root):
        with self.cond:
            return [(k, p, v) for k, (p, v) in sorted(self.items.items())
                    if gnmi_common.under(k, root)]


class GnmiService:
    def __init__(self, pb, args, stats, stopping):
        self.pb = pb
        self.a = args
        self.stats = stats
        self.stopping = stopping
        self.store = Store()
        self.log_lock = threading.Lock()
        self.password = os.environ.get("GNMI_TEST_PASSWORD", "")
        self.token = os.environ.get("GNMI_TEST_TOKEN", "")

    # ---- common prologue --------------------------------------------------
    def prologue(self, method, context):
        md = {}
        for k, v in context.invocation_metadata():
            md[k] = v
        self.stats.rpc(method, context.peer(), md)
        if self.a.delay_ms > 0:
            time.sleep(min(self.a.delay_ms, 60000) / 1000.0)
        if self.a.require_user is not None:
            if md.get("username") != self.a.require_user or \
                    md.get("password") != self.password:
                self.stats.inc("unauthenticated")
                context.abort(grpc.StatusCode.UNAUTHENTICATED,
                              "authentication failed: bad or missing "
                              "username/password metadata")
        if md.get("authorization") == "Bearer " + self.token and self.token:
            self.stats.inc("bearer_ok")
        elif self.a.require_token:
            self.stats.inc("unauthenticated")
            context.abort(grpc.StatusCode.UNAUTHENTICATED,
                          "authentication failed: bad or missing bearer token")
        if self.a.status_code:
            self.stats.inc("faults_injected")
            context.abort(CODES.get(self.a.status_code,
                                    grpc.StatusCode.UNKNOWN), FAULT_MESSAGE)

    def bad(self, context, msg):
        self.stats.inc("bad_requests")
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, msg)

    def check_decoded(self, req, context):
        if isinstance(req, _Undecodable):
            self.bad(context, "request does not parse: " + req.err)

    # ---- values -----------------------------------------------------------
    def decode_val(self, u):
        tv = u.val
        kind = tv.WhichOneof("value")
        if kind in ("json_ietf_val", "json_val"):
            try:
                return json.loads(getattr(tv, kind).decode("utf-8"))
            except (ValueError, UnicodeDecodeError) as e:
                raise BadRequest("value at %s is not JSON: %s" %
                                 (gnmi_common.path_str(u.path), e))
        if kind in ("string_val", "ascii_val", "int_val", "uint_val",
                    "bool_val", "float_val", "double_val"):
            return getattr(tv, kind)
        if kind == "bytes_val" or kind == "proto_bytes":
            return getattr(tv, kind).hex()
        if u.HasField("value"):      # deprecated Value
            try:
                return json.loads(u.value.value.decode("utf-8"))
            except (ValueError, UnicodeDecodeError) as e:
                raise BadRequest("deprecated value is not JSON: %s" % e)
        raise BadRequest("update at %s has no value" %
                         gnmi_common.path_str(u.path))

    def typed(self, v):
        return self.pb.TypedValue(json_ietf_val=json.dumps(
            v, separators=(",", ":")).encode())

    # ---- RPCs -------------------------------------------------------------
    def Capabilities(self, req, context):
        self.prologue("Capabilities", context)
        self.check_decoded(req, context)
        pb = self.pb
        return pb.CapabilityResponse(
            supported_models=[
                pb.ModelData(name="openconfig-acl",
                             organization="OpenConfig working group",
                             version="1.3.3"),
                pb.ModelData(name="openconfig-interfaces",
                             organization="OpenConfig working group",
                             version="3.0.0"),
            ],
            supported_encodings=[pb.JSON_IETF],
            gNMI_version="0.10.0")

    def Set(self, req, context):
        self.prologue("Set", context)
        self.check_decoded(req, context)
        pb = self.pb
        ops = []     # (opname, full path, value)
        try:
            for p in req.delete:
                ops.append(("delete", gnmi_common.join_path(pb, req.prefix, p),
                            None))
            for kind, lst in (("replace", req.replace), ("update", req.update),
                              ("union_replace", req.union_replace)):
                for u in lst:
                    ops.append((kind, gnmi_common.join_path(pb, req.prefix,
                                                            u.path),
                                self.decode_val(u)))
        except BadRequest as e:
            self.bad(context, str(e))
        if self.a.log_sets:
            # one JSON line per decoded SetRequest: what the client encoded
            line = json.dumps([[k, gnmi_common.path_str(p), v] for k, p, v in ops],
                              sort_keys=True)
            with self.log_lock, open(self.a.log_sets, "a") as f:
                f.write(line + "\n")
        opcode = {"delete": pb.UpdateResult.DELETE,
                  "replace": pb.UpdateResult.REPLACE,
                  "update": pb.UpdateResult.UPDATE,
                  "union_replace": pb.UpdateResult.UNION_REPLACE}
        resp = pb.SetResponse(timestamp=time.time_ns())
        resp.prefix.CopyFrom(req.prefix)
        st = self.store
        with st.cond:
            for kind, full, val in ops:
                key = gnmi_common.path_str(full)
                if kind in ("delete", "replace", "union_replace"):
                    for k in [k for k in st.items
                              if gnmi_common.under(k, key)]:
                        del st.items[k]
                if kind != "delete":
                    st.items[key] = (full, val)
            st.version += 1
            st.cond.notify_all()
            n_items = len(st.items)
        for (kind, _full, _v), src in zip(ops, list(req.delete) +
                                          [u.path for u in req.replace] +
                                          [u.path for u in req.update] +
                                          [u.path for u in req.union_replace]):
            resp.response.add(path=src, op=opcode[kind])

        def f(d):
            d["set_valid"] += 1
            for kind, _p, _v in ops:
                d["set_ops"][kind] += 1
            d["store_entries"] = n_items
        self.stats.update(f)
        return resp

    def Get(self, req, context):
        self.prologue("Get", context)
        self.check_decoded(req, context)
        pb = self.pb
        paths = list(req.path) or [pb.Path()]
        resp = pb.GetResponse()
        now = time.time_ns()
        for p in paths:
            full = gnmi_common.join_path(pb, req.prefix, p)
            key = gnmi_common.path_str(full)
            found = self.store.matching(key)
            if not found:
                self.stats.inc("get_not_found")
                context.abort(grpc.StatusCode.NOT_FOUND,
                              "no data at %s" % key)
            n = resp.notification.add(timestamp=now)
            for _k, fp, v in found:
                n.update.add(path=fp, val=self.typed(v))
        return resp

    def _snapshot(self, prefix, subs):
        """One SubscribeResponse (a Notification with one Update) per stored
        entry matching any subscription."""
        pb = self.pb
        seen, out = set(), []
        roots = [gnmi_common.path_str(gnmi_common.join_path(pb, prefix, s.path))
                 for s in subs] or [gnmi_common.path_str(prefix)]
        for root in roots:
            for k, fp, v in self.store.matching(root):
                if k in seen:
                    continue
                seen.add(k)
                r = pb.SubscribeResponse()
                r.update.timestamp = time.time_ns()
                r.update.update.add(path=fp, val=self.typed(v))
                out.append(r)
        return out

    def _sample(self, prefix, subs):
        """One Notification carrying every matching entry (maybe none)."""
        pb = self.pb
        r = pb.SubscribeResponse()
        r.update.timestamp = time.time_ns()
        r.update.prefix.CopyFrom(prefix)
        for s in self._snapshot(prefix, subs):
            r.update.update.extend(s.update.update)
        return r

    def _sync(self):
        return self.pb.SubscribeResponse(sync_response=True)

    def Subscribe(self, req_iter, context):
        self.prologue("Subscribe", context)
        pb = self.pb
        try:
            first = next(req_iter)
        except StopIteration:
            return
        self.check_decoded(first, context)
        if first.WhichOneof("request") != "subscribe":
            self.bad(context, "the first SubscribeRequest must carry a "
                     "SubscriptionList")
        sl = first.subscribe
        mode = pb.SubscriptionList.Mode.Name(sl.mode)
        self.stats.update(lambda d: d["subscribe_modes"].__setitem__(
            mode, d["subscribe_modes"][mode] + 1))
        subs = list(sl.subscription)

        def sent(n):
            self.stats.inc("notifications_sent", n)

        if sl.mode in (pb.SubscriptionList.ONCE, pb.SubscriptionList.POLL):
            snap = self._snapshot(sl.prefix, subs)
            yield from snap
            yield self._sync()
            sent(len(snap))
            if sl.mode == pb.SubscriptionList.ONCE:
                return
            for r in req_iter:
                if isinstance(r, _Undecodable) or \
                        r.WhichOneof("request") != "poll":
                    self.bad(context, "only Poll requests may follow a POLL "
                             "subscription")
                self.stats.inc("polls")
                snap = self._snapshot(sl.prefix, subs)
                yield from snap
                yield self._sync()
                sent(len(snap))
            return

        # STREAM
        done = threading.Event()
        context.add_callback(done.set)
        if not sl.updates_only:
            snap = self._snapshot(sl.prefix, subs)
            yield from snap
            sent(len(snap))
        yield self._sync()
        sample = [s for s in subs if s.mode == pb.SAMPLE]
        onchange = [s for s in subs if s.mode != pb.SAMPLE]
        interval = None
        if sample:
            interval = min((s.sample_interval or 1_000_000_000)
                           for s in sample) / 1e9
            interval = max(interval, 0.010)
        next_due = time.monotonic() + (interval or 0)
        version = self.store.version
        while not done.is_set() and not self.stopping.is_set() and \
                context.is_active():
            wait = 0.25
            if interval is not None:
                wait = min(wait, max(0.0, next_due - time.monotonic()))
            if onchange:
                with self.store.cond:
                    if self.store.version == version:
                        self.store.cond.wait(wait)
                    changed = self.store.version != version
                    version = self.store.version
                if changed:
                    snap = self._snapshot(sl.prefix, onchange)
                    yield from snap
                    sent(len(snap))
            else:
                done.wait(wait)
            if interval is not None and time.monotonic() >= next_due:
                next_due += interval
                if next_due < time.monotonic():     # fell behind; skip ahead
                    next_due = time.monotonic() + interval
                yield self._sample(sl.prefix, sample)
                sent(1)


def main():
    ap = argparse.ArgumentParser(description="small gNMI test server")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    ap.add_argument("--require-user", metavar="NAME")
    ap.add_argument("--require-token", action="store_true")
    ap.add_argument("--stats", metavar="FILE")
    ap.add_argument("--max-seconds", type=float, default=60.0)
    ap.add_argument("--status-code", type=int, default=0)
    ap.add_argument("--delay-ms", type=int, default=0)
    ap.add_argument("--workers", type=int, default=32)
    ap.add_argument("--proto-dir")
    ap.add_argument("--log-sets", metavar="FILE",
                    help="append each decoded SetRequest to FILE as a JSON line: "
                         "[[op, path, value], ...]")
    ap.add_argument("--deep-get", type=int, default=0, metavar="N",
                    help="answer Get with a GetResponse whose value nests N leaf-lists deep")
    a = ap.parse_args()
    if a.status_code and a.status_code not in CODES:
        ap.error("--status-code must be a gRPC status code (1..16)")

    pb, _ext = gnmi_common.load_protos(a.proto_dir)
    stopping = threading.Event()

    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max(2, a.workers)),
        options=[("grpc.so_reuseport", 0),
                 ("grpc.max_receive_message_length", 64 * 1024 * 1024),
                 ("grpc.max_send_message_length", 64 * 1024 * 1024)])
    addr = "127.0.0.1:%d" % a.port
    if a.tls:
        with open(a.tls[0], "rb") as f:
            cert = f.read()
        with open(a.tls[1], "rb") as f:
            key = f.read()
        port = server.add_secure_port(
            addr, grpc.ssl_server_credentials([(key, cert)]))
    else:
        port = server.add_insecure_port(addr)
    if not port:
        print("gnmi_server: cannot listen on %s" % addr, file=sys.stderr)
        sys.exit(2)

    stats = Stats(a.stats, port, bool(a.tls))
    svc = GnmiService(pb, a, stats, stopping)
    handlers = {
        "Capabilities": grpc.unary_unary_rpc_method_handler(
            svc.Capabilities,
            request_deserializer=safe_parser(pb.CapabilityRequest),
            response_serializer=pb.CapabilityResponse.SerializeToString),
        "Get": grpc.unary_unary_rpc_method_handler(
            svc.Get if not a.deep_get else (lambda _req, _ctx: None),
            request_deserializer=safe_parser(pb.GetRequest),
            response_serializer=(pb.GetResponse.SerializeToString if not a.deep_get
                                 else (lambda _r, b=gnmi_common.deep_get_response(a.deep_get): b))),
        "Set": grpc.unary_unary_rpc_method_handler(
            svc.Set,
            request_deserializer=safe_parser(pb.SetRequest),
            response_serializer=pb.SetResponse.SerializeToString),
        "Subscribe": grpc.stream_stream_rpc_method_handler(
            svc.Subscribe,
            request_deserializer=safe_parser(pb.SubscribeRequest),
            response_serializer=pb.SubscribeResponse.SerializeToString),
    }
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("gnmi.gNMI", handlers),))
    server.start()
    stats.write()
    print("listening", port, flush=True)

    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    deadline = time.monotonic() + a.max_seconds
    while not stopping.is_set() and time.monotonic() < deadline:
        stopping.wait(min(0.5, max(0.0, deadline - time.monotonic())))
    stopping.set()
    with svc.store.cond:
        svc.store.cond.notify_all()
    server.stop(grace=0.5).wait(5)
    stats.write()
    sys.exit(0)


if __name__ == "__main__":
    main()
