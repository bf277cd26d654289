#!/bin/sh
# e2e.sh BUILD_DIR - the egress proxy's acceptance behaviours (spec: egress.md)
# on loopback, without a sandbox: the real proxy as omnibox-proxy, started as a
# Deployment would start it (the table omnibox-compile --emit=egress-table
# wrote, an interception CA made here, the placeholders --print-placeholders
# made in a directory, the secrets in its environment and files), a real
# HTTP/HTTPS server (tests/proxy/upstream) with another CA made here, a real
# DNS server (tests/proxy/dnsd) that counts queries, and real clients (curl,
# git, Python's urllib).  The session CA's trust bundle omnibox-run writes is
# checked against tests/proxy/proxyd (the proxy and relay as omnibox-run
# starts them).  The in-sandbox behaviours run in tests/linux.
#
# Needs: curl, git, python3, openssl (the command).
set -u

B=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
PROXYD=$B/tests/proxy/proxyd
PROXY=$B/omnibox-proxy
COMPILE=$B/omnibox-compile
UPSTREAM=$B/tests/proxy/upstream
DNSD=$B/tests/proxy/dnsd
CLIENT="python3 $here/e2e_client.py"
T=$(mktemp -d /tmp/omnibox-e2e.XXXXXX)
# Under AddressSanitizer, freed memory waits in a quarantine (256 MiB by
# default), which the RSS checks below would take for growth.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4"
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ -n "${E2E_KEEP:-}" ]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT INT TERM

. "$(dirname "$0")/../lib.sh"

# wait_ready FILE: the first line of FILE once it says "ready ..."
wait_ready() {
	for _ in $(seq 100); do
		if [ -s "$1" ] && head -n 1 "$1" | grep -q '^ready'; then
			head -n 1 "$1"
			return 0
		fi
		sleep 0.05
	done
	echo "timed out waiting for $1" >&2
	cat "$1" "${1%.out}.log" "${1%.out}.err" >&2 2>/dev/null
	exit 1
}

# upstream_saw TEXT: the upstream's last request carried TEXT (its log, outside the agent's reach).
upstream_saw() {
	tests=$((tests + 1))
	tail -n 4 "$T/upstream.log" | grep -qF -- "$1" || fail "the upstream did not get '$1'"
}

upstream_requests() {
	grep -c '^request ' "$T/upstream.log"
}

dns_queries() { # NAME TYPE
	grep -c "^query $1 $2\$" "$T/dns.log"
}

vm_kib() { # PID FIELD
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
}

# ---- the servers --------------------------------------------------------------

cd "$T"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj "/CN=omnibox e2e CA" -keyout ca.key -out ca.crt 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=api.test" \
	-keyout srv.key -out srv.csr 2>/dev/null
printf 'subjectAltName=DNS:api.test,DNS:other.test,DNS:git.test,DNS:s3.test,DNS:bucket.s3.test,DNS:iam.test\nextendedKeyUsage=serverAuth\n' \
	>srv.ext
openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
	-extfile srv.ext -out srv.crt 2>/dev/null || {
	echo "cannot make the test certificates"
	exit 1
}
# omnibox-proxy's interception CA, as a kubernetes.io/tls Secret would hold it.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj "/CN=omnibox e2e interception CA" -keyout icpt.key -out icpt.crt 2>/dev/null || exit 1

# start_proxy NAME YAML ENV [ARGS...]: omnibox-proxy as the Kubernetes
# Deployment compiled from YAML starts it (tests/proxy/deployment_command.py:
# its command, its mounts under NAME/, the table its ConfigMap holds, which
# must be --emit=egress-table's bytes), in the background ($! is its pid),
# with the variables ENV ("-": none) added to its environment and ARGS (the
# test's resolver and trust) after its own: the placeholders
# --print-placeholders makes, one file each in NAME/placeholders (NAME/ph;
# NAME/cred.env, what the agent's pod gets), the interception CA in NAME/ca
# (NAME/ca.pem, the only trust the agent needs).  Its decisions go to NAME.log.
start_proxy() {
	_n=$1 _y=$2 _e=$3
	shift 3
	[ "$_e" = - ] && _e=
	mkdir -p "$T/$_n/placeholders" "$T/$_n/ca"
	ln -sfn placeholders "$T/$_n/ph"
	# The Deployment's own command and the ConfigMap's table, from the
	# Kubernetes objects of the policy; its mounts' paths under $T/$_n.
	"$COMPILE" --quiet --target=kubernetes -o "$T/$_n.k8s.yaml" "$_y" &&
		python3 "$here/deployment_command.py" "$T/$_n.k8s.yaml" \
			"$T/$_n.table" "$T/$_n" >"$T/$_n.args" &&
		"$COMPILE" --quiet --emit=egress-table -o "$T/$_n.emitted" "$_y" &&
		cmp -s "$T/$_n.table" "$T/$_n.emitted" &&
		"$PROXY" --table "$T/$_n.table" --print-placeholders >"$T/$_n/cred.env" || exit 1
	while IFS='=' read -r _k _v; do printf '%s' "$_v" >"$T/$_n/ph/$_k"; done <"$T/$_n/cred.env"
	cp "$T/icpt.crt" "$T/$_n/ca/tls.crt"
	cp "$T/icpt.key" "$T/$_n/ca/tls.key"
	cp "$T/icpt.crt" "$T/$_n/ca.pem"
	# shellcheck disable=SC2046,SC2086
	env $_e "$PROXY" $(cat "$T/$_n.args") "$@" >"$T/$_n.out" 2>"$T/$_n.log" &
}

# A repository for the smart-HTTP clone.
git init -q --bare git/repo.git
git init -q src
(cd src && echo "hello from the proxy test" >README &&
	git add README && git -c user.name=t -c user.email=t@t commit -q -m first &&
	git push -q ../git/repo.git HEAD:refs/heads/main) || exit 1
git --git-dir=git/repo.git symbolic-ref HEAD refs/heads/main

"$UPSTREAM" --cert srv.crt --key srv.key --log "$T/upstream.log" --git-root "$T/git" \
	>upstream.out 2>upstream.err &
pids="$pids $!"
set -- $(wait_ready upstream.out)
HP=$2
SP=$3

"$DNSD" --log "$T/dns.log" lo4.test=127.0.0.1 meta.test=169.254.169.254 \
	mapped.test=::ffff:127.0.0.1 nat64.test=64:ff9b::7f00:1 \
	mixed.test=8.8.8.8 mixed.test=127.0.0.1 >dns.out 2>&1 &
pids="$pids $!"
set -- $(wait_ready dns.out)
printf 'nameserver 127.0.0.1:%s\n' "$2" >resolv.conf
printf '127.0.0.1 api.test other.test git.test s3.test bucket.s3.test iam.test echo.test\n' >hosts.open
printf '127.0.0.1 hosts-lo.test\n' >hosts.closed

SECRET=e2e-real-secret-7f3a9c
GIT_SECRET=git-secret-42
# The upstream listens on two loopback ports, neither 443 nor 80: every rule
# and binding names the port it means.
cat >open.yaml <<EOF
name: e2e-open
os_env:
  sandbox:
    egress_allow_private_destinations: true
    egress_rules:
      - "GET,HEAD api.test:$SP/allowed/**"
      - "POST,PUT api.test:$SP/upload"
      - "GET api.test:$SP/bytes/*"
      - "GET api.test:$SP/chunked/*"
      - "GET api.test:$SP/close/*"
      - "GET api.test:$SP/ws"
      - "GET api.test:$SP/fakews"
      - "GET api.test:$SP/wsfrag"
      - "GET api.test:$SP/partial"
      - "GET api.test:$SP/refl"
      - "GET api.test:$SP/utf16"
      - "GET api.test:$SP/reflectname"
      - "TRACE,OPTIONS api.test:$SP/**"
      - "* other.test:$SP/**"
      - "* git.test:$SP/**"
      - "GET,HEAD api.test:$HP/allowed/**"
      - "POST,PUT api.test:$HP/upload"
      - "GET api.test:$HP/bytes/*"
      - "GET api.test:$HP/chunked/*"
      - "GET api.test:$HP/close/*"
      - "TRACE,OPTIONS api.test:$HP/**"
      - "GET portless.test/**"
    credential_proxy:
      - type: https_bearer
        target: api.test:$SP
        source: {env: E2E_API_SECRET}
        env: API_TOKEN
      - type: git_https
        target: git.test:$SP
        source: {command: "printf 'git-secret-%s' 42; echo"}
EOF
$CLIENT echod "$T/echod.log" >echod.out 2>echod.err &
pids="$pids $!"
set -- $(wait_ready echod.out)
EP=$2
: >echod.log

cat >closed.yaml <<EOF
name: e2e-closed
os_env:
  sandbox:
    egress_rules:
      - "* *.test:$SP/**"
      - "* *.test:$HP/**"
      - "GET 2130706433:$SP/**"
      - "tcp lo4.test:$EP"
EOF
# tcp rules: an echo service, and the plain HTTP port of the upstream (for
# what a tcp rule does not allow); a credential on the HTTPS port.
cat >tcp.yaml <<EOF
name: e2e-tcp
os_env:
  sandbox:
    egress_allow_private_destinations: true
    egress_rules:
      - "tcp echo.test:$EP"
      - "tcp api.test:$HP"
      - "GET api.test:$SP/allowed/**"
    credential_proxy:
      - type: https_bearer
        target: api.test:$SP
        source: {env: E2E_API_SECRET}
        env: API_TOKEN
EOF

start_proxy open open.yaml "E2E_API_SECRET=$SECRET" --system-ca ca.crt \
	--hosts hosts.open --resolv resolv.conf
OPEN_PID=$!
pids="$pids $OPEN_PID"
set -- $(wait_ready open.out)
PA=$2
start_proxy closed closed.yaml - --system-ca ca.crt --hosts hosts.closed --resolv resolv.conf
pids="$pids $!"
set -- $(wait_ready closed.out)
PB=$2

start_proxy tcp tcp.yaml "E2E_API_SECRET=$SECRET" --system-ca ca.crt \
	--hosts hosts.open --resolv resolv.conf
pids="$pids $!"
set -- $(wait_ready tcp.out)
PX=$2

# The same policy, the proxy capped at 32 MiB: for the bounds.
start_proxy small open.yaml "E2E_API_SECRET=$SECRET" --system-ca ca.crt --hosts hosts.open \
	--resolv resolv.conf --memory 33554432
SMALL_PID=$!
pids="$pids $SMALL_PID"
set -- $(wait_ready small.out)
PS=$2

# The same policy as omnibox-run starts the proxy (tests/proxy/proxyd): a CA
# made for the session and the trust bundle written for the sandbox.
mkdir session
E2E_API_SECRET=$SECRET "$PROXYD" open.yaml --dir "$T/session" --system-ca ca.crt \
	--hosts hosts.open --resolv resolv.conf >session.out 2>session.log &
pids="$pids $!"
set -- $(wait_ready session.out)
PJ=$2

CA=$T/open/ca.pem
PLACEHOLDER=$(sed -n 's/^API_TOKEN=//p' open/cred.env)

# curl as the agent would run it: the proxy and CA variables, nothing else.
agent_curl() {
	HTTPS_PROXY=http://127.0.0.1:$PA https_proxy=http://127.0.0.1:$PA \
		http_proxy=http://127.0.0.1:$PA CURL_CA_BUNDLE=$CA SSL_CERT_FILE=$CA \
		curl -sS --max-time 60 "$@" 2>&1
}

# ---- the acceptance behaviours ------------------------------------------------

t_allowed_get() {
	name="allowed GET through HTTPS_PROXY, trusting only the interception CA"
	out=$(agent_curl -i "https://api.test:$SP/allowed/x")
	expect_out "HTTP/1.1 200 OK"
	expect_out "GET /allowed/x HTTP/1.1"
	expect_out "Host: api.test:$SP"
	name="omnibox-run's proxy: allowed GET with the session CA its bundle holds"
	CA=$T/session/ca.pem
	out=$(HTTPS_PROXY=http://127.0.0.1:$PJ CURL_CA_BUNDLE=$CA curl -sS -i --max-time 60 \
		"https://api.test:$SP/allowed/x" 2>&1)
	expect_out "HTTP/1.1 200 OK"
	name="the bundle holds the system CAs, the --egress-ca certificates and the session CA"
	sys=$(grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt)
	extra=$(grep -c 'BEGIN CERTIFICATE' "$T/ca.crt")
	out=$(grep -c 'BEGIN CERTIFICATE' "$CA")
	expect_eq "certificates in the bundle" "$out" $((sys + extra + 1))
	out=$(stat -c %a "$CA")
	expect_eq "bundle mode" "$out" 644
	name="Java's trust store beside it holds every certificate of the bundle"
	if command -v keytool >/dev/null 2>&1; then
		out=$(keytool -list -keystore "$(dirname "$CA")/omnibox-ca.jks" -storetype JKS \
			-storepass changeit 2>&1 | grep -c trustedCertEntry)
		expect_eq "trusted entries in the JKS" "$out" $((sys + extra + 1))
	else
		skips=$((skips + 1))
		echo "     (keytool is not installed: the JKS is not read back)"
	fi
	name="the hashed files beside the bundle are the session CA and the --egress-ca certificates"
	out=$(ls "$(dirname "$CA")" | grep -c '^[0-9a-f]\{8\}\.[0-9]$')
	expect_eq "hashed entries" "$out" $((extra + 1))
	out=$(openssl verify -CApath "$(dirname "$CA")" "$(dirname "$CA")/"[0-9a-f]*.[0-9] 2>&1 | grep -c ': OK$')
	expect_eq "certificates openssl verifies by the directory alone" "$out" $((extra + 1))
	CA=$T/open/ca.pem
}

t_unmatched_request() {
	name="a request no rule matches gets 403 naming a rule"
	before=$(upstream_requests)
	out=$(agent_curl -i "https://api.test:$SP/admin/users?page=2")
	expect_out "HTTP/1.1 403 Forbidden"
	expect_out "X-Omnibox-Error: blocked-by-policy"
	expect_out "GET https://api.test:$SP/admin/users?page=2 is not allowed"
	expect_out "  GET api.test:$SP/admin/users"
	expect_no_out "users?*"
	expect_eq "upstream requests" "$(upstream_requests)" "$before"
	out=$(agent_curl -i -X DELETE "https://api.test:$SP/allowed/x")
	expect_out "  DELETE api.test:$SP/allowed/x"
	name="plain HTTP is checked the same way"
	out=$(agent_curl -i "http://api.test:$HP/admin")
	expect_out "HTTP/1.1 403 Forbidden"
	expect_out "  GET api.test:$HP/admin"
	out=$(agent_curl -i "http://api.test:$HP/allowed/plain")
	expect_out "HTTP/1.1 200 OK"
	expect_out "GET /allowed/plain HTTP/1.1"
}

t_method_override() {
	name="a method override to a denied method is checked and refused"
	before=$(upstream_requests)
	for h in X-HTTP-Method-Override X-HTTP-Method X-Method-Override; do
		out=$(agent_curl -i -X POST -H "$h: DELETE" -d x "https://api.test:$SP/upload")
		expect_out "HTTP/1.1 403 Forbidden"
		expect_out "  DELETE api.test:$SP/upload"
	done
	expect_eq "upstream requests" "$(upstream_requests)" "$before"
	name="a method override to an allowed method passes"
	out=$(agent_curl -i -X POST -H "X-HTTP-Method-Override: PUT" -d x "https://api.test:$SP/upload")
	expect_out "HTTP/1.1 200 OK"
	expect_out "POST /upload HTTP/1.1"
}

t_connect_unknown_host() {
	name="CONNECT to a host no rule names: 403 before any TLS"
	before=$(upstream_requests)
	out=$($CLIENT tunnel "$PA" "evil.test:$SP" "$CA" evil.test "GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n")
	expect_out "connect-refused"
	expect_out "HTTP/1.1 403 Forbidden"
	expect_out "no rule names evil.test:$SP"
	expect_out "  GET evil.test:$SP/**"
	expect_no_out "cert-names"
	out=$(agent_curl -i "https://evil.test:$SP/")
	expect_out "403"
	expect_eq "upstream requests" "$(upstream_requests)" "$before"
}

# refused_destination NAME QUERIES: CONNECT to NAME through the closed proxy is
# refused, the upstream is not contacted, and DNS saw QUERIES A and AAAA each.
refused_destination() {
	name="a host resolving to a private address ($1) is refused"
	before=$(upstream_requests)
	a=$(dns_queries "$1" A)
	aaaa=$(dns_queries "$1" AAAA)
	out=$($CLIENT tunnel "$PB" "$1:$SP" "$CA" "$1" "GET / HTTP/1.1\r\nHost: $1\r\n\r\n")
	expect_out "connect-refused"
	expect_out "HTTP/1.1 403 Forbidden"
	expect_out "X-Omnibox-Error: blocked-destination"
	expect_out "$3"
	expect_eq "upstream requests" "$(upstream_requests)" "$before"
	expect_eq "A queries for $1" "$(($(dns_queries "$1" A) - a))" "$2"
	expect_eq "AAAA queries for $1" "$(($(dns_queries "$1" AAAA) - aaaa))" "$2"
}

t_private_destinations() {
	refused_destination lo4.test 1 "resolves to 127.0.0.1, in 127.0.0.0/8"
	refused_destination meta.test 1 "resolves to 169.254.169.254, in 169.254.0.0/16"
	refused_destination mapped.test 1 "resolves to ::ffff:127.0.0.1, in 127.0.0.0/8"
	refused_destination nat64.test 1 "resolves to 64:ff9b::7f00:1, in 127.0.0.0/8"
	refused_destination mixed.test 1 "resolves to 127.0.0.1"
	refused_destination hosts-lo.test 0 "resolves to 127.0.0.1"
	refused_destination 2130706433 0 "an IPv4 address in a non-canonical notation"
	name="plain HTTP to a private destination is refused too"
	before=$(upstream_requests)
	out=$(curl -sS -i --max-time 20 -x "http://127.0.0.1:$PB" "http://lo4.test:$HP/" 2>&1)
	expect_out "X-Omnibox-Error: blocked-destination"
	expect_eq "upstream requests" "$(upstream_requests)" "$before"
	name="a name that does not resolve is refused like a blocked destination"
	out=$($CLIENT tunnel "$PB" "nx.test:$SP" "$CA" nx.test "GET / HTTP/1.1\r\nHost: nx.test\r\n\r\n")
	expect_out "HTTP/1.1 403 Forbidden"
	expect_out "X-Omnibox-Error: blocked-destination"
	expect_eq "A queries for nx.test" "$(dns_queries nx.test A)" 1
	name="with private destinations allowed, the same address is reached"
	out=$(agent_curl -i "https://api.test:$SP/allowed/private-ok")
	expect_out "HTTP/1.1 200 OK"
}

t_host_and_sni() {
	name="a Host header other than the CONNECT host gets 403"
	before=$(upstream_requests)
	out=$($CLIENT tunnel "$PA" "api.test:$SP" "$CA" api.test \
		"GET /allowed/x HTTP/1.1\r\nHost: other.test\r\n\r\n")
	expect_out "HTTP/1.1 403 Forbidden"
	expect_out "X-Omnibox-Error: host-mismatch"
	out=$($CLIENT tunnel "$PA" "api.test:$SP" "$CA" api.test \
		"GET https://other.test/allowed/x HTTP/1.1\r\nHost: api.test\r\n\r\n")
	expect_out "X-Omnibox-Error: host-mismatch"
	expect_eq "upstream requests" "$(upstream_requests)" "$before"
	name="an SNI other than the CONNECT host: handshake refused"
	out=$($CLIENT tunnel "$PA" "api.test:$SP" "$CA" other.test "GET /allowed/x HTTP/1.1\r\nHost: api.test\r\n\r\n")
	expect_out "handshake-refused"
	expect_out "UNRECOGNIZED_NAME"
	expect_eq "upstream requests" "$(upstream_requests)" "$before"
	out=$(grep "SNI 'other.test' differs" open.log)
	expect_out "deny TLS handshake for CONNECT api.test:$SP"
	name="the leaf names the CONNECT host, ALPN is http/1.1"
	out=$($CLIENT tunnel "$PA" "api.test:$SP" "$CA" api.test "GET /allowed/y HTTP/1.1\r\nHost: api.test\r\n\r\n")
	expect_out "cert-names: api.test"
	expect_out "alpn: http/1.1"
	expect_out "HTTP/1.1 200 OK"
}

# smuggle WHAT REQUEST: 400 in a tunnel and in plain HTTP; nothing reaches the upstream.
smuggle() {
	name="smuggling: $1"
	before=$(upstream_requests)
	out=$($CLIENT tunnel "$PA" "api.test:$SP" "$CA" api.test "$2")
	expect_out "HTTP/1.1 400 Bad Request"
	expect_out "X-Omnibox-Error: bad-request"
	expect_out "$3"
	expect_no_out "200 OK"
	plain=$(printf '%s' "$2" | sed "s|^POST /upload|POST http://api.test:$HP/upload|")
	out=$($CLIENT plain "$PA" "$plain")
	expect_out "HTTP/1.1 400 Bad Request"
	expect_eq "upstream requests" "$(upstream_requests)" "$before"
	tests=$((tests + 1))
	if grep -q smuggled "$T/upstream.log"; then fail "the upstream saw the smuggled request"; fi
}

t_smuggling() {
	s='GET /allowed/smuggled HTTP/1.1\r\nHost: api.test\r\n\r\n'
	smuggle "colon-less header line" \
		"POST /upload HTTP/1.1\r\nHost: api.test\r\nContent-Length: 51\r\nX-Bad header\r\n\r\n$s" \
		"header line without a colon"
	smuggle "Content-Length with Transfer-Encoding" \
		"POST /upload HTTP/1.1\r\nHost: api.test\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n$s" \
		"both Content-Length and Transfer-Encoding"
	smuggle "duplicate Content-Length" \
		"POST /upload HTTP/1.1\r\nHost: api.test\r\nContent-Length: 0\r\nContent-Length: 51\r\n\r\n$s" \
		"several Content-Length headers"
	smuggle "bare CR" \
		"POST /upload HTTP/1.1\r\nHost: api.test\r\nX-A: a\rContent-Length: 0\r\n\r\n$s" \
		"bare CR inside a line"
	smuggle "obs-fold" \
		"POST /upload HTTP/1.1\r\nHost: api.test\r\nContent-Length: 0\r\n Transfer-Encoding: chunked\r\n\r\n$s" \
		"obsolete line folding"
	smuggle "Transfer-Encoding other than chunked" \
		"POST /upload HTTP/1.1\r\nHost: api.test\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n$s" \
		"Transfer-Encoding other than chunked"
	name="headers over 64 KiB: 431"
	big=$(head -c 70000 /dev/zero | tr '\0' a)
	out=$($CLIENT plain "$PA" "GET http://api.test:$HP/allowed/x HTTP/1.1\r\nHost: api.test\r\nX-Big: $big\r\n\r\n")
	expect_out "HTTP/1.1 431 Request Header Fields Too Large"
	expect_out "X-Omnibox-Error: headers-too-large"
	name="malformed requests to the proxy itself: 400"
	out=$($CLIENT plain "$PA" "GET /allowed/x HTTP/1.1\r\nHost: api.test\r\n\r\n")
	expect_out "this is a proxy: send absolute-form requests"
	out=$($CLIENT plain "$PA" "CONNECT [::1]:443 HTTP/1.1\r\nHost: x\r\n\r\n")
	expect_out "IPv6 literal hosts are not supported"
	out=$($CLIENT plain "$PA" "CONNECT api.test HTTP/1.1\r\nHost: x\r\n\r\n")
	expect_out "missing port"
	out=$($CLIENT plain "$PA" "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	expect_out "505 HTTP Version Not Supported"
}

t_keep_alive() {
	name="two requests on one kept-alive tunnel are both checked"
	before=$(upstream_requests)
	out=$($CLIENT tunnel "$PA" "api.test:$SP" "$CA" api.test \
		"GET /allowed/first HTTP/1.1\r\nHost: api.test\r\n\r\n" \
		"GET /admin/second HTTP/1.1\r\nHost: api.test\r\n\r\n" \
		"GET /allowed/third HTTP/1.1\r\nHost: api.test\r\n\r\n")
	expect_out "GET /allowed/first HTTP/1.1"
	expect_out "HTTP/1.1 403 Forbidden"
	expect_out "  GET api.test:$SP/admin/second"
	expect_out "GET /allowed/third HTTP/1.1"
	expect_eq "upstream requests" "$(upstream_requests)" "$((before + 2))"
	tests=$((tests + 1))
	grep -q "deny GET https://api.test:$SP/admin/second: no rule matches" open.log ||
		fail "the denial is not in the log"
	name="pipelined requests are answered in order"
	out=$($CLIENT tunnel "$PA" "api.test:$SP" "$CA" api.test \
		"GET /allowed/p1 HTTP/1.1\r\nHost: api.test\r\n\r\nGET /allowed/p2 HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n")
	expect_out "GET /allowed/p1"
	expect_out "GET /allowed/p2"
	tests=$((tests + 1))
	case $out in *"GET /allowed/p2"*"GET /allowed/p1"*) fail "answers out of order" ;; esac
	name="a client that half-closes still gets its answer"
	out=$($CLIENT halfclose "$PA" "GET http://api.test:$HP/bytes/200000 HTTP/1.1\r\nHost: api.test\r\n\r\n")
	expect_out "Content-Length: 200000"
	tests=$((tests + 1))
	[ "$(printf '%s' "$out" | tr -cd x | wc -c)" -eq 200000 ] || fail "the body was cut short"
	name="every decision is logged with its rule and line"
	out=$(grep "allow GET https://api.test:$SP/allowed/first" open.log)
	expect_out "by rule #1 (line 6: GET,HEAD api.test:$SP/allowed/**)"
}

# The agent's TLS client asks for KeyUpdates inside an intercepted tunnel
# (openssl s_client's "K" command): the proxy's own TLS 1.3 records
# (runtime/egress/tlsleg.c) take the new keys, answer with one of their own
# before the response, and the request is still checked and answered.
t_key_update() {
	name="KeyUpdate asked by the agent inside an intercepted tunnel"
	out=$({ printf 'K\n'; sleep 0.3; printf 'K\n'; sleep 0.3
		printf 'GET /allowed/ku HTTP/1.1\nHost: api.test\nConnection: close\n\n'; sleep 2; } |
		timeout 15 openssl s_client -proxy "127.0.0.1:$PA" -connect "api.test:$SP" \
			-servername api.test -CAfile "$CA" -tls1_3 -crlf 2>&1)
	expect_out "KEYUPDATE"
	expect_out "Verify return code: 0 (ok)"
	expect_out "HTTP/1.1 200 OK"
	expect_out "GET /allowed/ku HTTP/1.1"
	tests=$((tests + 1))
	grep -q "TLS with the agent: TLSv1.3 .*records by omnibox" open.log ||
		fail "the log does not say the proxy's own records carried the tunnel"
	tests=$((tests + 1))
	grep -q "TLS with the agent ended" open.log && fail "a leg ended: $(grep 'TLS with the agent ended' open.log)"
	name="a denied request after a KeyUpdate is still refused"
	out=$({ printf 'K\n'; sleep 0.3
		printf 'GET /admin/ku HTTP/1.1\nHost: api.test\nConnection: close\n\n'; sleep 2; } |
		timeout 15 openssl s_client -proxy "127.0.0.1:$PA" -connect "api.test:$SP" \
			-servername api.test -CAfile "$CA" -tls1_3 -crlf 2>&1)
	expect_out "HTTP/1.1 403 Forbidden"
	expect_no_out "GET /admin/ku HTTP/1.1"
}

t_streaming() {
	name="a 100 MiB chunked upload passes without the proxy growing"
	hwm=$(vm_kib "$OPEN_PID" VmHWM)
	out=$(head -c 104857600 /dev/zero | agent_curl -T - -X POST -H "Transfer-Encoding: chunked" \
		"https://api.test:$SP/upload")
	expect_out "body-bytes: 104857600"
	expect_out "Transfer-Encoding: chunked"
	grown=$(($(vm_kib "$OPEN_PID" VmHWM) - hwm))
	tests=$((tests + 1))
	[ "$grown" -lt 16384 ] || fail "peak RSS grew by $grown KiB"
	echo "     (peak RSS of the proxy grew by $grown KiB for 100 MiB)"
	name="a 100 MiB chunked download streams too"
	hwm=$(vm_kib "$OPEN_PID" VmHWM)
	out=$(agent_curl -o /dev/null -w '%{http_code} %{size_download}' "https://api.test:$SP/chunked/104857600")
	expect_eq "download" "$out" "200 104857600"
	grown=$(($(vm_kib "$OPEN_PID" VmHWM) - hwm))
	tests=$((tests + 1))
	[ "$grown" -lt 16384 ] || fail "peak RSS grew by $grown KiB"
	name="large plain bodies (moved with splice) arrive whole"
	out=$(agent_curl -o /dev/null -w '%{http_code} %{size_download}' "http://api.test:$HP/bytes/50000000")
	expect_eq "plain Content-Length download" "$out" "200 50000000"
	out=$(agent_curl -i "http://api.test:$HP/close/3000000" | tr -d x | head -c 2000)
	expect_out "HTTP/1.1 200 OK"
	expect_out "Transfer-Encoding: chunked"
	out=$(agent_curl -o /dev/null -w '%{http_code} %{size_download}' "http://api.test:$HP/close/3000000")
	expect_eq "plain close-delimited download" "$out" "200 3000000"
	out=$(curl -sS --http1.0 -x "http://127.0.0.1:$PA" -o /dev/null -w '%{http_code} %{size_download}' \
		"http://api.test:$HP/close/3000000" 2>&1)
	expect_eq "close-delimited to an HTTP/1.0 client" "$out" "200 3000000"
	out=$(agent_curl -o /dev/null -w '%{http_code} %{size_download}' "https://api.test:$SP/close/3000000")
	expect_eq "TLS close-delimited download" "$out" "200 3000000"
	name="a Content-Length body streams upstream intact"
	head -c 3000000 /dev/urandom >body.bin
	want=$(python3 -c 'import sys
h = 1469598103934665603
for b in open(sys.argv[1], "rb").read():
    h = ((h ^ b) * 1099511628211) % 2**64
print("%016x" % h)' body.bin)
	out=$(agent_curl -X POST --data-binary @body.bin "https://api.test:$SP/upload")
	expect_out "body-bytes: 3000000"
	expect_out "body-fnv: $want"
	out=$(agent_curl -T body.bin -X PUT -H "Transfer-Encoding: chunked" "https://api.test:$SP/upload")
	expect_out "body-fnv: $want"
}

t_credentials() {
	name="credential: the env placeholder is replaced upstream"
	tests=$((tests + 1))
	case $PLACEHOLDER in
	oa_cred_????????????????????????????????) ;;
	*) fail "placeholder '$PLACEHOLDER'" ;;
	esac
	out=$(agent_curl -H "Authorization: Bearer $PLACEHOLDER" "https://api.test:$SP/allowed/cred")
	upstream_saw "Authorization: Bearer $SECRET"
	# The echo comes back with the secret replaced by the placeholder.
	expect_out "Authorization: Bearer $PLACEHOLDER"
	expect_no_out "$SECRET"
	name="credential: added when the request has none"
	out=$(agent_curl "https://api.test:$SP/allowed/cred2")
	upstream_saw "Authorization: Bearer $SECRET"
	expect_no_out "$SECRET"
	name="credential: swap-on-access adds Basic with the default user"
	out=$(agent_curl "https://git.test:$SP/echo")
	upstream_saw "Authorization: Basic $(printf 'x-access-token:%s' "$GIT_SECRET" | base64)"
	expect_no_out "$(printf 'x-access-token:%s' "$GIT_SECRET" | base64)"
	name="credential: the agent's own Authorization passes unchanged"
	out=$(agent_curl -H "Authorization: Bearer mine" "https://api.test:$SP/allowed/own")
	expect_out "Authorization: Bearer mine"
	name="credential: a placeholder to another host gets 403"
	before=$(upstream_requests)
	out=$(agent_curl -i -H "Authorization: Bearer $PLACEHOLDER" "https://other.test:$SP/x")
	expect_out "HTTP/1.1 403 Forbidden"
	expect_out "X-Omnibox-Error: credential-misuse"
	out=$(agent_curl -i "https://other.test:$SP/x?token=$PLACEHOLDER")
	expect_out "X-Omnibox-Error: credential-misuse"
	out=$(agent_curl -i -H "X-Api-Key: $PLACEHOLDER" "https://other.test:$SP/x")
	expect_out "X-Omnibox-Error: credential-misuse"
	out=$(agent_curl -i -u "user:$PLACEHOLDER" "https://git.test:$SP/echo")
	expect_out "X-Omnibox-Error: credential-misuse"
	name="credential: never over cleartext HTTP"
	out=$(agent_curl -i -H "Authorization: Bearer $PLACEHOLDER" "http://api.test:$HP/allowed/x")
	expect_out "X-Omnibox-Error: credential-misuse"
	expect_out "credentials are never sent over cleartext HTTP"
	out=$(agent_curl -i "http://api.test:$HP/allowed/clear")
	expect_out "HTTP/1.1 200 OK"
	expect_no_out "Authorization"
	expect_eq "upstream requests" "$(upstream_requests)" "$((before + 1))"
	name="credential: TRACE and OPTIONS never carry one"
	out=$(agent_curl -X TRACE "https://api.test:$SP/allowed/trace")
	expect_out "TRACE /allowed/trace HTTP/1.1"
	expect_no_out "Authorization"
	out=$(agent_curl -i -X TRACE -H "Authorization: Bearer $PLACEHOLDER" "https://api.test:$SP/allowed/t")
	expect_out "TRACE and OPTIONS never carry credentials"
	name="TRACE with Max-Forwards: 0 is answered by the proxy"
	before=$(upstream_requests)
	out=$(agent_curl -i -X TRACE -H "Max-Forwards: 0" "https://api.test:$SP/allowed/mf")
	expect_out "Content-Type: message/http"
	expect_out "TRACE /allowed/mf HTTP/1.1"
	expect_no_out "$SECRET"
	out=$(agent_curl -i -X OPTIONS -H "Max-Forwards: 0" "https://api.test:$SP/allowed/mf")
	expect_out "Allow: GET, HEAD"
	name="Max-Forwards: 0 is answered on a credential host too, placeholder and all"
	out=$(agent_curl -i -X TRACE -H "Max-Forwards: 0" -H "Authorization: Bearer $PLACEHOLDER" \
		"https://api.test:$SP/admin/mf")
	expect_out "Content-Type: message/http"
	expect_no_out "$SECRET"
	name="Max-Forwards: 0 is answered for a host no rule names"
	out=$(agent_curl -i -X OPTIONS -H "Max-Forwards: 0" "http://unruled.test:$HP/x")
	expect_out "HTTP/1.1 200 OK"
	expect_eq "upstream requests" "$(upstream_requests)" "$before"
	out=$(agent_curl -X TRACE -H "Max-Forwards: 3" "https://api.test:$SP/allowed/mf")
	expect_out "Max-Forwards: 2"
	name="credential: the secret is in no file, environment or log"
	out=$(grep -rl -e "$SECRET" -e "$GIT_SECRET" "$T/open" "$T/open.log" 2>&1)
	expect_eq "files holding a secret" "$out" ""
	out=$(cat open/cred.env)
	expect_eq "sandbox environment" "$out" "API_TOKEN=$PLACEHOLDER"
	tests=$((tests + 1))
	tr '\0' '\n' <"/proc/$OPEN_PID/environ" | grep -q "^E2E_API_SECRET=" ||
		fail "the test did not give the proxy its secret"
}

t_real_clients() {
	name="curl: POST with a body"
	out=$(agent_curl -X POST -d 'a=1&b=2' "https://api.test:$SP/upload")
	expect_out "POST /upload HTTP/1.1"
	expect_out "body-bytes: 7"
	name="curl: HEAD"
	out=$(agent_curl -I "https://api.test:$SP/allowed/head")
	expect_out "HTTP/1.1 200 OK"
	name="git clone over HTTPS through the proxy"
	out=$(HTTPS_PROXY=http://127.0.0.1:$PA GIT_SSL_CAINFO=$CA GIT_TERMINAL_PROMPT=0 \
		git clone -q "https://git.test:$SP/git/repo.git" "$T/clone" 2>&1 && cat "$T/clone/README")
	expect_out "hello from the proxy test"
	tests=$((tests + 1))
	grep -q "allow POST https://git.test:$SP/git/repo.git/git-upload-pack" open.log ||
		fail "no upload-pack request in the log"
	name="Python urllib through the proxy"
	out=$(HTTPS_PROXY=http://127.0.0.1:$PA https_proxy=http://127.0.0.1:$PA SSL_CERT_FILE=$CA \
		python3 -c 'import sys, urllib.request
print(urllib.request.urlopen(sys.argv[1]).read().decode())' "https://api.test:$SP/allowed/urllib" 2>&1)
	expect_out "GET /allowed/urllib HTTP/1.1"
	expect_out "User-Agent: Python-urllib"
	expect_no_out "Connection: close" # hop-by-hop: the proxy's business only
	out=$(HTTPS_PROXY=http://127.0.0.1:$PA https_proxy=http://127.0.0.1:$PA SSL_CERT_FILE=$CA \
		python3 -c 'import sys, urllib.request
try:
    urllib.request.urlopen(sys.argv[1])
except urllib.error.HTTPError as e:
    print(e.code, e.headers["X-Omnibox-Error"], e.read().decode())' "https://api.test:$SP/secret" 2>&1)
	expect_out "403 blocked-by-policy"
}

t_scrub_edges() {
	name="scrubbing: a Range is not forwarded to a credential's host, a 206 or a wide charset is refused"
	out=$(agent_curl -r 0-10 "https://api.test:$SP/allowed/range")
	expect_out "GET /allowed/range"
	expect_no_out "Range:"
	expect_no_out "$SECRET"
	out=$(agent_curl -i "https://api.test:$SP/partial")
	expect_out "502"
	expect_out "partial response (206)"
	out=$(agent_curl -i "https://api.test:$SP/utf16")
	expect_out "502"
	expect_out "wide charset"
	name="scrubbing: response header names too; no length from a HEAD; fragmented WebSocket messages refused"
	out=$(agent_curl -D - -o /dev/null "https://api.test:$SP/reflectname")
	expect_out "X-Bearer"
	expect_no_out "$SECRET"
	out=$(agent_curl -I "https://api.test:$SP/allowed/head")
	expect_out "200"
	expect_no_out "Content-Length"
	out=$($CLIENT ws "$PA" "api.test:$SP" "$CA" /wsfrag)
	expect_no_out "$SECRET"
	expect_no_out "e2e-rea"
	expect_no_out "ws-echo"
	out=$(cat "$T/open.log")
	expect_out "sent a fragmented message, which cannot be checked for the secret"
	# A long body goes through the scrubber uncopied where it can: each
	# piece the proxy reads whole is kept and referred to.  The secret is
	# put at every offset around the records' end (16384 bytes, the
	# upstream's), and the body must come back as the short one did, with
	# every byte of the padding.
	name="scrubbing a long body: the secret is replaced wherever the records split it, and nothing else changes"
	ref=$(agent_curl "https://git.test:$SP/lenecho/10000" | tail -c +10001)
	pre=$(printf '%s' "$ref" | sed -n '1,/^Authorization: /p' | wc -c)
	out=$ref
	expect_out "Authorization: Basic eC1hY2Nlc3MtdG9rZW46"
	expect_no_out "$(printf 'x-access-token:%s' "$GIT_SECRET" | base64)"
	bad=
	for k in 0 1 2 3 5 8 13 21 30 40 50 60 70 $((16384 * 3)) 1048576; do
		n=$((16384 - pre + 14 - k))
		[ "$k" -gt 1000 ] && n=$((k - pre + 20))
		body=$(agent_curl "https://git.test:$SP/lenecho/$n" | tail -c +$((n + 1)) |
			sed "s#/lenecho/$n #/lenecho/10000 #")
		pad=$(agent_curl "https://git.test:$SP/lenecho/$n" | head -c "$n" | tr -d x | wc -c)
		[ "$body" = "$ref" ] && [ "$pad" -eq 0 ] || bad="$bad $n"
	done
	expect_eq "paddings whose body differs from the short one's" "${bad:-none}" "none"
	name="scrubbing is no oracle: a reflected prefix of the secret comes back framed like any other guess"
	a=$($CLIENT tunnel "$PA" "api.test:$SP" "$CA" api.test \
		"GET /refl?zzzzzzzzzzzz HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n" |
		sed -n '/^HTTP/,$p' | tr -d '\r' | sed '1,/^$/d' | tr 'z' '#')
	b=$($CLIENT tunnel "$PA" "api.test:$SP" "$CA" api.test \
		"GET /refl?${SECRET%??????????} HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n" |
		sed -n '/^HTTP/,$p' | tr -d '\r' | sed '1,/^$/d' | sed "s/${SECRET%??????????}/############/")
	out="$a
$b"
	expect_out "you asked for"
	expect_eq "the framing of a secret's prefix and of another guess" "$b" "$a"

	name="a placeholder in the method or a header name goes nowhere"
	before=$(upstream_requests)
	out=$(agent_curl -i -X "$PLACEHOLDER" "https://other.test:$SP/x"; agent_curl -i -H "X-$PLACEHOLDER: 1" "https://other.test:$SP/x")
	expect_out "403"
	expect_no_out "200 OK"
	tests=$((tests + 1))
	[ "$(upstream_requests)" = "$before" ] || fail "the upstream got a placeholder"
}

# small_curl ARGS: curl through the proxy capped at 32 MiB.
small_curl() {
	HTTPS_PROXY=http://127.0.0.1:$PS CURL_CA_BUNDLE=$T/small/ca.pem curl -sS --max-time 20 "$@" 2>&1
}

t_bounds() {
	name="100 downloads the agent never reads: the proxy stays under its 32 MiB, a new request is served"
	$CLIENT stall "$PS" "other.test:$SP" "$T/small/ca.pem" /bytes/100000000000 100 25 >stall.out &
	st=$!
	for _ in $(seq 300); do grep -q stalled stall.out && break; sleep 0.1; done
	sleep 3
	out=$(small_curl "https://other.test:$SP/bytes/9")
	expect_out "xxxxxxxxx"
	kill -USR1 "$SMALL_PID"
	sleep 0.3
	peak=$(sed -n 's/.*memory_peak=\([0-9]*\).*/\1/p' small.log | tail -n 1)
	tests=$((tests + 1))
	[ -n "$peak" ] && [ "$peak" -lt 33554432 ] || fail "counted memory peaked at ${peak:-?} bytes, over the 32 MiB cap"
	out=$(cat small.log)
	expect_out "memory near its cap"
	kill "$st" 2>/dev/null
	wait "$st" 2>/dev/null
	# The stalled downloads' memory goes as the proxy closes them; until it
	# is under the mark where new connections are refused (1/2 of the cap),
	# a newcomer is answered 503 by design.  The churn starts after that.
	for _ in $(seq 100); do
		kill -USR1 "$SMALL_PID"
		sleep 0.1
		mem=$(sed -n 's/.* memory=\([0-9]*\) .*/\1/p' small.log | tail -n 1)
		[ -n "$mem" ] && [ "$mem" -lt 12582912 ] && break
	done

	name="a churn of connections opened and closed: requests are still served"
	$CLIENT churn "$PS" 8 &
	c1=$!
	$CLIENT churn "$PS" 8 &
	c2=$!
	sleep 1
	# A newcomer may meet the cap while the churn holds it (refused 503 by
	# design, so the churn cannot push out requests being served): the
	# proxy must keep serving, not answer every one.  Which newcomers find
	# a free place is the machine's timing: tries 0.3 s apart, as long as
	# the churn lasts (and 20 at most), until two are served.
	out=$(ok=0 n=0
	while [ "$ok" -lt 2 ] && [ "$n" -lt 20 ] && kill -0 "$c1" 2>/dev/null; do
		code=$(small_curl -o /dev/null -w '%{http_code}' "https://other.test:$SP/bytes/5")
		printf '%s\n' "$code"
		[ "$code" = 200 ] && ok=$((ok + 1))
		n=$((n + 1))
		sleep 0.3
	done)
	wait "$c1" "$c2"
	tests=$((tests + 1))
	[ "$(printf '%s\n' "$out" | grep -c '^200$')" -ge 2 ] ||
		fail "requests failed during the churn ($(grep -o 'memory near its cap\|at its connection cap' small.log | sort | uniq -c | tr '\n' ' '))"
}

t_trickle() {
	name="a head trickled in a byte a second is closed at its deadline, 15 s after it began"
	out=$($CLIENT trickle "$PA" 30)
	case $out in
	"closed after 1"[4-7]" s") tests=$((tests + 1)) ;;
	*) tests=$((tests + 1)) && fail "expected the proxy to close after 15 s: $out" ;;
	esac
}

t_websocket() {
	name="an allowed WebSocket upgrade, answered with the right Accept, carries frames both ways"
	out=$($CLIENT ws "$PA" "api.test:$SP" "$CA" /ws)
	expect_out "HTTP/1.1 101 Switching Protocols"
	expect_out "Upgrade: websocket"
	expect_out "Sec-WebSocket-Accept: "
	expect_out "ws-echo: hello-ws"

	name="after a 101, bytes that are not RFC 6455 frames close the tunnel"
	out=$($CLIENT ws "$PA" "api.test:$SP" "$CA" /ws "GET /after-upgrade HTTP/1.1\r\nHost: api.test\r\n\r\n")
	expect_out "ws-echo: hello-ws"
	expect_out "ws-after: closed"
	out=$(cat "$T/open.log")
	expect_out "the agent sent what is not RFC 6455 framing"

	name="a fake 101 (no Sec-WebSocket-Accept) is refused; the request after it never reaches the server"
	out=$($CLIENT ws "$PA" "api.test:$SP" "$CA" /fakews "GET /smuggled HTTP/1.1\r\nHost: api.test\r\n\r\n")
	expect_out "502"
	expect_out "does not carry the Sec-WebSocket-Accept"
	expect_no_out "ws-echo"
	tests=$((tests + 1))
	! grep -q "smuggled\|hello-ws" "$T/upstream.log" || fail "bytes after the fake 101 reached the server"
	name="an Upgrade the rules do not allow is dropped"
	out=$($CLIENT tunnel "$PA" "api.test:$SP" "$CA" api.test \
		"GET /allowed/h2c HTTP/1.1\r\nHost: api.test\r\nConnection: Upgrade, X-Hop\r\nUpgrade: h2c\r\nX-Hop: 1\r\nTE: trailers\r\nProxy-Authorization: Basic eDp5\r\n\r\n")
	expect_out "GET /allowed/h2c HTTP/1.1"
	expect_no_out "Upgrade"
	expect_no_out "X-Hop"
	expect_no_out "TE: trailers"
	expect_no_out "Proxy-Authorization"
}

# ---- aws_sigv4, unix_socket sources, refresh_interval_seconds -----------------

# The real AWS keys: a session token longer than the scrubber's pieces (256).
AWS_KEY=AKIAE2EREALKEY000001
AWS_SECRET=e2eRealSecret/0123456789+abcdefghijklmnop
AWS_TOKEN=IQoJE2E$(python3 -c 'import hashlib; print("".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(10)))')
IAM_KEY=AKIAE2EPROFILEKEY001
IAM_SECRET=e2eProfileSecret/ZYXWVUTSRQPONMLKJIHGFEDCBA
mkdir -p home/.aws aws tok
printf '%s\n' "$AWS_SECRET" >home/aws_secret
printf '%s\n' "$AWS_TOKEN" >aws_token
printf '[default]\naws_access_key_id = AKIAOTHER\naws_secret_access_key = other\n\n[e2e]\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
	"$IAM_KEY" "$IAM_SECRET" >home/.aws/credentials
cat >aws-keys.json <<JSON
{"s3.test": {"key_id": "$AWS_KEY", "secret": "$AWS_SECRET", "token": "$AWS_TOKEN", "region": "eu-west-1", "service": "s3"},
 "bucket.s3.test": {"key_id": "$AWS_KEY", "secret": "$AWS_SECRET", "token": "$AWS_TOKEN", "region": "eu-west-1", "service": "s3"},
 "iam.test": {"key_id": "$IAM_KEY", "secret": "$IAM_SECRET", "token": null, "region": "us-east-1", "service": "iam"}}
JSON
python3 "$here/sigv4_server.py" --cert srv.crt --key srv.key --keys aws-keys.json --log "$T/aws-up.log" \
	>aws-up.out 2>aws-up.err &
pids="$pids $!"
set -- $(wait_ready aws-up.out)
AP=$2
cat >aws.yaml <<YAML
name: e2e-aws
os_env:
  sandbox:
    egress_allow_private_destinations: true
    egress_rules:
      - "* s3.test:$AP/**"
      - "* bucket.s3.test:$AP/**"
      - "GET iam.test:$AP/**"
    credential_proxy:
      - type: aws_sigv4
        targets: [s3.test:$AP, bucket.s3.test:$AP]
        region: eu-west-1
        credential:
          access_key_id: {env: E2E_AWS_KEY}
          secret_access_key: {file: ~/aws_secret}
          session_token: {command: "cat $T/aws_token"}
      - type: aws_sigv4
        target: iam.test:$AP
        region: us-east-1
        service: iam
        credential: {profile: e2e}
YAML
start_proxy aws aws.yaml "E2E_AWS_KEY=$AWS_KEY HOME=$T/home" --system-ca ca.crt \
	--hosts hosts.open --resolv resolv.conf
pids="$pids $!"
set -- $(wait_ready aws.out)
PW=$2

# A token service on a Unix socket, and a token file, both read again every second.
printf 'sock-token-A\n' >tok-answer
printf 'file-token-A\n' >tok-file
python3 "$here/token_server.py" "$T/tok.sock" "$T/tok-answer" >tok-server.out 2>&1 &
pids="$pids $!"
wait_ready tok-server.out >/dev/null
cat >tok.yaml <<YAML
name: e2e-tok
os_env:
  sandbox:
    egress_allow_private_destinations: true
    egress_rules:
      - "* api.test:$SP/**"
      - "* other.test:$SP/**"
    credential_proxy:
      - type: https_bearer
        target: api.test:$SP
        source: {unix_socket: $T/tok.sock}
        refresh_interval_seconds: 1
        env: SOCK_TOKEN
      - type: https_bearer
        target: other.test:$SP
        source: {file: $T/tok-file}
        refresh_interval_seconds: 1
        env: FILE_TOKEN
YAML
start_proxy tok tok.yaml - --system-ca ca.crt --hosts hosts.open --resolv resolv.conf
pids="$pids $!"
set -- $(wait_ready tok.out)
PT=$2

# aws_client ARGS: the agent's SDK with the sandbox's AWS_* placeholders.
aws_client() {
	env $(cat "$T/aws/cred.env") python3 "$here/sigv4_client.py" --ca "$T/aws/ca.pem" --proxy "$PW" "$@" 2>&1
}

# aws_ok WHAT: the upstream verified the last request with the real keys.
aws_ok() {
	tests=$((tests + 1))
	tail -n 1 "$T/aws-up.log" | grep -q '^sigv4 ok' ||
		fail "$1: the upstream did not verify it: $(tail -n 1 "$T/aws-up.log")"
}

aws_requests() { grep -c '^request ' "$T/aws-up.log"; }

ph_of() { sed -n "s/^$1=//p" "$T/$2/cred.env"; }

t_sigv4() {
	name="aws_sigv4: the sandbox gets placeholders only, the token's too"
	out=$(cat aws/cred.env)
	expect_out "AWS_ACCESS_KEY_ID=oa_cred_"
	expect_out "AWS_SECRET_ACCESS_KEY=oa_cred_"
	expect_out "AWS_SESSION_TOKEN=oa_cred_"
	expect_eq "variables" "$(wc -l <aws/cred.env)" 3
	out=$(grep -rl -e "$AWS_KEY" -e "$AWS_SECRET" -e "$AWS_TOKEN" -e "$IAM_KEY" -e "$IAM_SECRET" \
		"$T/aws" aws.log 2>&1)
	expect_eq "files or logs holding a real key" "$out" ""

	name="aws_sigv4: a GET signed with the placeholders is signed again with the real keys"
	out=$(aws_client "s3.test:$AP" GET /bucket/hello.txt)
	expect_out "status 200"
	expect_out "sigv4-verified GET /bucket/hello.txt"
	aws_ok "GET"
	expect_no_out "$AWS_KEY"
	expect_no_out "$AWS_SECRET"

	name="aws_sigv4: a PUT with a body and its real payload hash; the body arrives untouched"
	body='{"object": "with a body", "n": 42}'
	out=$(aws_client "bucket.s3.test:$AP" PUT /dir/obj.json --data "$body")
	expect_out "status 200"
	expect_out "X-Stored-Bytes: ${#body}"
	aws_ok "PUT"
	tests=$((tests + 1))
	tail -n 1 aws-up.log | grep -q "body-sha256=$(printf '%s' "$body" | sha256sum | cut -d' ' -f1)" ||
		fail "the body's hash changed on the way"
	out=$(aws_client "bucket.s3.test:$AP" GET /dir/obj.json)
	expect_out "$body"
	name="aws_sigv4: UNSIGNED-PAYLOAD passes through"
	out=$(aws_client "s3.test:$AP" PUT /bucket/unsigned --data "some bytes" --payload unsigned)
	expect_out "status 200"
	aws_ok "UNSIGNED-PAYLOAD"
	name="aws_sigv4: a payload hash that is not the body's is caught by the server (it is the agent's)"
	out=$(aws_client "s3.test:$AP" PUT /bucket/wrong --data "some bytes" --payload wrong)
	expect_out "status 403"
	expect_out "XAmzContentSHA256Mismatch"

	name="aws_sigv4: what is signed is the head as sent (Range dropped, Accept-Encoding: identity)"
	out=$(aws_client "s3.test:$AP" GET /bucket/range.bin -H "Range: bytes=0-9" -H "Accept-Encoding: gzip")
	expect_out "status 200"
	expect_out "Accept-Encoding: identity"
	expect_no_out "Range:"
	aws_ok "Range"
	name="aws_sigv4: keys with reserved characters and a query (S3 encodes once)"
	out=$(aws_client "s3.test:$AP" GET "/bucket/a%20b%2Bc~%28x%29%24.txt?list-type=2&prefix=a%2Fb&delimiter=%2F")
	expect_out "status 200"
	aws_ok "S3 key encoding"
	name="aws_sigv4: another service (iam: the path encoded twice), keys from a profile, no token"
	out=$(aws_client "iam.test:$AP" GET "/a%20b/?Action=ListUsers&Version=2010-05-08" \
		--region us-east-1 --service iam)
	expect_out "status 200"
	expect_no_out "X-Amz-Security-Token"
	aws_ok "iam"

	name="aws_sigv4: the real keys an upstream echoes come back scrubbed"
	out=$(aws_client "s3.test:$AP" GET /echo-keys)
	expect_out "sigv4-verified"
	expect_out "Credential=$(ph_of AWS_ACCESS_KEY_ID aws)/"
	expect_out "secret: $(ph_of AWS_SECRET_ACCESS_KEY aws)"
	expect_out "key: $(ph_of AWS_ACCESS_KEY_ID aws)"
	expect_no_out "$AWS_KEY"
	expect_no_out "$AWS_SECRET"
	for piece in $(printf '%s' "$AWS_TOKEN" | fold -w 100); do expect_no_out "$piece"; done
	out=$(aws_client "iam.test:$AP" GET /echo-keys --region us-east-1 --service iam)
	expect_out "sigv4-verified"
	expect_no_out "$IAM_KEY"
	expect_no_out "$IAM_SECRET"
	name="aws_sigv4: an upstream's error names the real key id: scrubbed too"
	out=$(aws_client "s3.test:$AP" PUT /bucket/wrong2 --data "x" --payload wrong)
	expect_out "<AWSAccessKeyId>$(ph_of AWS_ACCESS_KEY_ID aws)</AWSAccessKeyId>"

	name="aws_sigv4: the server rejects a tampered request and the placeholder keys"
	out=$(AWS_ACCESS_KEY_ID=$AWS_KEY AWS_SECRET_ACCESS_KEY=$AWS_SECRET AWS_SESSION_TOKEN=$AWS_TOKEN \
		python3 "$here/sigv4_client.py" --ca ca.crt --direct "s3.test:$AP" GET /bucket/a 2>&1)
	expect_out "status 200"
	out=$(AWS_ACCESS_KEY_ID=$AWS_KEY AWS_SECRET_ACCESS_KEY=$AWS_SECRET AWS_SESSION_TOKEN=$AWS_TOKEN \
		python3 "$here/sigv4_client.py" --ca ca.crt --direct "s3.test:$AP" GET /bucket/a \
		--send-target /bucket/b 2>&1)
	expect_out "status 403"
	expect_out "SignatureDoesNotMatch"
	out=$(env $(cat aws/cred.env) python3 "$here/sigv4_client.py" --ca ca.crt --direct \
		"s3.test:$AP" GET /bucket/a 2>&1)
	expect_out "status 403"

	name="aws_sigv4: refused before anything is sent"
	before=$(aws_requests)
	out=$(aws_client "s3.test:$AP" GET "/bucket/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEXAMPLEPRESIGNED%2F20240101%2Feu-west-1%2Fs3%2Faws4_request&X-Amz-Signature=00" --no-auth)
	expect_out "status 403"
	expect_out "presigned URL"
	out=$(aws_client "s3.test:$AP" GET /bucket/k --no-auth)
	expect_out "must be signed"
	out=$(aws_client "s3.test:$AP" GET /bucket/k --region us-east-1)
	expect_out "region is not the one the policy names"
	out=$(aws_client "s3.test:$AP" GET /bucket/k --service sts)
	expect_out "service is not the one the policy names"
	out=$(aws_client "s3.test:$AP" GET /bucket/k --no-date)
	expect_out "x-amz-date is missing"
	out=$(aws_client "s3.test:$AP" GET /bucket/k --key-id AKIAANOTHERKEY)
	expect_out "not signed with this host's AWS_ACCESS_KEY_ID placeholder"
	out=$(aws_client "s3.test:$AP" GET /bucket/k --scope-date 20000101)
	expect_out "date is not x-amz-date's"
	out=$(aws_client "s3.test:$AP" PUT /bucket/k --data "body" --payload none)
	expect_out "must carry x-amz-content-sha256"
	out=$(aws_client "s3.test:$AP" PUT /bucket/k --data "body" --payload STREAMING-AWS4-HMAC-SHA256-PAYLOAD)
	expect_out "signed stream"
	out=$(aws_client "s3.test:$AP" GET /bucket/k -H "X-Amz-Meta-Leak: $(ph_of AWS_SECRET_ACCESS_KEY aws)")
	expect_out "X-Omnibox-Error: credential-misuse"
	out=$(env $(cat aws/cred.env) AWS_SESSION_TOKEN=mine python3 "$here/sigv4_client.py" \
		--ca "$T/aws/ca.pem" --proxy "$PW" "s3.test:$AP" GET /bucket/k 2>&1)
	expect_out "X-Amz-Security-Token holds another value"
	expect_eq "upstream requests" "$(aws_requests)" "$before"
	out=$(grep -c 'sigv4-refused' aws.log)
	tests=$((tests + 1))
	[ "$out" -ge 10 ] || fail "the refusals are not logged ($out lines)"

	if python3 -c 'import botocore' 2>/dev/null; then
		name="aws_sigv4: botocore's own S3 client through the proxy"
		out=$(env $(cat aws/cred.env) HTTPS_PROXY=http://127.0.0.1:$PW AWS_CA_BUNDLE=$T/aws/ca.pem \
			python3 -c 'import sys, botocore.session
c = botocore.session.get_session().create_client("s3", region_name="eu-west-1",
    endpoint_url="https://s3.test:" + sys.argv[1])
c.put_object(Bucket="bucket", Key="boto/k y(1).txt", Body=b"from botocore")
print(c.get_object(Bucket="bucket", Key="boto/k y(1).txt")["Body"].read().decode())' "$AP" 2>&1)
		expect_out "from botocore"
	else
		skips=$((skips + 1))
		echo "     (botocore is not installed: its own client is not tried)"
	fi
	name="aws_sigv4: no real key in the proxy's log"
	out=$(grep -c -e "$AWS_KEY" -e "$AWS_SECRET" -e "$IAM_KEY" -e "$IAM_SECRET" aws.log)
	expect_eq "log lines with a real key" "$out" 0
}

# tok_curl VAR URL ARGS: curl through the refreshing proxy, sending VAR's placeholder.
tok_curl() {
	_ph=$(ph_of "$1" tok)
	shift
	HTTPS_PROXY=http://127.0.0.1:$PT CURL_CA_BUNDLE=$T/tok/ca.pem \
		curl -sS -i --max-time 20 -H "Authorization: Bearer $_ph" "$@" 2>&1
}

# wait_log FILE TEXT: TEXT appears in FILE within 10 s (the refresh runs every second).
wait_log() {
	for _ in $(seq 100); do
		grep -qF -- "$2" "$1" && return 0
		sleep 0.1
	done
	return 1
}

t_refresh() {
	name="unix_socket source: read at launch, the token from the socket goes upstream"
	out=$(tok_curl SOCK_TOKEN "https://api.test:$SP/allowed/s1")
	expect_out "200 OK"
	upstream_saw "Authorization: Bearer sock-token-A"
	name="refresh: the socket answers another token, the upstream sees it, the placeholder stays"
	printf 'sock-token-B' >tok-answer
	tests=$((tests + 1))
	wait_log tok.log "api.test:$SP: read again" || fail "no refresh logged"
	out=$(tok_curl SOCK_TOKEN "https://api.test:$SP/allowed/s2")
	upstream_saw "Authorization: Bearer sock-token-B"
	expect_out "Authorization: Bearer $(ph_of SOCK_TOKEN tok)"
	expect_no_out "sock-token-B"
	name="refresh: the old token is still scrubbed"
	out=$(tok_curl SOCK_TOKEN "https://api.test:$SP/refl?sock-token-A")
	expect_out "you asked for: oa_cred_"
	expect_no_out "sock-token-A"
	name="refresh: a failing read fails closed: the upstream sees nothing, the agent gets 503"
	before=$(upstream_requests)
	printf '!close' >tok-answer
	tests=$((tests + 1))
	wait_log tok.log "api.test:$SP: reading it again failed: unix socket $T/tok.sock: its answer is empty" ||
		fail "the failure is not logged"
	out=$(tok_curl SOCK_TOKEN "https://api.test:$SP/allowed/s3")
	expect_out "503"
	expect_out "X-Omnibox-Error: credential-unavailable"
	out=$(HTTPS_PROXY=http://127.0.0.1:$PT CURL_CA_BUNDLE=$T/tok/ca.pem curl -sS -i --max-time 20 \
		"https://api.test:$SP/allowed/s4" 2>&1)
	expect_out "503"
	expect_eq "upstream requests" "$(upstream_requests)" "$before"
	name="refresh: over 64 KiB, or no end within 5 s, fails too; other requests go on meanwhile"
	printf '!big' >tok-answer
	tests=$((tests + 1))
	wait_log tok.log "sent more than 64 KiB" || fail "the oversized answer is not refused"
	printf '!hang' >tok-answer
	sleep 1.5
	t0=$(date +%s%N)
	out=$(tok_curl FILE_TOKEN "https://other.test:$SP/x")
	t1=$(date +%s%N)
	expect_out "200 OK"
	tests=$((tests + 1))
	[ $(((t1 - t0) / 1000000)) -lt 1500 ] ||
		fail "a request waited $(((t1 - t0) / 1000000)) ms behind a hanging token read"
	tests=$((tests + 1))
	wait_log tok.log "did not send its answer to the end within 5 seconds" || fail "no deadline"
	name="refresh: a read that succeeds again makes it available again"
	printf 'sock-token-C\n' >tok-answer
	tests=$((tests + 1))
	wait_log tok.log "api.test:$SP: read again from $T/tok.sock, available again" ||
		fail "not available again"
	out=$(tok_curl SOCK_TOKEN "https://api.test:$SP/allowed/s5")
	upstream_saw "Authorization: Bearer sock-token-C"
	name="refresh: a file source follows its file; a removed file fails closed"
	out=$(tok_curl FILE_TOKEN "https://other.test:$SP/f1")
	upstream_saw "Authorization: Bearer file-token-A"
	printf 'file-token-B\n' >tok-file.new && mv tok-file.new tok-file
	tests=$((tests + 1))
	wait_log tok.log "other.test:$SP: read again" || fail "no file refresh"
	out=$(tok_curl FILE_TOKEN "https://other.test:$SP/f2")
	upstream_saw "Authorization: Bearer file-token-B"
	rm tok-file
	tests=$((tests + 1))
	wait_log tok.log "other.test:$SP: reading it again failed" || fail "no failure"
	before=$(upstream_requests)
	out=$(tok_curl FILE_TOKEN "https://other.test:$SP/f3")
	expect_out "503"
	expect_eq "upstream requests" "$(upstream_requests)" "$before"
	name="refresh: no token in the proxy's log or the sandbox's files"
	out=$(grep -rl -e sock-token-B -e sock-token-C -e file-token tok.log "$T/tok" 2>&1)
	expect_eq "files with a token" "$out" ""
}

echod_connections() { grep -c '^accepted' "$T/echod.log"; }

t_tcp_rules() {
	name="tcp rule: a plain socket client's CONNECT gets a raw stream both ways"
	out=$($CLIENT raw "$PX" "echo.test:$EP" 'hello over tcp\n')
	expect_out "stream: banner echod"
	expect_out "hello over tcp"
	out=$(grep "CONNECT echo.test:$EP" tcp.log)
	expect_out "allow CONNECT echo.test:$EP as a plain tunnel, not inspected, by rule #1 (line 6: tcp echo.test:$EP)"
	expect_out "tunnel CONNECT echo.test:$EP to 127.0.0.1 (tcp rule: not inspected)"
	name="without a tcp rule the CONNECT is refused, naming the tcp rule that would allow it"
	before=$(echod_connections)
	out=$($CLIENT raw "$PA" "echo.test:$EP" 'hello\n')
	expect_out "connect-refused"
	expect_out "HTTP/1.1 403 Forbidden"
	expect_out "  tcp echo.test:$EP"
	expect_no_out "stream:"
	expect_eq "echo service connections" "$(echod_connections)" "$before"
	name="tcp rule: a private destination is refused without egress_allow_private_destinations"
	out=$($CLIENT raw "$PB" "lo4.test:$EP" 'hello\n')
	expect_out "X-Omnibox-Error: blocked-destination"
	expect_out "resolves to 127.0.0.1, in 127.0.0.0/8"
	expect_eq "echo service connections" "$(echod_connections)" "$before"
	name="a tcp rule does not allow an HTTP request to its host and port through the forward path"
	before=$(upstream_requests)
	out=$(curl -sS -i --max-time 20 -x "http://127.0.0.1:$PX" "http://api.test:$HP/allowed/fwd" 2>&1)
	expect_out "HTTP/1.1 403 Forbidden"
	expect_out "X-Omnibox-Error: blocked-by-policy"
	expect_eq "upstream requests" "$(upstream_requests)" "$before"
	name="an HTTP rule opens no raw stream: a stream that is not TLS fails, and is noted"
	out=$($CLIENT raw "$PX" "api.test:$SP" 'SSH-2.0-OpenSSH_9.6\r\n')
	expect_no_out "banner"
	tests=$((tests + 1))
	grep -q "deny CONNECT api.test:$SP, then a stream that is not TLS" tcp.log ||
		fail "no refusal of the stream that is not TLS in the log"
	name="no credential goes into a tcp rule's tunnel: the placeholder passes unchanged"
	ph=$(sed -n 's/^API_TOKEN=//p' tcp/cred.env)
	tests=$((tests + 1))
	[ -n "$ph" ] || fail "no placeholder in tcp/cred.env"
	out=$($CLIENT raw "$PX" "api.test:$HP" "GET /allowed/raw HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer $ph\r\nConnection: close\r\n\r\n")
	expect_out "stream: HTTP/1.1 200 OK"
	upstream_saw "Authorization: Bearer $ph"
	tests=$((tests + 1))
	! tail -n 4 "$T/upstream.log" | grep -q "$SECRET" ||
		fail "the secret reached the upstream through a tcp tunnel"
	name="the credential's own host still gets the secret through its HTTP rule"
	out=$(HTTPS_PROXY=http://127.0.0.1:$PX CURL_CA_BUNDLE=$T/tcp/ca.pem \
		curl -sS --max-time 20 -H "Authorization: Bearer $ph" "https://api.test:$SP/allowed/cred" 2>&1)
	upstream_saw "Authorization: Bearer $SECRET"
}

# The relay in the sandbox speaks for clients that ignore the proxy: a
# CONNECT marked transparent, then the client's own stream, no 200 awaited.
t_transparent() {
	name="transparent TLS: intercepted as after a CONNECT, each request checked"
	out=$($CLIENT transparent "$PA" "api.test:$SP" tls "$CA" api.test \
		"GET /allowed/tp HTTP/1.1\r\nHost: api.test\r\n\r\n" \
		"GET /denied/tp HTTP/1.1\r\nHost: api.test\r\n\r\n")
	expect_out "cert-names: api.test"
	expect_out "HTTP/1.1 200 OK"
	expect_out "X-Omnibox-Error: blocked-by-policy"
	expect_no_out "Connection established"
	upstream_saw "GET /allowed/tp"
	out=$(grep "CONNECT api.test:$SP (transparent)" open.log)
	expect_out "allow CONNECT api.test:$SP (transparent) host by rule"
	name="transparent TLS: an SNI other than the name is refused"
	before=$(upstream_requests)
	out=$($CLIENT transparent "$PA" "api.test:$SP" tls "$CA" other.test \
		"GET /allowed/sni HTTP/1.1\r\nHost: api.test\r\n\r\n")
	expect_out "handshake-refused"
	expect_no_out "200 OK"
	expect_eq "upstream requests" "$(upstream_requests)" "$before"
	name="transparent plain HTTP: forwarded as a forward request for the name"
	out=$($CLIENT transparent "$PA" "api.test:$HP" plain \
		"GET /allowed/plain-tp HTTP/1.1\r\nHost: api.test:$HP\r\n\r\n" \
		"GET /denied/plain-tp HTTP/1.1\r\nHost: api.test:$HP\r\n\r\n")
	expect_out "HTTP/1.1 200 OK"
	expect_out "X-Omnibox-Error: blocked-by-policy"
	expect_out "  GET api.test:$HP/denied/plain-tp"
	upstream_saw "GET /allowed/plain-tp"
	name="transparent plain HTTP: a Host other than the name gets 403, nothing sent on"
	before=$(upstream_requests)
	out=$($CLIENT transparent "$PA" "api.test:$HP" plain \
		"GET /allowed/x HTTP/1.1\r\nHost: other.test:$HP\r\n\r\n")
	expect_out "X-Omnibox-Error: host-mismatch"
	out=$($CLIENT transparent "$PA" "api.test:$HP" plain \
		"GET http://other.test:$HP/allowed/x HTTP/1.1\r\nHost: api.test\r\n\r\n")
	expect_out "X-Omnibox-Error: host-mismatch"
	out=$($CLIENT transparent "$PA" "api.test:$HP" plain \
		"CONNECT other.test:$SP HTTP/1.1\r\nHost: other.test\r\n\r\n")
	expect_out "HTTP/1.1 400"
	expect_eq "upstream requests" "$(upstream_requests)" "$before"
	name="transparent: a name no rule covers is closed at once, never resolved, and suggested"
	a=$(dns_queries evil-tp.test A)
	out=$($CLIENT transparent "$PA" "evil-tp.test:$SP" tls "$CA" evil-tp.test \
		"GET / HTTP/1.1\r\nHost: evil-tp.test\r\n\r\n")
	expect_out "closed-at-once"
	expect_no_out "cert-names"
	out=$(grep "evil-tp.test" open.log)
	expect_out "deny CONNECT evil-tp.test:$SP (transparent): no rule names evil-tp.test:$SP"
	expect_eq "queries for evil-tp.test" "$(($(dns_queries evil-tp.test A) - a))" 0
	name="transparent: a private destination is closed at once"
	out=$($CLIENT transparent "$PB" "lo4.test:$SP" tls "$CA" lo4.test \
		"GET / HTTP/1.1\r\nHost: lo4.test\r\n\r\n")
	expect_out "closed-at-once"
	out=$(grep "blocked-destination CONNECT lo4.test:$SP" closed.log)
	expect_out "resolves to 127.0.0.1, in 127.0.0.0/8"
	name="transparent: a tcp rule's stream, with no 200 before the server's bytes"
	out=$($CLIENT transparent "$PX" "echo.test:$EP" raw 'hello transparent\n')
	expect_out "stream: banner echod"
	expect_out "hello transparent"
	expect_no_out "Connection established"
	# The server speaks first: its banner may be read before the proxy has
	# seen the connection made (it was dropped, and the stream hung).
	name="transparent: a tcp rule's server that speaks first, 20 times: each stream comes through"
	got=0
	for _ in $(seq 20); do
		out=$($CLIENT transparent "$PX" "echo.test:$EP" raw 'hello transparent\n')
		case $out in *"banner echod"*"hello transparent"*) got=$((got + 1)) ;; esac
	done
	expect_eq "streams with the banner and the echo" "$got" 20
	name="transparent: a rule without a port takes port 80 (plain HTTP) as well as 443"
	out=$($CLIENT transparent "$PA" "portless.test:80" plain \
		"GET /x HTTP/1.1\r\nHost: portless.test\r\n\r\n")
	out=$(grep "portless.test:80" open.log)
	expect_out "allow CONNECT portless.test:80 (transparent) host by rule"
	expect_no_out "deny CONNECT portless.test:80"
	out=$($CLIENT tunnel "$PA" "portless.test:80" "$CA" portless.test "GET /x HTTP/1.1\r\nHost: portless.test\r\n\r\n")
	expect_out "connect-refused"
	name="transparent plain HTTP: an absolute-form request for another port is refused"
	before=$(upstream_requests)
	out=$($CLIENT transparent "$PA" "api.test:$HP" plain \
		"GET http://api.test:$SP/allowed/x HTTP/1.1\r\nHost: api.test\r\n\r\n")
	expect_out "X-Omnibox-Error: host-mismatch"
	expect_eq "upstream requests" "$(upstream_requests)" "$before"
	name="transparent plain HTTP: a malformed request is a bad request, no tcp rule suggested"
	out=$($CLIENT transparent "$PA" "api.test:$HP" plain \
		"GET /allowed/ok HTTP/1.1\r\nHost: api.test\r\n\r\n" \
		"POST /upload HTTP/1.1\r\nHost: api.test\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n")
	expect_out "HTTP/1.1 200 OK"
	expect_out "HTTP/1.1 400"
	out=$($CLIENT transparent "$PA" "api.test:$HP" plain \
		"POST /upload HTTP/1.1\r\nHost: api.test\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n")
	expect_out "HTTP/1.1 400"
	out=$(grep "api.test:$HP (transparent), then a stream" open.log)
	expect_eq "tcp rules suggested for malformed requests" "$out" ""
	name="transparent: neither TLS nor HTTP under an HTTP rule is refused, a tcp rule suggested"
	out=$($CLIENT transparent "$PX" "api.test:$SP" raw 'SSH-2.0-OpenSSH_9.6\r\n')
	expect_no_out "banner"
	out=$(grep "api.test:$SP (transparent), then a stream that is not TLS nor HTTP" tcp.log)
	expect_out "'tcp api.test:$SP'"
}

# refuses ARGS...: omnibox-proxy, given ARGS, does not start: exit 1, WHY on stderr, nothing ready.
refuses() {
	_why=$1
	shift
	out=$(env E2E_API_SECRET=$SECRET "$PROXY" "$@" 2>&1 </dev/null)
	rc=$?
	expect_rc 1
	expect_out "$_why"
	expect_no_out "ready"
}

t_standalone() {
	name="omnibox-proxy: the table names where secrets are read, never a secret"
	out=$(cat "$T/open.table" "$T/aws.table" "$T/tok.table")
	expect_out "source env \"E2E_API_SECRET\""
	expect_out "aws-secret file \"~/aws_secret\""
	expect_out "source unix_socket \"$T/tok.sock\""
	expect_no_out "$SECRET"
	expect_no_out "$GIT_SECRET"
	expect_no_out "$AWS_SECRET"
	expect_no_out "oa_cred_"
	name="omnibox-proxy: a table that carries a secret or a placeholder is refused"
	sed 's/^  source env "E2E_API_SECRET"$/  secret "hunter2-value"/' open.table >bad.table
	refuses "bad.table:" --table bad.table --listen 127.0.0.1:0 --ca-cert icpt.crt \
		--ca-key icpt.key --placeholders open/ph
	expect_out "unknown keyword 'secret'"
	awk -v ph="$(cat open/ph/API_TOKEN)" '{ print }
		/^  placeholder "API_TOKEN"$/ { print "  username \"" ph "\"" }' open.table >bad2.table
	refuses "has no place in the table" --table bad2.table --print-placeholders
	name="omnibox-proxy: a missing or malformed placeholder refuses to start, naming it"
	mkdir -p noph badph
	refuses "placeholder API_TOKEN: noph/API_TOKEN: missing" --table open.table \
		--listen 127.0.0.1:0 --ca-cert icpt.crt --ca-key icpt.key --placeholders noph
	refuses "no --placeholders DIR" --table open.table --listen 127.0.0.1:0 \
		--ca-cert icpt.crt --ca-key icpt.key
	printf '%s\n' "$(cat open/ph/API_TOKEN)" >badph/API_TOKEN
	refuses "placeholder API_TOKEN: badph/API_TOKEN does not hold exactly a placeholder" \
		--table open.table --listen 127.0.0.1:0 --ca-cert icpt.crt --ca-key icpt.key \
		--placeholders badph
	name="omnibox-proxy: a CA key that is not the certificate's, or a certificate that is no CA, is refused"
	refuses "srv.key is not the key of the certificate icpt.crt" --table open.table \
		--listen 127.0.0.1:0 --ca-cert icpt.crt --ca-key srv.key --placeholders open/ph
	refuses "srv.crt is not a CA certificate" --table open.table --listen 127.0.0.1:0 \
		--ca-cert srv.crt --ca-key srv.key --placeholders open/ph
	refuses "cannot read the CA key missing.key" --table open.table --listen 127.0.0.1:0 \
		--ca-cert icpt.crt --ca-key missing.key --placeholders open/ph
	name="omnibox-proxy: usage errors exit 2"
	out=$("$PROXY" --table open.table --listen 127.0.0.1:http --ca-cert icpt.crt \
		--ca-key icpt.key 2>&1)
	rc=$?
	expect_rc 2
	out=$("$PROXY" --table open.table 2>&1)
	rc=$?
	expect_rc 2
	expect_out "--listen ADDR:PORT is needed"
	name="omnibox-proxy: --print-placeholders makes fresh ones, one for the variables of one entry"
	out=$("$PROXY" --table open.table --print-placeholders)
	tests=$((tests + 1))
	case $out in
	API_TOKEN=oa_cred_????????????????????????????????) ;;
	*) fail "printed '$out'" ;;
	esac
	expect_no_out "$(cat open/ph/API_TOKEN)"
	name="omnibox-proxy: TLS through the fixed CA verifies with only its certificate as trust"
	out=$(curl -sS -i --max-time 20 --cacert icpt.crt -x "http://127.0.0.1:$PA" \
		"https://other.test:$SP/fixed-ca" 2>&1)
	expect_out "HTTP/1.1 200 OK"
	out=$(curl -sS -i --max-time 20 --cacert ca.crt -x "http://127.0.0.1:$PA" \
		"https://other.test:$SP/other-ca" 2>&1)
	expect_no_out "200 OK"
	out=$(openssl s_client -proxy "127.0.0.1:$PA" -connect "other.test:$SP" -servername other.test \
		-CAfile icpt.crt -verify_return_error </dev/null 2>&1)
	expect_out "Verify return code: 0 (ok)"
	name="omnibox-proxy: a host no rule names gets 403, and nothing upstream"
	before=$(upstream_requests)
	out=$(curl -sS -i --max-time 20 --cacert icpt.crt -x "http://127.0.0.1:$PA" \
		"https://denied.test:$SP/x" 2>&1)
	expect_out "403"
	out=$(curl -sS -i --max-time 20 -x "http://127.0.0.1:$PA" "http://denied.test:$HP/x" 2>&1)
	expect_out "HTTP/1.1 403 Forbidden"
	expect_out "X-Omnibox-Error: blocked-by-policy"
	expect_eq "upstream requests" "$(upstream_requests)" "$before"
}

# E2E_ONLY="t_sigv4 t_refresh" runs those alone (while working on them).
for t in ${E2E_ONLY:-t_allowed_get t_unmatched_request t_method_override t_connect_unknown_host \
	t_private_destinations t_host_and_sni t_smuggling t_keep_alive t_key_update t_streaming t_credentials \
	t_real_clients t_websocket t_scrub_edges t_bounds t_trickle t_sigv4 t_refresh t_tcp_rules \
	t_transparent t_standalone}; do
	$t
done

name="the proxy logged no secret"
out=$(grep -c -e "$SECRET" -e "$GIT_SECRET" open.log closed.log tcp.log session.log | tr '\n' ' ')
expect_eq "log lines with a secret" "$out" "open.log:0 closed.log:0 tcp.log:0 session.log:0 "

# Stop the proxies the way omnibox-run does (proxy_free), then look for
# sanitizer reports (leaks are reported at exit).
name="the proxies stop cleanly and no sanitizer complained"
for p in $pids; do
	case $(cat "/proc/$p/cmdline" 2>/dev/null | tr '\0' ' ') in
	"$PROXYD "* | "$PROXY "*) kill -TERM "$p" && wait "$p" ;;
	esac
done
out=$(grep -h -A12 -e 'Sanitizer' -e 'runtime error' open.log closed.log small.log aws.log tok.log tcp.log session.log upstream.err)
expect_eq "sanitizer reports" "$out" ""

echo "e2e: $tests checks, $failures failed, $skips skipped"
[ "$failures" -eq 0 ]
