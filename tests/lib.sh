# lib.sh - what the shell suites share; sourced, never run.
#
# Each check counts in $tests; a failed one prints "FAIL [$who] $name: why"
# with the head of $out, and counts in $failures.

tests=0
failures=0
skips=0
name=
who=

fail() {
	echo "FAIL ${who:+[$who] }$name: $*"
	if [ -n "${out:-}" ]; then
		printf '%s\n' "$out" | head -25 | cut -c 1-200 | sed 's/^/    | /'
	fi
	failures=$((failures + 1))
}

# wait_for FILE TEXT: up to 5 s for TEXT (a grep pattern) to appear in FILE.
wait_for() {
	for _ in $(seq 100); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# expect_out STRING: $out contains STRING (a fixed string).
expect_out() {
	tests=$((tests + 1))
	case $out in
	*"$1"*) ;;
	*) fail "expected output to contain '$1'" ;;
	esac
}

expect_no_out() {
	tests=$((tests + 1))
	case $out in
	*"$1"*) fail "output must not contain '$1'" ;;
	*) ;;
	esac
}

expect_rc() {
	tests=$((tests + 1))
	[ "$rc" = "$1" ] || fail "exit status $rc, expected $1"
}

# expect_eq WHAT GOT WANT
expect_eq() {
	tests=$((tests + 1))
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

# test_upstream DIR BUILD: a test CA (DIR/ca.pem), a certificate for
# upstream.test and other.test signed by it, and tests/proxy/upstream
# serving HTTP and HTTPS on loopback (its pid joins $pids; $HTTP and
# $HTTPS are its ports; DIR/hosts names both hosts 127.0.0.1).  Extra
# arguments go to the server.
test_upstream() {
	_d=$1
	_b=$2
	shift 2
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-subj "/CN=omnibox test CA" -keyout "$_d/ca.key" -out "$_d/ca.pem" 2>/dev/null
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=upstream.test" \
		-keyout "$_d/up.key" -out "$_d/up.csr" 2>/dev/null
	printf 'subjectAltName=DNS:upstream.test,DNS:other.test\n' >"$_d/ext"
	openssl x509 -req -in "$_d/up.csr" -CA "$_d/ca.pem" -CAkey "$_d/ca.key" -CAcreateserial \
		-days 2 -extfile "$_d/ext" -out "$_d/up.pem" 2>/dev/null
	chmod 644 "$_d"/*.pem "$_d"/*.key
	"$_b/tests/proxy/upstream" --cert "$_d/up.pem" --key "$_d/up.key" \
		--log "$_d/upstream.log" "$@" >"$_d/upstream.out" 2>&1 &
	pids="$pids $!"
	for _ in $(seq 100); do
		grep -q '^ready' "$_d/upstream.out" 2>/dev/null && break
		sleep 0.05
	done
	# "ready HTTP_PORT HTTPS_PORT"
	HTTP=$(head -n 1 "$_d/upstream.out" | cut -d ' ' -f 2)
	HTTPS=$(head -n 1 "$_d/upstream.out" | cut -d ' ' -f 3)
	printf '127.0.0.1 upstream.test\n127.0.0.1 other.test\n' >"$_d/hosts"
	chmod 644 "$_d/hosts"
}

# egress_run RUNNER POLICY CMD...: CMD through the omnibox-run RUNNER with
# $P/POLICY.yaml, as the user under test (the suite's as_user), in $WS,
# resolving and trusting test_upstream's hosts and CA from $T (names
# through $EGRESS_NAMES instead when set: --egress-resolv=FILE).  $out holds
# stdout+stderr, $rc the status, $log the proxy's decisions.
egress_run() {
	_run=$1
	_policy=$P/$2.yaml
	shift 2
	out=$(cd "$WS" && as_user "$_run" -q "${EGRESS_NAMES:---egress-hosts=$T/hosts}" \
		--egress-ca="$T/ca.pem" --egress-log="$U/egress.log" "$_policy" -- "$@" 2>&1)
	rc=$?
	log=$(cat "$U/egress.log" 2>/dev/null)
	: >"$U/egress.log"
}

# gone PATTERN: wait up to 3 s for no process to match PATTERN (pgrep -f);
# false if one still does.
gone() {
	for _ in $(seq 30); do
		pgrep -f "$1" >/dev/null || return 0
		sleep 0.1
	done
	! pgrep -f "$1" >/dev/null
}

# ---- the Linux launch suites (acceptance, attacks); others define their own ----

# as_user CMD...: run CMD as the user under test, with a fixed environment
# that holds secrets the sandbox must not pass on.
as_user() {
	if [ "$who" = root ]; then
		env -i PATH="$TB:$WS/tools:/usr/local/bin:/usr/bin:/bin" HOME="$H" TMPDIR=/tmp LANG=C.UTF-8 \
			AWS_SECRET_ACCESS_KEY=aws-host-secret OPENAI_API_KEY=openai-host-secret \
			PASSME=passed-through "$@"
	else
		runuser -u nobody -- env -i PATH="$TB:$WS/tools:/usr/local/bin:/usr/bin:/bin" HOME="$H" \
			TMPDIR=/tmp LANG=C.UTF-8 AWS_SECRET_ACCESS_KEY=aws-host-secret \
			OPENAI_API_KEY=openai-host-secret PASSME=passed-through "$@"
	fi
}

# main_run_pid: the omnibox-run started from $TB for POLICY, not its cleanup
# child (same command line) nor runuser (which names it); looked for during
# up to 5 s (a loaded machine), empty when there is none.
main_run_pid() {
	n=0
	while [ $n -lt 100 ]; do
		for pid in $(pgrep -f "^$TB/omnibox-run -q $1"); do
			parent=$(ps -o ppid= -p "$pid" | tr -d ' ')
			case $(tr '\0' ' ' <"/proc/$parent/cmdline" 2>/dev/null) in
			"$TB/omnibox-run"*) ;;
			*)
				echo "$pid"
				return
				;;
			esac
		done
		sleep 0.05
		n=$((n + 1))
	done
}

# sbx POLICY-NAME CMD...: run CMD in the sandbox of $P/POLICY-NAME.yaml, from
# the workspace; sets $out (stdout and stderr) and $rc.
sbx() {
	policy=$P/$1.yaml
	shift
	out=$(cd "$WS" && as_user "$TB/omnibox-run" -q "$policy" -- "$@" 2>&1)
	rc=$?
}

policy() {
	cat >"$P/$1.yaml"
	chmod 644 "$P/$1.yaml"
}

# ---- the environment: what --emit=env says, applied by hand ----------------------

# env_expect EMIT HOST SCRATCH CWD [fold]: the environment that the lines of
# `omnibox-compile --emit=env` (file EMIT) give for the host environment in
# file HOST (NAME=VALUE a line), with {SCRATCH} and {CWD} standing for
# SCRATCH and CWD; names compare without regard to case with "fold".
# Prints NAME=VALUE a line, sorted, to compare with a command's `env`.
env_expect() {
	# Through the environment: awk -v would read backslashes as escapes.
	ENV_SCRATCH=$3 ENV_CWD=$4 ENV_FOLD=${5:-} awk '
	BEGIN { scratch = ENVIRON["ENV_SCRATCH"]; cwd = ENVIRON["ENV_CWD"]; fold = ENVIRON["ENV_FOLD"] }
	function key(n) { return fold == "fold" ? toupper(n) : n }
	function subst(s, from, to,    i, r) {
		r = ""
		while ((i = index(s, from)) > 0) {
			r = r substr(s, 1, i - 1) to
			s = substr(s, i + length(from))
		}
		return r s
	}
	function pass(k) { en[k] = hn[k]; ev[k] = hv[k] }
	FNR == NR {
		i = index($0, "=")
		if (i > 1) {
			n = substr($0, 1, i - 1)
			hn[key(n)] = n
			hv[key(n)] = substr($0, i + 1)
		}
		next
	}
	/^#/ || /^$/ { next }
	{
		line = $0
		sub(/  # .*$/, "", line)
		i = index(line, "=")
		if (substr(line, 1, 1) == "-") {
			delete en[key(substr(line, 2))]
		} else if (i == 0 && line ~ /\*$/) {
			p = key(substr(line, 1, length(line) - 1))
			for (k in hn)
				if (index(k, p) == 1)
					pass(k)
		} else if (i == 0) {
			if (key(line) in hn)
				pass(key(line))
		} else {
			n = substr(line, 1, i - 1)
			en[key(n)] = n
			ev[key(n)] = subst(subst(substr(line, i + 1), "{SCRATCH}", scratch), "{CWD}", cwd)
		}
	}
	END { for (k in en) print en[k] "=" ev[k] }
	' "$2" "$1" | LC_ALL=C sort
}

# expect_env_is_emit EMIT HOST SCRATCH CWD [fold]: $out, the command's `env`,
# is exactly what env_expect gives.
expect_env_is_emit() {
	tests=$((tests + 1))
	_want=$(env_expect "$@")
	_got=$(printf '%s\n' "$out" | tr -d '\r' | LC_ALL=C sort)
	[ "$_got" = "$_want" ] ||
		fail "the environment differs from --emit=env (- emitted, + got):
$(printf '%s\n' "$_want" >"$1.want"; printf '%s\n' "$_got" | diff "$1.want" - | grep '^[<>]' | sed 's/^</-/; s/^>/+/')"
}
