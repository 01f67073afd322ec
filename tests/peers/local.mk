## tests/peers: real peers for integration tests (nginx RESTCONF stand-in,
## misbehaving HTTP/1.1 server, python gNMI server/client) and their test.
## Include from Makefile.am AFTER the `SH_TESTS = ...` line.
SH_TESTS += tests/peers/peers.sh
EXTRA_DIST += tests/peers/nginx.sh tests/peers/peer.sh tests/peers/badhttp.py \
	tests/peers/gnmi_common.py tests/peers/gnmi_server.py \
	tests/peers/gnmi_client.py tests/peers/login.py tests/peers/local.mk
