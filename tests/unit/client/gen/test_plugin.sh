#!/bin/sh
# test_plugin.sh PROTOC PLUGIN: protoc-gen-cschedc writes one typed function
# per unary and server-streaming method, and refuses client and
# bidirectional streaming with an error that names the method.
set -eu
protoc=$1
plugin=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/in/demo" "$tmp/out"

cat >"$tmp/in/demo/demo.proto" <<'PROTO'
syntax = "proto3";
package demo.v2;
message Ping { string text = 1; }
service EchoBox {
  rpc SayHello(Ping) returns (Ping);
  rpc ListAll(Ping) returns (stream Ping);
}
PROTO
"$protoc" --plugin=protoc-gen-cschedc="$plugin" --cschedc_out="$tmp/out" -I"$tmp/in" \
    "$tmp/in/demo/demo.proto"
h="$tmp/out/csched/echo_box.h"
grep -q 'int cs_echo_box_say_hello(struct cs_client \*client, const Demo__V2__Ping \*request' "$h"
grep -q 'int cs_echo_box_list_all(struct cs_client \*client' "$h"
grep -q 'int cs_echo_box_list_all_next(struct cs_stream \*stream, Demo__V2__Ping \*\*msg' "$h"
grep -q '"/demo.v2.EchoBox/SayHello"' "$tmp/out/csched/echo_box.c"

for kind in "stream Ping) returns (Ping" "stream Ping) returns (stream Ping"; do
    sed "s/Ping) returns (Ping/$kind/" "$tmp/in/demo/demo.proto" >"$tmp/in/demo/bad.proto"
    sed -i 's/package demo.v2;/package demo.v3;/' "$tmp/in/demo/bad.proto"
    if "$protoc" --plugin=protoc-gen-cschedc="$plugin" --cschedc_out="$tmp/out" -I"$tmp/in" \
        "$tmp/in/demo/bad.proto" 2>"$tmp/err"; then
        echo "client streaming was accepted"; exit 1
    fi
    grep -q 'demo.v3.EchoBox.SayHello: .* streaming is not supported' "$tmp/err" ||
        { cat "$tmp/err"; exit 1; }
done
echo "1 passed, 0 failed"
