#!/usr/bin/python3
"""gnmi_client.py -- a small gNMI client for tests (python3-grpcio).

Usage:
  /usr/bin/python3 gnmi_client.py --target 127.0.0.1:PORT [--tls CA]
        [--user NAME [--password PW]] [--timeout S] [--proto-dir DIR] COMMAND

Commands (results on stdout, one JSON document per line):
  capabilities                    {"gNMI_version":..,"encodings":[..],"models":[..]}
  set JSON_FILE PATH [--op update|replace|union_replace]
                                  {"results":[{"op":"UPDATE","path":"/..."}]}
  delete PATH                     as set
  get PATH                        one line per returned update:
                                  {"path":"/...","value":<json>}
  subscribe-once PATH             one line per update, then {"sync":true}
  subscribe-poll PATH N           initial + N polls, each ending {"sync":true}
  subscribe-stream PATH --interval-ms MS --count N
                                  SAMPLE stream; prints N sampled
                                  notifications {"timestamp":ns,"updates":k}
                                  after the sync, then cancels

--tls CA verifies the server against CA (the server certificate must name
localhost or 127.0.0.1; --server-name overrides).  --password defaults to
$GNMI_TEST_PASSWORD.  Credentials travel as "username"/"password" metadata.
On an RPC error prints "rpc error: CODE: details" on stderr and exits 1;
usage errors exit 2.
"""
import argparse
import json
import os
import sys

import grpc

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gnmi_common  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description="small gNMI test client")
    ap.add_argument("--target", required=True)
    ap.add_argument("--tls", metavar="CA")
    ap.add_argument("--server-name")
    ap.add_argument("--user")
    ap.add_argument("--password")
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--proto-dir")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("capabilities")
    s = sub.add_parser("set")
    s.add_argument("json_file")
    s.add_argument("path")
    s.add_argument("--op", default="update",
                   choices=("update", "replace", "union_replace"))
    s = sub.add_parser("delete")
    s.add_argument("path")
    s = sub.add_parser("get")
    s.add_argument("path")
    s = sub.add_parser("subscribe-once")
    s.add_argument("path")
    s = sub.add_parser("subscribe-poll")
    s.add_argument("path")
    s.add_argument("polls", type=int)
    s = sub.add_parser("subscribe-stream")
    s.add_argument("path")
    s.add_argument("--interval-ms", type=int, default=100)
    s.add_argument("--count", type=int, default=3)
    a = ap.parse_args()

    pb, _ext = gnmi_common.load_protos(a.proto_dir)
    if a.tls:
        with open(a.tls, "rb") as f:
            creds = grpc.ssl_channel_credentials(root_certificates=f.read())
        opts = [("grpc.ssl_target_name_override", a.server_name)] \
            if a.server_name else []
        ch = grpc.secure_channel(a.target, creds, options=opts)
    else:
        ch = grpc.insecure_channel(a.target)
    md = []
    if a.user is not None:
        md = [("username", a.user),
              ("password", a.password if a.password is not None
               else os.environ.get("GNMI_TEST_PASSWORD", ""))]

    def unary(name, req_cls, resp_cls):
        return ch.unary_unary("/gnmi.gNMI/" + name,
                              request_serializer=req_cls.SerializeToString,
                              response_deserializer=resp_cls.FromString)

    def jval(tv):
        kind = tv.WhichOneof("value")
        if kind in ("json_ietf_val", "json_val"):
            return json.loads(getattr(tv, kind))
        return getattr(tv, kind) if kind else None

    def out(obj):
        print(json.dumps(obj, sort_keys=True), flush=True)

    def print_updates(notif):
        for u in notif.update:
            out({"path": gnmi_common.path_str(u.path, notif.prefix
                                              if notif.HasField("prefix")
                                              else None),
                 "value": jval(u.val)})

    try:
        if a.cmd == "capabilities":
            r = unary("Capabilities", pb.CapabilityRequest,
                      pb.CapabilityResponse)(pb.CapabilityRequest(),
                                             metadata=md, timeout=a.timeout)
            out({"gNMI_version": r.gNMI_version,
                 "encodings": [pb.Encoding.Name(e)
                               for e in r.supported_encodings],
                 "models": [{"name": m.name, "organization": m.organization,
                             "version": m.version}
                            for m in r.supported_models]})
        elif a.cmd in ("set", "delete"):
            req = pb.SetRequest()
            path = gnmi_common.parse_path(pb, a.path)
            if a.cmd == "delete":
                req.delete.add().CopyFrom(path)
            else:
                with open(a.json_file, "rb") as f:
                    body = f.read()
                u = getattr(req, a.op).add()
                u.path.CopyFrom(path)
                u.val.json_ietf_val = body
            r = unary("Set", pb.SetRequest, pb.SetResponse)(
                req, metadata=md, timeout=a.timeout)
            out({"results": [{"op": pb.UpdateResult.Operation.Name(x.op),
                              "path": gnmi_common.path_str(x.path)}
                             for x in r.response],
                 "timestamp": r.timestamp})
        elif a.cmd == "get":
            req = pb.GetRequest(encoding=pb.JSON_IETF)
            req.path.add().CopyFrom(gnmi_common.parse_path(pb, a.path))
            r = unary("Get", pb.GetRequest, pb.GetResponse)(
                req, metadata=md, timeout=a.timeout)
            for n in r.notification:
                print_updates(n)
        else:
            stream = ch.stream_stream(
                "/gnmi.gNMI/Subscribe",
                request_serializer=pb.SubscribeRequest.SerializeToString,
                response_deserializer=pb.SubscribeResponse.FromString)
            sr = pb.SubscribeRequest()
            sl = sr.subscribe
            sl.encoding = pb.JSON_IETF
            s = sl.subscription.add()
            s.path.CopyFrom(gnmi_common.parse_path(pb, a.path))
            polls = 0
            if a.cmd == "subscribe-once":
                sl.mode = pb.SubscriptionList.ONCE
                reqs = iter([sr])
            elif a.cmd == "subscribe-poll":
                sl.mode = pb.SubscriptionList.POLL
                import queue
                q = queue.Queue()
                q.put(sr)
                polls = a.polls

                def gen():
                    while True:
                        item = q.get()
                        if item is None:
                            return
                        yield item
                reqs = gen()
            else:
                sl.mode = pb.SubscriptionList.STREAM
                s.mode = pb.SAMPLE
                s.sample_interval = a.interval_ms * 1_000_000
                import threading
                hold = threading.Event()

                def gen_stream():
                    yield sr
                    hold.wait(a.timeout)     # keep the request side open
                reqs = gen_stream()
            call = stream(reqs, metadata=md, timeout=a.timeout)
            samples = 0
            synced = False
            for resp in call:
                kind = resp.WhichOneof("response")
                if kind == "sync_response":
                    out({"sync": True})
                    synced = True
                    if a.cmd == "subscribe-once":
                        break
                    if a.cmd == "subscribe-poll":
                        if polls == 0:
                            q.put(None)
                            break
                        polls -= 1
                        q.put(pb.SubscribeRequest(poll=pb.Poll()))
                elif kind == "update":
                    if a.cmd == "subscribe-stream" and synced:
                        out({"timestamp": resp.update.timestamp,
                             "updates": len(resp.update.update)})
                        samples += 1
                        if samples >= a.count:
                            call.cancel()
                            hold.set()
                            break
                    else:
                        print_updates(resp.update)
            if a.cmd == "subscribe-stream":
                hold.set()
    except grpc.RpcError as e:
        code = e.code() if hasattr(e, "code") else None
        print("rpc error: %s: %s" % (code.name if code else "?",
                                     e.details() if hasattr(e, "details")
                                     else e), file=sys.stderr)
        sys.exit(1)
    finally:
        ch.close()


if __name__ == "__main__":
    main()
