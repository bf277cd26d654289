#!/bin/sh
# launch.sh BUILD_DIR - the launch's order: bwrap starts before the workspace
# is resolved, and omnibox-init runs nothing until it is handed the rest.
#
# omnibox-run starts bwrap as soon as bwrap's own arguments are known, and
# resolves the workspace while bwrap sets the sandbox up; omnibox-init
# waits on its ready socket for its arguments (runtime/launch/handover.h).
# Each test plays a launch that goes wrong in between (the resolve refuses,
# omnibox-run is killed or told to stop, the resolved launch needs other
# arguments of bwrap's) and checks that nothing of the agent's ran and
# nothing of the launch is left running.  As root and as nobody.
set -u

B=$(cd "$1" && pwd)
T=$(mktemp -d /tmp/omnibox-launch.XXXXXX)
chmod 755 "$T"
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	pkill -f "$T/" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

. "$(dirname "$0")/../lib.sh"

# Where the agent's command would leave its mark, had it run.
M=$T/marks
mkdir -m 1777 "$M"

setup_user() {
	U=$T/$who
	H=$U/home
	WS=$U/ws
	P=$U/policies
	TB=$U/bin
	mkdir -p "$H" "$WS" "$P" "$TB"
	cp "$B/omnibox-run" "$B/omnibox-init" "$B/omnibox-proxy" "$TB/"
	ln -s / "$WS/root-link"
	chmod -R a+rX "$U"
	policy default <<-EOF
	os_env:
	  sandbox: {}
	EOF
	# More grants than omnibox-init makes mounts for: the rest are bwrap's
	# own, which the first step of the resolve cannot know.
	mkdir -p "$U/many"
	{
		printf 'os_env:\n  sandbox:\n    read_paths:\n'
		for i in $(seq 470); do
			mkdir "$U/many/d$i"
			printf '      - %s/many/d%s\n' "$U" "$i"
		done
	} | policy many-grants
	echo "last-grant" >"$U/many/d470/f"
	policy root-link <<-EOF
	os_env:
	  sandbox:
	    write_paths: [root-link]
	EOF
	# A credential whose command takes its time: omnibox-run reads it after
	# bwrap started, before omnibox-init has its arguments.
	policy slow <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    egress_rules: ["GET github.com/**", "GET api.github.com/**"]
	    credential_proxy:
	      - type: gh_basic
	        source: {command: "touch $M/$who-slow-started; sleep 8; echo token"}
	EOF
	[ "$who" = nobody ] && chown -R nobody:nogroup "$U"
	# The user's own repository in the writable workspace.
	(cd "$WS" && as_user sh -c 'git init -q && git -c user.name=u -c user.email=u@x commit -q --allow-empty -m one')
	return 0
}

policy() {
	cat >"$P/$1.yaml"
	chmod 644 "$P/$1.yaml"
}

# run POLICY CMD...: omnibox-run -v from the workspace; $out and $rc.
run() {
	policy=$P/$1.yaml
	shift
	out=$(cd "$WS" && as_user "$TB/omnibox-run" -v "$policy" -- "$@" 2>&1)
	rc=$?
}

# Nothing of this user's launches left running after up to 3 s: no bwrap,
# no omnibox-init (bwrap's child has bwrap's command line until it runs
# omnibox-init).
no_sandbox_left() {
	tests=$((tests + 1))
	for _ in $(seq 30); do
		pgrep -u "$who" -f "bwrap --args|/\.omnibox/init" >/dev/null || return 0
		sleep 0.1
	done
	fail "a process of the launch is still running: $(pgrep -u "$who" -af 'bwrap --args|/\.omnibox/init' | head -3)"
}

t_started_once() {
	name="bwrap starts once, before the resolve, and the agent runs with all it was given"
	run default sh -c 'echo ran; pwd; echo "HOME=$HOME"'
	expect_rc 0
	expect_out "ran"
	expect_out "$WS"
	expect_out "HOME=$H"
	expect_no_out "bwrap starts again"
}

t_started_again() {
	name="a resolved launch that needs other arguments of bwrap's starts it again"
	run many-grants sh -c "cat $U/many/d470/f $U/many/d1/f 2>&1; touch $U/many/d3/x 2>/dev/null || echo read-only"
	expect_rc 0
	expect_out "bwrap starts again"
	expect_out "last-grant"
	expect_out "read-only"
	no_sandbox_left
}

t_resolve_refuses() {
	name="a resolve that fails once bwrap started ends it: nothing ran, nothing left"
	run default /nonexistent/command
	expect_out "nothing ran"
	tests=$((tests + 1))
	[ "$rc" != 0 ] || fail "exit status 0"
	no_sandbox_left
	run root-link sh -c "touch $M/$who-root-link"
	tests=$((tests + 1))
	[ "$rc" != 0 ] || fail "a grant of / through a link: exit status 0"
	expect_out "nothing ran"
	tests=$((tests + 1))
	[ ! -e "$M/$who-root-link" ] || fail "the agent's command ran"
	no_sandbox_left
}

# killed SIGNAL: omnibox-run stopped by SIGNAL while omnibox-init waits.
killed() {
	rm -f "$M/$who-slow-started" "$M/$who-slow-ran"
	(cd "$WS" && as_user "$TB/omnibox-run" -q "$P/slow.yaml" -- sh -c "touch $M/$who-slow-ran") \
		>"$T/killed.out" 2>&1 &
	bg=$!
	for _ in $(seq 100); do
		[ -e "$M/$who-slow-started" ] && pgrep -f "/\.omnibox/init --args-from" >/dev/null && break
		sleep 0.05
	done
	tests=$((tests + 1))
	pgrep -f "/\.omnibox/init --args-from" >/dev/null || {
		out=$(cat "$T/killed.out")
		fail "omnibox-init was not waiting for its arguments while the credential was read"
	}
	run_pid=$(main_run_pid "$P/slow.yaml")
	[ -n "$run_pid" ] && kill "-$1" "$run_pid"
	wait "$bg" 2>/dev/null
	no_sandbox_left
	tests=$((tests + 1))
	[ ! -e "$M/$who-slow-ran" ] || fail "the agent's command ran"
	# Nothing of the agent's ran: the user's repository is no sandbox's to
	# set aside, whatever is left to clean up.
	sleep 0.5
	tests=$((tests + 1))
	set -- "$WS"/.git-omnibox-quarantine-*
	[ -d "$WS/.git" ] && [ ! -e "$1" ] || fail "the user's repository was set aside"
	pkill -f "$who-slow-started; sleep 8" 2>/dev/null
}

t_killed_while_resolving() {
	name="omnibox-run killed while omnibox-init waits for its arguments: the sandbox goes with it"
	killed KILL
	name="omnibox-run told to stop while omnibox-init waits for its arguments: the sandbox goes"
	killed TERM
}

# The sandbox's mounts outlive omnibox-init, held by omnibox-run and then
# by the cleanup process, which ends them once omnibox-run is gone
# (janitor.h): after that nothing holds them.
t_mounts_end() {
	name="the sandbox's mount namespace ends after the launch: nothing holds it"
	run default sh -c 'readlink /proc/self/ns/mnt'
	expect_rc 0
	n=$(printf '%s\n' "$out" | sed -n 's/^mnt:\[\([0-9]*\)\]$/\1/p' | head -n 1)
	tests=$((tests + 1))
	[ -n "$n" ] || {
		fail "the sandbox named no mount namespace"
		return
	}
	held=
	for _ in $(seq 50); do
		held=$(find /proc/[0-9]*/fd /proc/[0-9]*/ns -lname "mnt:\[$n\]" 2>/dev/null | head -n 1)
		[ -z "$held" ] && break
		sleep 0.1
	done
	[ -z "$held" ] || fail "the sandbox's mount namespace is still held 5 s after: $held"
}

run_all() {
	setup_user
	t_started_once
	t_mounts_end
	t_started_again
	t_resolve_refuses
	t_killed_while_resolving
}

if [ "$(id -u)" != 0 ]; then
	echo "launch: must run as root, to test both as root and as nobody" >&2
	exit 1
fi
for who in root nobody; do
	run_all
done
echo "launch: $tests checks, $failures failed, $skips skipped"
[ "$failures" = 0 ]
