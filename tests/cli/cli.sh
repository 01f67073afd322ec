#!/bin/bash
# Command-line surface: help, version, exit codes for usage errors.
. "$YB_SRCDIR/tests/lib.sh"

# run CMD...: runs CMD, leaving stdout in $OUT, stderr in $ERR, status in $RC.
run() {
    "$@" >"$T/stdout" 2>"$T/stderr"
    RC=$?
    OUT=$(cat "$T/stdout")
    ERR=$(cat "$T/stderr")
}

# usage_error DESC CMD...: CMD must exit 2 with a message on stderr and
# write nothing under $T/out*.
usage_error() {
    local d=$1; shift
    run "$@"
    is "$d: exit 2" "$RC" 2
    like "$d: message on stderr" "$ERR" 'yangblast'
}

run "$YB" --help
is "--help exits 0" "$RC" 0
like "--help lists synth" "$OUT" '^  synth '
like "--help lists corpus" "$OUT" '^  corpus '
like "--help names the exit codes" "$OUT" '2 usage or input error'
# Commands of later milestones are advertised exactly when they exist:
# a listed command answers --help, an unlisted one is an unknown command.
HELP=$OUT
for c in run serve capture experiment; do
    if printf '%s\n' "$HELP" | grep -Eq "^  $c( |$)"; then
        run "$YB" $c --help
        is "--help lists $c, which exists" "$RC" 0
    else
        run "$YB" $c
        like "--help does not list $c, which does not exist yet" "$RC $ERR" "^2 .*unknown command '$c'"
    fi
done
run "$YB" -h
is "-h exits 0" "$RC" 0
run "$YB" help
is "help exits 0" "$RC" 0

run "$YB" --version
is "--version exits 0" "$RC" 0
is "--version prints the version" "$OUT" "yangblast 0.1.0"
run "$YB" -V
is "-V prints the version" "$OUT" "yangblast 0.1.0"

for args in "synth --help" "synth acl --help" "corpus --help" "corpus info --help" \
            "corpus cat --help" "corpus import --help"; do
    # shellcheck disable=SC2086
    run "$YB" $args
    is "$args exits 0" "$RC" 0
    like "$args prints usage on stdout" "$OUT" '^Usage: yangblast'
    is "$args prints nothing on stderr" "$ERR" ""
done
run "$YB" synth acl --help
for opt in --output --proto --count --rules --seed --op --method --mode \
           --sample-interval --polls --name-prefix --authority --scheme; do
    like "synth --help documents $opt" "$OUT" "$opt"
done
run "$YB" corpus cat --help
like "corpus cat --help documents --with-header" "$OUT" '--with-header'

# No command at all: usage on stderr, exit 2.
run "$YB"
is "no command: exit 2" "$RC" 2
like "no command: usage on stderr" "$ERR" '^Usage: yangblast'
is "no command: nothing on stdout" "$OUT" ""

usage_error "unknown command" "$YB" frobnicate
like "unknown command is named" "$ERR" "unknown command 'frobnicate'"
usage_error "unknown option" "$YB" synth acl --frobnicate -o "$T/out.ybc"
usage_error "corpus info bad option" "$YB" corpus info --frobnicate x
usage_error "corpus cat bad option" "$YB" corpus cat --frobnicate x
usage_error "corpus import bad option" "$YB" corpus import --frobnicate -o "$T/out.ybc"
usage_error "unknown corpus subcommand" "$YB" corpus frobnicate
like "unknown corpus subcommand is named" "$ERR" "frobnicate"
usage_error "corpus without subcommand" "$YB" corpus
usage_error "bad number for --count" "$YB" synth acl --count 12x -o "$T/out.ybc"
like "bad --count names the option" "$ERR" '--count'
usage_error "zero --count" "$YB" synth acl --count 0 -o "$T/out.ybc"
usage_error "negative --count" "$YB" synth acl --count -5 -o "$T/out.ybc"
usage_error "huge --count" "$YB" synth acl --count 99999999999999999999 -o "$T/out.ybc"
usage_error "bad number for --rules" "$YB" synth acl --rules many -o "$T/out.ybc"
usage_error "too many --rules" "$YB" synth acl --rules 100001 -o "$T/out.ybc"
usage_error "bad number for --seed" "$YB" synth acl --seed 0x10 -o "$T/out.ybc"
usage_error "bad --proto" "$YB" synth acl --proto netconf -o "$T/out.ybc"
like "bad --proto names the value" "$ERR" 'netconf'
usage_error "bad --op" "$YB" synth acl --op merge -o "$T/out.ybc"
usage_error "bad --method" "$YB" synth acl --method DELETE -o "$T/out.ybc"
usage_error "bad --mode" "$YB" synth acl --proto gnmi --op subscribe --mode sometimes -o "$T/out.ybc"
usage_error "bad --sample-interval" "$YB" synth acl --proto gnmi --op subscribe --mode stream \
    --sample-interval 0 -o "$T/out.ybc"
usage_error "bad --scheme" "$YB" synth acl --scheme ftp -o "$T/out.ybc"
usage_error "bad --name-prefix" "$YB" synth acl --name-prefix 'a/b' -o "$T/out.ybc"
usage_error "bad --authority" "$YB" synth acl --authority 'a b' -o "$T/out.ybc"
usage_error "restconf subscribe" "$YB" synth acl --op subscribe -o "$T/out.ybc"
usage_error "synth without -o" "$YB" synth acl
like "synth without -o names -o" "$ERR" '-o'
usage_error "synth without workload" "$YB" synth -o "$T/out.ybc"
usage_error "synth unknown workload" "$YB" synth bgp -o "$T/out.ybc"
usage_error "synth extra argument" "$YB" synth acl extra -o "$T/out.ybc"
usage_error "corpus info without file" "$YB" corpus info
usage_error "corpus info two files" "$YB" corpus info a b
usage_error "corpus cat without file" "$YB" corpus cat
usage_error "corpus import without -o" "$YB" corpus import /dev/null
usage_error "corpus info missing file" "$YB" corpus info "$T/missing.ybc"
like "missing file is named" "$ERR" "$T/missing.ybc"
if ls "$T"/out* >/dev/null 2>&1; then not_ok "usage errors leave no output files"
else ok "usage errors leave no output files"; fi

done_testing
