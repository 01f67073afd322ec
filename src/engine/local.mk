## engine: plan, workers, schedule, session pool (included from Makefile.am)
## engine.c (the run) -> plan.c (who does what) -> worker.c (the loop)
##   -> schedule.c (when), source.c (which request), pool.c (on which session)
libyangblast_a_SOURCES += \
	src/engine/engine.h src/engine/engine.c src/engine/target.c src/engine/target.h \
	src/engine/plan.c src/engine/plan.h \
	src/engine/worker.c src/engine/worker.h \
	src/engine/schedule.c src/engine/schedule.h \
	src/engine/shard.c src/engine/shard.h \
	src/engine/source.c src/engine/source.h \
	src/engine/opname.c src/engine/opname.h \
	src/engine/pool.c src/engine/pool.h \
	src/engine/inventory.c src/engine/inventory.h \
	src/engine/route.c src/engine/route.h
EXTRA_DIST += src/engine/README.md

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_plan
TESTS += tests/unit/test_plan
tests_unit_test_plan_SOURCES = tests/unit/test_plan.c
tests_unit_test_plan_LDADD = $(UNIT_LDADD)
tests_unit_test_plan_CFLAGS = $(UNIT_CFLAGS)
check_PROGRAMS += tests/unit/test_schedule
TESTS += tests/unit/test_schedule
tests_unit_test_schedule_SOURCES = tests/unit/test_schedule.c
tests_unit_test_schedule_LDADD = $(UNIT_LDADD)
tests_unit_test_schedule_CFLAGS = $(UNIT_CFLAGS)
check_PROGRAMS += tests/unit/test_shard
TESTS += tests/unit/test_shard
tests_unit_test_shard_SOURCES = tests/unit/test_shard.c
tests_unit_test_shard_LDADD = $(UNIT_LDADD)
tests_unit_test_shard_CFLAGS = $(UNIT_CFLAGS)
check_PROGRAMS += tests/unit/test_inventory
TESTS += tests/unit/test_inventory
tests_unit_test_inventory_SOURCES = tests/unit/test_inventory.c
tests_unit_test_inventory_LDADD = $(UNIT_LDADD)
tests_unit_test_inventory_CFLAGS = $(UNIT_CFLAGS)
check_PROGRAMS += tests/unit/test_route
TESTS += tests/unit/test_route
tests_unit_test_route_SOURCES = tests/unit/test_route.c
tests_unit_test_route_LDADD = $(UNIT_LDADD)
tests_unit_test_route_CFLAGS = $(UNIT_CFLAGS)
check_PROGRAMS += tests/unit/test_opname
TESTS += tests/unit/test_opname
tests_unit_test_opname_SOURCES = tests/unit/test_opname.c
tests_unit_test_opname_LDADD = $(UNIT_LDADD)
tests_unit_test_opname_CFLAGS = $(UNIT_CFLAGS)
## The prepared-request cache: what fits and is re-used is cached, the rest streamed, no fill-then-drop peak.
check_PROGRAMS += tests/unit/test_source
TESTS += tests/unit/test_source
tests_unit_test_source_SOURCES = tests/unit/test_source.c
tests_unit_test_source_LDADD = $(UNIT_LDADD)
tests_unit_test_source_CFLAGS = $(UNIT_CFLAGS)
endif
