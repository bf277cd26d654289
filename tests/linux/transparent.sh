#!/bin/sh
# transparent.sh BUILD_DIR - egress without client settings, in a real
# sandbox, as root and as nobody: clients that never read HTTPS_PROXY (Node's
# fetch and https.get, Python's http.client and sockets, curl --noproxy '*')
# resolve names through the sandbox's own resolver and reach the proxy as
# NAME:PORT, which decides them as it decides a CONNECT.
#
# The upstream is tests/proxy/upstream on loopback; the proxy resolves names
# through a test DNS server (tests/proxy/dnsd, --egress-resolv) that logs
# every query, so a name no rule covers can be shown never to be asked for.
# An echo service (a banner, then an echo) is the witness for TCP streams.
set -u

B=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /tmp/omnibox-transparent.XXXXXX)
chmod 755 "$T"
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

. "$here/../lib.sh"

wait_ready() { # FILE: its first line once it says "ready ..."
	for _ in $(seq 100); do
		grep -q '^ready' "$1" 2>/dev/null && break
		sleep 0.05
	done
	head -n 1 "$1"
}

test_upstream "$T" "$B"
"$B/tests/proxy/dnsd" --log "$T/dns.log" upstream.test=127.0.0.1 other.test=127.0.0.1 \
	echo.test=127.0.0.1 witness.test=127.0.0.1 mixed.test=8.8.8.8 mixed.test=127.0.0.1 \
	>"$T/dns.out" 2>&1 &
pids="$pids $!"
DNSP=$(wait_ready "$T/dns.out" | cut -d ' ' -f 2)
printf 'nameserver 127.0.0.1:%s\n' "$DNSP" >"$T/resolv.conf"
python3 "$here/../proxy/e2e_client.py" echod "$T/echod.log" >"$T/echod.out" 2>&1 &
pids="$pids $!"
ECHOP=$(wait_ready "$T/echod.out" | cut -d ' ' -f 2)
: >"$T/echod.log"
chmod 644 "$T"/*.conf "$T"/*.log

queries() { grep -c "^query $1 " "$T/dns.log"; }
echo_connections() { grep -c '^accepted' "$T/echod.log"; }
upstream_requests() { grep -c '^request ' "$T/upstream.log"; }

as_user() {
	if [ "$who" = root ]; then
		env -i PATH=/usr/bin:/bin HOME="$H" LANG=C.UTF-8 "$@"
	else
		runuser -u nobody -- env -i PATH=/usr/bin:/bin HOME="$H" LANG=C.UTF-8 "$@"
	fi
}

# sbx POLICY CMD...: CMD in the sandbox, the proxy variables set as always and
# ignored by the clients here; $out holds stdout+stderr, $log the proxy's lines.
EGRESS_NAMES=--egress-resolv=$T/resolv.conf
sbx() {
	egress_run "$TB/omnibox-run" "$@"
}

setup_user() {
	U=$T/$who
	H=$U/home
	WS=$U/ws
	P=$U/policies
	TB=$U/bin
	mkdir -p "$H" "$WS" "$P" "$TB"
	cp "$B/omnibox-run" "$B/omnibox-init" "$B/omnibox-proxy" "$TB/"
	cp "$here/transparent_client.py" "$WS/c.py"
	: >"$U/egress.log"
	cat >"$P/open.yaml" <<-EOF
	os_env:
	  sandbox:
	    egress_allow_private_destinations: true
	    egress_rules:
	      - "GET upstream.test:$HTTPS/echo/**"
	      - "GET upstream.test:$HTTP/echo/**"
	      - "tcp echo.test:$ECHOP"
	EOF
	cat >"$P/closed.yaml" <<-EOF
	os_env:
	  sandbox:
	    egress_rules:
	      - "GET upstream.test:$HTTPS/echo/**"
	      - "GET mixed.test:$HTTPS/echo/**"
	      - "tcp echo.test:$ECHOP"
	EOF
	cat >"$P/notcp.yaml" <<-EOF
	os_env:
	  sandbox:
	    egress_allow_private_destinations: true
	    egress_rules:
	      - "GET upstream.test:$HTTPS/echo/**"
	      - "GET witness.test:$ECHOP/**"
	EOF
	chmod -R a+rX "$U"
	if [ "$who" = nobody ]; then
		chown -R nobody:nogroup "$U"
	fi
}

clients() {
	url=https://upstream.test:$HTTPS
	name="Node fetch, which ignores the proxy variables, reaches an allowed upstream"
	sbx open node -e "fetch('$url/echo/node-fetch').then(r => r.text().then(t => console.log('status', r.status, t)), e => console.log('failed', e.cause ? e.cause.code : e))"
	expect_out "status 200"
	expect_out "GET /echo/node-fetch"
	out=$log
	expect_out "CONNECT upstream.test:$HTTPS (transparent)"
	name="Node https.get reaches it too"
	sbx open node -e "require('https').get('$url/echo/node-get', r => { let b = ''; r.on('data', d => b += d); r.on('end', () => console.log('status', r.statusCode, b)) }).on('error', e => console.log('failed', e.code))"
	expect_out "status 200"
	expect_out "GET /echo/node-get"
	name="Node fetch: a denied path gets the usual 403"
	sbx open node -e "fetch('$url/secret').then(r => r.text().then(t => console.log('status', r.status, t)), e => console.log('failed', e.cause ? e.cause.code : e))"
	expect_out "status 403"
	expect_out "GET upstream.test:$HTTPS/secret"
	name="Node fetch: a host no rule names is a refused connection, named in the log"
	sbx open node -e "fetch('https://nowhere.test:$HTTPS/x').then(r => console.log('status', r.status), e => console.log('failed', e.cause ? e.cause.code : e))"
	expect_out "failed"
	expect_no_out "status"
	out=$log
	expect_out "deny CONNECT nowhere.test:$HTTPS (transparent): no rule names nowhere.test:$HTTPS"
	name="Python http.client reaches the upstream; a denied path is 403"
	sbx open python3 c.py https upstream.test "$HTTPS" /echo/http-client
	expect_out "status 200"
	expect_out "GET /echo/http-client"
	sbx open python3 c.py https upstream.test "$HTTPS" /denied
	expect_out "status 403"
	expect_out "X-Omnibox-Error: blocked-by-policy"
	name="Python http.client over plain HTTP: forwarded for the name, Host checked"
	sbx open python3 c.py http upstream.test "$HTTP" /echo/plain
	expect_out "status 200"
	expect_out "GET /echo/plain"
	before=$(upstream_requests)
	sbx open python3 c.py http upstream.test "$HTTP" /echo/host "other.test:$HTTP"
	expect_out "status 403"
	expect_out "X-Omnibox-Error: host-mismatch"
	expect_eq "upstream requests" "$(upstream_requests)" "$before"
	name="curl --noproxy '*' reaches the upstream; a denied host is a refused connection"
	sbx open curl -sS --noproxy '*' "$url/echo/curl"
	expect_out "GET /echo/curl"
	sbx open curl -sS --noproxy '*' "https://other.test:$HTTPS/echo/x"
	expect_out "curl: (35)"
	name="TLS with an SNI other than the name the address stands for is refused"
	before=$(upstream_requests)
	sbx open python3 c.py sni upstream.test "$HTTPS" other.test
	expect_out "handshake failed"
	out=$log
	expect_out "SNI 'other.test' differs"
	expect_eq "upstream requests" "$(upstream_requests)" "$before"
}

streams() {
	name="a socket client reaches a TCP service through a tcp rule"
	before=$(echo_connections)
	sbx open python3 c.py tcp echo.test "$ECHOP" 'hello raw\n'
	expect_out "stream: banner echod"
	expect_out "hello raw"
	expect_eq "echo connections" "$(echo_connections)" "$((before + 1))"
	out=$log
	expect_out "allow CONNECT echo.test:$ECHOP (transparent) as a plain tunnel"
	name="without the tcp rule the stream is refused and a tcp rule suggested at exit"
	before=$(echo_connections)
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --egress-resolv="$T/resolv.conf" \
		--egress-ca="$T/ca.pem" --egress-log="$U/egress.log" "$P/notcp.yaml" -- \
		python3 c.py tcp witness.test "$ECHOP" 'SSH-2.0-OpenSSH_9.6\r\n' 2>&1)
	: >"$U/egress.log"
	expect_no_out "banner"
	expect_out "tcp witness.test:$ECHOP"
	expect_eq "echo connections" "$(echo_connections)" "$before"
	name="a name resolving to a private address is refused without egress_allow_private_destinations"
	sbx closed python3 c.py tcp echo.test "$ECHOP" 'x'
	expect_no_out "banner"
	out=$log
	expect_out "resolves to 127.0.0.1, in 127.0.0.0/8"
	expect_eq "echo connections" "$(echo_connections)" "$before"
	name="a rebinding answer (a public and a private address) is refused"
	sbx closed python3 c.py https mixed.test "$HTTPS" /echo/rebind
	expect_out "failed"
	out=$log
	expect_out "blocked-destination CONNECT mixed.test:$HTTPS"
	name="a name no rule covers: no query at the resolver, no connection at the witness"
	q=$(queries uncovered.test)
	before=$(echo_connections)
	sbx open python3 c.py tcp uncovered.test "$ECHOP" 'leak\n'
	expect_out "closed-at-once"
	sbx open python3 c.py https uncovered.test "$HTTPS" /x
	expect_out "failed"
	expect_eq "queries for uncovered.test" "$(queries uncovered.test)" "$q"
	expect_eq "echo connections" "$(echo_connections)" "$before"
	out=$log
	expect_out "deny CONNECT uncovered.test:$HTTPS (transparent)"
	name="a name's address on a port no rule names: connection refused, nothing reaches the proxy"
	sbx open python3 c.py connect upstream.test 9
	expect_out "refused:"
	out=$log
	expect_out "proxy: done: 0 connections"
}

resolver() {
	name="names resolve inside the sandbox to stable addresses of their own"
	sbx open python3 c.py resolve upstream.test upstream.test UPSTREAM.TEST. other.test localhost
	a=$(printf '%s\n' "$out" | awk '$1 == "upstream.test" { print $2 }' | sort -u)
	expect_eq "upstream.test's addresses" "$(printf '%s\n' "$a" | wc -l)" 1
	expect_out "upstream.test 127.128."
	expect_out "other.test 127.128."
	expect_out "localhost 127.0.0.1"
	expect_no_out "other.test $a"
	sbx open python3 c.py stable 2000
	expect_out "distinct 2000 stable 2000 block 2000"
	name="the sandbox's resolv.conf, hosts and CA bundle are omnibox-init's binds, over the host's"
	sbx open sh -c 'cat /etc/resolv.conf; grep -c "^-----BEGIN CERTIFICATE" /etc/ssl/certs/ca-certificates.crt;
		grep -E " /etc/(resolv.conf|hosts|ssl/certs/ca-certificates.crt) " /proc/self/mountinfo |
		cut -d" " -f4,5,6'
	expect_out "nameserver 127.0.0.53"
	expect_out "omnibox-resolv.conf /etc/resolv.conf ro,"
	expect_out "omnibox-hosts /etc/hosts ro,"
	expect_out "omnibox-ca.pem /etc/ssl/certs/ca-certificates.crt ro,"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --dry-run "$P/open.yaml" -- true 2>&1)
	expect_out "# omnibox-init: --ro-bind-try /etc/resolv.conf /etc/resolv.conf"
	expect_out "/omnibox-resolv.conf /etc/resolv.conf"
	expect_out "--system-bind"
	expect_no_out "$(printf -- '--ro-bind-try\n/etc/resolv.conf')"
	name="the resolver asks no one: names the agent looks up never reach the test resolver"
	q=$(queries exfil-abc123.test)
	sbx open python3 c.py resolve exfil-abc123.test
	expect_out "exfil-abc123.test 127.128."
	expect_eq "queries" "$(queries exfil-abc123.test)" "$q"
	name="a flood of names: bounded, the earlier names keep their addresses, the sandbox still works"
	sbx open sh -c "python3 c.py resolve upstream.test && python3 c.py flood 40000 &&
		python3 c.py https upstream.test $HTTPS /echo/after-flood"
	expect_out "first kept"
	expect_out "new refused"
	expect_out "other 0"
	expect_no_out "refused 0 "
	expect_out "status 200"
	name="the agent holds no capability, and cannot bind a port below 1024"
	sbx open python3 c.py caps
	expect_out "CapPrm:	0000000000000000"
	expect_out "CapEff:	0000000000000000"
	expect_out "CapAmb:	0000000000000000"
	expect_out "CapInh:	0000000000000000"
	expect_out "bind 80: [Errno 13]"
	if [ "$who" = nobody ]; then
		# The agent's own user namespace starts with a full bounding set: emptied.
		expect_out "CapBnd:	0000000000000000"
	fi
}

for who in root nobody; do
	setup_user
	clients
	streams
	resolver
done
echo "transparent: $tests checks, $failures failed, $skips skipped"
[ "$failures" = 0 ]
