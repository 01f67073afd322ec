#!/bin/bash
# tests/capture/fuzz.sh -- fuzzes the capture pipeline's libFuzzer target
# (tests/fuzz/fuzz_capture.c, seeds made of the committed captures by
# tests/fuzz/seeds/capture.sh) through the shared runner tests/fuzz/run.sh
# for FUZZ_SECONDS (default 20), after replaying the inputs in
# tests/capture/regress/ that once failed.  SKIP when clang/libFuzzer is absent.
FUZZ_REGRESS="$YB_SRCDIR/tests/capture/regress" FUZZ_SECONDS=${FUZZ_SECONDS:-20} \
    exec "$YB_SRCDIR/tests/fuzz/run.sh" capture
