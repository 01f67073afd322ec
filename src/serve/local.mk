## serve: embedded switch target (RESTCONF + gNMI over one openconfig-acl
## datastore, cost model, faults).  Included from Makefile.am.
libyangblast_a_SOURCES += \
	src/serve/store.c src/serve/store.h \
	src/serve/cost.c src/serve/cost.h \
	src/serve/restconf.c src/serve/gnmi_server.c \
	src/serve/server.c src/serve/server.h src/serve/serve_priv.h \
	src/serve/stats.c src/serve/inventory.c \
	src/serve/system.c src/serve/system.h \
	src/cli/serve.c
dist_man_MANS += man/yangblast-serve.1

SH_TESTS += tests/serve/restconf.sh tests/serve/gnmi.sh tests/serve/faults.sh \
	tests/serve/badinput.sh tests/serve/tls.sh tests/serve/paths.sh \
	tests/serve/goaway.sh tests/serve/auth.sh tests/serve/devices.sh \
	tests/serve/operations.sh tests/serve/system.sh tests/serve/io.sh
EXTRA_DIST += tests/serve/common.sh src/serve/local.mk
