#!/bin/bash
# corpus info / cat / import and synth output, end to end through the binary.
. "$YB_SRCDIR/tests/lib.sh"
PY=/usr/bin/python3

# run CMD...: stdout in $OUT, stderr in $ERR, status in $RC.
run() {
    "$@" >"$T/stdout" 2>"$T/stderr"
    RC=$?
    OUT=$(cat "$T/stdout")
    ERR=$(cat "$T/stderr")
}

# no_files DESC GLOB...: passes when nothing matches.
no_files() {
    local d=$1; shift
    local f
    for f in "$@"; do
        if [ -e "$f" ]; then not_ok "$d"; diag "exists: $f"; return; fi
    done
    ok "$d"
}

# Expected `corpus info` output (minus file/producer lines) from `corpus cat`
# JSON lines, computed independently.
cat >"$T/expect_info.py" <<'EOF'
import base64, collections, json, sys

def body_len(r):
    if "body_base64" in r:
        return len(base64.b64decode(r["body_base64"]))
    return len(r.get("body", "").encode("utf-8"))

recs = [json.loads(l) for l in sys.stdin if l.strip() and "yangblast_corpus" not in l]
n = len(recs)
sizes = [body_len(r) for r in recs]
ts = [r.get("timestamp_ns", 0) for r in recs]
print("records:     %d" % n)
print("body bytes:  %d total, %.1f mean, %d max" % (sum(sizes), sum(sizes) / n if n else 0.0,
                                                   max(sizes) if sizes else 0))
print("time span:   %.6f s" % ((max(ts) - min(ts)) / 1e9 if n else 0.0))
print("connections: %d" % len({r.get("conn_id", 0) for r in recs}))
for title, key in (("protocols", "protocol"), ("methods", "method"), ("paths", "path")):
    c = collections.Counter(r[key] for r in recs)
    items = sorted(c.items(), key=lambda kv: (-kv[1], kv[0].encode()))
    print(title + ":")
    for k, v in items[:10]:
        print("  %10d  %s" % (v, k))
    if len(items) > 10:
        print("  %10d  (%d other values)" % (sum(v for _, v in items[10:]), len(items) - 10))
EOF

# info_check DESC FILE: compares `corpus info FILE` with the expectation.
info_check() {
    local d=$1 f=$2
    "$YB" corpus cat "$f" >"$T/ic.jsonl" 2>"$T/ic.err" || { not_ok "$d (cat failed)"; cat "$T/ic.err"; return; }
    $PY "$T/expect_info.py" <"$T/ic.jsonl" >"$T/ic.want"
    "$YB" corpus info "$f" 2>&1 | sed -n '/^records:/,$p' >"$T/ic.got"
    if cmp -s "$T/ic.got" "$T/ic.want"; then ok "$d"
    else not_ok "$d"; diff "$T/ic.want" "$T/ic.got" | head -20 | sed 's/^/# /'; fi
}

# ---- synth + info ----------------------------------------------------------
check "synth restconf" "$YB" synth acl --count 7 --rules 4 -o "$T/rc.ybc"
check "synth gnmi" "$YB" synth acl --proto gnmi --count 3 -o "$T/gn.ybc"
check "synth restconf delete" "$YB" synth acl --op delete --count 12 -o "$T/del.ybc"
check "synth gnmi subscribe poll" "$YB" synth acl --proto gnmi --op subscribe --mode poll \
    --polls 2 --count 2 -o "$T/sub.ybc"

run "$YB" corpus info "$T/rc.ybc"
is "info exits 0" "$RC" 0
like "info names the file" "$OUT" "^file: +$T/rc.ybc$"
like "info shows the record count" "$OUT" '^records: +7$'
like "info shows the producer" "$OUT" '^producer: +yangblast 0\.1\.0 synth$'
like "info shows the synth source" "$OUT" '^source: +synth acl --proto restconf --op create --count 7 --rules 4 --seed 1$'
like "info counts PATCH" "$OUT" '^ +7  PATCH$'
like "info counts restconf" "$OUT" '^ +7  restconf$'
like "info counts the acl-sets path" "$OUT" '^ +7  /restconf/data/openconfig-acl:acl/acl-sets$'
info_check "info matches cat: restconf create" "$T/rc.ybc"
info_check "info matches cat: gnmi set" "$T/gn.ybc"
info_check "info matches cat: 12 distinct paths (other values)" "$T/del.ybc"
info_check "info matches cat: subscribe" "$T/sub.ybc"
# More distinct paths than info once kept (4,096): the count stays exact.
check "synth restconf delete, 5000 distinct paths" "$YB" synth acl --op delete --count 5000 -o "$T/del5k.ybc"
run "$YB" corpus info "$T/del5k.ybc"
like "info: 5000 distinct paths = top 10 + exactly 4990 other values" "$OUT" '^ +4990  \(4990 other values\)$'
info_check "info matches cat: 5000 distinct paths" "$T/del5k.ybc"

# A mixed corpus with timestamps and connections, built through import.
{
    "$YB" corpus cat "$T/rc.ybc"
    "$YB" corpus cat "$T/gn.ybc"
    "$YB" corpus cat "$T/del.ybc"
} | $PY -c '
import json, sys
for i, l in enumerate(sys.stdin):
    r = json.loads(l)
    r["timestamp_ns"] = 1000000 + i * 1500000
    r["conn_id"] = i % 4
    r["conn_order"] = i // 4
    if i == 5:
        r["expected_status"] = 204
    print(json.dumps(r, separators=(",", ":")))
' >"$T/mixed.jsonl"
check "import a mixed corpus" "$YB" corpus import "$T/mixed.jsonl" -o "$T/mixed.ybc"
info_check "info matches cat: mixed protocols, methods, time span, connections" "$T/mixed.ybc"
run "$YB" corpus info "$T/mixed.ybc"
like "mixed: 22 records" "$OUT" '^records: +22$'
like "mixed: 4 connections" "$OUT" '^connections: +4$'
like "mixed: time span" "$OUT" '^time span: +0\.031500 s$'
like "mixed: import is the producer" "$OUT" '^producer: +yangblast 0\.1\.0 import$'
like "mixed: 3 gnmi" "$OUT" '^ +3  gnmi$'
like "mixed: 12 DELETE" "$OUT" '^ +12  DELETE$'

# ---- cat / import round trips ------------------------------------------------
for f in rc gn del sub mixed; do
    "$YB" corpus cat "$T/$f.ybc" >"$T/$f.1.jsonl"
    "$YB" corpus import "$T/$f.1.jsonl" -o "$T/$f.2.ybc"
    "$YB" corpus cat "$T/$f.2.ybc" >"$T/$f.2.jsonl"
    check "cat | import | cat is identical: $f" cmp "$T/$f.1.jsonl" "$T/$f.2.jsonl"
    "$YB" corpus cat --with-header "$T/$f.ybc" >"$T/$f.h1.jsonl"
    "$YB" corpus import -o "$T/$f.h2.ybc" - <"$T/$f.h1.jsonl"
    "$YB" corpus cat --with-header "$T/$f.h2.ybc" >"$T/$f.h2.jsonl"
    check "with header: records identical: $f" cmp <(tail -n +2 "$T/$f.h1.jsonl") <(tail -n +2 "$T/$f.h2.jsonl")
    # The header line restates the whole header, producer included, so the
    # first round trip already gives the same file.
    check "with header: header kept, producer too: $f" cmp <(head -1 "$T/$f.h1.jsonl") \
        <(head -1 "$T/$f.h2.jsonl")
    check "with header: round trip is byte-identical: $f" cmp "$T/$f.ybc" "$T/$f.h2.ybc"
done
run "$YB" corpus cat --with-header "$T/rc.ybc"
like "--with-header: first line is the corpus header" "$(printf '%s\n' "$OUT" | head -1)" \
    '^\{"yangblast_corpus":\{"format_version":2,'
is "--with-header: one line per record plus the header" "$(printf '%s\n' "$OUT" | wc -l)" 8
run "$YB" corpus cat "$T/gn.ybc"
like "cat: gNMI bodies are base64" "$OUT" '"body_base64":"AAAA'
run "$YB" corpus cat "$T/rc.ybc"
like "cat: RESTCONF bodies are text" "$OUT" '"body":"\{\\n'

# Import from stdin with redactions and an empty corpus.
printf '%s\n' '{"yangblast_corpus":{"source":"hand","redactions":["authorization"]}}' \
    '{"protocol":"http1","method":"GET","path":"/","headers":[{"name":"Authorization","value":"REDACTED"}],"expected_status":200}' \
    | "$YB" corpus import -o "$T/red.ybc"
run "$YB" corpus info "$T/red.ybc"
like "import: header line sets redactions" "$OUT" '^redactions: +authorization$'
like "import: header line sets source" "$OUT" '^source: +hand$'
check "import of empty input" "$YB" corpus import /dev/null -o "$T/empty.ybc"
run "$YB" corpus info "$T/empty.ybc"
like "empty corpus has 0 records" "$OUT" '^records: +0$'
run "$YB" corpus cat "$T/empty.ybc"
is "empty corpus cats to nothing" "$OUT$RC" "0"
run bash -c "'$YB' synth acl -n 4 -o - | '$YB' corpus info -"
like "synth to stdout, info from stdin" "$OUT" '^records: +4$'

# ---- import errors -------------------------------------------------------------
good='{"protocol":"restconf","method":"GET","path":"/x"}'
import_error() {
    local d=$1 line=$2 want=$3; shift 3
    printf '%s\n' "$@" >"$T/bad.jsonl"
    rm -f "$T/badout.ybc"
    run "$YB" corpus import "$T/bad.jsonl" -o "$T/badout.ybc"
    is "import $d: exit 2" "$RC" 2
    like "import $d: FILE:LINE: in the message" "$ERR" "$T/bad.jsonl:$line: "
    like "import $d: message says why" "$ERR" "$want"
    no_files "import $d: no output file" "$T/badout.ybc" "$T"/badout.ybc.tmp.*
}
import_error "invalid JSON" 3 'invalid JSON' "$good" "$good" '{"protocol": ' "$good"
import_error "unknown key" 2 '"bogus"' "$good" '{"protocol":"restconf","method":"GET","path":"/x","bogus":1}'
import_error "bad base64" 1 '"body_base64"' '{"protocol":"gnmi","method":"POST","path":"/x","body_base64":"!!"}'
import_error "bad protocol" 2 '"protocol"' "$good" '{"protocol":"ftp","method":"GET","path":"/x"}'
import_error "out-of-range status" 1 '"expected_status"' '{"protocol":"restconf","method":"GET","path":"/x","expected_status":1000}'
import_error "invalid record" 2 'key "path": path does not start with' "$good" '{"protocol":"restconf","method":"GET","path":"no-slash"}'
import_error "late header line" 2 'header' "$good" '{"yangblast_corpus":{}}'
import_error "not an object" 1 'object' '[1,2,3]'
# Every refused record is named with its line and key; nothing is written.
hdr='{"name":"x-ok","value":"1"}'
printf '%s\n' "$good" '{"protocol":"restconf","method":"GE T","path":"/x"}' "$good" \
    '{"protocol":"restconf","method":"GET","path":"/x","headers":['"$hdr"',{"name":"x-a","value":"a\r\nb"}]}' \
    '{"protocol":"restconf","method":"GET","path":"/x","colour":1}' \
    '{"protocol":"restconf","method":"GET"}' \
    '{"protocol":"restconf","method":"GET","path":"/x","headers":[{"name":":path","value":"/"}]}' \
    '{"protocol":"restconf","method":"GET","path":"/a b"}' "$good" >"$T/bad.jsonl"
run "$YB" corpus import "$T/bad.jsonl" -o "$T/badout.ybc"
is "import, six bad records: exit 2" "$RC" 2
is "import names every refused line with its key" "$(printf '%s\n' "$ERR" | sed "s|^yangblast[^:]*: $T/||")" \
"bad.jsonl:2: key \"method\": method is empty or not an HTTP token
bad.jsonl:4: key \"headers\"[1]: header value contains CR, LF or NUL
bad.jsonl:5: unknown key \"colour\"
bad.jsonl:6: missing \"path\"
bad.jsonl:7: key \"headers\"[0]: header name is empty, a pseudo-header or not an HTTP token
bad.jsonl:8: key \"path\": path contains spaces or control characters
bad.jsonl: 6 lines refused; nothing written to $T/badout.ybc"
no_files "import, six bad records: no output file" "$T/badout.ybc" "$T"/badout.ybc.tmp.*
for i in $(seq 25); do echo '{"protocol":"restconf","method":"GET","path":"x"}'; done >"$T/bad.jsonl"
run "$YB" corpus import "$T/bad.jsonl" -o "$T/badout.ybc"
is "import, 25 bad records: the first 20 named, the rest counted" \
    "$(printf '%s\n' "$ERR" | grep -c 'key "path"') $(printf '%s\n' "$ERR" | tail -2 | sed "s|^yangblast[^:]*: ||; s|$T/||g" | tr '\n' '|')" \
    "20 bad.jsonl: 5 more lines refused|bad.jsonl: 25 lines refused; nothing written to badout.ybc|"
# Pretty-printed JSON (jq's default output) gets one message and a hint.
"$YB" corpus cat "$T/rc.ybc" | head -2 | $PY -c '
import json, sys
for l in sys.stdin: print(json.dumps(json.loads(l), indent=2))' >"$T/pretty.json"
run "$YB" corpus import "$T/pretty.json" -o "$T/badout.ybc"
is "import of pretty-printed JSON: exit 2" "$RC" 2
like "import of pretty-printed JSON: hints at jq -c" "$ERR" "^yangblast[^:]*: $T/pretty.json:1: invalid JSON: .*convert pretty-printed JSON with \`jq -c \.\`"
is "import of pretty-printed JSON: one line named, then it stops" "$(printf '%s\n' "$ERR" | grep -c 'pretty.json:[0-9]')" 1
"$YB" corpus cat "$T/rc.ybc" | $PY -c '
import json, sys
print(json.dumps([json.loads(l) for l in sys.stdin]))' >"$T/array.json"
run "$YB" corpus import "$T/array.json" -o "$T/badout.ybc"
like "import of a JSON array: hints at jq -c '.[]'" "$RC $ERR" "^2 yangblast[^:]*: $T/array.json:1: a record must be a JSON object, not an array.*jq -c '\.\[\]'"
# An existing output survives a failed import.
printf 'precious\n' >"$T/keep.ybc"
printf '%s\n' "$good" 'nope' >"$T/bad.jsonl"
"$YB" corpus import "$T/bad.jsonl" -o "$T/keep.ybc" 2>/dev/null
is "failed import leaves an existing output untouched" "$(cat "$T/keep.ybc")" "precious"
run "$YB" corpus import "$T/missing.jsonl" -o "$T/x.ybc"
is "import of a missing file: exit 2" "$RC" 2
like "import of a missing file names it" "$ERR" "$T/missing.jsonl"

# ---- damaged and foreign files -----------------------------------------------
"$YB" synth acl --count 50 --rules 40 -o "$T/big.ybc"
size=$(stat -c %s "$T/big.ybc")
head -c $((size / 2)) "$T/big.ybc" >"$T/trunc.ybc"
for c in info cat; do
    run "$YB" corpus $c "$T/trunc.ybc"
    is "truncated: corpus $c exits 2" "$RC" 2
    like "truncated: corpus $c names the file" "$ERR" "$T/trunc.ybc"
    like "truncated: corpus $c names a record" "$ERR" 'record [0-9]+'
done
head -c $((size - 1)) "$T/big.ybc" >"$T/trunc1.ybc"
run "$YB" corpus info "$T/trunc1.ybc"
like "truncated by one byte: record named" "$RC $ERR" "^2 .*$T/trunc1.ybc: record [0-9]+"
head -c 40 "$T/big.ybc" >"$T/trunc40.ybc"
run "$YB" corpus cat "$T/trunc40.ybc"
like "truncated to 40 bytes: record named" "$RC $ERR" "^2 .*$T/trunc40.ybc: record 0"

printf 'hello, this is not a corpus\n' >"$T/text.txt"
for c in info cat; do
    run "$YB" corpus $c "$T/text.txt"
    is "text file: corpus $c exits 2" "$RC" 2
    like "text file: corpus $c says not a yangblast corpus" "$ERR" "$T/text.txt: .*not a yangblast corpus"
done
gzip -c "$T/text.txt" >"$T/text.gz"
run "$YB" corpus info "$T/text.gz"
like "gzip file: not a yangblast corpus" "$RC $ERR" '^2 .*not a yangblast corpus'
: >"$T/zero.ybc"
run "$YB" corpus info "$T/zero.ybc"
like "empty file: not a yangblast corpus" "$RC $ERR" '^2 .*not a yangblast corpus'
run "$YB" corpus info "$T"
is "a directory: exit 2" "$RC" 2

# ---- synth output handling ---------------------------------------------------
mkdir "$T/outdir"
run "$YB" synth acl --count 3 -o "$T/outdir/missing/x.ybc"
if [ "$RC" != 0 ]; then ok "synth into a missing directory fails"; else not_ok "synth into a missing directory fails"; fi
like "synth into a missing directory names the file" "$ERR" "$T/outdir/missing/x.ybc"
is "synth into a missing directory leaves nothing" "$(ls -A "$T/outdir")" ""
no_files "synth into a missing directory creates no directory" "$T/outdir/missing"

SOURCE_DATE_EPOCH=1767225600 "$YB" synth acl --proto gnmi --count 20 --seed 5 -o "$T/sde1.ybc"
SOURCE_DATE_EPOCH=1767225600 "$YB" synth acl --proto gnmi --count 20 --seed 5 -o "$T/sde2.ybc"
check "SOURCE_DATE_EPOCH: synth twice is byte-identical" cmp "$T/sde1.ybc" "$T/sde2.ybc"
run "$YB" corpus cat --with-header "$T/sde1.ybc"
like "SOURCE_DATE_EPOCH: creation time" "$(printf '%s\n' "$OUT" | head -1)" '"created_unix_ns":1767225600000000000,'
SOURCE_DATE_EPOCH=1767225600 "$YB" synth acl --proto gnmi --count 20 --seed 6 -o "$T/sde3.ybc"
if cmp -s "$T/sde1.ybc" "$T/sde3.ybc"; then not_ok "another seed gives another corpus"
else ok "another seed gives another corpus"; fi
is "synth leaves no temporary files" "$(ls "$T" | grep -c '\.tmp\.')" 0

# --level: the same records at every level, a higher level a smaller file;
# out of range refused with nothing written
for l in 1 19; do
    SOURCE_DATE_EPOCH=1767225600 "$YB" synth acl --count 50 --level "$l" -o "$T/lev$l.ybc"
done
is "synth --level 1 and 19: the same records" "$("$YB" corpus cat "$T/lev19.ybc" | sha256sum)" \
    "$("$YB" corpus cat "$T/lev1.ybc" | sha256sum)"
like "synth --level 19: the header says it" "$("$YB" corpus cat -H "$T/lev19.ybc" | head -1)" \
    '"compression_level":19'
"$YB" corpus cat -H "$T/lev19.ybc" | "$YB" corpus import -o "$T/lev19b.ybc" -
is "cat -H | import of a level-19 corpus gives the same file" \
    "$(cmp "$T/lev19.ybc" "$T/lev19b.ybc" && echo same)" same
s1=$(wc -c <"$T/lev1.ybc") s19=$(wc -c <"$T/lev19.ybc")
if [ "$s19" -lt "$s1" ]; then ok "synth --level 19 is smaller ($s19 < $s1 bytes)"
else not_ok "synth --level 19 is smaller ($s19 vs $s1 bytes)"; fi
SOURCE_DATE_EPOCH=1767225600 "$YB" synth acl --count 50 -o "$T/levd.ybc"
is "synth's default level is 1" "$(cmp "$T/levd.ybc" "$T/lev1.ybc" && echo same)" same
# level 1 makes a zstd frame of each 1 MiB block, in worker threads, its
# bodies split by synth as it writes them: 400 sets, ~5.8 MB of records,
# are six blocks; a rewrite (bodies split by the writer, one thread) gives
# the same file
SOURCE_DATE_EPOCH=1767225600 "$YB" synth acl --count 400 -o "$T/jobs.ybc"
"$YB" corpus cat -H "$T/jobs.ybc" | "$YB" corpus import -o "$T/jobsb.ybc" -
is "cat -H | import of a 400-set level-1 corpus gives the same file" \
    "$(cmp "$T/jobs.ybc" "$T/jobsb.ybc" && echo same)" same
# synth makes level 1's blocks in a thread per CPU: on one CPU (taskset),
# the same file; lifecycle chains and gNMI records too
if command -v taskset >/dev/null && [ "$(nproc)" -gt 1 ]; then
    for o in "--count 400" "--count 150 --lifecycle" "--count 300 --proto gnmi"; do
        SOURCE_DATE_EPOCH=1767225600 "$YB" synth acl $o -o "$T/cpus.ybc"
        SOURCE_DATE_EPOCH=1767225600 taskset -c 0 "$YB" synth acl $o -o "$T/cpu1.ybc"
        "$YB" corpus cat -H "$T/cpus.ybc" | "$YB" corpus import -o "$T/cpusb.ybc" -
        is "synth $o: the same file on one CPU and on $(nproc), and as a rewrite" \
            "$(cmp "$T/cpus.ybc" "$T/cpu1.ybc" && cmp "$T/cpus.ybc" "$T/cpusb.ybc" && echo same)" same
    done
else
    for o in 1 2 3; do ok "# SKIP taskset or a second CPU missing"; done
fi
# a write failing midway while threads make blocks (a file-size limit:
# EFBIG after 256 KB, ~11 of ~28 blocks): exit 3 naming the file and why; the
# file it would replace intact, no temporary file left behind
cp "$T/jobs.ybc" "$T/limit.ybc"
run sh -c 'trap "" XFSZ; ulimit -f 512; exec "$0" synth acl --count 2000 -o "$1"' "$YB" "$T/limit.ybc"
is "synth past a file-size limit: exit 3" "$RC" 3
like "synth past a file-size limit: names the file and why" "$ERR" \
    "limit\.ybc: cannot synthesize request [0-9]+: File too large"
check "synth past a file-size limit: the file it replaces intact" cmp "$T/jobs.ybc" "$T/limit.ybc"
is "synth past a file-size limit: no temporary file left" "$(ls -A "$T" | grep -c '^\.limit\.ybc')" 0
for bad in 0 20 x; do
    run "$YB" synth acl --count 5 --level "$bad" -o "$T/levbad.ybc"
    is "synth --level $bad: usage error" "$RC" 2
    like "synth --level $bad: says the range" "$ERR" "--level must be an integer in 1..19"
done
no_files "synth --level out of range writes nothing" "$T/levbad.ybc"
printf '{"updates":[{"path":"/a","value":1}]}' >"$T/lev-set.json"
for l in 1 19; do
    "$YB" synth gnmi --set-request "$T/lev-set.json" --count 20 --level "$l" -o "$T/levg$l.ybc"
done
is "synth gnmi --level: the same records" "$("$YB" corpus cat "$T/levg19.ybc" | sha256sum)" \
    "$("$YB" corpus cat "$T/levg1.ybc" | sha256sum)"

# ---- level 1's checksum frames --------------------------------------------------
# After each zstd frame of a level-1 block: a skippable frame (magic
# 0x184D2A5C, 8 bytes: "YBCK" and the CRC-32 of the frame's compressed
# bytes), checked here with Python's zlib.  Each block's digits are a frame
# of literals only: no block of it has a sequence (the walker reads each
# compressed block's literals section to the count of its sequences).
# Without the checksum frames the file is the one pinned here (digests
# taken with libzstd 1.5.4: like the bundled corpora's test, they depend on
# zstd's output; they change with level 1's zstd parameters and with the
# summary's fields), its records those of every build since 49d988a.
cat >"$T/ckframes.py" <<'PYEOF'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
out, kinds, off, prev = bytearray(), [], 0, None
while off < len(data):
    magic = struct.unpack_from("<I", data, off)[0]
    if magic == 0xFD2FB528:  # a zstd frame: header, blocks, checksum
        fhd = data[off + 4]
        single, fcs, did = fhd >> 5 & 1, fhd >> 6, fhd & 3
        end = off + 5 + (0 if single else 1) + (0, 1, 2, 4)[did] + \
            ((1 if single else 0), 2, 4, 8)[fcs]
        seqs = 0  # the sequences of its compressed blocks
        while True:
            bh = int.from_bytes(data[end:end + 3], "little")
            if bh >> 1 & 3 == 2:  # compressed: literals section, then the count of sequences
                b0, p = data[end + 3], end + 3
                lbt, sf = b0 & 3, b0 >> 2 & 3
                if lbt < 2:  # raw or RLE literals
                    hl = (1, 2, 1, 3)[sf]
                    h = int.from_bytes(data[p:p + hl], "little")
                    size = h >> 3 if hl == 1 else h >> 4
                    p += hl + (size if lbt == 0 else 1)
                else:  # Huffman-coded literals: their compressed size
                    hl, bits = ((3, 10), (3, 10), (4, 14), (5, 18))[sf]
                    h = int.from_bytes(data[p:p + hl], "little")
                    p += hl + (h >> (4 + bits) & ((1 << bits) - 1))
                seqs += data[p]  # (0, or not 0: its first byte says which)
            end += 3 + (1 if (bh >> 1 & 3) == 1 else bh >> 3)
            if bh & 1:
                break
        end += 4 if fhd & 4 else 0
        kinds.append("zstd" if seqs else "zstd-lit")
    elif magic == 0x184D2A5C:
        end = off + 16
        size, tag, crc = struct.unpack_from("<I4sI", data, off + 4)
        assert size == 8 and tag == b"YBCK", "bad checksum frame at %d" % off
        assert kinds[-1].startswith("zstd"), "checksum frame at %d not after a zstd frame" % off
        assert crc == zlib.crc32(data[prev[0]:prev[1]]), "CRC mismatch at %d" % off
        kinds.append("ck")
    elif magic == 0x184D2A5B:
        end = off + 8 + struct.unpack_from("<I", data, off + 4)[0]
        kinds.append("summary")
    else:
        raise SystemExit("no frame at %d" % off)
    if kinds[-1] != "ck":
        out += data[off:end]
    prev, off = (off, end), end
assert off == len(data)
open(sys.argv[2], "wb").write(out)
print(" ".join(kinds))
PYEOF
for x in "restconf --count 400 ccca44047e2d48881b169fafa2e5f1821100876e84304a8b364af88f039df1eb ea1237653b6a2ad9fed3db2e703b52760d71e89b5f9aba4c7ec50e7b1c5b287a 6" \
         "gnmi --count 300 7dabb1e06edf79a0542b4088791e5106ad96c74ad36663d4a8ca6a43e2d42131 149bc29390dc9a58d760189bcd552db5c8dc2f04eacae1c6341089fe4ff06993 5"; do
    set -- $x
    SOURCE_DATE_EPOCH=1767225600 "$YB" synth acl --proto "$1" $2 $3 -o "$T/ck-$1.ybc"
    want="zstd-lit$(for i in $(seq "$6"); do printf ' zstd ck zstd-lit ck'; done) summary"
    is "level 1 ($1): a checksum frame with the CRC-32 of each block's zstd frames, none after the header's; the digits' frames literals only" \
        "$($PY "$T/ckframes.py" "$T/ck-$1.ybc" "$T/ck-$1.bare" 2>&1)" "$want"
    is "level 1 ($1): without its checksum frames, the file pinned" \
        "$(sha256sum <"$T/ck-$1.bare" | cut -d' ' -f1)" "$4"
    is "level 1 ($1): the records every build since 49d988a wrote" \
        "$("$YB" corpus cat -H "$T/ck-$1.ybc" | sha256sum | cut -d' ' -f1)" "$5"
    is "level 1 ($1): read the same without its checksum frames" \
        "$("$YB" corpus cat -H "$T/ck-$1.bare" | sha256sum | cut -d' ' -f1)" "$5"
    if command -v zstd >/dev/null; then
        check "level 1 ($1): zstd -t accepts it (checksum frames skipped, its own checksums checked)" \
            zstd -q -t "$T/ck-$1.ybc"
    else
        ok "# SKIP zstd(1) not installed"
    fi
done
# a CRC byte flipped (the last block's digits frame): the reader fails on
# it, naming the file and a record; zstd's own checksum still holds
$PY - "$T/ck-restconf.ybc" "$T/ck-bad.ybc" <<'PYEOF'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
sl = struct.unpack_from("<I", d, len(d) - 8)[0]
ck = len(d) - 16 - sl - 16  # the last checksum frame, before the summary's
assert struct.unpack_from("<I", d, ck)[0] == 0x184D2A5C
d[ck + 13] ^= 1
open(sys.argv[2], "wb").write(d)
PYEOF
run "$YB" corpus info "$T/ck-bad.ybc"
like "a checksum frame's CRC damaged: exit 2, the file, a record and why" "$RC $ERR" \
    "^2 .*$T/ck-bad.ybc: record [1-9][0-9]*: corrupt compressed data \(block checksum mismatch\)$"
if command -v zstd >/dev/null; then
    check "a checksum frame's CRC damaged: zstd -t does not look at it" zstd -q -t "$T/ck-bad.ybc"
else
    ok "# SKIP zstd(1) not installed"
fi
# the bundled corpora (level 15: no checksum frames) read as before
# (digests taken with the build before checksum frames)
for x in "restconf-acl-1000 eb34b16b0da0d1370618dbdc8c052b7398dacf5576c224ef10e97283cfe798ff" \
         "gnmi-acl-1000 1df837d56f7d7caec25c87ada4d98b2d10e7f6726328caa996e3c15c3614b5fa"; do
    set -- $x
    if [ -e "$YB_SRCDIR/corpus/$1.ybc" ]; then
        is "bundled $1 reads as before" \
            "$("$YB" corpus cat -H "$YB_SRCDIR/corpus/$1.ybc" | sha256sum | cut -d' ' -f1)" "$2"
    else
        ok "# SKIP corpus/$1.ybc not generated yet"
    fi
done

# ---- bundled corpora: regenerate with the Makefile.am `corpora` rule ------------
mkdir -p "$T/regen"
if [ ! -e "$YB_SRCDIR/corpus/restconf-acl-1000.ybc" ] && [ ! -e "$YB_SRCDIR/corpus/gnmi-acl-1000.ybc" ]; then
    ok "bundled corpora regenerate byte-identically # SKIP corpus/*.ybc not generated yet"
else
    # Replay the rule's commands, writing into $T/regen instead of the tree.
    if $PY - "$YB_SRCDIR/Makefile.am" "$YB" "$T/regen" >"$T/regen.log" 2>&1 <<'EOF'
import os, re, shlex, subprocess, sys
mk, yb, out = sys.argv[1:4]
text = open(mk).read().replace("\\\n", " ")
env_m = re.search(r"^SYNTH_ENV\s*=\s*(.*)$", text, re.M)
extra_env = dict(kv.split("=", 1) for kv in shlex.split(env_m.group(1))) if env_m else {}
rule = re.search(r"^corpora:.*\n((?:\t.*\n)+)", text, re.M)
assert rule, "no corpora rule in Makefile.am"
n = 0
for line in rule.group(1).splitlines():
    line = line.strip().replace("$(SYNTH_ENV)", "")
    words = shlex.split(line)
    assert words[0] == "./yangblast", line
    words[0] = yb
    words = [w.replace("$(srcdir)/corpus/", out + "/") for w in words]
    env = dict(os.environ, **extra_env)
    subprocess.run(words, env=env, check=True)
    n += 1
assert n >= 1
print("ran", n, "commands")
EOF
    then
        same=1
        for f in "$T"/regen/*.ybc; do
            cmp "$f" "$YB_SRCDIR/corpus/$(basename "$f")" >>"$T/regen.log" 2>&1 || same=0
        done
        if [ "$same" = 1 ]; then ok "bundled corpora regenerate byte-identically"
        else not_ok "bundled corpora regenerate byte-identically"; sed 's/^/# /' "$T/regen.log"; fi
    else
        not_ok "bundled corpora regenerate byte-identically"; sed 's/^/# /' "$T/regen.log"
    fi
fi

# ---- corpora written by earlier versions read as they did --------------------
# tests/cli/old-corpora/*-v1.ybc were written by yangblast before the header
# got a zstd frame of its own (one frame, level 3): they keep reading, with
# the same records as when they were written (digests taken then), which are
# the records synth writes today.
for x in "restconf 1f5d51b872a5c3f315df895b7bdb2b50a809ef6b8195e79f8df7218b3a516d01" \
         "gnmi 1f78f444f836c397b0ce7d7365277041b9454d1caebbd108fbd80d6f361e65ab"; do
    set -- $x
    old="$YB_SRCDIR/tests/cli/old-corpora/$1-v1.ybc"
    is "old $1 corpus reads as written" "$("$YB" corpus cat -H "$old" | sha256sum | cut -d' ' -f1)" "$2"
    SOURCE_DATE_EPOCH=1767225600 "$YB" synth acl --proto "$1" -n 10 --rules 2 -o "$T/now-$1.ybc"
    is "old $1 corpus: the records synth writes today" \
        "$("$YB" corpus cat "$T/now-$1.ybc" | sha256sum)" "$("$YB" corpus cat "$old" | sha256sum)"
done

done_testing
