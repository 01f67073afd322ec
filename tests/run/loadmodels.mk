## Load-model tests: open loop, ramps, original timing, signals, HdrHistogram outputs.
SH_TESTS += tests/run/loadmodels.sh tests/run/omission.sh tests/run/targets.sh tests/run/serve_policies.sh
EXTRA_DIST += tests/run/loadmodels.sh tests/run/loadmodels.mk tests/run/omission.sh tests/run/targets.sh tests/run/serve_policies.sh
## gNMI Subscribe in run: ONCE, POLL, STREAM, --subscriptions.
SH_TESTS += tests/run/subscribe.sh
EXTRA_DIST += tests/run/subscribe.sh
