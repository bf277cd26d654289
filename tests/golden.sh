#!/bin/sh
# golden.sh check|update COMPILER
#
# Every golden/NNN-topic/agent.yaml is compiled to each output kind below and
# compared with golden/NNN-topic/expect.KIND (or expect.KIND.err with the
# diagnostics, when the policy cannot be expressed for that kind's target).
# Every golden/eNNN-topic/agent.yaml must fail: its diagnostics and exit
# status are compared with expect.stderr and expect.rc.  The warnings a valid
# policy earns are compared with expect.warnings (the front end's) and
# expect.KIND.warnings (an emitter's own, such as an unenforced limit).  An optional file
# `args` adds command-line arguments (e.g. --terminal=bash).
#
# The seccomp filter does not depend on the policy: every policy's
# --emit=seccomp is compared with the one golden/seccomp/expect.seccomp, and
# its linux_landlock variant (--emit=seccomp-landlock) with
# golden/seccomp/expect.seccomp-landlock, and its variant for allow_network: true
# (--emit=seccomp-landlock-net) with expect.seccomp-landlock-net, and the
# base filter as an OCI profile (--emit=seccomp-oci) with expect.seccomp-oci.
#
# Every valid policy's resolved launch on Linux against a fixture workspace
# and home (tests/golden_resolved.py: the exact argv, normalized) is
# compared with expect.resolved, or its refusal with expect.resolved.err.
#
# Every valid policy's --explain --target=all is compared with expect.explain.
# A file `queries` (one "ACCESS TARGET" a line) is answered with
# --query-file on every target and compared with expect.query.
#
# `update` rewrites the expect files; review them with `git diff golden/`.
# GOLDEN_DIR=DIR checks (or rewrites) a copy of golden/ instead.
set -u

# drop_diagnostics COMMON FILE: FILE without the diagnostics COMMON holds,
# each a whole: its message line and the quoted source lines under it.
drop_diagnostics() {
	awk 'function flush() {
		if (blk != "" && common) seen[blk] = 1
		else if (blk != "" && !(blk in seen)) printf "%s", blk
		blk = ""
	}
	FILENAME != file { flush(); file = FILENAME; common = FILENAME == ARGV[1] }
	/^[^ ]/ { flush() }
	{ blk = blk $0 "\n" }
	END { flush() }' "$1" "$2"
}

mode=$1
compiler=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
golden=$(cd "${GOLDEN_DIR:-$root/golden}" && pwd) || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# kind target expect-file
kinds="ir linux expect.ir.json
egress linux expect.egress
egress-table linux expect.egress-table
bwrap linux expect.bwrap
landlock linux expect.landlock
seccomp linux ../seccomp/expect.seccomp
seccomp-landlock linux ../seccomp/expect.seccomp-landlock
seccomp-landlock-net linux ../seccomp/expect.seccomp-landlock-net
seccomp-oci linux ../seccomp/expect.seccomp-oci
env linux expect.env
sbpl darwin expect.sbpl
sbpl-params darwin expect.sbpl-params
winjob windows expect.winjob
oci oci expect.oci
kubernetes kubernetes expect.kubernetes"

fail=0
count=0

# The resolved launches, all at once: one fixture each.
if ! python3 "$root/tests/golden_resolved.py" "$compiler" "$golden" "$tmp/resolved"; then
	echo "FAIL golden: the resolved launches could not be made"
	fail=1
fi

# compare EXPECTED ACTUAL: in check mode diff them, in update mode copy.
compare() {
	if [ "$mode" = update ]; then
		if ! cmp -s "$2" "$1" 2>/dev/null; then
			cp "$2" "$1"
			echo "updated ${1#"$root"/}"
		fi
	elif [ ! -f "$1" ]; then
		echo "FAIL ${1#"$root"/}: missing (run 'make golden')"
		fail=1
	elif ! diff -u "$1" "$2" >"$tmp/diff"; then
		echo "FAIL ${1#"$root"/}:"
		sed 's/^/    /' "$tmp/diff"
		fail=1
	fi
}

for dir in "$golden"/*/; do
	dir=${dir%/}
	name=$(basename "$dir")
	[ -f "$dir/agent.yaml" ] || continue
	count=$((count + 1))
	args=
	[ -f "$dir/args" ] && args=$(cat "$dir/args")
	cd "$dir" || exit 2
	case $name in
	e*)
		# shellcheck disable=SC2086
		"$compiler" $args agent.yaml >"$tmp/out" 2>"$tmp/err"
		echo $? >"$tmp/rc"
		if [ "$(cat "$tmp/rc")" = 0 ]; then
			echo "FAIL golden/$name: compiled, but an error was expected"
			fail=1
		fi
		compare "$dir/expect.stderr" "$tmp/err"
		compare "$dir/expect.rc" "$tmp/rc"
		;;
	*)
		while read -r kind target file; do
			# shellcheck disable=SC2086
			if "$compiler" $args --target="$target" --emit="$kind" agent.yaml \
				>"$tmp/out" 2>"$tmp/err"; then
				compare "$dir/$file" "$tmp/out"
				[ "$mode" = update ] && rm -f "$dir/$(basename "$file").err"
				# The warnings of a valid policy are part of its contract:
				# the front end's with the IR, each emitter's own beside it.
				warn=$dir/$(basename "$file").warnings
				[ "$kind" = ir ] && warn=$dir/expect.warnings
				if [ -s "$tmp/err" ] || [ -f "$warn" ]; then
					if [ "$kind" != ir ] && [ -f "$dir/expect.warnings" ]; then
						# Front-end warnings are checked once, with the IR.
						drop_diagnostics "$dir/expect.warnings" "$tmp/err" >"$tmp/err2"
						mv "$tmp/err2" "$tmp/err"
					fi
					if [ -s "$tmp/err" ] || [ -f "$warn" ]; then
						compare "$warn" "$tmp/err"
					fi
				fi
			else
				compare "$dir/$(basename "$file").err" "$tmp/err"
				case $kind in seccomp*) ;; *) [ "$mode" = update ] && rm -f "$dir/$file" ;; esac
			fi
		done <<KINDS
$kinds
KINDS
		# What a launch here passes to bwrap, against the fixture.
		res=$tmp/resolved/$name
		if [ -f "$res/skip" ]; then
			for f in expect.resolved expect.resolved.err; do
				if [ "$mode" = update ]; then
					rm -f "$dir/$f"
				elif [ -f "$dir/$f" ]; then
					echo "FAIL golden/$name/$f: no resolved golden is kept for it: $(cat "$res/skip")"
					fail=1
				fi
			done
		elif [ -f "$res/expect.resolved" ]; then
			compare "$dir/expect.resolved" "$res/expect.resolved"
			[ "$mode" = update ] && rm -f "$dir/expect.resolved.err"
		elif [ -f "$res/expect.resolved.err" ]; then
			compare "$dir/expect.resolved.err" "$res/expect.resolved.err"
			[ "$mode" = update ] && rm -f "$dir/expect.resolved"
		else
			echo "FAIL golden/$name: no resolved launch was made"
			fail=1
		fi
		# What each setting means on every target.
		# shellcheck disable=SC2086
		"$compiler" $args -q --explain --target=all agent.yaml >"$tmp/out" 2>&1
		compare "$dir/expect.explain" "$tmp/out"
		# The decisions of the queries in `queries`, on every target.
		if [ -f "$dir/queries" ]; then
			# shellcheck disable=SC2086
			"$compiler" $args -q --target=all --query-file=queries agent.yaml \
				>"$tmp/out" 2>&1
			compare "$dir/expect.query" "$tmp/out"
		fi
		;;
	esac
done

# Policy changes: golden/diff/NN-kind/{old,new}.yaml, --diff both ways, text and
# JSON.  The reverse diff must list the opposite change: its widenings are the
# forward narrowings (and the reverse).
for dir in "$golden"/diff/*/; do
	dir=${dir%/}
	[ -f "$dir/old.yaml" ] && [ -f "$dir/new.yaml" ] || continue
	count=$((count + 1))
	cd "$dir" || exit 2
	for spec in "new.yaml old.yaml expect.diff text" "new.yaml old.yaml expect.diff.json json" \
		"old.yaml new.yaml expect.reverse.diff text"; do
		set -- $spec
		"$compiler" -q "$1" --diff="$2" --format="$4" >"$tmp/out" 2>&1
		echo "exit $?" >>"$tmp/out"
		compare "$dir/$3" "$tmp/out"
	done
	"$compiler" -q new.yaml --diff=old.yaml --format=json >"$tmp/f" 2>/dev/null
	"$compiler" -q old.yaml --diff=new.yaml --format=json >"$tmp/r" 2>/dev/null
	if [ "$mode" = check ] && ! python3 - "$tmp/f" "$tmp/r" <<'PY'
import json, sys
f, r = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda l: sorted((i["kind"], i["terminal"] or "") for i in l)
sys.exit(0 if key(f["widenings"]) == key(r["narrowings"]) and
         key(f["narrowings"]) == key(r["widenings"]) else 1)
PY
	then
		echo "FAIL golden/diff/$(basename "$dir"): the reverse diff is not the opposite change"
		fail=1
	fi
done

if [ $fail = 0 ]; then
	echo "golden: $count policies, all outputs as expected"
else
	echo "golden: differences found; if they are intended, run 'make golden' and review git diff golden/"
fi
exit $fail
