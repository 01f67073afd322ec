"""Shared by gnmi_server.py and gnmi_client.py: message classes generated at
run time from the project's own protos, and gNMI path <-> string helpers.

load_protos(proto_dir=None) runs
    protoc --python_out=TMP -I PROTO_DIR gnmi.proto gnmi_ext.proto
imports the generated gnmi_pb2 / gnmi_ext_pb2 and returns (gnmi_pb2,
gnmi_ext_pb2).  PROTO_DIR defaults to $YB_SRCDIR/src/gnmi, else to
src/gnmi relative to this file (tests/peers/ -> ../../src/gnmi).

Path strings look like
    /openconfig-acl:acl/acl-sets/acl-set[name=A][type=ACL_IPV4]
optionally preceded by "ORIGIN:" (e.g. "openconfig:/interfaces"); keys are
written sorted by name; "]" and "\\" inside key values are escaped with "\\".
"""
import os
import shutil
import subprocess
import sys
import tempfile

_HERE = os.path.dirname(os.path.abspath(__file__))


def default_proto_dir():
    src = os.environ.get("YB_SRCDIR")
    if src and os.path.isfile(os.path.join(src, "src", "gnmi", "gnmi.proto")):
        return os.path.join(src, "src", "gnmi")
    return os.path.normpath(os.path.join(_HERE, "..", "..", "src", "gnmi"))


def load_protos(proto_dir=None):
    proto_dir = os.path.abspath(proto_dir or default_proto_dir())
    tmp = tempfile.mkdtemp(prefix="yb-gnmi-py.")
    try:
        r = subprocess.run(
            ["protoc", "--python_out=" + tmp, "-I", proto_dir,
             "gnmi.proto", "gnmi_ext.proto"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("protoc failed in %s: %s" %
                               (proto_dir, r.stdout.decode(errors="replace")))
        sys.path.insert(0, tmp)
        try:
            import gnmi_ext_pb2  # noqa: E402  (generated)
            import gnmi_pb2  # noqa: E402  (generated)
        finally:
            sys.path.remove(tmp)
        return gnmi_pb2, gnmi_ext_pb2
    finally:
        # The modules are loaded; the generated files are no longer needed.
        shutil.rmtree(tmp, ignore_errors=True)


def _split_elems(s):
    """Splits "a/b[k=v/x]/c" on '/' outside brackets."""
    out, cur, depth, esc = [], [], False, False
    for ch in s:
        if esc:
            cur.append(ch)
            esc = False
        elif ch == "\\":
            cur.append(ch)
            esc = True
        elif ch == "[":
            depth = True
            cur.append(ch)
        elif ch == "]":
            depth = False
            cur.append(ch)
        elif ch == "/" and not depth:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [e for e in out if e != ""]


def _parse_elem(e):
    """"name[k=v][k2=v2]" -> (name, {k: v, ...})."""
    i = e.find("[")
    if i < 0:
        return e, {}
    name, rest, keys = e[:i], e[i:], {}
    while rest.startswith("["):
        j, val, esc = 1, [], False
        while j < len(rest):
            ch = rest[j]
            if esc:
                val.append(ch)
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == "]":
                break
            else:
                val.append(ch)
            j += 1
        kv = "".join(val)
        if "=" not in kv:
            raise ValueError("bad key in path element %r" % e)
        k, v = kv.split("=", 1)
        keys[k] = v
        rest = rest[j + 1:]
    if rest:
        raise ValueError("trailing text in path element %r" % e)
    return name, keys


def parse_path(pb, s):
    """Path string -> gnmi.Path."""
    origin = ""
    if not s.startswith("/") and ":/" in s:
        origin, s = s.split(":/", 1)
    p = pb.Path(origin=origin)
    for e in _split_elems(s):
        name, keys = _parse_elem(e)
        pe = p.elem.add(name=name)
        for k, v in keys.items():
            pe.key[k] = v
    return p


def _esc(v):
    return v.replace("\\", "\\\\").replace("]", "\\]")


def path_str(path, prefix=None):
    """gnmi.Path (with an optional prefix Path) -> canonical string."""
    origin = (prefix.origin if prefix is not None and prefix.origin else "") \
        or path.origin
    parts = []
    for p in ([prefix] if prefix is not None else []) + [path]:
        if p.elem:
            for e in p.elem:
                parts.append(e.name + "".join(
                    "[%s=%s]" % (k, _esc(e.key[k])) for k in sorted(e.key)))
        else:
            parts.extend(p.element)      # deprecated string elements
    s = "/" + "/".join(parts)
    return (origin + ":" + s) if origin else s


def join_path(pb, prefix, path):
    """prefix + path as one gnmi.Path (elements concatenated)."""
    out = pb.Path()
    if prefix is not None:
        out.CopyFrom(prefix)
    if path.origin and not out.origin:
        out.origin = path.origin
    if path.target and not out.target:
        out.target = path.target
    for e in path.elem:
        out.elem.add().CopyFrom(e)
    out.element.extend(path.element)
    return out


def under(s, root):
    """True when path string s equals root or lies below it."""
    if root in ("/", ""):
        return True
    if root.endswith(":/"):
        return s.startswith(root)
    return s == root or s.startswith(root + "/")


def varint(n):
    """Protobuf base-128 varint of n >= 0."""
    out = bytearray()
    while True:
        b = n & 0x7f
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def deep_typed_value(depth):
    """Wire bytes of a TypedValue nesting `depth` leaf-lists (TypedValue.leaflist_val = 8,
    ScalarArray.element = 1): a small message that a recursive decoder follows level by level.
    Built from the inside out with the headers collected, so it takes linear time."""
    heads, size = [], 0
    for _ in range(depth):
        h1 = b"\x0a" + varint(size)          # ScalarArray.element (TypedValue)
        size += len(h1)
        h2 = b"\x42" + varint(size)          # TypedValue.leaflist_val (ScalarArray)
        size += len(h2)
        heads.append(h2 + h1)
    return b"".join(reversed(heads))


def _field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def deep_update(depth):
    """Wire bytes of an Update whose val (field 3) is deep_typed_value(depth)."""
    return _field(3, deep_typed_value(depth))


def deep_get_response(depth):
    """GetResponse { notification { update { val: <depth leaf-lists> } } }."""
    return _field(1, _field(4, deep_update(depth)))


def deep_set_request(depth):
    """SetRequest { update { val: <depth leaf-lists> } } (SetRequest.update = 4)."""
    return _field(4, deep_update(depth))
