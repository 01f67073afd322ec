## report module: sources and tests (included from Makefile.am)
libyangblast_a_SOURCES += src/report/report.c src/report/report.h \
	src/report/study.c src/report/outputs.c \
	src/report/stream.c src/report/stream.h \
	src/report/threshold.c src/report/threshold.h \
	src/report/compare.c src/report/compare.h \
	src/report/reader.c src/report/reader.h \
	src/report/merge.c src/report/merge.h src/report/hlogmerge.c \
	src/report/html.c src/report/html.h src/report/svg.c src/report/svg.h \
	src/report/metrics.c src/report/metrics.h src/report/metrics_http.c src/report/metrics_http.h
dist_man_MANS += man/yangblast-report.5 man/yangblast-compare.1 man/yangblast-merge.1

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_report tests/unit/test_stream tests/unit/test_threshold tests/unit/test_svg
TESTS += tests/unit/test_report tests/unit/test_stream tests/unit/test_threshold tests/unit/test_svg
tests_unit_test_svg_SOURCES = tests/unit/test_svg.c
tests_unit_test_svg_LDADD = $(UNIT_LDADD)
tests_unit_test_svg_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_report_SOURCES = tests/unit/test_report.c
tests_unit_test_report_LDADD = $(UNIT_LDADD)
tests_unit_test_report_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_stream_SOURCES = tests/unit/test_stream.c
tests_unit_test_stream_LDADD = $(UNIT_LDADD)
tests_unit_test_stream_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_threshold_SOURCES = tests/unit/test_threshold.c
tests_unit_test_threshold_LDADD = $(UNIT_LDADD)
tests_unit_test_threshold_CFLAGS = $(UNIT_CFLAGS)
endif

## The HTML report: real runs rendered, checked against their JSON and in headless Chromium.
SH_TESTS += tests/report/html.sh
EXTRA_DIST += tests/report/html.sh tests/report/html_check.py tests/report/png_ink.py

## The JSON report's exact histograms, decoded by an independent reader.
SH_TESTS += tests/report/histograms.sh
EXTRA_DIST += tests/report/histograms.sh tests/report/hdr_v2.py

## yangblast merge on real shard runs: exact against the per-request logs, refusals.
SH_TESTS += tests/report/merge.sh
EXTRA_DIST += tests/report/merge.sh

## Live metrics: curl scrapes during runs, checked by promtool and tests/report/metrics_check.py.
SH_TESTS += tests/report/metrics.sh
EXTRA_DIST += tests/report/metrics.sh tests/report/metrics_check.py
## examples/ci/load-gate.yml run step by step as a CI runner would.
SH_TESTS += tests/report/ci_example.sh
EXTRA_DIST += tests/report/ci_example.sh examples/ci/load-gate.yml examples/ci/baseline.json
