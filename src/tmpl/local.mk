## tmpl module: request templates (placeholders compiled once, filled per request)
libyangblast_a_SOURCES += src/tmpl/tmpl.c src/tmpl/tmpl.h src/tmpl/record.c \
	src/tmpl/pick.c src/tmpl/pick.h src/tmpl/key.h

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_tmpl
TESTS += tests/unit/test_tmpl
tests_unit_test_tmpl_SOURCES = tests/unit/test_tmpl.c
tests_unit_test_tmpl_LDADD = $(UNIT_LDADD)
tests_unit_test_tmpl_CFLAGS = $(UNIT_CFLAGS)
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_pick
TESTS += tests/unit/test_pick
tests_unit_test_pick_SOURCES = tests/unit/test_pick.c
tests_unit_test_pick_LDADD = $(UNIT_LDADD)
tests_unit_test_pick_CFLAGS = $(UNIT_CFLAGS)
endif
