## capture module: pcap/pcapng -> corpus (included from Makefile.am)
## Sources, the command, tests, fuzz target and the recorded captures.

libyangblast_a_SOURCES += src/capture/capture.c src/capture/capture.h \
	src/capture/capture_priv.h src/capture/pcap_in.c src/capture/decode.c \
	src/capture/reasm.c src/capture/frag.c src/capture/h1x.c src/capture/h2x.c src/capture/redact.c \
	src/cli/capture.c
dist_man_MANS += man/yangblast-capture.1

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_capture_pipeline
TESTS += tests/unit/test_capture_pipeline
tests_unit_test_capture_pipeline_SOURCES = tests/unit/test_capture_pipeline.c
tests_unit_test_capture_pipeline_LDADD = $(UNIT_LDADD)
tests_unit_test_capture_pipeline_CFLAGS = $(UNIT_CFLAGS)
endif

SH_TESTS += tests/capture/captures.sh tests/capture/robust.sh tests/capture/roundtrip.sh tests/capture/short.sh tests/capture/redact.sh tests/capture/tlsreasons.sh \
	tests/capture/flows.sh tests/capture/tlshandshake.sh tests/capture/rsakey.sh tests/capture/frags.sh tests/capture/h2gap.sh \
	tests/capture/fuzz.sh
EXTRA_DIST += src/capture/local.mk tests/capture/pcaptool.py tests/capture/tlscap.py tests/capture/tls12sessions.sh tests/capture/regress \
	bench/capture_vs_tshark.sh captures
