## codec module: sources and tests (included from Makefile.am)

## HTTP/1.1 (client serialization + response parsing, server request parsing)
libyangblast_a_SOURCES += src/codec/h1.c src/codec/h1.h

## the codec interface and the client codecs the engine drives
libyangblast_a_SOURCES += src/codec/codec.h src/codec/accept.c src/codec/accept.h src/codec/h1_client.c src/codec/h2_client.c \
	src/codec/blobs.c src/codec/blobs.h

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_blobs
TESTS += tests/unit/test_blobs
tests_unit_test_blobs_SOURCES = tests/unit/test_blobs.c
tests_unit_test_blobs_LDADD = $(UNIT_LDADD)
tests_unit_test_blobs_CFLAGS = $(UNIT_CFLAGS)
check_PROGRAMS += tests/unit/test_h1
TESTS += tests/unit/test_h1
tests_unit_test_h1_SOURCES = tests/unit/test_h1.c
tests_unit_test_h1_LDADD = $(UNIT_LDADD)
tests_unit_test_h1_CFLAGS = $(UNIT_CFLAGS)
check_PROGRAMS += tests/unit/test_h2
TESTS += tests/unit/test_h2
tests_unit_test_h2_SOURCES = tests/unit/test_h2.c
tests_unit_test_h2_LDADD = $(UNIT_LDADD)
tests_unit_test_h2_CFLAGS = $(UNIT_CFLAGS)
endif
