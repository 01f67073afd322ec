# Shared by tests/serve/*.sh: start `yangblast serve` on free loopback
# ports, read the ports from its "serve: ..." line, stop it by PID.
. "${YB_SRCDIR:-.}/tests/lib.sh"
PY=/usr/bin/python3
GC="$YB_SRCDIR/tests/peers/gnmi_client.py"
CT='Content-Type: application/yang-data+json'
_serve_pids=""
_kill_serves() { for p in $_serve_pids; do kill -KILL "$p" 2>/dev/null; done; }
at_exit _kill_serves

# start_serve ARGS...: sets SPID, SOUT (its stdout/stderr file), RP and GP
# (ports; empty when off).  Returns 1 if the server did not come up.
start_serve() {
    # a new, empty file each time: a counter would repeat in a subshell
    # ($(...)), and the loop below could read the last server's line
    SOUT=$(mktemp "$T/serve.XXXXXX.out") || return 1
    "$YB" serve --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 "$@" >"$SOUT" 2>&1 &
    SPID=$!
    _serve_pids="$_serve_pids $SPID"
    local n=600
    while [ $n -gt 0 ] && ! grep -q '^serve: restconf' "$SOUT"; do
        kill -0 "$SPID" 2>/dev/null || break
        sleep 0.05; n=$((n - 1))
    done
    local line; line=$(grep '^serve: restconf' "$SOUT")
    RP=$(printf '%s\n' "$line" | sed -n 's#.*restconf https\{0,1\}://127.0.0.1:\([0-9]*\).*#\1#p')
    GP=$(printf '%s\n' "$line" | sed -n 's#.*gnmi grpcs*://127.0.0.1:\([0-9]*\).*#\1#p')
    [ -n "$line" ]
}

# stop_serve: SIGTERM, wait; prints nothing, returns the exit status.
stop_serve() {
    kill -TERM "$SPID" 2>/dev/null
    local n=100
    while [ $n -gt 0 ] && kill -0 "$SPID" 2>/dev/null; do sleep 0.05; n=$((n - 1)); done
    wait "$SPID"
}

# gc ARGS...: the project's python gNMI client against $GP.
gc() { "$PY" "$GC" --target "127.0.0.1:$GP" --timeout 10 "$@"; }

# rc_code METHOD PATH [curl args...]: prints the HTTP status.
rc_code() {
    local m=$1 p=$2; shift 2
    curl -s -o "$T/body" -w '%{http_code}' -X "$m" "$@" "http://127.0.0.1:$RP$p"
}
