#!/bin/bash
# tests/capture/fuzz.sh -- fuzzes the capture pipeline's libFuzzer target
# (tests/fuzz/fuzz_capture.c, seeds made of the committed captures by
# tests/fuzz/seeds/capture.sh) through the shared runner tests/fuzz/run.sh
# for FUZZ_SECONDS (default 20), after replaying the inputs in
# tests/capture/regress/ that once failed, with the committed captures' TLS
# key logs (every captures/*.keylog, in YB_FUZZ_KEYLOGS) and server keys
# (captures/*.server-key.pem, in YB_FUZZ_SERVER_KEYS).  SKIP when clang/libFuzzer is absent.
kl=("$YB_SRCDIR"/captures/*.keylog)
YB_FUZZ_KEYLOGS=$(IFS=:; echo "${kl[*]}")
export YB_FUZZ_KEYLOGS
sk=("$YB_SRCDIR"/captures/*.server-key.pem)
YB_FUZZ_SERVER_KEYS=$(IFS=:; echo "${sk[*]}")
export YB_FUZZ_SERVER_KEYS
FUZZ_REGRESS="$YB_SRCDIR/tests/capture/regress" FUZZ_SECONDS=${FUZZ_SECONDS:-20} \
    exec "$YB_SRCDIR/tests/fuzz/run.sh" capture
