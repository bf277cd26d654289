#!/bin/sh
# launch.sh BUILD_DIR - omnibox-run's macOS launch path, on Linux.
#
# build/test-omnibox-run-darwin is omnibox-run compiled with the macOS
# launch (runtime/omnibox-run.c's run_darwin(), runtime/launch/darwin.c): the
# profile, sandbox-exec's argv, the environment, the limits, the egress
# proxy outside and omnibox-init's relay inside.  What Seatbelt would
# enforce cannot run here (the profiles' meaning is proven by test_sbpl's
# evaluator); everything around it does.  In place of /usr/bin/sandbox-exec
# a stand-in checks its arguments as sandbox-exec reads them, keeps a copy
# of the profile and the -D parameters, and runs the command after "--".
# As root and as nobody.
set -u

B=$(cd "$1" && pwd)
# Not under /tmp: the macOS launch spells /tmp, /var and /etc as /private/...,
# which does not exist here.
T=$(mktemp -d /dev/shm/omnibox-darwin.XXXXXX)
chmod 755 "$T"
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

. "$(dirname "$0")/../lib.sh"

# The stand-in for sandbox-exec.  Its record goes to $STANDIN_LOG (an
# absolute path passed through env_passthrough).
cat >"$T/sandbox-exec" <<'EOF'
#!/bin/sh
[ "$1" = -f ] || { echo 'stand-in: no -f' >&2; exit 99; }
[ -f "$2" ] || { echo 'stand-in: no profile' >&2; exit 99; }
[ "$(stat -c %a "$2")" = 600 ] || { echo 'stand-in: profile mode' >&2; exit 99; }
[ "$(stat -c %a "$(dirname "$2")")" = 700 ] || { echo 'stand-in: dir mode' >&2; exit 99; }
head -c 11 "$2" | grep -q '^; Seatbelt' || { echo 'stand-in: not a profile' >&2; exit 99; }
cp "$2" "$STANDIN_LOG.profile"
shift 2
: >"$STANDIN_LOG.params"
while [ "$1" = -D ]; do
	echo "$2" >>"$STANDIN_LOG.params"
	shift 2
done
[ "$1" = -- ] || { echo 'stand-in: no --' >&2; exit 99; }
shift
echo "$*" >"$STANDIN_LOG.argv"
exec "$@"
EOF
chmod 755 "$T/sandbox-exec"

test_upstream "$T" "$B"

as_user() {
	if [ "$who" = root ]; then
		env -i PATH=/usr/bin:/bin HOME="$H" LANG=C.UTF-8 TMPDIR="$U/tmp" \
			STANDIN_LOG="$U/standin" HOST_ONLY=leak-me REAL_TOKEN=real-secret-7c1d \
			OMNIBOX_TEST_SANDBOX_EXEC="$T/sandbox-exec" "$@"
	else
		runuser -u nobody -- env -i PATH=/usr/bin:/bin HOME="$H" LANG=C.UTF-8 \
			TMPDIR="$U/tmp" STANDIN_LOG="$U/standin" HOST_ONLY=leak-me \
			REAL_TOKEN=real-secret-7c1d OMNIBOX_TEST_SANDBOX_EXEC="$T/sandbox-exec" "$@"
	fi
}

# run POLICY CMD...: see egress_run in lib.sh.
run() {
	egress_run "$TB/test-omnibox-run-darwin" "$@"
}

# Nothing of a launch may outlive it: no scratch or profile dir, no proxy.
expect_clean() {
	tests=$((tests + 1))
	left=$(ls -A "$U/tmp")
	[ -z "$left" ] || fail "left behind in TMPDIR: $left"
	# The cleanup process and the proxy exit once omnibox-run is done: a moment.
	tests=$((tests + 1))
	gone "$TB/test-omnibox-run-darwin" || fail "a process of the launch is still running"
}

setup_user() {
	U=$T/$who
	H=$U/home
	WS=$U/ws
	P=$U/policies
	TB=$U/bin
	mkdir -p "$H" "$WS" "$P" "$TB" "$U/tmp"
	cp "$B/test-omnibox-run-darwin" "$B/omnibox-init" "$B/omnibox-proxy" "$TB/"
	: >"$U/egress.log"
	cat >"$P/plain.yaml" <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    env_passthrough: [STANDIN_LOG]
	EOF
	cat >"$P/limits.yaml" <<-EOF
	os_env:
	  sandbox:
	    env_passthrough: [STANDIN_LOG]
	    limits:
	      memory: 256MiB
	      open_files: 40
	      cpu_time: 1s
	EOF
	cat >"$P/egress.yaml" <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    env_passthrough: [STANDIN_LOG]
	    egress_allow_private_destinations: true
	    egress_rules:
	      - "GET,POST upstream.test:$HTTPS/echo/**"
	      - "GET upstream.test:$HTTPS/bytes/*"
	      - "GET upstream.test:$HTTP/echo/**"
	    credential_proxy:
	      - type: https_bearer
	        target: upstream.test:$HTTPS
	        source: {env: REAL_TOKEN}
	        env: SAAS_TOKEN
	EOF
	cat >"$P/envt.yaml" <<-EOF
	os_env:
	  sandbox:
	    env_passthrough: [STANDIN_LOG]
	terminals:
	  envt:
	    command: env
	    env: {TERMVAR: from-terminal, LANG: C}
	    env_unset: [USER]
	EOF
	chmod -R a+rX "$U"
	if [ "$who" = nobody ]; then
		chown -R nobody:nogroup "$U"
	fi
}

run_all() {
	setup_user

	name="a repository the command made in the workspace is set aside after the run; one there before stays"
	mkdir -p "$WS/before"
	git init -q "$WS/before"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$WS/before"
	run plain sh -c 'git init -q made && git -C made config core.fsmonitor "touch made-ran" && echo made'
	expect_out "made"
	expect_out "$WS/made/.git was made inside the sandbox; git on this machine would obey its configuration and hooks, so it is now .git-omnibox-quarantine-"
	expect_no_out "before/.git"
	tests=$((tests + 1))
	set -- "$WS"/made/.git-omnibox-quarantine-*
	[ -d "$1" ] && [ ! -e "$WS/made/.git" ] && [ -d "$WS/before/.git" ] ||
		fail "the repositories are not as they should be: $(ls -A "$WS/made" "$WS/before")"
	name="the profile denies writes to a nested repository's git entries and its hooksPath"
	(cd "$WS/before" && as_user git config core.hooksPath .githooks)
	run plain true
	out=$(cat "$U/standin.profile")
	expect_out '"/before/.git/config"'
	expect_out '"/before/.git/hooks"'
	expect_out '"/before/.git/commondir"'
	expect_out '"/before/.githooks"'
	rm -rf "$WS/made" "$WS/before"
	expect_clean

	name="sandbox-exec gets -f PROFILE, the parameters and the command; the status comes back"
	run plain sh -c 'echo ran; exit 7'
	expect_rc 7
	expect_out "ran"
	out=$(cat "$U/standin.params")
	expect_out "CWD=$WS"
	expect_out "HOME=$H"
	out=$(cat "$U/standin.argv")
	expect_out "sh -c"
	expect_clean

	name="the environment is the allow-list: a host-only variable does not pass"
	run plain sh -c 'echo "home=$HOME host=${HOST_ONLY:-absent} tmp=$TMPDIR"'
	expect_out "home=$H host=absent tmp=$U/tmp/omnibox-"
	expect_clean

	name="the command's environment is exactly --emit=env's for the same host environment"
	as_user env USER=agent LOGNAME=agent LC_ALL=C.UTF-8 BASH_ENV=/dev/null env >"$U/host.env"
	"$B/omnibox-compile" -q --target=darwin --emit=env --terminal=envt "$P/envt.yaml" \
		>"$U/emit.env"
	out=$(cd "$WS" && as_user env USER=agent LOGNAME=agent LC_ALL=C.UTF-8 BASH_ENV=/dev/null \
		"$TB/test-omnibox-run-darwin" -q --terminal=envt "$P/envt.yaml" 2>&1)
	rc=$?
	expect_rc 0
	expect_env_is_emit "$U/emit.env" "$U/host.env" \
		"$(printf '%s\n' "$out" | sed -n 's/^TMPDIR=//p')" "$WS"
	expect_clean

	name="a grant that does not exist is named before the command runs, not under -q"
	printf 'os_env:\n  sandbox:\n    read_paths: [/nonexistent/darwin-missing-grant]\n    env_passthrough: [STANDIN_LOG]\n' >"$P/missing.yaml"
	out=$(cd "$WS" && as_user "$TB/test-omnibox-run-darwin" "$P/missing.yaml" -- echo ran 2>&1)
	expect_out "omnibox-run: warning: read_paths (line 3): /nonexistent/darwin-missing-grant does not exist here; not mounted"
	expect_out "ran"
	out=$(cd "$WS" && as_user "$TB/test-omnibox-run-darwin" -q "$P/missing.yaml" -- echo ran 2>&1)
	expect_no_out "darwin-missing-grant"
	expect_clean

	name="a signal ends the command: 128+N"
	run plain sh -c 'kill -TERM $$'
	expect_rc 143

	name="no limits: none set"
	run plain sh -c 'ulimit -n; ulimit -d'
	expect_no_out "40"
	expect_out "unlimited"

	name="limits: open files, data size (memory) and CPU time are set before the exec"
	run limits sh -c 'ulimit -n; ulimit -d; ulimit -t'
	expect_out "40
262144
1"
	name="limits: opening more files than allowed fails"
	run limits python3 -c '
import os
fds = []
try:
    for i in range(50):
        fds.append(os.open("/dev/null", os.O_RDONLY))
    print("all opened")
except OSError as e:
    print("refused at", len(fds), e.strerror)'
	expect_out "refused at"
	expect_no_out "all opened"
	name="limits: a CPU-bound loop is killed at its CPU limit"
	run limits timeout -s KILL 20 sh -c 'while :; do :; done'
	expect_rc 152 # SIGXCPU; 137 would be the timeout's SIGKILL
	name="limits: an allocation over the memory limit fails"
	run limits python3 -c 'bytearray(512 * 1024 * 1024); print("allocated")'
	expect_out "MemoryError"
	expect_no_out "allocated"
	expect_clean

	name="egress: omnibox-init runs the relay inside, then the command; the profile has the four allows"
	run egress sh -c 'echo "proxy=$HTTPS_PROXY"; cat /proc/$PPID/cmdline | tr "\0" " "'
	expect_rc 0
	port=$(sed -n 's/^PORT=//p' "$U/standin.params")
	sock=$(sed -n 's/^SOCK=//p' "$U/standin.params")
	expect_out "proxy=http://127.0.0.1:$port"
	expect_out "omnibox-init --relay $port $sock -- sh -c"
	out=$(cat "$U/standin.profile")
	expect_out '(allow network-bind (local ip (string-append "localhost:" (param "PORT"))))'
	expect_out '(allow network-outbound (remote unix-socket (path-literal (param "SOCK"))))'
	out=$sock
	expect_out "$U/tmp/omnibox-"
	expect_clean

	url=https://upstream.test:$HTTPS
	name="egress: an allowed HTTPS GET passes through the relay and the proxy, with the session CA"
	run egress curl -sS "$url/bytes/9"
	expect_out "xxxxxxxxx"
	out=$log
	expect_out "allow GET"
	expect_out "by rule #2"
	expect_clean

	name="egress: plain HTTP and a POST with a body"
	run egress sh -c "curl -sS http://upstream.test:$HTTP/echo/plain; curl -sS -d hello-body $url/echo/post"
	expect_out "GET /echo/plain"
	expect_out "body-bytes: 10"

	name="egress: a request no rule allows gets 403"
	run egress curl -sS -i "$url/secret/x"
	expect_out "403"
	expect_out "X-Omnibox-Error: blocked-by-policy"

	name="egress: the command holds a placeholder, the upstream gets the secret, its echo does not"
	: >"$T/upstream.log"
	run egress sh -c "echo \"token=\$SAAS_TOKEN\"; env | grep -c real-secret; curl -sS -H \"Authorization: Bearer \$SAAS_TOKEN\" $url/echo/auth"
	expect_out "token=oa_cred_"
	expect_out "Authorization: Bearer oa_cred_"
	expect_no_out "real-secret-7c1d"
	tests=$((tests + 1))
	grep -q 'Authorization: Bearer real-secret-7c1d' "$T/upstream.log" ||
		fail "the upstream did not get the secret: $(cat "$T/upstream.log")"
	out=$log
	expect_no_out "real-secret-7c1d"
	expect_clean

	name="egress: a proxy that cannot start fails the launch; nothing runs"
	out=$(cd "$WS" && as_user "$TB/test-omnibox-run-darwin" -q --egress-ca=/nonexistent/ca.pem \
		"$P/egress.yaml" -- sh -c "touch $U/ran" 2>&1)
	rc=$?
	expect_rc 125
	expect_out "egress proxy cannot start"
	tests=$((tests + 1))
	[ ! -e "$U/ran" ] || fail "the command ran"
	expect_clean

	name="egress: SIGTERM to omnibox-run reaches the command; relay and proxy end with it"
	(cd "$WS" && as_user "$TB/test-omnibox-run-darwin" -q --egress-hosts="$T/hosts" \
		--egress-ca="$T/ca.pem" "$P/egress.yaml" -- sh -c 'trap "echo got-term; exit 3" TERM; sleep 30 & wait' \
		>"$U/term.out" 2>&1; echo "rc=$?" >>"$U/term.out") &
	bg=$!
	for _ in $(seq 100); do
		[ -s "$U/standin.argv" ] && grep -q trap "$U/standin.argv" && break
		sleep 0.05
	done
	sleep 0.3
	# The oldest: omnibox-run itself, not its proxy process.
	kill -TERM "$(pgrep -o -f "^$TB/test-omnibox-run-darwin")"
	wait "$bg"
	out=$(cat "$U/term.out")
	expect_out "got-term"
	expect_out "rc=3"
	pkill -f "^sleep 30" 2>/dev/null
	tests=$((tests + 1))
	gone "$TB/omnibox-init" || fail "the relay outlived the launch"
	expect_clean

	name="egress: SIGKILL of omnibox-run: the proxy stops, the profile and scratch dirs go"
	: >"$U/standin.argv"
	(cd "$WS" && as_user "$TB/test-omnibox-run-darwin" -q --egress-hosts="$T/hosts" \
		--egress-ca="$T/ca.pem" "$P/egress.yaml" -- sh -c 'sleep 30; echo agent-survived' \
		>"$U/kill.out" 2>&1) &
	bg=$!
	for _ in $(seq 100); do
		grep -q sleep "$U/standin.argv" 2>/dev/null && break
		sleep 0.05
	done
	sleep 0.3
	kill -KILL "$(pgrep -o -f "^$TB/test-omnibox-run-darwin")"
	wait "$bg"
	tests=$((tests + 1))
	gone "^$TB/test-omnibox-run-darwin" || fail "the proxy outlived omnibox-run"
	# No PID namespace on macOS: the agent (and its relay) survive; end them here.
	pkill -f "$TB/omnibox-init" 2>/dev/null
	pkill -f "^sleep 30" 2>/dev/null
	sleep 0.2
	expect_clean
}

for who in root nobody; do
	run_all
done
echo "darwin launch: $tests checks, $failures failed"
[ "$failures" = 0 ]
