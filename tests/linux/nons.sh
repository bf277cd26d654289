#!/bin/sh
# nons.sh BUILD_DIR - omnibox where no namespace can be made: Docker's and
# Podman's default seccomp profiles (and CI runners built on them), Ubuntu
# 24.04+ with AppArmor's restrict_unprivileged_userns, hosts with
# user.max_user_namespaces=0.  BUILD_DIR/tests/nons (tests/linux/nons.c)
# reproduces the first with a seccomp filter, and with it what all of them
# come to for bwrap: no namespace can be made.  These checks show, as root
# and as nobody, that it really does (each refusal seen under it, and the
# same call working without it), and that omnibox-run under it refuses,
# says why and runs nothing, rather than running the command unconfined.
# (The AppArmor and sysctl causes have hints of their own, not seen here.)
set -u

B=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d /tmp/omnibox-nons.XXXXXX)
chmod 755 "$T"
trap 'cleanup' EXIT INT TERM
# Every check must be harmless where nons fails to refuse (a mount lands in $T).
cleanup() {
	grep -o " $T/[^ ]*" /proc/self/mountinfo | while read -r m; do umount -l "$m"; done
	rm -rf "$T"
}

. "$(dirname "$0")/../lib.sh"

# What namespace_hint() in runtime/launch/bwrap_run.c says when neither
# AppArmor nor a sysctl is the cause; checked against the source first, so
# that a reworded message fails here, not as a refusal gone missing.
hint='this process cannot create namespaces'
if ! grep -q "$hint" "$root/runtime/launch/bwrap_run.c"; then
	echo "nons: '$hint' is no longer in runtime/launch/bwrap_run.c; update this suite" >&2
	exit 1
fi

# A home, a workspace readable by nobody, a minimal policy and the binaries, for $who.
setup_user() {
	U=$T/$who
	H=$U/home
	WS=$U/ws
	P=$U/policies
	TB=$U/bin
	mkdir -p "$H" "$WS" "$P" "$TB"
	echo "hello" >"$WS/README"
	cp "$B/omnibox-run" "$B/omnibox-init" "$B/omnibox-proxy" "$B/tests/nons" "$B/tests/probe" "$TB/"
	chmod 755 "$TB" "$TB"/*
	policy minimal <<-EOF
	os_env: {sandbox: {}}
	EOF
	policy bwrap <<-EOF
	os_env: {sandbox: {type: linux_bwrap}}
	EOF
	if [ "$who" = nobody ]; then
		chown -R nobody:nogroup "$U"
	fi
	chmod 755 "$U" "$WS"
}

# run CMD...: CMD as $who, from the workspace; $out (stdout and stderr), $rc.
run() {
	out=$(cd "$WS" && as_user "$@" 2>&1)
	rc=$?
}

# nons CMD...: the same, under the filter.
nons() {
	run "$TB/nons" --quiet -- "$@"
}

# expect_refused: $rc is a failure and $out says EPERM.
expect_refused() {
	tests=$((tests + 1))
	[ "$rc" != 0 ] || fail "exit status 0, expected a failure"
	expect_out "Operation not permitted"
}

# The filter is there: seccomp in filter mode, one filter more than without it.
t_filter_active() {
	name="filter active"
	run awk '/^Seccomp_filters:/ { print $2 }' /proc/self/status
	base=$out
	nons awk '/^Seccomp:/ { m = $2 } /^Seccomp_filters:/ { n = $2 } END { print m, n }' \
		/proc/self/status
	expect_eq "Seccomp mode and filters under nons" "$out" "2 $((base + 1))"

	name="nons says what it refuses"
	run "$TB/nons" -- true
	expect_rc 0
	expect_out "nons: refusing unshare setns mount umount umount2 pivot_root move_mount"
	expect_out "clone(CLONE_NEW*) clone3(ENOSYS)"
	expect_no_out "skipped"

	name="nons without a command"
	run "$TB/nons" --quiet --
	expect_rc 125
	expect_out "usage: nons"

	name="nons, a command not found"
	run "$TB/nons" --quiet -- /nonexistent/cmd
	expect_rc 127
}

# Under nons every way to a namespace is refused; without it each works.
t_unshare() {
	# nobody needs a user namespace to own a network or mount namespace.
	if [ "$who" = root ]; then r=; else r='-r '; fi
	for flags in -U "$r-n" "$r-m"; do
		name="unshare $flags under nons"
		# shellcheck disable=SC2086 # $flags is one or two words
		nons unshare $flags true
		expect_refused
		name="unshare $flags without nons"
		# shellcheck disable=SC2086
		run unshare $flags true
		expect_rc 0
	done

	name="clone(CLONE_NEWUSER) under nons"
	nons "$TB/probe" clone-newuser
	expect_eq "$name" "$out" EPERM
	name="clone(CLONE_NEWUSER) without nons"
	run "$TB/probe" clone-newuser
	expect_eq "$name" "$out" ok
	# Without CAP_SYS_ADMIN a network namespace alone is refused anyway.
	if [ "$who" = root ]; then
		name="clone(CLONE_NEWNET) under nons"
		nons "$TB/probe" clone-newnet
		expect_eq "$name" "$out" EPERM
		name="clone(CLONE_NEWNET) without nons"
		run "$TB/probe" clone-newnet
		expect_eq "$name" "$out" ok
	fi
	name="clone3 under nons"
	nons "$TB/probe" clone3
	expect_eq "$name" "$out" ENOSYS
	name="clone3 without nons"
	run "$TB/probe" clone3
	expect_eq "$name" "$out" ok
	name="unshare(CLONE_NEWUSER) under nons"
	nons "$TB/probe" unshare-user
	expect_eq "$name" "$out" EPERM
}

# mount and umount2 (root only: nobody has no right to either anyway), on
# a directory of the suite's own, so that a mount nons let through stays there.
t_mount() {
	[ "$who" = root ] || return 0
	mkdir -p "$U/mnt"
	name="mount under nons"
	nons mount -t tmpfs omnibox-nons "$U/mnt"
	tests=$((tests + 1))
	[ "$rc" != 0 ] || fail "exit status 0, expected a failure"
	expect_out "permission denied"
	tests=$((tests + 1))
	if grep -q " $U/mnt " /proc/self/mountinfo; then
		fail "a tmpfs is mounted on $U/mnt"
		umount -l "$U/mnt"
	fi

	# umount(8) words EPERM from umount2 "must be superuser"; without nons
	# the same directory is merely "not mounted".
	name="umount under nons"
	nons umount "$U/mnt"
	tests=$((tests + 1))
	[ "$rc" != 0 ] || fail "exit status 0, expected a failure"
	expect_out "must be superuser"
	name="umount without nons"
	run umount "$U/mnt"
	expect_out "not mounted"
}

# Everything else still works: a command, fork (clone without CLONE_NEW*),
# threads (clone3 refused, libc falls back to clone).
t_allowed() {
	name="true under nons"
	nons true
	expect_rc 0
	expect_eq "$name: output" "$out" ""

	name="fork and a pipe under nons"
	nons sh -c '/bin/echo forked | cat'
	expect_rc 0
	expect_eq "$name" "$out" forked

	name="a thread under nons"
	nons "$TB/probe" thread
	expect_eq "$name" "$out" ok
}

t_bwrap() {
	name="bwrap under nons"
	nons bwrap --ro-bind / / true
	tests=$((tests + 1))
	[ "$rc" != 0 ] || fail "exit status 0, expected a failure"
	# bwrap words it its own way ("Creating new namespace failed: Operation not
	# permitted" as root; as nobody, a guess that the kernel forbids it).
	expect_out "namespace"

	name="bwrap without nons"
	run bwrap --ro-bind / / true
	expect_rc 0
}

# A policy pinned to bwrap: omnibox-run refuses, says why, and nothing of
# the command runs.  (tests/linux/landlock.sh runs the others under nons.)
t_omnibox_run() {
	rm -f "$U/ran"
	name="omnibox-run under nons"
	nons "$TB/omnibox-run" "$P/bwrap.yaml" -- sh -c "echo RAN; touch '$U/ran'"
	expect_rc 125
	expect_no_out RAN
	expect_out "bwrap could not set up the sandbox"
	expect_out "nothing ran"
	expect_out "$hint (Operation not permitted)"
	expect_out "for Docker: a seccomp profile that permits unshare and clone"
	expect_out "or write \`type: linux_landlock\`"
	tests=$((tests + 1))
	[ ! -e "$U/ran" ] || fail "the command ran: $U/ran exists"

	# auto: linux_landlock cannot hide the dotfiles exactly: refused, with why.
	name="omnibox-run auto under nons, a policy linux_landlock approximates"
	nons "$TB/omnibox-run" "$P/minimal.yaml" -- sh -c "echo RAN; touch '$U/ran'"
	expect_rc 125
	expect_no_out RAN
	expect_out "namespaces cannot be made here (Operation not permitted), and the linux_landlock backend cannot enforce 1 setting of this policy exactly"
	expect_out "dotfiles (cwd_allow_hidden): approximated"
	expect_out "write \`type: linux_landlock\` in os_env.sandbox"
	expect_out "nothing ran"
	tests=$((tests + 1))
	[ ! -e "$U/ran" ] || fail "the command ran: $U/ran exists"

	name="omnibox-run -q under nons still says why"
	nons "$TB/omnibox-run" -q "$P/bwrap.yaml" -- sh -c 'echo RAN'
	expect_rc 125
	expect_no_out RAN
	expect_out "$hint"

	name="omnibox-run without nons"
	run "$TB/omnibox-run" -q "$P/minimal.yaml" -- sh -c 'echo RAN'
	expect_rc 0
	expect_eq "$name" "$out" RAN

	# --dry-run only resolves the launch: nothing to create, nothing refused.
	# It prints the command (the line "echo RAN"), and runs nothing of it.
	name="omnibox-run --dry-run under nons"
	nons "$TB/omnibox-run" --dry-run "$P/bwrap.yaml" -- sh -c "echo RAN; touch '$U/ran'"
	expect_rc 0
	expect_out "# bubblewrap arguments for bwrap.yaml"
	expect_out "--ro-bind-try"
	expect_out "echo RAN; touch"
	expect_out "# scratch dir:"
	expect_no_out "$hint"
	tests=$((tests + 1))
	[ ! -e "$U/ran" ] || fail "the command ran: $U/ran exists"
}

if [ "$(id -u)" != 0 ]; then
	echo "nons: must run as root, to test both as root and as nobody" >&2
	exit 1
fi
for who in root nobody; do
	setup_user
	t_filter_active
	t_unshare
	t_mount
	t_allowed
	t_bwrap
	t_omnibox_run
done
echo "nons: $tests checks, $failures failed, $skips skipped"
[ "$failures" = 0 ]
