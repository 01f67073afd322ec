## tests/fuzz: in-tree libFuzzer targets (included from Makefile.am).
## A target NAME is tests/fuzz/fuzz_NAME.c, its source list and libFuzzer
## options tests/fuzz/NAME.fuzz, and seeds under tests/fuzz/seeds/NAME/.
## Adding one is one line here: `make check` runs each .fuzz through the
## shared runner (build.sh, then a short FUZZ_SECONDS run);
## tests/fuzz/campaign.sh DURATION runs them all for longer.
FUZZ_TESTS = tests/fuzz/ybc.fuzz tests/fuzz/jsonl.fuzz tests/fuzz/h1.fuzz tests/fuzz/h2.fuzz \
	tests/fuzz/gnmi_path.fuzz
TEST_EXTENSIONS += .fuzz
FUZZ_LOG_DRIVER = $(LOG_DRIVER)
FUZZ_LOG_COMPILER = $(SHELL) $(srcdir)/tests/fuzz/run.sh
TESTS += $(FUZZ_TESTS)
EXTRA_DIST += $(FUZZ_TESTS) tests/fuzz/local.mk tests/fuzz/build.sh tests/fuzz/run.sh \
	tests/fuzz/campaign.sh tests/fuzz/capture.fuzz tests/fuzz/fuzz_capture.c tests/fuzz/fuzz_ybc.c tests/fuzz/fuzz_jsonl.c tests/fuzz/jsonl.dict \
	tests/fuzz/fuzz_h1.c tests/fuzz/fuzz_h2.c tests/fuzz/fuzz_gnmi_path.c \
	tests/fuzz/seeds tests/fuzz/regress tests/fuzz/stub_host.h tests/fuzz/h1.dict
## build.sh caches the whole library built with the fuzzer flags here.
clean-local: clean-fuzz-lib
clean-fuzz-lib:
	rm -rf fuzz-lib
.PHONY: clean-fuzz-lib
## serve's RESTCONF and gNMI front ends over a stub transport (no sockets).
FUZZ_TESTS += tests/fuzz/serve_restconf.fuzz tests/fuzz/serve_gnmi.fuzz
EXTRA_DIST += tests/fuzz/serve_stub.c tests/fuzz/serve_stub.h tests/fuzz/fuzz_serve_restconf.c \
	tests/fuzz/fuzz_serve_gnmi.c tests/fuzz/regress/serve_restconf
## the YAML inventory parser (--targets FILE)
FUZZ_TESTS += tests/fuzz/inventory.fuzz
EXTRA_DIST += tests/fuzz/fuzz_inventory.c tests/fuzz/inventory.dict
## compare's JSON reports (self-comparison oracle) and --threshold expressions
FUZZ_TESTS += tests/fuzz/compare.fuzz
EXTRA_DIST += tests/fuzz/fuzz_compare.c
## merge's JSON reports and interval logs (self-merge and read-back oracles)
FUZZ_TESTS += tests/fuzz/merge.fuzz
EXTRA_DIST += tests/fuzz/fuzz_merge.c

## gnmic-style request files (synth gnmi --set-request), YAML and JSON
FUZZ_TESTS += tests/fuzz/gnmi_req.fuzz
EXTRA_DIST += tests/fuzz/fuzz_gnmi_req.c tests/fuzz/gnmi_req.dict
## The HTML report renderer's JSON input (yangblast report).
FUZZ_TESTS += tests/fuzz/html.fuzz
EXTRA_DIST += tests/fuzz/fuzz_html.c tests/fuzz/html.dict
## The plan file parser (run --plan FILE).
FUZZ_TESTS += tests/fuzz/plan.fuzz
EXTRA_DIST += tests/fuzz/fuzz_plan.c tests/fuzz/plan.dict
## Request templates: the placeholder compiler and filler, text and gNMI bodies
FUZZ_TESTS += tests/fuzz/tmpl.fuzz
EXTRA_DIST += tests/fuzz/fuzz_tmpl.c tests/fuzz/tmpl.dict
## run's rewrite rules (--rewrite-path, --set-header, --drop-header, --rewrite-body, --map-authority)
FUZZ_TESTS += tests/fuzz/rewrite.fuzz
EXTRA_DIST += tests/fuzz/fuzz_rewrite.c tests/fuzz/rewrite.dict
## The live metrics listener's request judge (--metrics-listen).
FUZZ_TESTS += tests/fuzz/metrics_http.fuzz
EXTRA_DIST += tests/fuzz/fuzz_metrics_http.c tests/fuzz/metrics_http.dict
## run's --start-at TIME and --shard I/N parsers (untrusted text).
FUZZ_TESTS += tests/fuzz/walltime.fuzz
EXTRA_DIST += tests/fuzz/fuzz_walltime.c tests/fuzz/walltime.dict
