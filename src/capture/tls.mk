## capture: TLS decryption from NSS key logs (included from Makefile.am)
libyangblast_a_SOURCES += src/capture/tls_decrypt.c src/capture/tls_decrypt.h
EXTRA_DIST += tests/capture/tls_vectors/sample.keylog

if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_tls_decrypt
TESTS += tests/unit/test_tls_decrypt
tests_unit_test_tls_decrypt_SOURCES = tests/unit/test_tls_decrypt.c
tests_unit_test_tls_decrypt_LDADD = $(UNIT_LDADD)
tests_unit_test_tls_decrypt_CFLAGS = $(UNIT_CFLAGS)
endif
