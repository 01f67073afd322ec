## engine: scheduler, session pool, workers (included from Makefile.am)
libyangblast_a_SOURCES += \
	src/engine/engine.h src/engine/target.c \
	src/engine/schedule.c src/engine/schedule.h \
	src/engine/source.c src/engine/source.h \
	src/engine/pool.c src/engine/pool.h \
	src/engine/worker.c
