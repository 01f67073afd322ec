#!/bin/bash
# Outputs never destroy: every output option written to /dev/null and to a
# FIFO leaves the device a device and the FIFO a FIFO (run as root, where
# replacing /dev/null would succeed); a symbolic link stays a link and its
# target is replaced whole; '-' is standard output, with the text report on
# standard error; a bad output path is refused before the first request.
. "$YB_SRCDIR/tests/lib.sh"

C=$YB_SRCDIR/captures
unset YANGBLAST_TOKEN YANGBLAST_PASSWORD
run() { "$@" >"$T/stdout" 2>"$T/stderr"; RC=$?; ERR=$(cat "$T/stderr"); }
dev_ok() { check "$1: /dev/null is still a character device" test -c /dev/null; }

yb_serve "$T/serve.out" --restconf 127.0.0.1:0 --gnmi off --stats "$T/stats.json" ||
    { echo "Bail out! serve did not start"; exit 1; }
"$YB" synth acl -n 4 -r 1 -o "$T/c.ybc" || { echo "Bail out! synth"; exit 1; }
echo '{"protocol":"restconf","method":"GET","path":"/x"}' > "$T/one.jsonl"
CAP=$C/h1-keepalive.pcap

# Every output option to /dev/null.
for opt in --json --hgrm --hlog --csv --log --series; do
    run "$YB" run "$T/c.ybc" --target "$RURL" "$opt" /dev/null -q
    is "run $opt /dev/null: exit 0" "$RC" 0
    dev_ok "run $opt /dev/null"
done
run "$YB" synth acl -n 2 -o /dev/null; is "synth -o /dev/null: exit 0" "$RC" 0; dev_ok "synth -o"
run "$YB" corpus import "$T/one.jsonl" -o /dev/null; is "corpus import -o /dev/null: exit 0" "$RC" 0; dev_ok "import -o"
if [ -r "$CAP" ]; then
    run "$YB" capture -r "$CAP" -o /dev/null --json /dev/null -q
    is "capture -o /dev/null --json /dev/null: exit 0" "$RC" 0; dev_ok "capture -o --json"
fi
run "$YB" experiment sessions --restconf "$RURL" -n 2 --json /dev/null --csv /dev/null
is "experiment --json /dev/null --csv /dev/null: exit 0" "$RC" 0; dev_ok "experiment"
run "$YB" serve --restconf 127.0.0.1:0 --gnmi off --self-signed --write-cert /dev/null --stats /dev/null --help
dev_ok "serve --help with outputs"
ls -la /dev/null | grep -q '^c' && ok "ls shows /dev/null as a device" || not_ok "ls shows /dev/null as a device"

# Every output option to a FIFO: written in place, read by a reader.
fifo_case() { # DESC OPTION-PATH-ARG... (the FIFO is $T/fifo)
    local d=$1; shift
    rm -f "$T/fifo" "$T/fifo.out"; mkfifo "$T/fifo"
    cat "$T/fifo" > "$T/fifo.out" & local rd=$!
    run "$@"
    wait "$rd"
    is "$d to a FIFO: exit 0" "$RC" 0
    check "$d: the FIFO is still a FIFO" test -p "$T/fifo"
    check "$d: the reader got the output" test -s "$T/fifo.out"
}
fifo_case "run --json" "$YB" run "$T/c.ybc" --target "$RURL" --json "$T/fifo" -q
is "run --json FIFO: the reader got valid JSON" "$(jget "$T/fifo.out" "r['summary']['requests_ok']")" 4
fifo_case "run --hgrm" "$YB" run "$T/c.ybc" --target "$RURL" --hgrm "$T/fifo" -q
fifo_case "run --hlog" "$YB" run "$T/c.ybc" --target "$RURL" --hlog "$T/fifo" -q
fifo_case "run --csv" "$YB" run "$T/c.ybc" --target "$RURL" --csv "$T/fifo" -q
fifo_case "run --log" "$YB" run "$T/c.ybc" --target "$RURL" --log "$T/fifo" -q
is "run --log FIFO: the reader got a line per request" "$(grep -c '^{"record"' "$T/fifo.out")" 4
fifo_case "run --series" "$YB" run "$T/c.ybc" --target "$RURL" --series "$T/fifo" -q
fifo_case "synth -o" "$YB" synth acl -n 2 -o "$T/fifo"
fifo_case "corpus import -o" "$YB" corpus import "$T/one.jsonl" -o "$T/fifo"
[ -r "$CAP" ] && fifo_case "capture -o" "$YB" capture -r "$CAP" -o "$T/fifo" -q
fifo_case "experiment --json" "$YB" experiment sessions --restconf "$RURL" -n 2 --json "$T/fifo"

# A symbolic link stays a link; its target is replaced whole.
echo old > "$T/real.json"; ln -s real.json "$T/link.json"
mkdir "$T/sub"; ln -s ../real.ybc "$T/sub/link.ybc"
run "$YB" run "$T/c.ybc" --target "$RURL" --json "$T/link.json" -q
is "run --json LINK: exit 0" "$RC" 0
check "--json LINK: the link is still a link" test -L "$T/link.json"
is "--json LINK: the target holds the report" "$(jget "$T/real.json" "r['summary']['requests_ok']")" 4
run "$YB" synth acl -n 2 -o "$T/sub/link.ybc"
check "synth -o LINK (relative, dangling): the link is still a link" test -L "$T/sub/link.ybc"
check "synth -o LINK: the target was created" test -s "$T/real.ybc"
is "no temporary file is left beside the target" "$(ls -A "$T" "$T/sub" | grep '^\.' | grep -vx '.out')" ""
chmod 0600 "$T/real.json"
"$YB" run "$T/c.ybc" --target "$RURL" --json "$T/link.json" -q >/dev/null
is "a replaced file keeps its mode" "$(stat -c %a "$T/real.json")" 600

# '-' is standard output; the human report then goes to standard error.
"$YB" run "$T/c.ybc" --target "$RURL" --json - -q 2>"$T/text" | /usr/bin/python3 -m json.tool > "$T/pretty"
is "--json - | python3 -m json.tool: exit 0" "${PIPESTATUS[1]}" 0
like "--json -: the text report went to stderr" "$(cat "$T/text")" "# Requests"
for opt in --hgrm --hlog --csv --log --series; do
    run "$YB" run "$T/c.ybc" --target "$RURL" "$opt" - -q
    is "run $opt -: exit 0" "$RC" 0
    like "run $opt -: text report on stderr" "$ERR" "# Requests"
    [ "$opt" = --hgrm ] && like "--hgrm -: the distribution on stdout" "$(cat "$T/stdout")" "Value +Percentile"
done
run "$YB" run "$T/c.ybc" --target "$RURL" --json - --hgrm - -q
is "two outputs to '-': exit 2" "$RC" 2
like "two outputs to '-': says why" "$ERR" "at most one output can be standard output"

# A bad output path costs milliseconds, not the run: refused before any request.
: > "$T/afile"
for bad in "$T/nodir/x.json" "$T/afile/x.json" "$T/sub" ""; do
    for opt in --json --hgrm --hlog --csv --log --series; do
        run "$YB" run "$T/c.ybc" --target "$RURL" "$opt" "$bad" -q
        is "run $opt '$bad': exit 2" "$RC" 2
        like "run $opt '$bad': names the path" "$ERR" "^yangblast run: .*(${bad:-empty})"
    done
done
run "$YB" experiment sessions --restconf "$RURL" -n 2 --json "$T/nodir/x.json"
is "experiment --json in a missing directory: exit 2" "$RC" 2
run "$YB" experiment sessions --restconf "$RURL" -n 2 --csv "$T/sub"
is "experiment --csv a directory: exit 2" "$RC" 2
[ -r "$CAP" ] && { run "$YB" capture -r "$CAP" -o "$T/nodir/x.ybc"; is "capture -o in a missing directory: exit 2" "$RC" 2; }
run "$YB" serve --stats "$T/nodir/s.json"
is "serve --stats in a missing directory: exit 2 at once" "$RC" 2
yb_serve_stop
connections=$(jget "$T/stats.json" "r['connections']['restconf']")
# 6 --run /dev/null + 6 FIFO + 2 link + 1 '-' + 5 '-' + 1 two-'-' (refused) ... count what ran:
# runs that ran: 6 + 6 + 2 + 1 + 5 = 20 one-session runs; experiments: 2 x (1 reuse + 2 per-request)
is "serve saw only the runs that ran (20 runs + 2 experiments of 1+2 sessions)" "$connections" 26

# A command ended by a signal leaves no temporary file behind: the hidden
# ".NAME.XXXXXX" beside the output goes with it, and the output never
# appears (a background job ignores SIGINT, so SIGTERM and SIGHUP here;
# SIGINT takes the same path).
mkdir "$T/sig"
for s in TERM HUP; do
    "$YB" synth acl -n 5000000 -o "$T/sig/big.ybc" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 300); do ls -A "$T/sig" | grep -q '^\.big\.ybc\.' && break; sleep 0.1; done
    check "synth, before SIG$s: its temporary file is there" sh -c "ls -A '$T/sig' | grep -q '^\.big\.ybc\.'"
    kill -$s "$pid"
    wait "$pid"
    rc=$?
    is "synth ended by SIG$s: the signal's status" "$rc" "$((128 + $(kill -l $s)))"
    is "synth ended by SIG$s: nothing left in the directory" "$(ls -A "$T/sig")" ""
done

done_testing
