#!/bin/sh
# golden_selftest.sh COMPILER - the resolved goldens can fail.
#
# On a copy of one golden policy (golden/019-mask-paths: a writable
# workspace, masks present and missing, dotfiles, protected paths, a nested
# repository), golden.sh check must pass as committed, and fail with a
# diff naming the line when one mount argument of its expect.resolved is
# changed: a read-only bind made writable, a mount target moved, a mount
# dropped.  And the resolved launch must be byte-identical when made twice,
# from fixture roots of different names and lengths, and name neither.
set -u

compiler=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

. "$here/lib.sh"

policy=019-mask-paths
copy() {
	rm -rf "$T/golden"
	mkdir -p "$T/golden"
	cp -R "$root/golden/$policy" "$root/golden/seccomp" "$T/golden/"
}
check() {
	out=$(GOLDEN_DIR=$T/golden "$here/golden.sh" check "$compiler" 2>&1)
	rc=$?
}
res=$T/golden/$policy/expect.resolved

name="golden-check passes on the committed $policy"
copy
check
expect_rc 0
expect_out "golden: 1 policies, all outputs as expected"

# The line numbers of the first read-only bind of a protected path, and of
# the first mask; each edit is made on a fresh copy.
ro=$(awk '/^# 6b\./ { s = 1 } s && $0 == "--ro-bind-fd" { print NR; exit }' "$res")
mask=$(awk '/^# 5\./ { s = 1 } s && $0 == "--tmpfs" { print NR; exit }' "$res")
tests=$((tests + 1))
if [ -z "$ro" ] || [ -z "$mask" ]; then
	name="$policy has the mounts the edits change"
	fail "no read-only bind in section 6b or no tmpfs mask in section 5"
fi

name="golden-check fails when a protected path's bind becomes writable"
copy
sed -i "${ro}s/.*/--bind-fd/" "$res"
check
expect_rc 1
expect_out "FAIL $T/golden/$policy/expect.resolved:"
expect_out "    ---bind-fd"
expect_out "    +--ro-bind-fd"

name="golden-check fails when a mask's target changes"
copy
target=$(sed -n "$((mask + 1))p" "$res")
sed -i "$((mask + 1))s|.*|$target-moved|" "$res"
check
expect_rc 1
expect_out "    -$target-moved"
expect_out "    +$target"

name="golden-check fails when a mount is dropped"
copy
sed -i "${mask},$((mask + 1))d" "$res"
check
expect_rc 1
expect_out "    +--tmpfs"

name="golden-check fails when expect.resolved is missing"
copy
rm "$res"
check
expect_rc 1
expect_out "expect.resolved: missing (run 'make golden')"

# Normalization: two runs, two fixture roots, one text.
name="the resolved goldens are the same from any fixture root"
mkdir -p "$T/a" "$T/b/a-longer-directory.name/x"
TMPDIR=$T/a python3 "$here/golden_resolved.py" "$compiler" "$root/golden" "$T/out-a" \
	$policy 054-protect-default 004-read-paths 026-pinned-darwin >/dev/null 2>&1
TMPDIR=$T/b/a-longer-directory.name/x python3 "$here/golden_resolved.py" "$compiler" \
	"$root/golden" "$T/out-b" $policy 054-protect-default 004-read-paths 026-pinned-darwin \
	>/dev/null 2>&1
out=$(diff -r "$T/out-a" "$T/out-b" 2>&1)
rc=$?
expect_rc 0
out=$(cat "$T/out-a"/*/expect.resolved* 2>/dev/null)
expect_out "{FIXTURE}/work"
expect_out "{SCRATCH}"
expect_no_out "$T"
expect_no_out "$root"
tests=$((tests + 1))
[ "$(ls "$T/out-a" | wc -l)" = 4 ] || fail "expected 4 resolved goldens, got $(ls "$T/out-a")"

echo "golden-selftest: $tests checks, $failures failed"
[ "$failures" = 0 ]
