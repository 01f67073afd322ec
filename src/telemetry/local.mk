## telemetry module: device telemetry sessions during a run and their
## report (included from Makefile.am).
libyangblast_a_SOURCES += \
	src/telemetry/telemetry.c src/telemetry/telemetry.h \
	src/telemetry/report.c

SH_TESTS += tests/run/telemetry.sh
EXTRA_DIST += src/telemetry/local.mk
