#!/usr/bin/python3
"""badhttp.py -- a tiny HTTP/1.1 peer that misbehaves on purpose.

Usage:
  /usr/bin/python3 badhttp.py MODE [--port N] [--unix PATH] [--delay-ms N]
                               [--max-seconds S] [--abort-every N]

MODE (what happens on every connection):
  reset      reads the request, sends half a response head, then aborts the
             connection with an RST (SO_LINGER 0)
  garbage    reads the request, answers "HTTP/1.1 ABC nonsense\\r\\n\\r\\n" and
             closes
  stall      reads the request and never answers (the connection stays open
             until the peer or this server goes away)
  close      reads the request, then closes the connection (FIN) without
             answering
  truncated  reads the request, answers Content-Length: 100 with only 10
             body bytes, then closes
  slow       a well-behaved server: reads the request (and its body), waits
             --delay-ms (default 200, capped at 10000), answers 200 with a
             small JSON body; keeps the connection alive (HTTP/1.1 rules)
  ok         like slow without the delay

--abort-every N: the 1st, (N+1)th, ... connection is aborted with an RST
(SO_LINGER 0) as soon as it is accepted, without reading, so the client's
first write races the reset; the others are served by MODE.

Listens on 127.0.0.1:PORT (--port 0, the default, picks a free port) or on a
unix socket (--unix PATH).  Prints "listening PORT" (or "listening PATH")
on stdout once ready.  Exits on SIGTERM/SIGINT, or by itself after
--max-seconds (default 60).  Loopback only.
"""
import argparse
import asyncio
import os
import signal
import socket
import struct
import sys

MODES = ("reset", "garbage", "stall", "close", "truncated", "slow", "ok")
MAX_HEAD = 64 * 1024
MAX_BODY = 64 * 1024 * 1024


async def read_request(reader):
    """Reads one request (head and Content-Length body).  Returns
    (method, headers-dict, keepalive) or None on EOF / malformed input."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError,
            ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) < 3:
        return None
    method, version = parts[0], parts[2]
    headers = {}
    for ln in lines[1:]:
        if ":" in ln:
            k, v = ln.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    try:
        clen = int(headers.get("content-length", "0"))
    except ValueError:
        return None
    if clen < 0 or clen > MAX_BODY:
        return None
    if clen:
        try:
            await reader.readexactly(clen)
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
    conn = headers.get("connection", "").lower()
    keepalive = (version == "HTTP/1.1" and conn != "close") or conn == "keep-alive"
    return method, headers, keepalive


def rst_close(writer):
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                            struct.pack("ii", 1, 0))
        except OSError:
            pass
    writer.transport.abort()


def make_handler(mode, delay_s, open_writers, abort_every):
    conns = [0]

    async def handle(reader, writer):
        conns[0] += 1
        if abort_every > 0 and conns[0] % abort_every == 1 % abort_every:
            rst_close(writer)
            return
        open_writers.add(writer)
        try:
            while True:
                req = await read_request(reader)
                if req is None:
                    break
                method, _headers, keepalive = req
                if mode == "close":
                    # Read the request first so that the close is a clean FIN
                    # (closing with unread input would make the kernel RST).
                    break
                if mode == "reset":
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: appl")
                    await writer.drain()
                    await asyncio.sleep(0.05)
                    rst_close(writer)
                    return
                if mode == "garbage":
                    writer.write(b"HTTP/1.1 ABC nonsense\r\n\r\n")
                    await writer.drain()
                    break
                if mode == "stall":
                    # Never answer; wait for the peer to go away.
                    while await reader.read(65536):
                        pass
                    break
                if mode == "truncated":
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                                 b"Content-Length: 100\r\n\r\n0123456789")
                    await writer.drain()
                    break
                # slow / ok
                if mode == "slow" and delay_s > 0:
                    await asyncio.sleep(delay_s)
                body = b'{"yangblast-test:slow":{"delay-ms":%d}}\n' % int(delay_s * 1000) \
                    if method != "HEAD" else b""
                hdr = ("HTTP/1.1 200 OK\r\nContent-Type: application/yang-data+json\r\n"
                       "Content-Length: %d\r\n%s\r\n" %
                       (len(body), "" if keepalive else "Connection: close\r\n"))
                writer.write(hdr.encode() + body)
                await writer.drain()
                if not keepalive:
                    break
        except (ConnectionError, OSError):
            pass
        finally:
            open_writers.discard(writer)
            if not writer.transport.is_closing():
                try:
                    writer.close()
                except Exception:
                    pass
    return handle


async def main():
    ap = argparse.ArgumentParser(description="misbehaving HTTP/1.1 peer")
    ap.add_argument("mode", choices=MODES)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--unix", default=None)
    ap.add_argument("--delay-ms", type=int, default=200)
    ap.add_argument("--max-seconds", type=float, default=60.0)
    ap.add_argument("--abort-every", type=int, default=0)
    a = ap.parse_args()
    delay_s = max(0, min(a.delay_ms, 10000)) / 1000.0 if a.mode == "slow" else 0.0
    open_writers = set()
    handler = make_handler(a.mode, delay_s, open_writers, a.abort_every)
    if a.unix:
        try:
            os.unlink(a.unix)
        except FileNotFoundError:
            pass
        server = await asyncio.start_unix_server(handler, path=a.unix,
                                                 limit=MAX_HEAD)
        where = a.unix
    else:
        server = await asyncio.start_server(handler, host="127.0.0.1",
                                            port=a.port, limit=MAX_HEAD,
                                            reuse_address=True)
        where = str(server.sockets[0].getsockname()[1])
    print("listening", where, flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await asyncio.wait_for(stop.wait(), timeout=a.max_seconds)
    except asyncio.TimeoutError:
        pass
    server.close()
    for w in list(open_writers):
        w.transport.abort()
    if a.unix:
        try:
            os.unlink(a.unix)
        except OSError:
            pass


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
