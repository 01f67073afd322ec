#!/bin/bash
# tests/capture/fuzz.sh -- builds the capture pipeline's libFuzzer target
# (tests/fuzz/) and runs it briefly (FUZZ_SECONDS, default 20) from seeds
# made of the committed captures, after replaying the inputs in
# tests/capture/regress/ that once failed.  SKIP when clang/libFuzzer is absent.
. "$YB_SRCDIR/tests/lib.sh"
B=${YB_BUILDDIR:-$(dirname "$YB")}
"$YB_SRCDIR/tests/fuzz/build.sh" "$YB_SRCDIR" "$B" "$T/fuzz_capture" >"$T/build.log" 2>&1
rc=$?
if [ $rc = 77 ]; then
    echo "1..0 # SKIP clang with libFuzzer (libclang-rt-14-dev) not installed"
    exit 0
fi
is "fuzz target builds" "$rc" 0 || { sed 's/^/# /' "$T/build.log" | head -20; done_testing; exit; }
# Inputs that once failed (tests/capture/regress/) must run clean.
for f in "$YB_SRCDIR"/tests/capture/regress/*.in; do
    "$T/fuzz_capture" "$f" >"$T/regress.log" 2>&1
    rc=$?
    is "regression input $(basename "$f")" "$rc" 0
    [ $rc = 0 ] || tail -5 "$T/regress.log" | sed 's/^/# /'
done
mkdir -p "$T/seeds"
# Seeds: each capture as the target's input format (link byte, then 2-byte
# length-prefixed packets), plus a pcapng image for the DSB walker.
/usr/bin/python3 - "$YB_SRCDIR/captures" "$T/seeds" <<'PY'
import os, struct, sys
src, dst = sys.argv[1:3]
for name in sorted(os.listdir(src)):
    p = os.path.join(src, name)
    if name.endswith(".pcapng"):
        open(os.path.join(dst, name), "wb").write(b"\x38" + open(p, "rb").read()[:60000])
    if not name.endswith(".pcap"):
        continue
    b = open(p, "rb").read()
    out, off = bytearray(b"\x00"), 24
    while off + 16 <= len(b) and len(out) < 60000:
        cl = struct.unpack("<I", b[off + 8:off + 12])[0]
        d = b[off + 16:off + 16 + cl][:65535]
        out += struct.pack(">H", len(d)) + d
        off += 16 + cl
    open(os.path.join(dst, name + ".seed"), "wb").write(out)
PY
check "seeds made" test -n "$(ls "$T/seeds")"
"$T/fuzz_capture" -max_total_time="${FUZZ_SECONDS:-20}" -max_len=65536 -timeout=10 \
    -rss_limit_mb=2048 -artifact_prefix="$T/" "$T/seeds" >"$T/fuzz.log" 2>&1
rc=$?
is "fuzzing ${FUZZ_SECONDS:-20}s: no crash, leak or hang" "$rc" 0
[ $rc = 0 ] || tail -40 "$T/fuzz.log" | sed 's/^/# /'
like "fuzzer ran" "$(tail -3 "$T/fuzz.log")" 'Done [0-9]+ runs'
done_testing
