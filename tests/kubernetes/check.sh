#!/bin/sh
# check.sh BUILD_DIR - the Kubernetes objects omnibox-compile writes are
# valid against the Kubernetes OpenAPI schema (tests/kubernetes/validate.mjs).
#
# For every golden policy golden/NNN-*/: its committed expect.kubernetes is
# validated, and so is what BUILD_DIR/omnibox-compile --target=kubernetes
# writes for it now (compiled twice: the output must be the same both
# times).  A policy whose compile fails is a refusal when expect.kubernetes.err
# lies beside it (skipped here; golden-check compares the diagnostics), a
# failure otherwise.  With no expect.kubernetes under golden/ at all this
# fails: a suite that checks nothing must not pass.  An optional file `args`
# in a golden directory adds command-line arguments, as in tests/golden.sh;
# GOLDEN_DIR=DIR checks a copy of golden/ instead.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# = 1 ] || { echo "usage: check.sh BUILD_DIR" >&2; exit 2; }
compiler=$(cd "$1" && pwd)/omnibox-compile
golden=$(cd "${GOLDEN_DIR:-$root/golden}" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# shellcheck source=../lib.sh
. "$here/../lib.sh"

# validated FILE LABEL: the lines validate.mjs printed for FILE (in $all)
# are all "ok".
validated() {
	name=$2
	out=$(printf '%s\n' "$all" | awk -v f="$1: " '
		index($0, f) == 1 { on = 1; print; next }
		on && /^  / { print; next }
		{ on = 0 }')
	tests=$((tests + 1))
	if [ -z "$out" ]; then
		fail "validate.mjs said nothing of it"
	elif printf '%s\n' "$out" | grep -v '^  ' | grep -qv ': ok$'; then
		fail "not valid"
	fi
}

goldens=$(ls "$golden"/*/expect.kubernetes 2>/dev/null)
if [ -z "$goldens" ]; then
	name=goldens
	out=
	tests=$((tests + 1))
	fail "no kubernetes goldens (no $golden/*/expect.kubernetes)"
	echo "kubernetes: $tests checks, $failures failed, $skips skipped"
	exit 1
fi

# Compile every valid golden policy afresh.
mkdir "$T/fresh"
files=
for dir in "$golden"/*/; do
	dir=${dir%/}
	n=$(basename "$dir")
	case $n in e*) continue ;; esac
	[ -f "$dir/agent.yaml" ] || continue
	args=
	[ -f "$dir/args" ] && args=$(cat "$dir/args")
	name="golden/$n: omnibox-compile --target=kubernetes"
	# shellcheck disable=SC2086
	out=$(cd "$dir" && "$compiler" $args --target=kubernetes agent.yaml 2>&1 >"$T/fresh/$n.yaml")
	rc=$?
	if [ "$rc" != 0 ]; then
		if [ -f "$dir/expect.kubernetes.err" ]; then
			skips=$((skips + 1))
		else
			tests=$((tests + 1))
			fail "exit status $rc, and no expect.kubernetes.err"
		fi
		rm -f "$T/fresh/$n.yaml"
		continue
	fi
	# shellcheck disable=SC2086
	(cd "$dir" && "$compiler" $args --target=kubernetes agent.yaml 2>/dev/null >"$T/again.yaml")
	out=$(diff "$T/fresh/$n.yaml" "$T/again.yaml")
	tests=$((tests + 1))
	[ -z "$out" ] || fail "two compiles differ"
	files="$files fresh/$n.yaml"
done

# shellcheck disable=SC2086
all=$(cd "$T" && node "$here/validate.mjs" $goldens $files 2>&1)
rc=$?
if [ "$rc" -ge 2 ]; then
	name=validate.mjs
	out=$all
	tests=$((tests + 1))
	fail "exit status $rc"
fi
for f in $goldens; do
	validated "$f" "golden/$(basename "$(dirname "$f")")/expect.kubernetes"
done
for f in $files; do
	validated "$f" "golden/$(basename "$f" .yaml): fresh --target=kubernetes"
done

echo "kubernetes: $(echo "$goldens" | wc -w) goldens and $(echo "$files" | wc -w) fresh outputs validated;" \
	"$tests checks, $failures failed, $skips skipped"
[ "$failures" = 0 ]
