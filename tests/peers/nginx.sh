# tests/peers/nginx.sh -- nginx as a stand-in RESTCONF server for yangblast's
# integration tests.  Source it (bash), then:
#
#   nginx_start DIR PORT [tls|tls-rsa]  writes DIR/nginx.conf and starts nginx on
#                               127.0.0.1:PORT (TLS when the third argument
#                               is "tls"; "tls-rsa": an RSA 2048 key instead
#                               of EC, so that clients can negotiate RSA key
#                               exchange); returns once it accepts connections,
#                               non-zero (with the error log on stderr) if not
#   nginx_stop DIR              stops it (by PID) and its slow upstream; safe
#                               to call twice or when the start failed
#   nginx_log DIR               prints the access log's path
#   nginx_cert DIR              prints the certificate's path (for --cacert;
#                               self-signed, CN=localhost, SAN DNS:localhost
#                               and IP:127.0.0.1, EC P-256 or RSA 2048); key
#                               in DIR/key.pem
#   nginx_pid DIR               prints the nginx master's PID
#
# Everything lives in DIR (config, pid, logs, temp paths, unix sockets, cert).
# nginx runs in the foreground ("daemon off") under `timeout`, so it is
# bounded: it is killed after $NGINX_MAX_SECONDS (default 300) even when
# nobody calls nginx_stop.  nginx_stop signals the recorded PIDs only.
#
# Tunables (environment, read by nginx_start):
#   NGINX_BIN          nginx binary (default /usr/sbin/nginx)
#   NGINX_MAX_SECONDS  lifetime bound (default 300)
#   NGINX_WORKERS      worker_processes (default 1)
#   NGINX_SLOW_MS      delay of /slow/... (default 200, capped at 10000)
#
# Locations (a RESTCONF server's shape, SONiC-like status codes):
#   /restconf/data/conflict...  any method -> 409, ietf-restconf:errors JSON
#   /restconf/...  PATCH, PUT, DELETE -> 204; POST -> 201;
#                  GET, HEAD (and any other method) -> 200 with a small
#                  application/yang-data+json body
#   /slow/...      any method -> 200 JSON after NGINX_SLOW_MS (a python
#                  upstream, tests/peers/badhttp.py slow, on DIR/slow.sock)
#   /health        200 "ok"
#   anything else  404
# Request bodies (up to 64 MiB) are read in full before the answer: the
# /restconf/ locations are proxied (with request buffering) to an internal
# server on the unix socket DIR/restconf.sock, which produces the status.
# Hence $request_length in the log always includes the body.
#
# Access log (nginx_log DIR): one request per line, fields separated by one
# TAB, in this order; an empty value is logged as "-"; nginx escapes '"', '\'
# and control characters (including TAB) inside values as \xHH:
#    1 connection          connection serial number ($connection)
#    2 connection_requests n-th request on that connection, from 1
#    3 ssl_session_reused  "r" resumed TLS session, "." full handshake,
#                          "-" plain HTTP
#    4 request_method
#    5 request_uri         as sent, with the query string
#    6 status
#    7 request_length      bytes of request line + headers + body
#    8 content_length      the Content-Length request header, "-" if none
#    9 content_type        the Content-Type request header, "-" if none
#   10 authorization       1 when an Authorization header was sent, else 0
#                          (its value is never logged)
#   11 msec                time of the log write, seconds.milliseconds
#   12 request_time        seconds, millisecond resolution
#   13 bytes_sent          bytes sent to the client
#   14 ssl_protocol        e.g. TLSv1.3, "-" on plain HTTP
#   15 server_protocol     e.g. HTTP/1.1
#   16 http_host           the Host request header
#   17 http_user_agent     the User-Agent request header
# Parse with: IFS=$'\t' read -r conn nreq reused method uri status len ...

_yb_peers_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# _nginx_abs DIR: absolute path of DIR.
_nginx_abs() { (cd "$1" && pwd); }

nginx_log() { echo "$(_nginx_abs "$1")/access.log"; }
nginx_cert() { echo "$(_nginx_abs "$1")/cert.pem"; }
nginx_pid() { cat "$1/nginx.pid" 2>/dev/null; }

# _nginx_alive PID: true while PID exists and is not a zombie.
_nginx_alive() {
    local st
    [ -n "$1" ] || return 1
    st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
    case $st in Z*) return 1 ;; esac
    return 0
}

# _nginx_kill PID: TERM, wait up to 5 s, then KILL; reaps it when it is
# our child.
_nginx_kill() {
    local pid=$1 n=50
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
    while _nginx_alive "$pid" && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
    _nginx_alive "$pid" && kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return 0
}

nginx_start() {
    local dir=$1 port=$2 tls=${3:-}
    local bin=${NGINX_BIN:-/usr/sbin/nginx} max=${NGINX_MAX_SECONDS:-300}
    local workers=${NGINX_WORKERS:-1} slow_ms=${NGINX_SLOW_MS:-200}
    local n listen user_line="" ssl_lines=""
    if [ -z "$dir" ] || [ -z "$port" ]; then
        echo "usage: nginx_start DIR PORT [tls|tls-rsa]" >&2; return 2
    fi
    mkdir -p "$dir" || return 1
    dir=$(_nginx_abs "$dir")
    mkdir -p "$dir/tmp/body" "$dir/tmp/proxy" "$dir/tmp/fastcgi" \
        "$dir/tmp/uwsgi" "$dir/tmp/scgi" || return 1
    : >"$dir/access.log"
    rm -f "$dir/nginx.pid" "$dir/restconf.sock" "$dir/slow.sock"

    # The slow upstream: a bounded python server on a unix socket.
    /usr/bin/python3 "$_yb_peers_dir/badhttp.py" slow --unix "$dir/slow.sock" \
        --delay-ms "$slow_ms" --max-seconds "$max" \
        </dev/null >"$dir/slow.out" 2>&1 &
    echo $! >"$dir/slow.pid"

    if [ "$tls" = tls ] || [ "$tls" = tls-rsa ]; then
        local keyopts=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1)
        [ "$tls" = tls-rsa ] && keyopts=(-newkey rsa:2048)
        if ! openssl req -x509 "${keyopts[@]}" \
                -nodes -keyout "$dir/key.pem" -out "$dir/cert.pem" -days 7 \
                -subj "/CN=localhost" \
                -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
                >"$dir/openssl.out" 2>&1; then
            cat "$dir/openssl.out" >&2; nginx_stop "$dir"; return 1
        fi
        listen="127.0.0.1:$port ssl"
        ssl_lines="
        ssl_certificate $dir/cert.pem;
        ssl_certificate_key $dir/key.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_session_cache shared:YBSSL:4m;
        ssl_session_timeout 10m;
        ssl_session_tickets on;"
    else
        listen="127.0.0.1:$port"
    fi
    # As root, nginx would switch its workers to "nobody", who cannot
    # enter DIR; keep the workers as the invoking user.
    [ "$(id -u)" = 0 ] && user_line="user $(id -un) $(id -gn);"

    cat >"$dir/nginx.conf" <<EOF
# Written by tests/peers/nginx.sh; self-contained in $dir.
$user_line
worker_processes $workers;
pid $dir/nginx.pid;
error_log $dir/error.log notice;
events { worker_connections 4096; }
http {
    access_log off;
    server_tokens off;
    default_type application/octet-stream;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    keepalive_requests 100000;
    keepalive_timeout 60;
    client_max_body_size 64m;
    client_body_buffer_size 1m;
    client_body_in_single_buffer on;
    reset_timedout_connection on;

    map \$http_authorization \$yb_auth_present { "" 0; default 1; }
    log_format yb escape=default
        '\$connection\t\$connection_requests\t\$ssl_session_reused\t'
        '\$request_method\t\$request_uri\t\$status\t\$request_length\t'
        '\$content_length\t\$http_content_type\t\$yb_auth_present\t'
        '\$msec\t\$request_time\t\$bytes_sent\t\$ssl_protocol\t\$server_protocol\t'
        '\$http_host\t\$http_user_agent';

    upstream yb_restconf { server unix:$dir/restconf.sock; keepalive 32; }
    upstream yb_slow { server unix:$dir/slow.sock; }

    server {
        listen $listen;
        server_name localhost;
        access_log $dir/access.log yb;
$ssl_lines
        location /restconf/ {
            proxy_pass http://yb_restconf;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_request_buffering on;
            proxy_buffering on;
        }
        location /slow/ {
            proxy_pass http://yb_slow;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_read_timeout 15s;
        }
        location = /health { default_type text/plain; return 200 "ok\n"; }
        location / { return 404; }
    }

    # Internal RESTCONF stand-in: the front server has read the whole body
    # before it gets here.
    server {
        listen unix:$dir/restconf.sock;
        access_log off;
        default_type application/yang-data+json;
        location ^~ /restconf/data/conflict {
            return 409 '{"ietf-restconf:errors":{"error":[{"error-type":"application","error-tag":"data-exists","error-message":"Resource already exists"}]}}\n';
        }
        location /restconf/ {
            if (\$request_method = PATCH) { return 204; }
            if (\$request_method = PUT) { return 204; }
            if (\$request_method = DELETE) { return 204; }
            if (\$request_method = POST) { return 201; }
            return 200 '{"openconfig-acl:acl":{"acl-sets":{"acl-set":[{"name":"yb-test","type":"ACL_IPV4","config":{"name":"yb-test","type":"ACL_IPV4"}}]}}}\n';
        }
        location / { return 404; }
    }
}
EOF

    if ! "$bin" -t -q -e "$dir/error.log" -p "$dir/" -c "$dir/nginx.conf" \
            >"$dir/nginx-t.out" 2>&1; then
        cat "$dir/nginx-t.out" >&2; nginx_stop "$dir"; return 1
    fi
    timeout -s TERM "$max" "$bin" -e "$dir/error.log" -p "$dir/" \
        -c "$dir/nginx.conf" -g "daemon off;" </dev/null >"$dir/nginx.out" 2>&1 &
    echo $! >"$dir/runner.pid"

    # Ready when nginx accepts on PORT and the slow upstream listens.
    n=100
    while [ $n -gt 0 ]; do
        if [ -s "$dir/nginx.pid" ] && grep -q listening "$dir/slow.out" 2>/dev/null &&
                (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            return 0
        fi
        _nginx_alive "$(cat "$dir/runner.pid")" || break
        sleep 0.1; n=$((n - 1))
    done
    echo "nginx_start: nginx did not come up on 127.0.0.1:$port" >&2
    cat "$dir/error.log" "$dir/nginx.out" "$dir/slow.out" >&2 2>/dev/null
    nginx_stop "$dir"
    return 1
}

nginx_stop() {
    local dir=$1 runner master workers w
    [ -n "$dir" ] && [ -d "$dir" ] || return 0
    runner=$(cat "$dir/runner.pid" 2>/dev/null)
    master=$(cat "$dir/nginx.pid" 2>/dev/null)
    if [ -n "$master" ] && _nginx_alive "$master"; then
        # Fast shutdown of the master; it takes its workers down (and if it
        # has to be killed, its workers are then killed by their PIDs).
        workers=$(ps -o pid= --ppid "$master" 2>/dev/null)
        _nginx_kill "$master"
        for w in $workers; do _nginx_alive "$w" && _nginx_kill "$w"; done
    fi
    # `timeout` exits once nginx has; signal it in case nginx never started.
    _nginx_kill "$runner"
    _nginx_kill "$(cat "$dir/slow.pid" 2>/dev/null)"
    rm -f "$dir/runner.pid" "$dir/slow.pid" "$dir/nginx.pid"
    return 0
}
