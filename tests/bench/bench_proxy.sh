#!/bin/sh
# bench_proxy.sh BUILD_DIR - the egress proxy's figures (DESIGN.md section 8),
# all measured in one run on loopback, side by side with their baselines:
#
#   throughput  1 GiB plain HTTP: direct, through omnibox (relay + proxy),
#               through omnibox's transparent path (a client that ignores the
#               proxy: it resolves the name through omnibox-init's resolver
#               and connects to the address it got; the relay brings the
#               connection to the proxy as NAME:PORT), through the proxy
#               alone (its own socket, no relay), through tinyproxy; 1 GiB
#               HTTPS: direct TLS, through omnibox (intercepted: TLS
#               terminated and re-made), the transparent path (intercepted
#               too), through the proxy alone, through tinyproxy (a CONNECT
#               tunnel it cannot see into).  Best of 5, the ways taken in turn (direct, omnibox,
#               ..., direct, ...) so that load from elsewhere on the
#               machine falls on all of them alike.  With each, the proxy's
#               CPU time per GiB (user + system, mean of the 5): what the
#               proxy itself costs, less at the mercy of that load.  And the
#               floor that CPU is held to: two passes of AES-256-GCM over
#               each byte (`openssl speed`, 16 KiB records, in this run).
#   scrubbing   1 GiB HTTPS through the proxy alone, from a host a
#               credential is bound to (every response searched for the
#               secret and re-framed) and from one it is not, best of 5 in
#               turn, with the direct figure of the same rounds.  Plain HTTP
#               responses are never scrubbed: no credential goes over it.
#   flood       10,000 connections parked with 32 KiB of an unfinished head,
#               straight at the proxy's socket (as an agent could), against a
#               proxy capped at 64 MiB: its peak RSS, what it closed, and a
#               download during the flood.
#   latency     p50/p99 of 2000 small requests on one kept-alive TLS
#               connection, direct, through an intercepted tunnel and
#               through the transparent path; the difference is what the
#               proxy adds.
#   scale       10,000 idle intercepted tunnels: the proxy's RSS, the relay's,
#               and a new request still answered.  Twice: tunnels that are
#               up (CONNECT, TLS handshake) and tunnels that also carried one
#               request and so hold a kept-alive upstream TLS connection
#               (closed after UPSTREAM_IDLE_TIMEOUT, 15 s, of disuse).
#
# Helpers: BUILD_DIR/bench/bench_proxy_client (the client),
# BUILD_DIR/tests/proxy/{proxyd,upstream,flood}, BUILD_DIR/omnibox-init (the
# transparent path: run in a network and mount namespace of its own, with
# unshare(1), as in a sandbox; needs root, else its rows say why not).  tinyproxy (Debian package) is
# optional: without it its rows say "not installed".  Needs root or a high
# RLIMIT_NOFILE hard limit for the 10,000 tunnels.
set -u

B=$(cd "$1" && pwd)
CLIENT=$B/bench/bench_proxy_client
INIT=$B/omnibox-init
PROXYD=$B/tests/proxy/proxyd
UPSTREAM=$B/tests/proxy/upstream
FLOOD=$B/tests/proxy/flood
SIZE=${BENCH_BYTES:-1073741824}
TUNNELS=${BENCH_TUNNELS:-10000}
T=$(mktemp -d /tmp/omnibox-bench.XXXXXX)
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

# Descriptors: the client, relay, proxy and upstream each hold 10,000+.
ulimit -Hn 1048576 2>/dev/null
ulimit -n "$(ulimit -Hn)" 2>/dev/null

wait_ready() {
	for _ in $(seq 100); do
		if [ -s "$1" ] && head -n 1 "$1" | grep -q '^ready'; then
			head -n 1 "$1"
			return 0
		fi
		sleep 0.05
	done
	echo "bench: $1 never became ready" >&2
	exit 1
}

rss_kib() {
	awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"
}

cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# get NAME ARGS...: one download by the client with ARGS; the best MB/s so
# far goes to best_NAME, the proxy's CPU ticks are added to ticks_NAME.
get() {
	name=$1
	shift
	t0=$(cpu_ticks "$PROXY_PID")
	if [ "$name" = trans ]; then
		r=$(tp get "$@" | awk '{ print $6 }')
	else
		r=$("$CLIENT" get "$@" | awk '{ print $6 }')
	fi
	t1=$(cpu_ticks "$PROXY_PID")
	eval "b=\${best_$name:-0} t=\${ticks_$name:-0}"
	b=$(echo "${r:-0} $b" | awk '{ print ($1 > $2) ? $1 : $2 }')
	eval "best_$name=$b ticks_$name=$((t + t1 - t0))"
}

# cpu NAME: the proxy's mean CPU seconds per GiB over NAME's 5 downloads.
cpu() {
	eval "t=\$ticks_$1"
	echo "$t $(getconf CLK_TCK) $SIZE" | awk '{ printf "%.2f", $1 / $2 / 5 / ($3 / 1073741824) }'
}

# tp ARGS...: the client as an agent that ignores the proxy runs it in a
# sandbox: a network namespace with only lo, /etc/resolv.conf naming
# omnibox-init's resolver, which listens on the upstream's ports and relays
# to the proxy of this run ($T/px).  The client resolves bench.test there.
TPOK=
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1 && command -v ip >/dev/null 2>&1; then
	TPOK=1
fi
printf 'nameserver 127.0.0.53\n' >"$T/resolv.conf"
tp() {
	unshare --net --mount sh -c 'ip link set lo up && mount --bind "$1" /etc/resolv.conf &&
		shift && exec "$@"' sh "$T/resolv.conf" \
		"$INIT" --relay 39999 "$T/px/proxy.sock" --transparent "$HP,$SP" -- "$CLIENT" "$@"
}

# throughput MODE(plain|tls) PORT: 5 rounds of every way, taken in turn: three
# processes (client, proxy, upstream) share the machine's cores, and where
# the scheduler puts them moves a round by as much as a fifth; the best of 5 is what
# the path can do.
throughput() {
	tls=
	ca=
	[ "$1" = tls ] && tls=--tls ca=$CA
	for n in direct omni trans sock tiny; do
		eval "best_$n=0 ticks_$n=0"
	done
	for _ in 1 2 3 4 5; do
		get direct --connect 127.0.0.1 ${tls:+--tls ca.crt} bench.test "$2" "$path"
		get omni --proxy "127.0.0.1:$PP" ${tls:+--tls "$ca"} bench.test "$2" "$path"
		if [ -n "$TPOK" ]; then
			get trans ${tls:+--tls "$ca"} bench.test "$2" "$path"
		fi
		get sock --proxy "unix:$T/px/proxy.sock" ${tls:+--tls "$ca"} bench.test "$2" "$path"
		if [ -n "$TP" ]; then
			get tiny --proxy "127.0.0.1:$TP" ${tls:+--tls ca.crt} 127.0.0.1 "$2" "$path"
		fi
	done
}

ratio() {
	echo "$1 $2" | awk '{ if ($2 > 0) printf "%.2fx", $1 / $2; else print "-" }'
}

cd "$T"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj "/CN=omnibox bench CA" -keyout ca.key -out ca.crt 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=bench.test" \
	-keyout srv.key -out srv.csr 2>/dev/null
printf 'subjectAltName=DNS:bench.test,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >srv.ext
openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
	-extfile srv.ext -out srv.crt 2>/dev/null
printf '127.0.0.1 bench.test\n' >hosts
"$UPSTREAM" --cert srv.crt --key srv.key >upstream.out 2>&1 &
pids="$pids $!"
set -- $(wait_ready upstream.out)
HP=$2
SP=$3
# The upstream's ports are neither 443 nor 80: the rules name them.
cat >policy.yaml <<EOF
name: bench
os_env:
  sandbox:
    egress_allow_private_destinations: true
    egress_rules:
      - "GET bench.test:$HP/bytes/*"
      - "GET bench.test:$SP/bytes/*"
EOF
# start_proxy: a fresh proxyd (and relay), so each figure starts from an
# untouched heap; sets PROXY_PID, RELAY_PID, PP (the relay's port), CA.
PROXY_PID=
start_proxy() {
	if [ -n "$PROXY_PID" ]; then
		kill "$PROXY_PID"
		wait "$PROXY_PID" 2>/dev/null
	fi
	rm -rf "$T/px"
	mkdir "$T/px"
	"$PROXYD" policy.yaml --dir "$T/px" --system-ca ca.crt --hosts hosts >px.out 2>px.log &
	PROXY_PID=$!
	pids="$pids $PROXY_PID"
	set -- $(wait_ready px.out)
	PP=$2
	RELAY_PID=$(pgrep -P "$PROXY_PID" | head -n 1)
	CA=$T/px/ca.pem
}
start_proxy

TP=
if command -v tinyproxy >/dev/null 2>&1; then
	TP=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	cat >tinyproxy.conf <<EOF
Port $TP
Listen 127.0.0.1
Timeout 600
MaxClients 100
LogLevel Critical
Allow 127.0.0.1
DisableViaHeader Yes
EOF
	tinyproxy -d -c "$T/tinyproxy.conf" >tinyproxy.log 2>&1 &
	pids="$pids $!"
	sleep 0.5
fi

path=/bytes/$SIZE
echo "== throughput: $SIZE bytes, best of 5 (MB/s; ratio to direct in the same run;"
echo "   proxy CPU: the proxy's seconds per GiB, relay not included)"
# throughput_line LABEL NOTE TINY_NOTE
throughput_line() {
	printf '  %-12s direct %8.1f   omnibox %8.1f  %s%s   proxy alone %8.1f  %s' "$1" \
		"$best_direct" "$best_omni" "$(ratio "$best_omni" "$best_direct")" "$2" \
		"$best_sock" "$(ratio "$best_sock" "$best_direct")"
	if [ -n "$TP" ]; then
		printf '   tinyproxy %8.1f  %s%s\n' "$best_tiny" \
			"$(ratio "$best_tiny" "$best_direct")" "$3"
	else
		printf '   tinyproxy not installed\n'
	fi
	printf '  %-12s proxy CPU %.2f s/GiB via the relay, %.2f s/GiB alone\n' "" \
		"$(cpu omni)" "$(cpu sock)"
	if [ -n "$TPOK" ]; then
		printf '  %-12s transparent %8.1f  %s (no client settings; ratio to direct; %s of omnibox via HTTPS_PROXY)   proxy CPU %.2f s/GiB\n' \
			"" "$best_trans" "$(ratio "$best_trans" "$best_direct")" \
			"$(ratio "$best_trans" "$best_omni")" "$(cpu trans)"
	else
		printf '  %-12s transparent: not measured (needs root, unshare and ip for a network namespace)\n' ""
	fi
}
throughput plain "$HP"
throughput_line "plain HTTP" "" ""
throughput tls "$SP"
throughput_line HTTPS " (intercepted)" " (opaque tunnel)"
# The crypto floor, on this machine in this run: interception decrypts each
# byte once and encrypts it once, with TLS 1.3's TLS_AES_256_GCM_SHA384
# (what both ends choose by default), in records of 16 KiB.
gcm=$(openssl speed -elapsed -evp aes-256-gcm -bytes 16384 -seconds 2 2>/dev/null |
	awk '$1 == "AES-256-GCM" { sub(/k$/, "", $2); printf "%.0f", $2 * 1000 }')
if [ -n "$gcm" ] && [ "$gcm" -gt 0 ]; then
	echo "$gcm $(cpu sock) $(cpu omni)" | awk '{
		floor = 2 * 1073741824 / $1
		printf "  %-12s AES-256-GCM at 16 KiB: %.0f MB/s a pass; the floor, two passes: %.2f s/GiB\n", "", $1 / 1e6, floor
		printf "  %-12s proxy CPU / floor: %.2fx alone, %.2fx via the relay (target <= 1.25x)\n", "", $2 / floor, $3 / floor
	}'
else
	echo "  AES-GCM floor: not measured (openssl speed gave nothing)"
fi

# The same rules, and a credential bound to the upstream: its responses are scrubbed.
sed 's/^name: bench$/name: bench-scrub/' policy.yaml >scrub.yaml
printf '    credential_proxy:\n      - type: https_bearer\n        target: bench.test:%s\n        source: {env: BENCH_SECRET}\n' \
	"$SP" >>scrub.yaml
mkdir "$T/pxs"
BENCH_SECRET=bench-secret-0123456789abcdef "$PROXYD" scrub.yaml --dir "$T/pxs" --system-ca ca.crt \
	--hosts hosts >pxs.out 2>pxs.log &
pids="$pids $!"
wait_ready pxs.out >/dev/null
best_d=0 best_off=0 best_on=0
best() { echo "${1:-0} $2" | awk '{ print ($1 > $2) ? $1 : $2 }'; }
# Best of 5, as the throughputs: the ratio of two rounds is what is
# read here, and a machine's load moves it more than the rounds' own figures.
for _ in 1 2 3 4 5; do
	best_d=$(best "$("$CLIENT" get --connect 127.0.0.1 --tls ca.crt bench.test "$SP" "$path" |
		awk '{ print $6 }')" "$best_d")
	best_off=$(best "$("$CLIENT" get --proxy "unix:$T/px/proxy.sock" --tls "$CA" bench.test "$SP" \
		"$path" | awk '{ print $6 }')" "$best_off")
	best_on=$(best "$("$CLIENT" get --proxy "unix:$T/pxs/proxy.sock" --tls "$T/pxs/ca.pem" \
		bench.test "$SP" "$path" | awk '{ print $6 }')" "$best_on")
done
echo "== scrubbing: $SIZE bytes of HTTPS through the proxy alone, best of 5 (MB/s; ratio to direct)"
printf '  direct %8.1f   scrubbing off %8.1f  %s   scrubbing on %8.1f  %s   on/off %s\n' \
	"$best_d" "$best_off" "$(ratio "$best_off" "$best_d")" "$best_on" \
	"$(ratio "$best_on" "$best_d")" "$(ratio "$best_on" "$best_off")"
echo "  plain HTTP: never scrubbed (no credential goes over cleartext)"

echo "== flood: 10000 connections parked with 32 KiB unfinished heads, proxy capped at 64 MiB"
mkdir "$T/pxf"
"$PROXYD" policy.yaml --dir "$T/pxf" --system-ca ca.crt --hosts hosts --memory 67108864 \
	>pxf.out 2>pxf.log &
FPID=$!
pids="$pids $FPID"
set -- $(wait_ready pxf.out)
FP=$2
"$FLOOD" "$T/pxf/proxy.sock" 10000 32768 6 >flood.out &
fl=$!
for _ in $(seq 300); do
	grep -q parked flood.out && break
	sleep 0.1
done
during=$("$CLIENT" get --proxy "127.0.0.1:$FP" --tls "$T/pxf/ca.pem" bench.test "$SP" \
	/bytes/1048576 | awk '{ print $6 }')
wait "$fl"
hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$FPID/status")
printf '  proxy peak RSS %d MiB (cap 64 MiB); after the flood: %s; 1 MiB downloaded during it at %s MB/s\n' \
	"$((hwm / 1024))" "$(tail -n 1 flood.out)" "${during:-(failed)}"

echo "== latency: 2000 requests on one kept-alive TLS connection (microseconds)"
set -- $("$CLIENT" latency -n 2000 --connect 127.0.0.1 --tls ca.crt bench.test "$SP" /bytes/100)
d50=$2
d99=$4
set -- $("$CLIENT" latency -n 2000 --proxy "127.0.0.1:$PP" --tls "$CA" bench.test "$SP" /bytes/100)
p50=$2
p99=$4
printf '  direct p50 %7.1f p99 %7.1f   omnibox p50 %7.1f p99 %7.1f   added p50 %.1f p99 %.1f\n' \
	"$d50" "$d99" "$p50" "$p99" "$(echo "$p50 $d50" | awk '{ print $1 - $2 }')" \
	"$(echo "$p99 $d99" | awk '{ print $1 - $2 }')"
if [ -n "$TPOK" ]; then
	set -- $(tp latency -n 2000 --tls "$CA" bench.test "$SP" /bytes/100)
	printf '  transparent p50 %7.1f p99 %7.1f   added p50 %.1f p99 %.1f (no client settings)\n' \
		"$2" "$4" "$(echo "$2 $d50" | awk '{ print $1 - $2 }')" \
		"$(echo "$4 $d99" | awk '{ print $1 - $2 }')"
fi

# idle_run MODE N VIA: hold N idle tunnels through VIA (the relay's
# 127.0.0.1:PORT or the proxy's unix:PATH) on a fresh proxy, then one more
# request; prints one line.
idle_run() {
	start_proxy
	via=$3
	[ "$via" = relay ] && via=127.0.0.1:$PP
	[ "$via" = socket ] && via=unix:$T/px/proxy.sock
	before=$(rss_kib "$PROXY_PID")
	relay_before=$(rss_kib "$RELAY_PID")
	rm -f hold idle.out
	mkfifo hold
	flag=
	[ "$1" = no-request ] && flag=--no-request
	"$CLIENT" idle $flag -n "$2" --proxy "$via" --tls "$CA" bench.test "$SP" /bytes/100 \
		<hold >idle.out 2>&1 &
	cpid=$!
	exec 9>hold
	for _ in $(seq 2400); do
		grep -q 'new-request ok' idle.out && break
		kill -0 "$cpid" 2>/dev/null || break
		sleep 0.25
	done
	after=$(rss_kib "$PROXY_PID")
	relay_after=$(rss_kib "$RELAY_PID")
	printf '  %5d tunnels via %-6s %-11s proxy RSS %4d MiB (+%4d MiB, %2d KiB/tunnel)  relay RSS %2d MiB (+%d KiB)  %s\n' \
		"$2" "$3" "$1" "$((after / 1024))" "$(((after - before) / 1024))" \
		"$(((after - before) / $2))" "$((relay_after / 1024))" "$((relay_after - relay_before))" \
		"$(grep -E 'new-request ok|bench_proxy_client' idle.out | tail -n 1)"
	exec 9>&-
	wait "$cpid"
}

# Each pair through the relay is two descriptors, and a tunnel that made a
# request holds two in the proxy: fit those runs under the hard limit.
limit=$(ulimit -Hn)
[ "$limit" = unlimited ] && limit=1048576
pairs=$(((limit - 64) / 2))
[ "$pairs" -gt "$TUNNELS" ] && pairs=$TUNNELS
echo "== scale: idle intercepted tunnels (a fresh proxy each; descriptor hard limit $limit)"
echo "   no-request: CONNECT and TLS up; request: one request done, so the tunnel also"
echo "   holds a kept-alive upstream TLS connection (closed after 15 s unused)"
idle_run no-request "$TUNNELS" socket
idle_run no-request "$pairs" relay
idle_run request "$pairs" socket
