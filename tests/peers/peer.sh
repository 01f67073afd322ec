# tests/peers/peer.sh -- start/stop the python peers (badhttp.py,
# gnmi_server.py) from bash tests.  Source it, then:
#
#   peer_start DIR SCRIPT [ARGS...]
#       runs `/usr/bin/python3 tests/peers/SCRIPT ARGS...` in the background
#       (stdout DIR/out, stderr DIR/err, PID in DIR/pid), waits (up to 15 s)
#       for its "listening PORT" line and stores PORT in DIR/port.  Returns
#       non-zero, with the peer's stderr, if it exits or never gets ready.
#       Give the script's own --max-seconds to bound it (both scripts
#       default to 60 s).
#   peer_port DIR     prints the port
#   peer_pid DIR      prints the PID
#   peer_stop DIR     SIGTERM, wait up to 5 s, then SIGKILL -- by PID only;
#                     returns the peer's exit status when it is our child
#
# Example:
#   peer_start "$T/gnmi" gnmi_server.py --stats "$T/gnmi/stats.json" \
#       --max-seconds 120 && port=$(peer_port "$T/gnmi")

_yb_peer_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

peer_port() { cat "$1/port" 2>/dev/null; }
peer_pid() { cat "$1/pid" 2>/dev/null; }

# _peer_alive PID: true while PID exists and is not a zombie.
_peer_alive() {
    local st
    [ -n "$1" ] || return 1
    st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
    case $st in Z*) return 1 ;; esac
    return 0
}

peer_start() {
    local dir=$1 script=$2 pid n=150
    shift 2
    mkdir -p "$dir" || return 1
    rm -f "$dir/port"
    /usr/bin/python3 "$_yb_peer_dir/$script" "$@" \
        </dev/null >"$dir/out" 2>"$dir/err" &
    pid=$!
    echo "$pid" >"$dir/pid"
    while [ $n -gt 0 ]; do
        if grep -q '^listening ' "$dir/out" 2>/dev/null; then
            sed -n 's/^listening //p' "$dir/out" | head -1 >"$dir/port"
            return 0
        fi
        _peer_alive "$pid" || break
        sleep 0.1; n=$((n - 1))
    done
    echo "peer_start: $script did not get ready" >&2
    cat "$dir/err" >&2
    peer_stop "$dir"
    return 1
}

peer_stop() {
    local dir=$1 pid n=50 rc=0
    pid=$(cat "$dir/pid" 2>/dev/null) || return 0
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null
    while _peer_alive "$pid" && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
    _peer_alive "$pid" && kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rc=$?
    rm -f "$dir/pid"
    return $rc
}
