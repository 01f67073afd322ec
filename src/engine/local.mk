## engine: scheduler, session pool, workers (included from Makefile.am)
libyangblast_a_SOURCES += \
	src/engine/engine.h src/engine/target.c \
	src/engine/schedule.c src/engine/schedule.h \
	src/engine/source.c src/engine/source.h \
	src/engine/worker.c \
	src/codec/codec.h src/codec/h1_client.c src/codec/h2_client.c \
	src/cli/runcommon.c src/cli/runcommon.h src/cli/run.c src/cli/experiment.c \
	src/report/study.c src/report/outputs.c
