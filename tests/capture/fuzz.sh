#!/bin/bash
# tests/capture/fuzz.sh -- fuzzes the capture pipeline's libFuzzer target
# (tests/fuzz/fuzz_capture.c, seeds made of the committed captures by
# tests/fuzz/seeds/capture.sh) through the shared runner tests/fuzz/run.sh
# for FUZZ_SECONDS (default 20), after replaying the inputs in
# tests/capture/regress/ that once failed, with the committed captures' TLS
# key logs (YB_FUZZ_KEYLOGS).  SKIP when clang/libFuzzer is absent.
export YB_FUZZ_KEYLOGS="$YB_SRCDIR/captures/gnmi-tls.keylog:$YB_SRCDIR/captures/restconf-tls.keylog"
FUZZ_REGRESS="$YB_SRCDIR/tests/capture/regress" FUZZ_SECONDS=${FUZZ_SECONDS:-20} \
    exec "$YB_SRCDIR/tests/fuzz/run.sh" capture
