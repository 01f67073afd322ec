## transport module: sources and tests (included from Makefile.am)
libyangblast_a_SOURCES += \
	src/transport/transport.c src/transport/transport.h \
	src/transport/uring.c src/transport/uring.h \
	src/transport/tls.c src/transport/tls_priv.h \
	src/transport/tls_mem.c src/transport/tls_eckey.c

if HAVE_CMOCKA
check_PROGRAMS += tests/transport/test_transport
TESTS += tests/transport/test_transport
tests_transport_test_transport_SOURCES = tests/transport/test_transport.c
tests_transport_test_transport_LDADD = $(UNIT_LDADD)
tests_transport_test_transport_CFLAGS = $(UNIT_CFLAGS)
check_PROGRAMS += tests/transport/test_tls_mem
TESTS += tests/transport/test_tls_mem
tests_transport_test_tls_mem_SOURCES = tests/transport/test_tls_mem.c
tests_transport_test_tls_mem_LDADD = $(UNIT_LDADD)
tests_transport_test_tls_mem_CFLAGS = $(UNIT_CFLAGS)
endif
