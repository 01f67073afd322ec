# tests/deploy/netns.sh -- private network namespaces for scale-out tests.
# Source it after tests/lib.sh, then:
#
#   netns_up K       creates a hub namespace with a bridge, a target namespace
#                    (address $NETNS_TARGET) and K client namespaces (client
#                    i: $NETNS_NET.(11+i)), each joined to the bridge by a veth
#                    pair created inside the hub (so nothing is created in the
#                    namespace the test runs in); returns 1 when namespaces
#                    cannot be made here (no root, no CAP_SYS_ADMIN, no
#                    bridge support): skip then.  Removed at exit.
#   netns_name WHO   prints the namespace of "t" (the target) or client i
#   netns_exec WHO CMD...   runs CMD in that namespace
#   netns_syn_start FILE    captures the first packet (SYN) of every TCP
#                    connection the target namespace sees into FILE (tcpdump),
#                    waiting until it listens; stopped at exit at the latest
#   netns_syn_stop   stops that capture (its file is then whole)
#   netns_syn_sources FILE  prints the capture's source addresses, sorted,
#                    each followed by a space
#   netns_clients K  prints the K client addresses the same way
#
# Names are unique to the test's process ($$); the addresses (10.213.0.0/24)
# exist only inside these namespaces.
NETNS_PFX=yb$$-
NETNS_NET=10.213.0
NETNS_TARGET=$NETNS_NET.1
NETNS_ALL=""

netns_name() { echo "$NETNS_PFX$1"; }
netns_exec() { local w=$1; shift; ip netns exec "$NETNS_PFX$w" "$@"; }

# _netns_host WHO ADDR: namespace WHO with ADDR/24 on eth0, its veth peer
# on the hub's bridge.
_netns_host() {
    local ns=$NETNS_PFX$1 hub=${NETNS_PFX}h
    ip netns add "$ns" || return 1
    NETNS_ALL="$NETNS_ALL $ns"
    ip -n "$hub" link add "v$1" type veth peer name eth0 netns "$ns" &&
    ip -n "$hub" link set "v$1" master br0 up &&
    ip -n "$ns" addr add "$2/24" dev eth0 &&
    ip -n "$ns" link set eth0 up &&
    ip -n "$ns" link set lo up
}

netns_up() {
    local k=$1 i hub=${NETNS_PFX}h
    ip netns add "$hub" 2>/dev/null || return 1
    NETNS_ALL=$hub
    at_exit netns_down
    ip -n "$hub" link set lo up &&
    ip -n "$hub" link add br0 type bridge 2>/dev/null &&
    ip -n "$hub" link set br0 up || return 1
    _netns_host t "$NETNS_TARGET" || return 1
    for i in $(seq 0 $((k - 1))); do _netns_host "$i" "$NETNS_NET.$((11 + i))" || return 1; done
}

# netns_down: ends what still runs in our namespaces (processes this test
# started there), then removes them (their veths go with them).
netns_down() {
    local ns p
    for ns in $NETNS_ALL; do
        for p in $(ip netns pids "$ns" 2>/dev/null); do kill "$p" 2>/dev/null; done
    done
    for ns in $NETNS_ALL; do ip netns del "$ns" 2>/dev/null; done
    NETNS_ALL=""
}

netns_syn_start() {
    ip netns exec "$(netns_name t)" tcpdump -i eth0 -nn -U -w "$1" \
        'tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn' >/dev/null 2>"$1.err" &
    NETNS_SYN_PID=$!
    at_exit netns_syn_stop
    local i
    for i in $(seq 100); do grep -qs 'listening on' "$1.err" && break; sleep 0.1; done
}
netns_syn_stop() {
    [ -n "${NETNS_SYN_PID:-}" ] || return 0
    kill "$NETNS_SYN_PID" 2>/dev/null
    wait "$NETNS_SYN_PID" 2>/dev/null
    NETNS_SYN_PID=
}
netns_syn_sources() {
    tcpdump -nn -r "$1" 2>/dev/null | awk '{print $3}' | sed 's/\.[0-9]*$//' | sort -u | tr '\n' ' '
}
netns_clients() {
    local i
    for i in $(seq 0 $(($1 - 1))); do printf '%s ' "$NETNS_NET.$((11 + i))"; done
}
