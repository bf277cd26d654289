#!/bin/sh
# egress.sh BUILD_DIR - egress rules and credentials through a real sandbox:
# omnibox-run's proxy outside, its relay inside, curl, git and Python's
# urllib inside, a real HTTP/HTTPS server on loopback.  As root and as nobody.
#
# The upstream is on loopback, a private address: the policies set
# egress_allow_private_destinations (except where the block itself is
# tested), name it upstream.test through --egress-hosts, and trust its test
# CA through --egress-ca.
set -u

B=$(cd "$1" && pwd)
T=$(mktemp -d /tmp/omnibox-egress.XXXXXX)
chmod 755 "$T"
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

. "$(dirname "$0")/../lib.sh"

# A bare git repository the upstream serves over smart HTTP.
mkdir -p "$T/git"
git init -q --bare "$T/git/repo.git"
git -C "$T/git/repo.git" config http.receivepack false
git -C "$T/git/repo.git" config http.uploadpack true
(cd "$T" && git init -q src && cd src && git config user.email t@t && git config user.name t &&
	echo "cloned-through-the-proxy" >README && git add README && git commit -q -m init &&
	git push -q "$T/git/repo.git" HEAD:refs/heads/main) || exit 2
git -C "$T/git/repo.git" symbolic-ref HEAD refs/heads/main
chmod -R a+rX "$T/git"

test_upstream "$T" "$B" --git-root "$T/git"
# A second server for the same names, on ports no rule names.
"$B/tests/proxy/upstream" --cert "$T/up.pem" --key "$T/up.key" --log "$T/upstream2.log" \
	>"$T/upstream2.out" 2>&1 &
pids="$pids $!"
for _ in $(seq 100); do
	grep -q '^ready' "$T/upstream2.out" 2>/dev/null && break
	sleep 0.05
done
HTTPS2=$(head -n 1 "$T/upstream2.out" | cut -d ' ' -f 3)
: >"$T/upstream2.log"

# An AWS-like server that checks SigV4 with the real keys (tests/proxy/sigv4_server.py).
AWS_REAL_KEY=AKIAEGRESSREALKEY001
AWS_REAL_SECRET=egressRealSecret/abcdefghij+0123456789
AWS_REAL_TOKEN=egress-real-session-token-5b4a3c2d1e0f
printf '{"upstream.test": {"key_id": "%s", "secret": "%s", "token": "%s", "region": "eu-west-1", "service": "s3"}}\n' \
	"$AWS_REAL_KEY" "$AWS_REAL_SECRET" "$AWS_REAL_TOKEN" >"$T/aws-keys.json"
python3 "$(dirname "$0")/../proxy/sigv4_server.py" --cert "$T/up.pem" --key "$T/up.key" \
	--keys "$T/aws-keys.json" --log "$T/aws-up.log" >"$T/aws-up.out" 2>&1 &
pids="$pids $!"
for _ in $(seq 100); do
	grep -q '^ready' "$T/aws-up.out" 2>/dev/null && break
	sleep 0.05
done
AWSP=$(head -n 1 "$T/aws-up.out" | cut -d ' ' -f 2)

# A TCP service that is not HTTP: a banner, then an echo (for tcp rules).
python3 "$(dirname "$0")/../proxy/e2e_client.py" echod "$T/echod.log" >"$T/echod.out" 2>&1 &
pids="$pids $!"
for _ in $(seq 100); do
	grep -q '^ready' "$T/echod.out" 2>/dev/null && break
	sleep 0.05
done
ECHOP=$(head -n 1 "$T/echod.out" | cut -d ' ' -f 2)
: >"$T/echod.log"

as_user() {
	if [ "$who" = root ]; then
		env -i PATH=/usr/bin:/bin HOME="$H" LANG=C.UTF-8 REAL_TOKEN=real-secret-9f8e \
			REAL_KEY=sk-ant-real-7c6d5e4f3a2b AWS_REAL_KEY=$AWS_REAL_KEY \
			AWS_REAL_TOKEN=$AWS_REAL_TOKEN "$@"
	else
		runuser -u nobody -- env -i PATH=/usr/bin:/bin HOME="$H" LANG=C.UTF-8 \
			REAL_TOKEN=real-secret-9f8e REAL_KEY=sk-ant-real-7c6d5e4f3a2b \
			AWS_REAL_KEY=$AWS_REAL_KEY AWS_REAL_TOKEN=$AWS_REAL_TOKEN "$@"
	fi
}

# sbx POLICY CMD...: the command in the sandbox; $out holds stdout+stderr,
# $log the proxy's decisions.
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
	cp "$B/tests/proxy/flood" "$(dirname "$0")/../proxy/e2e_client.py" "$WS/"
	cp "$(dirname "$0")/../proxy/sigv4_client.py" "$(dirname "$0")/../proxy/sigv4_server.py" "$WS/"
	printf '%s\n' "$AWS_REAL_SECRET" >"$H/aws_secret"
	cat >"$P/aws.yaml" <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    egress_allow_private_destinations: true
	    egress_rules: ["GET,PUT upstream.test:$AWSP/**"]
	    credential_proxy:
	      - type: aws_sigv4
	        target: upstream.test:$AWSP
	        region: eu-west-1
	        credential:
	          access_key_id: {env: AWS_REAL_KEY}
	          secret_access_key: {file: ~/aws_secret}
	          session_token: {env: AWS_REAL_TOKEN}
	EOF
	: >"$U/egress.log"
	cat >"$P/egress.yaml" <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    egress_allow_private_destinations: true
	    egress_rules:
	      - "GET,POST upstream.test:$HTTPS/echo/**"
	      - "GET upstream.test:$HTTPS/bytes/*"
	      - "GET,POST upstream.test:$HTTPS/git/**"
	      - "GET other.test:$HTTPS/echo/**"
	      - "GET upstream.test:$HTTP/echo/**"
	      - "GET upstream.test:$HTTPS/repos/*/*/issues"
	      - "GET upstream.test:$HTTPS/docs/**/README"
	      - "GET upstream.test:$HTTPS/dl/*.tar.gz"
	      - "GET upstream.test:$HTTPS/reflect"
	      - "GET upstream.test:$HTTPS/gzip"
	      - "GET upstream.test:$HTTPS/padecho/*"
	      - "GET upstream.test:$HTTPS/ws"
	      - "GET upstream.test:$HTTPS/fakews"
	      - "GET,POST other.test:$HTTPS/reflect"
	    credential_proxy:
	      - type: https_bearer
	        target: upstream.test:$HTTPS
	        source: {env: REAL_TOKEN}
	        env: SAAS_TOKEN
	      - type: https_bearer
	        target: other.test:$HTTPS
	        source: {env: REAL_KEY}
	        env: ANTHROPIC_API_KEY
	        header: x-api-key
	EOF
	cat >"$P/tcp.yaml" <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    egress_allow_private_destinations: true
	    egress_rules: ["tcp upstream.test:$ECHOP", "GET upstream.test:$HTTPS/echo/**"]
	EOF
	cat >"$P/flood.yaml" <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    egress_allow_private_destinations: true
	    egress_rules: ["GET upstream.test:$HTTPS/bytes/*"]
	    limits: {memory: 64MiB}
	EOF
	# The sanitizers' runtime cannot start under a 64 MiB RLIMIT_DATA (what
	# limits.memory sets in the sandbox): their builds flood a proxy at its
	# default cap instead, and the RSS bound is checked by the plain build.
	grep -v '^    limits:' "$P/flood.yaml" >"$P/flood-sanitize.yaml"
	cat >"$P/private.yaml" <<-EOF
	os_env:
	  sandbox:
	    egress_rules: ["GET upstream.test:$HTTPS/echo/**"]
	EOF
	chmod -R a+rX "$U"
	if [ "$who" = nobody ]; then
		chown -R nobody:nogroup "$U"
	fi
}

run_all() {
	setup_user
	url=https://upstream.test:$HTTPS

	name="an allowed HTTPS GET passes with the session CA; the rule is logged"
	sbx egress curl -sS "$url/bytes/12"
	expect_out "xxxxxxxxxxxx"
	out=$log
	expect_out "allow GET"
	expect_out "by rule #2 (line 7: GET upstream.test:$HTTPS/bytes/*)"

	name="a request no rule allows: 403 naming a rule that would allow it"
	sbx egress curl -sS -i "$url/secret/x"
	expect_out "403"
	expect_out "X-Omnibox-Error: blocked-by-policy"
	expect_out "GET upstream.test:$HTTPS/secret/x"

	name="at exit, omnibox-run sums up what the proxy refused and the rules that would allow it"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" -v --egress-hosts="$T/hosts" --egress-ca="$T/ca.pem" \
		--egress-log="$U/egress.log" "$P/egress.yaml" -- sh -c \
		"curl -sS -o /dev/null '$url/secret/x'; curl -sS -o /dev/null '$url/secret/x'; curl -sS -o /dev/null '$url/other'" 2>&1)
	: >"$U/egress.log"
	expect_out "the egress proxy refused 3 requests no rule of"
	expect_out "\"GET upstream.test:$HTTPS/secret/x\"   # GET https://upstream.test:$HTTPS/secret/x (and more like it)"
	expect_out "\"GET upstream.test:$HTTPS/other\""
	name="--verbose shows each refusal as it happens, though the log goes to a file"
	expect_out "deny GET https://upstream.test:$HTTPS/other: no rule matches"
	sbx egress sh -c "curl -sS -o /dev/null '$url/secret/x'"
	expect_no_out "the egress proxy refused"

	# The proxy starts while bwrap sets the sandbox up; omnibox-init holds
	# the agent until omnibox-run says the proxy listens.
	name="the agent waits for a proxy that is slow to start, and its first request goes through"
	mv "$TB/omnibox-proxy" "$TB/omnibox-proxy.real"
	printf '#!/bin/sh
sleep 1
exec "$0.real" "$@"
' >"$TB/omnibox-proxy"
	chmod 755 "$TB/omnibox-proxy"
	sbx egress sh -c "curl -sS -m 20 '$url/bytes/7'; echo; echo rc=\$?"
	expect_eq "exit status" "$rc" 0
	expect_out "xxxxxxx"
	name="a signal while the proxy starts ends the launch at once, nothing of the agent ran"
	printf '#!/bin/sh\nsleep 30\nexec "$0.real" "$@"\n' >"$TB/omnibox-proxy"
	rm -f "$WS/agent-ran"
	(cd "$WS" && as_user "$TB/omnibox-run" -q --egress-hosts="$T/hosts" --egress-ca="$T/ca.pem" \
		--egress-log="$U/egress.log" "$P/egress.yaml" -- sh -c "touch '$WS/agent-ran'" \
		>"$U/sig.out" 2>&1) &
	bg=$!
	# omnibox-run itself (not runuser, whose command line names it too),
	# once the proxy it started is in its sleep: a loaded machine may take
	# a while to get there.
	run_pid=
	for _ in $(seq 100); do
		if pgrep -f "$TB/omnibox-proxy --session" >/dev/null; then
			for p in $(pgrep -f "$TB/omnibox-run -q"); do
				[ "$(cat "/proc/$p/comm" 2>/dev/null)" = omnibox-run ] && run_pid=$p && break
			done
		fi
		[ -n "$run_pid" ] && break
		sleep 0.1
	done
	t0=$(date +%s)
	[ -n "$run_pid" ] && kill -TERM "$run_pid"
	wait "$bg"
	for _ in $(seq 100); do
		kill -0 "$run_pid" 2>/dev/null || break
		sleep 0.1
	done
	t1=$(date +%s)
	: >"$U/egress.log"
	out=$(cat "$U/sig.out")
	tests=$((tests + 1))
	[ -n "$run_pid" ] || fail "omnibox-run was not found running"
	tests=$((tests + 1))
	[ $((t1 - t0)) -le 5 ] || fail "omnibox-run took $((t1 - t0)) s to end after SIGTERM"
	expect_out "signal 15 while the egress proxy started: the launch ends; nothing ran"
	# Its cleanup process too: the next launch sets up the same workspace.
	tests=$((tests + 1))
	gone "$TB/omnibox-run -q" || fail "a process of the launch outlived it"
	expect_eq "the agent's file" "$(ls "$WS/agent-ran" 2>&1 >/dev/null | grep -c 'No such file')" 1
	expect_eq "the proxy left behind" "$(pgrep -f "$TB/omnibox-proxy" | wc -l)" 0
	name="a proxy that fails while bwrap sets the sandbox up: exit 125, nothing of the agent ran"
	printf '#!/bin/sh
sleep 0.5
exit 3
' >"$TB/omnibox-proxy"
	rm -f "$WS/agent-ran"
	sbx egress sh -c "touch '$WS/agent-ran'"
	expect_eq "exit status" "$rc" 125
	expect_out "the egress proxy cannot start: omnibox-proxy exited without an answer; nothing ran"
	expect_eq "the agent's file" "$(ls "$WS/agent-ran" 2>&1 >/dev/null | grep -c 'No such file')" 1
	# bwrap's child takes no death signal from bwrap until it has set the
	# sandbox up: a launch that ended by killing bwrap alone, once it had
	# cloned that child, left it setting the sandbox up unwatched (its
	# omnibox-init speaking after omnibox-run had ended), or waiting
	# forever, holding the caller's output.  A proxy that refuses its CA at
	# once ends the launch there.
	name="a proxy that fails at once, 40 launches: each ends, and nothing of the sandbox outlives it"
	mv "$TB/omnibox-proxy.real" "$TB/omnibox-proxy"
	printf 'not a certificate\n' >"$U/garbage.pem"
	chmod 644 "$U/garbage.pem"
	hung=0 after=0
	for _ in $(seq 40); do
		out=$(cd "$WS" && as_user timeout -s KILL 20 sh -c "'$TB/omnibox-run' -q \
			--egress-ca='$U/garbage.pem' '$P/egress.yaml' -- true 2>&1 | cat")
		[ $? = 137 ] && hung=$((hung + 1))
		printf '%s\n' "$out" | grep -v '^omnibox-run: ' | grep -q . && after=$((after + 1))
	done
	expect_eq "launches whose output never ended" "$hung" 0
	expect_eq "launches with a word of the sandbox's after omnibox-run's last" "$after" 0
	expect_out "holds no PEM certificate; nothing ran"
	mv "$TB/omnibox-proxy" "$TB/omnibox-proxy.real"
	name="a proxy that is missing: exit 125, nothing of the agent ran"
	rm -f "$TB/omnibox-proxy" "$WS/agent-ran"
	sbx egress sh -c "touch '$WS/agent-ran'"
	expect_eq "exit status" "$rc" 125
	expect_out "omnibox-proxy is missing next to omnibox-run"
	expect_eq "the agent's file" "$(ls "$WS/agent-ran" 2>&1 >/dev/null | grep -c 'No such file')" 1
	mv "$TB/omnibox-proxy.real" "$TB/omnibox-proxy"

	# The proxy starts while the launch is resolved, before it has its
	# configuration: a launch whose resolution fails then stops it, and
	# ends at once.
	name="a resolution that fails after the proxy started, 20 launches: each ends at the scan, nothing ran"
	sed 's/^    write_paths: \[\.\]$/    write_paths: [.]\n    cwd_hidden_scan_recursive: true\n    cwd_hidden_scan_max_entries: 2\n    cwd_hidden_scan_overflow: error/' \
		"$P/egress.yaml" >"$P/egress-overflow.yaml"
	chmod 644 "$P/egress-overflow.yaml"
	mkdir -p "$WS/overflow/a/b"
	touch "$WS/overflow/x" "$WS/overflow/y" "$WS/overflow/a/z"
	chmod -R a+rX "$WS/overflow"
	rm -f "$WS/agent-ran"
	hung=0 other=0
	for _ in $(seq 20); do
		out=$(cd "$WS" && as_user timeout -s KILL 20 sh -c "'$TB/omnibox-run' -q \
			'$P/egress-overflow.yaml' -- touch '$WS/agent-ran' 2>&1 | cat")
		rc=$?
		[ $rc = 137 ] && hung=$((hung + 1))
		printf '%s\n' "$out" | grep -q cwd_hidden_scan_max_entries || other=$((other + 1))
	done
	expect_eq "launches that never ended" "$hung" 0
	expect_eq "launches that did not stop at the scan" "$other" 0
	expect_eq "the agent's file" "$(ls "$WS/agent-ran" 2>&1 >/dev/null | grep -c 'No such file')" 1
	rm -rf "$WS/overflow"

	name="the relay's hand-off socket has no path the agent could send its own connections to"
	sbx egress sh -c "curl -sS '$url/bytes/5'; echo; ls \"\$TMPDIR\"; ls \"\$TMPDIR/omnibox-proxy.sock.fd\" 2>&1"
	expect_out "xxxxx"
	expect_out "omnibox-proxy.sock"
	expect_out "omnibox-proxy.sock.fd': No such file or directory"

	name="a direct connection that bypasses the proxy fails"
	sbx egress sh -c "curl -sS -m 5 --noproxy '*' https://127.0.0.1:$HTTPS/echo/x 2>&1 || echo direct-failed"
	expect_out "direct-failed"
	expect_no_out "GET /echo/x"

	name="plain HTTP through the proxy, POST with a body, chunked upload"
	sbx egress sh -c "curl -sS http://upstream.test:$HTTP/echo/plain; curl -sS -d hello-body $url/echo/post;
		head -c 300000 /dev/zero | curl -sS -H 'Transfer-Encoding: chunked' --data-binary @- $url/echo/chunked"
	expect_out "GET /echo/plain"
	expect_out "POST /echo/post"
	expect_out "body-bytes: 10"
	expect_out "body-bytes: 300000"

	name="credential: the sandbox holds a placeholder, the upstream gets the secret, its echo never does"
	: >"$T/upstream.log"
	sbx egress sh -c "echo \"token=\$SAAS_TOKEN\"; env; cat /proc/self/environ | tr '\\0' '\\n';
		curl -sS -H \"Authorization: Bearer \$SAAS_TOKEN\" $url/echo/auth; echo; curl -sS $url/echo/noauth"
	expect_out "token=oa_cred_"
	expect_out "Authorization: Bearer oa_cred_"
	expect_no_out "real-secret-9f8e"
	tests=$((tests + 1))
	[ "$(grep -c 'Authorization: Bearer real-secret-9f8e' "$T/upstream.log")" = 2 ] ||
		fail "the upstream did not get the secret twice: $(cat "$T/upstream.log")"
	out=$log
	expect_no_out "real-secret-9f8e"

	name="an echoing upstream never hands the secret back: Basic with a chosen user, headers, a long chunked body"
	: >"$T/upstream.log"
	sbx egress sh -c "for u in a ab abc agent; do curl -sS -u \"\$u:\$SAAS_TOKEN\" $url/echo/b |
			sed -n 's/^Authorization: Basic //p' | base64 -d; echo; done
		curl -sS -D - -o /dev/null -H \"Authorization: Bearer \$SAAS_TOKEN\" $url/reflect
		for n in 0 999 1000 4093 65530; do curl -sS $url/padecho/\$n | tr -d x; done"
	expect_no_out "real-secret-9f8e"
	expect_no_out "9f8e"
	expect_out "X-Echo-Authorization: Bearer oa_cred_"
	expect_out "Authorization: Bearer oa_cred_"
	tests=$((tests + 1))
	[ "$(grep -c '  Authorization: ' "$T/upstream.log")" = 10 ] &&
		[ "$(grep -c 'Authorization: Bearer real-secret-9f8e' "$T/upstream.log")" = 6 ] ||
		fail "the upstream did not get the secret every time: $(cat "$T/upstream.log")"

	name="a credential's host is asked for no compression, and a compressed answer is refused"
	sbx egress sh -c "curl -sS $url/echo/enc -H 'Accept-Encoding: gzip'; curl -sS -i $url/gzip"
	expect_out "Accept-Encoding: identity"
	expect_no_out "Accept-Encoding: gzip"
	expect_out "502"
	expect_out "cannot be checked for the secret"

	name="an x-api-key credential: swapped in its header on its host, refused elsewhere and in Authorization"
	: >"$T/upstream.log"
	sbx egress sh -c "echo key=\$ANTHROPIC_API_KEY
		curl -sS -D - -o /dev/null -H \"x-api-key: \$ANTHROPIC_API_KEY\" https://other.test:$HTTPS/reflect
		curl -sS -o /dev/null -w '%{http_code}\\n' -H \"x-api-key: \$ANTHROPIC_API_KEY\" $url/echo/k
		curl -sS -o /dev/null -w '%{http_code}\\n' -H \"Authorization: Bearer \$ANTHROPIC_API_KEY\" https://other.test:$HTTPS/reflect
		curl -sS -o /dev/null -w '%{http_code}\\n' -H \"x-api-key: \$SAAS_TOKEN\" https://other.test:$HTTPS/reflect"
	expect_out "key=oa_cred_"
	expect_out "X-Echo-Api-Key: oa_cred_"
	expect_no_out "sk-ant-real"
	tests=$((tests + 1))
	[ "$(printf '%s\n' "$out" | grep -c '^403$')" = 3 ] || fail "expected three 403s"
	tests=$((tests + 1))
	[ "$(grep -ci 'X-Api-Key: sk-ant-real-7c6d5e4f3a2b' "$T/upstream.log")" = 1 ] &&
		[ "$(grep -c '^request ' "$T/upstream.log")" = 1 ] ||
		fail "the upstream should have had one request, with the key: $(cat "$T/upstream.log")"

	name="credential: a placeholder sent to another host is refused, nothing forwarded"
	before=$(grep -c '^request ' "$T/upstream.log")
	sbx egress sh -c "curl -sS -i -H \"Authorization: Bearer \$SAAS_TOKEN\" https://other.test:$HTTPS/echo/leak"
	expect_out "403"
	expect_no_out "real-secret-9f8e"
	tests=$((tests + 1))
	[ "$(grep -c '^request ' "$T/upstream.log")" = "$before" ] || fail "the upstream saw the leak attempt"

	name="a query never completes a path glob (each trick denied, the path with a query allowed)"
	before=$(grep -c '^request ' "$T/upstream.log")
	sbx egress sh -c "for p in 'repos/o/r?/issues' 'docs/private/admin/keys?x=/README' \
		'dl/secret.txt?.tar.gz'; do curl -sS -o /dev/null -w '%{http_code} ' \
		-H \"Authorization: Bearer \$SAAS_TOKEN\" \"$url/\$p\"; done; echo"
	expect_out "403 403 403"
	tests=$((tests + 1))
	[ "$(grep -c '^request ' "$T/upstream.log")" = "$before" ] || fail "a query trick reached the upstream"
	sbx egress sh -c "curl -sS '$url/repos/o/r/issues?page=2'; curl -sS '$url/docs/a/b/README?x=/y';
		curl -sS '$url/bytes/3?page=2'"
	expect_out "GET /repos/o/r/issues?page=2"
	expect_out "GET /docs/a/b/README?x=/y"
	expect_out "xxx"

	name="a second TLS port of an allowed host: refused before any TLS, never given the credential"
	sbx egress sh -c "curl -sS -i -H \"Authorization: Bearer \$SAAS_TOKEN\" https://upstream.test:$HTTPS2/echo/x 2>&1;
		curl -sS -i https://upstream.test:$HTTPS2/echo/y 2>&1"
	expect_out "403"
	expect_no_out "real-secret-9f8e"
	tests=$((tests + 1))
	[ ! -s "$T/upstream2.log" ] || fail "the second port saw a request: $(cat "$T/upstream2.log")"

	name="10,000 parked partial heads from inside: the proxy stays under its cap, a request is served"
	# The agent goes around the relay, straight to the proxy's socket.
	flood_policy=flood
	case $B in */sanitize) flood_policy=flood-sanitize ;; esac
	# At its connection cap the proxy makes room only by closing a connection
	# parked for a second or more: while it is still reading the flood's
	# heads (slowly, under the sanitizers) a newcomer is refused, so the
	# request is tried again, a few seconds apart, while the flood holds.
	sbx $flood_policy sh -c "./flood \$TMPDIR/omnibox-proxy.sock 10000 32768 8 >\$TMPDIR/flood.out &
		for i in \$(seq 300); do grep -q parked \$TMPDIR/flood.out && break; sleep 0.1; done
		for t in 1 2 3; do curl -sS -m 20 $url/bytes/7 && break; sleep 1.5; done; echo; wait
		cat \$TMPDIR/flood.out"
	expect_out "xxxxxxx"
	expect_out "parked 10000"
	out=$log
	expect_out "KiB of memory" # the caps are logged
	case $B in */sanitize) ;; *) expect_out "65536 KiB of memory" ;; esac
	expect_out "the longest-parked connections are closed"
	rss=$(printf '%s\n' "$log" | sed -n 's/.*peak RSS \([0-9]*\) KiB.*/\1/p')
	tests=$((tests + 1))
	case $B in
	*/sanitize)
		echo "SKIP [$who] the RSS bound under the sanitizers (their runtime needs more than the 64 MiB cap): ${rss} KiB"
		skips=$((skips + 1)) ;;
	*)
		[ -n "$rss" ] && [ "$rss" -lt 65536 ] ||
			fail "the proxy's peak RSS was ${rss:-unknown} KiB, over its 65536 KiB cap" ;;
	esac

	name="a method override of an allowed POST to a denied method is refused, never forwarded"
	: >"$T/upstream.log"
	sbx egress sh -c "for h in X-HTTP-Method-Override X-HTTP-Method X-Method-Override; do
		curl -sS -o /dev/null -w '%{http_code} ' -X POST -H \"\$h: DELETE\" -d x $url/echo/del; done; echo"
	expect_out "403 403 403"
	tests=$((tests + 1))
	[ ! -s "$T/upstream.log" ] || fail "an overridden request reached the upstream: $(cat "$T/upstream.log")"

	if command -v python3 >/dev/null; then
		name="WebSocket: frames both ways after a verified 101; a fake 101 and the request after it go nowhere"
		: >"$T/upstream.log"
		sbx egress sh -c "p=\${HTTPS_PROXY##*:}
			python3 e2e_client.py ws \$p upstream.test:$HTTPS \$SSL_CERT_FILE /ws 'GET /after HTTP/1.1\\r\\nHost: upstream.test\\r\\n\\r\\n'
			python3 e2e_client.py ws \$p upstream.test:$HTTPS \$SSL_CERT_FILE /fakews 'GET /smuggled HTTP/1.1\\r\\nHost: upstream.test\\r\\n\\r\\n'"
		expect_out "ws-echo: hello-ws"
		expect_out "ws-after: closed"
		expect_out "does not carry the Sec-WebSocket-Accept"
		tests=$((tests + 1))
		! grep -q "smuggled\|hello-ws\|/after" "$T/upstream.log" ||
			fail "bytes after a 101 reached the upstream raw: $(cat "$T/upstream.log")"
		out=$log
		expect_out "the agent sent what is not RFC 6455 framing"
	else
		echo "SKIP [$who] WebSocket: python3 is not installed"
		skips=$((skips + 1))
	fi

	name="a tcp rule: a socket client in the sandbox gets a raw stream to a service that is not HTTP"
	: >"$T/echod.log"
	sbx tcp sh -c "python3 e2e_client.py raw \${HTTPS_PROXY##*:} upstream.test:$ECHOP 'hello over tcp\\n'"
	expect_out "stream: banner echod"
	expect_out "hello over tcp"
	out=$log
	expect_out "as a plain tunnel, not inspected, by rule #1"
	name="without the tcp rule the stream is refused, the service never reached, and the summary names the rule"
	: >"$T/echod.log"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --egress-hosts="$T/hosts" --egress-ca="$T/ca.pem" \
		"$P/egress.yaml" -- sh -c "python3 e2e_client.py raw \${HTTPS_PROXY##*:} upstream.test:$ECHOP 'hello\\n'" 2>&1)
	expect_out "connect-refused"
	expect_out "tcp upstream.test:$ECHOP"
	expect_no_out "stream: banner"
	tests=$((tests + 1))
	[ ! -s "$T/echod.log" ] || fail "the service was reached without a tcp rule"

	name="private destinations are refused unless the policy allows them"
	sbx private curl -sS -i "$url/echo/x"
	expect_out "403"
	expect_out "blocked-destination"

	name="git clone over HTTPS through the proxy"
	sbx egress sh -c "cd \$TMPDIR && git clone -q $url/git/repo.git clone && cat clone/README"
	expect_out "cloned-through-the-proxy"

	# Clients that read the system's CA bundle and no variable (wget and
	# git's libcurl built with GnuTLS, anything with a compiled-in path)
	# find the session's there: nothing names it to them.
	noca="env -u SSL_CERT_FILE -u SSL_CERT_DIR -u CURL_CA_BUNDLE -u GIT_SSL_CAINFO -u REQUESTS_CA_BUNDLE"
	name="the system CA bundle inside is the session's: git (GnuTLS) clones with no CA setting"
	sbx egress sh -c "cd \$TMPDIR && $noca git clone -q $url/git/repo.git c2 && cat c2/README"
	expect_out "cloned-through-the-proxy"
	name="the system CA bundle inside is the session's: curl with no CA setting"
	sbx egress sh -c "$noca curl -sS $url/echo/curl-system-bundle"
	expect_out "GET /echo/curl-system-bundle"
	# OpenSSL's clients that read SSL_CERT_DIR alone look the session CA up
	# by its subject's hash, among the files in the scratch dir.
	name="a client that trusts SSL_CERT_DIR alone (OpenSSL's hashed files) trusts the session CA"
	sbx egress sh -c "echo | openssl s_client -no-CAfile -no-CAstore -CApath \"\${SSL_CERT_DIR%%:*}\" \
		-proxy 127.0.0.1:\${HTTPS_PROXY##*:} -connect upstream.test:$HTTPS \
		-servername upstream.test 2>&1 | grep 'Verify return code'"
	expect_out "Verify return code: 0 (ok)"
	name="without it the same client trusts nothing there: the check above can fail"
	sbx egress sh -c "echo | openssl s_client -no-CAfile -no-CAstore -CApath /usr/share \
		-proxy 127.0.0.1:\${HTTPS_PROXY##*:} -connect upstream.test:$HTTPS \
		-servername upstream.test 2>&1 | grep 'Verify return code'"
	expect_out "Verify return code: "
	expect_no_out "Verify return code: 0 (ok)"
	name="the system CA bundle inside is the session's, read-only; the host's is unchanged"
	sum=$(cksum </etc/ssl/certs/ca-certificates.crt 2>/dev/null)
	sbx egress sh -c "echo x >>/etc/ssl/certs/ca-certificates.crt || echo bundle-ro
		cmp -s /etc/ssl/certs/ca-certificates.crt \$SSL_CERT_FILE && echo bundle-is-session"
	expect_out "bundle-ro"
	expect_out "bundle-is-session"
	expect_eq "the host's bundle" "$(cksum </etc/ssl/certs/ca-certificates.crt 2>/dev/null)" "$sum"
	if command -v wget >/dev/null; then
		name="the system CA bundle inside is the session's: wget (GnuTLS) trusts the session CA"
		sbx egress sh -c "wget -q -O - $url/echo/wget; echo wget-rc=\$?"
		expect_out "GET /echo/wget"
		expect_out "wget-rc=0"
	else
		echo "SKIP [$who] wget and the session CA: wget is not installed"
		skips=$((skips + 1))
	fi

	if command -v python3 >/dev/null; then
		name="aws_sigv4: placeholders in the sandbox; its GET and PUT signed again and verified with the real keys"
		: >"$T/aws-up.log"
		sbx aws sh -c "env | grep '^AWS_' | sort; p=\${HTTPS_PROXY##*:}
			c='python3 sigv4_client.py --ca '\$SSL_CERT_FILE' --proxy '\$p' upstream.test:$AWSP'
			\$c GET /bkt/in-the-sandbox; \$c PUT /bkt/obj --data sandboxed-body; \$c GET /bkt/obj
			\$c GET /echo-keys
			grep -rl -e $AWS_REAL_KEY -e $AWS_REAL_SECRET -e $AWS_REAL_TOKEN . /proc/self/environ ~ 2>/dev/null ||
				echo no-real-key-inside"
		expect_out "AWS_ACCESS_KEY_ID=oa_cred_"
		expect_out "AWS_SECRET_ACCESS_KEY=oa_cred_"
		expect_out "AWS_SESSION_TOKEN=oa_cred_"
		expect_out "AWS_REGION=eu-west-1"
		expect_out "sigv4-verified GET /bkt/in-the-sandbox"
		expect_out "X-Stored-Bytes: 14"
		expect_out "sandboxed-body"
		expect_out "no-real-key-inside"
		expect_no_out "$AWS_REAL_KEY"
		expect_no_out "$AWS_REAL_SECRET"
		expect_no_out "$AWS_REAL_TOKEN"
		tests=$((tests + 1))
		[ "$(grep -c '^sigv4 ok' "$T/aws-up.log")" = 4 ] ||
			fail "the server did not verify the four requests: $(cat "$T/aws-up.log")"
		name="aws_sigv4: a presigned URL from the sandbox is refused, nothing sent"
		: >"$T/aws-up.log"
		sbx aws curl -sS -i "https://upstream.test:$AWSP/bkt/k?X-Amz-Credential=AKIAOTHER%2F20240101&X-Amz-Signature=00"
		expect_out "403"
		expect_out "X-Omnibox-Error: sigv4-refused"
		expect_eq "server requests" "$(grep -c '^request' "$T/aws-up.log")" 0
		out=$log
		expect_no_out "$AWS_REAL_SECRET"

		name="Python's urllib through the proxy"
		sbx egress python3 -c "import urllib.request; print(urllib.request.urlopen('$url/echo/python').read().decode())"
		expect_out "GET /echo/python"
	else
		echo "SKIP [$who] Python's urllib: python3 is not installed"
		skips=$((skips + 1))
	fi
}

for who in root nobody; do
	run_all
done
echo "egress: $tests checks, $failures failed, $skips skipped"
[ "$failures" = 0 ]
