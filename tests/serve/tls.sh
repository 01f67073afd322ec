#!/bin/bash
# yangblast serve over TLS: --self-signed with --write-cert for clients'
# --cacert, and --tls-cert/--tls-key from files; RESTCONF over https (ALPN
# http/1.1) and gNMI over TLS with ALPN h2.
. "${YB_SRCDIR:-.}/tests/serve/common.sh"
A=/restconf/data/openconfig-acl:acl

check "serve --self-signed --write-cert" start_serve --self-signed --write-cert "$T/ca.pem"
like "prints an https URL" "$(head -1 "$SOUT")" '^serve: restconf https://127.0.0.1:[0-9]+ gnmi grpcs://127.0.0.1:[0-9]+$'
check "the certificate was written" grep -q 'BEGIN CERTIFICATE' "$T/ca.pem"
is "curl --cacert to 127.0.0.1" "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/ca.pem" "https://127.0.0.1:$RP$A")" 200
is "curl --cacert to localhost" "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/ca.pem" "https://localhost:$RP$A")" 200
is "PATCH over TLS" "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/ca.pem" -X PATCH -H "$CT" -d '{"openconfig-acl:acl-sets":{"acl-set":[{"name":"T","type":"ACL_IPV4"}]}}' "https://127.0.0.1:$RP$A/acl-sets")" 204
like "gNMI over TLS (ALPN h2): Capabilities" "$("$PY" "$GC" --target "127.0.0.1:$GP" --tls "$T/ca.pem" capabilities)" '0.10.0'
like "gNMI over TLS: Get what RESTCONF set" "$("$PY" "$GC" --target "localhost:$GP" --tls "$T/ca.pem" get '/openconfig-acl:acl/acl-sets/acl-set[name=T][type=ACL_IPV4]')" '"name": "T"'
printf '\0\0\0\0\0' >"$T/empty.bin"
out=$(h2load -n 200 -c 2 -m 10 -d "$T/empty.bin" -H 'content-type: application/grpc' -H 'te: trailers' "https://127.0.0.1:$GP/gnmi.gNMI/Capabilities" 2>&1)
like "h2load over TLS negotiates h2" "$out" 'Application protocol: h2'
like "h2load over TLS: 200 succeeded" "$out" '200 succeeded, 0 failed'
curl -s -o /dev/null "https://127.0.0.1:$RP$A"; rc=$?
is "an unverified client fails verification (curl 60)" "$rc" 60
check_rc "stop" 0 stop_serve

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/k.pem" -out "$T/c.pem" -days 1 \
    -subj /CN=localhost -addext 'subjectAltName=DNS:localhost,IP:127.0.0.1' >/dev/null 2>&1
check "serve --tls-cert/--tls-key" start_serve --tls-cert "$T/c.pem" --tls-key "$T/k.pem"
is "curl with that CA" "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/c.pem" "https://127.0.0.1:$RP$A")" 200
like "gNMI with that CA" "$("$PY" "$GC" --target "127.0.0.1:$GP" --tls "$T/c.pem" capabilities)" '0.10.0'
check_rc "stop" 0 stop_serve
check_rc "a missing key file is a usage error" 2 "$YB" serve --tls-cert "$T/c.pem" --tls-key "$T/nope.pem"
check_rc "--write-cert needs --self-signed" 2 "$YB" serve --write-cert "$T/x.pem"
done_testing
