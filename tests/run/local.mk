## tests/run: `yangblast run` against real and misbehaving peers.
## Included at the end of Makefile.am.
SH_TESTS += tests/run/gnmi.sh
EXTRA_DIST += tests/run/gnmi.sh tests/run/local.mk tests/peers/h2bad.py bench/h2_vs_h2load.sh
SH_TESTS += tests/run/restconf.sh
EXTRA_DIST += tests/run/restconf.sh bench/h1_vs_wrk.sh bench/README.md
## Hardening: credentials (bearer token on gNMI, user-info URLs, key logs), rejected Subscribe calls, mixed corpora.
SH_TESTS += tests/run/hardening.sh
EXTRA_DIST += tests/run/hardening.sh
## Run semantics: -D ends issuing at D (unsent, not sent late); lateness split and self-check;
## -c N -m M as in h2load; Host, User-Agent, --servername, --connect-to.
SH_TESTS += tests/run/deadline.sh tests/run/lateness.sh tests/run/streams.sh tests/run/names.sh
EXTRA_DIST += tests/run/deadline.sh tests/run/lateness.sh tests/run/streams.sh tests/run/names.sh
## Bounded response memory against a hostile HTTP/2 peer; too_large.
SH_TESTS += tests/run/memory.sh
EXTRA_DIST += tests/run/memory.sh
## Outputs written while the run goes: --log (and --series, streamed --hlog).
SH_TESTS += tests/run/stream.sh
EXTRA_DIST += tests/run/stream.sh
## Every failure has a reason (text and errors.reasons), failures out of the success figures.
SH_TESTS += tests/run/reasons.sh
EXTRA_DIST += tests/run/reasons.sh
## serve --service-time to the microsecond, with and without --sink: never early, not rounded to ms.
SH_TESTS += tests/run/service_time.sh
EXTRA_DIST += tests/run/service_time.sh
## An open loop opens its sessions before its clock: counted, no request pays the set-up, a silent target bounded by --timeout.
SH_TESTS += tests/run/preopen.sh
EXTRA_DIST += tests/run/preopen.sh
## Several targets: --targets FILE --fan-out against serve --devices, mixed corpora routed by protocol, inventory errors before any traffic.
SH_TESTS += tests/run/fleet.sh
EXTRA_DIST += tests/run/fleet.sh
## Plans: run --plan with writers, pollers, subscribers and a late workload against serve --devices, start offsets, plan errors before any traffic.
SH_TESTS += tests/run/plan.sh
## Shards: --shard I/N (and --shard-from-env) of an open loop, a closed loop, a corpus pass, a fan-out
## and a plan, whose per-request logs add up to the single run's; run ids; --start-at; bad values.
SH_TESTS += tests/run/shards.sh
EXTRA_DIST += tests/run/shards.sh
EXTRA_DIST += tests/run/plan.sh
## run --plan --telemetry: one telemetry session per device a plan uses, each beside its own load per workload.
SH_TESTS += tests/run/telemetry_plan.sh
EXTRA_DIST += tests/run/telemetry_plan.sh
## Pass/fail criteria: --threshold, --abort-on-fail (yangblast serve with a known service time).
SH_TESTS += tests/run/thresholds.sh
EXTRA_DIST += tests/run/thresholds.sh
## yangblast compare: real runs against a 1 ms and a 5 ms serve, unlike runs, hostile reports.
SH_TESTS += tests/run/compare.sh
EXTRA_DIST += tests/run/compare.sh
## Hostile nesting: a gNMI message nested 200,000 deep is a counted error in the client and serve, never a stack overflow.
SH_TESTS += tests/run/deep.sh
EXTRA_DIST += tests/run/deep.sh
## Accepted outcomes: --accept, --accept-grpc, --expect original against serve.
SH_TESTS += tests/run/accept.sh
EXTRA_DIST += tests/run/accept.sh
## Failure isolation: reconnect back-off against a dead target, a fleet target killed mid-run.
SH_TESTS += tests/run/isolation.sh
EXTRA_DIST += tests/run/isolation.sh
## Request templates: synth --unique against serve, templated paths in nginx's log, --seed, templated gNMI Sets decoded by the grpcio server, malformed templates refused.
SH_TESTS += tests/run/templates.sh
EXTRA_DIST += tests/run/templates.sh
## Rewrites at replay: captured corpora rewritten (paths, headers, bodies, authority) against nginx and serve.
SH_TESTS += tests/run/rewrite.sh
EXTRA_DIST += tests/run/rewrite.sh
## Per-operation and per-target figures in the CSV and the .hlog (Tag= lines).
SH_TESTS += tests/run/tags.sh
EXTRA_DIST += tests/run/tags.sh
## Chains: synth --lifecycle loops leave serve's store empty, steps in order on one session, a failed step ends its chain.
SH_TESTS += tests/run/chains.sh
EXTRA_DIST += tests/run/chains.sh
SH_TESTS += tests/run/chain_values.sh
EXTRA_DIST += tests/run/chain_values.sh
## --io: plain sessions through io_uring or epoll, counted by the server; strace shows which.
SH_TESTS += tests/run/io.sh
EXTRA_DIST += tests/run/io.sh
