#!/bin/bash
# The yangblast demo (run by `./setup.sh demo`).
set -euo pipefail
YB=${1:-yangblast}
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d /tmp/yangblast-demo.XXXXXX)
trap 'rm -rf "$out"' EXIT
echo "== synthesizing 1,000 openconfig-acl requests per protocol"
"$YB" synth acl --proto restconf --count 1000 -o "$out/restconf.ybc"
"$YB" synth acl --proto gnmi --count 1000 -o "$out/gnmi.ybc"
for c in restconf gnmi; do
    echo
    echo "== yangblast corpus info $c.ybc"
    "$YB" corpus info "$out/$c.ybc"
done
