## stats module: sources and tests (included from Makefile.am)
libyangblast_a_SOURCES += \
	src/stats/hdr.c src/stats/hdr.h \
	src/stats/recorder.c src/stats/recorder.h \
	src/stats/ops.c src/stats/ops.h

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_hdr tests/unit/test_recorder
TESTS += tests/unit/test_hdr tests/unit/test_recorder
tests_unit_test_hdr_SOURCES = tests/unit/test_hdr.c
tests_unit_test_hdr_LDADD = $(UNIT_LDADD)
tests_unit_test_hdr_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_recorder_SOURCES = tests/unit/test_recorder.c
tests_unit_test_recorder_LDADD = $(UNIT_LDADD)
tests_unit_test_recorder_CFLAGS = $(UNIT_CFLAGS)
endif
