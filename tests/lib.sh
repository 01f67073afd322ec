# Shared helpers for yangblast's shell tests: TAP output, temp dirs, free
# ports.  Source it, call `plan N` (or `done_testing` at the end).
# Environment from `make check`: YB (the binary), YB_SRCDIR, YB_BUILDDIR.
set -u
: "${YB:=${YB_BUILDDIR:-.}/yangblast}"
: "${YB_SRCDIR:=.}"
T=$(mktemp -d "${TMPDIR:-/tmp}/yb-test.XXXXXX")
# what the programs under test put in $TMPDIR goes in this test's own
# directory, so tests run in parallel (make -j check) never see each
# other's temporary files
export TMPDIR="$T"
_tap_n=0
_tap_fail=0
_cleanup_hooks=""
_on_exit() {
    for h in $_cleanup_hooks; do "$h" || true; done
    rm -rf "$T"
}
trap _on_exit EXIT

# YB_WRAP (set by `make check-valgrind`): a command that prefixes every
# yangblast invocation; $YB then names a wrapper script that execs it.
if [ -n "${YB_WRAP:-}" ]; then
    mkdir -p "$T/.wrap"
    printf '#!/bin/sh\nexec %s %q "$@"\n' "$YB_WRAP" "$YB" >"$T/.wrap/yangblast"
    chmod +x "$T/.wrap/yangblast"
    YB=$T/.wrap/yangblast
fi

# at_exit FN: run FN when the test script exits.
at_exit() { _cleanup_hooks="$_cleanup_hooks $1"; }

ok() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $*"; }
not_ok() { _tap_n=$((_tap_n + 1)); _tap_fail=$((_tap_fail + 1)); echo "not ok $_tap_n - $*"; }
diag() { echo "# $*" | sed '2,$s/^/# /'; }

# check DESC CMD...: passes when CMD exits 0.
check() {
    local d=$1; shift
    if "$@" >"$T/.out" 2>&1; then ok "$d"; else not_ok "$d"; sed 's/^/# /' "$T/.out" | head -20; fi
}
# check_rc DESC RC CMD...: passes when CMD exits with RC.
check_rc() {
    local d=$1 want=$2; shift 2
    "$@" >"$T/.out" 2>&1
    local rc=$?
    if [ "$rc" = "$want" ]; then ok "$d"; else not_ok "$d (exit $rc, want $want)"; sed 's/^/# /' "$T/.out" | head -20; fi
}
# is DESC GOT WANT
is() {
    if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1"; diag "got:  $2"; diag "want: $3"; fi
}
# like DESC TEXT REGEX (grep -E)
like() {
    if printf '%s\n' "$2" | grep -Eq -- "$3"; then ok "$1"; else not_ok "$1"; diag "no match for /$3/ in:"; printf '%s\n' "$2" | head -20 | sed 's/^/#   /'; fi
}
done_testing() { echo "1..$_tap_n"; [ "$_tap_fail" = 0 ]; }

# jget FILE EXPR: prints the Python expression EXPR evaluated over the JSON
# document r in FILE (dicts, lists and booleans as compact sorted JSON);
# "ERR" when FILE does not parse.
jget() {
    /usr/bin/python3 - "$1" "$2" <<'PYEOF' 2>/dev/null || echo ERR
import json, sys
r = json.load(open(sys.argv[1]))
v = eval(sys.argv[2], {"r": r})
print(json.dumps(v, sort_keys=True, separators=(",", ":")) if isinstance(v, (dict, list, bool)) or v is None else v)
PYEOF
}

# acl_count URL: the number of ACL sets in the datastore of the serve at
# URL (its RESTCONF URL), or ERR.
acl_count() {
    /usr/bin/python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/restconf/data/openconfig-acl:acl/acl-sets"))
print(len(d.get("openconfig-acl:acl-sets", {}).get("acl-set", [])))
' "$1" 2>/dev/null || echo ERR
}

# free_port: prints a TCP port free on 127.0.0.1 right now.
free_port() {
    /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# wait_port PORT [SECONDS]: waits until something listens on 127.0.0.1:PORT.
wait_port() {
    local p=$1 n=$(( ${2:-10} * 10 ))
    while [ $n -gt 0 ]; do
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && return 0
        sleep 0.1; n=$((n - 1))
    done
    return 1
}

# yb_serve OUT ARGS...: starts `$YB serve ARGS` in the background with its
# output in OUT, stopped at exit; waits for its "serve:" line and sets
# SPID, RURL and GURL (the announced RESTCONF and gNMI URLs, or "off").
# Returns 1 (with the output on stderr) when it did not start.
yb_serve() {
    local out=$1; shift
    # emptied here, not only by the background job's redirection, which can
    # come after the loop below has read a previous server's 'serve:' line
    : >"$out" || return 1
    "$YB" serve "$@" > "$out" 2>&1 &
    SPID=$!
    _cleanup_hooks="$_cleanup_hooks yb_serve_stop"
    local i tries=300
    [ -z "${YB_WRAP:-}" ] || tries=1200 # valgrind: TLS set-up alone takes seconds
    for i in $(seq $tries); do grep -q '^serve:' "$out" && break; sleep 0.1; done
    read -r _ _ RURL _ GURL < <(grep '^serve:' "$out" | head -1) || true
    [ -n "${GURL:-}" ] || { cat "$out" >&2; return 1; }
}
# serve_fleet NAME [ARGS...]: `serve --devices ${DEVICES:-3} ARGS` on loopback writing
# the inventory $T/NAME.yaml and, on exit, $T/NAME.stats.json; sets FPID
# (stopped at exit, or by stop_fleet).  Returns 1 (with the output on
# stderr) when it did not start.
serve_fleet() {
    local name=$1; shift
    : >"$T/$name.out" || return 1 # as in yb_serve
    "$YB" serve --devices "${DEVICES:-3}" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 "$@" \
        --write-inventory "$T/$name.yaml" --stats "$T/$name.stats.json" >"$T/$name.out" 2>&1 &
    FPID=$!
    case " $_cleanup_hooks " in *" stop_fleet "*) ;; *) _cleanup_hooks="$_cleanup_hooks stop_fleet" ;; esac
    local i tries=300
    [ -z "${YB_WRAP:-}" ] || tries=1200
    for i in $(seq $tries); do grep -q 'devices ready' "$T/$name.out" && return 0; sleep 0.1; done
    cat "$T/$name.out" >&2
    return 1
}
# stop_fleet: stops the fleet serve_fleet started; its statistics are then written.
stop_fleet() { [ -n "${FPID:-}" ] || return 0; kill "$FPID" 2>/dev/null; wait "$FPID" 2>/dev/null; FPID=; }
# yb_serve_stop: stops the server yb_serve started (SIGTERM, then waits).
yb_serve_stop() {
    [ -n "${SPID:-}" ] || return 0
    kill "$SPID" 2>/dev/null
    wait "$SPID" 2>/dev/null
    SPID=
}
