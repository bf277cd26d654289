#!/bin/sh
# why.sh BUILD_DIR - --why says what the launch does.
#
# For every golden policy: a fixture workspace and home (files, directories,
# dotfiles at the top and nested, the policy's own grants, masks and
# protected paths, present and missing, system files, the policy file
# itself), at least 200 paths, each asked about for reading and writing
# with omnibox-compile --resolve --query-file (the engine of omnibox-run
# --why), then tried for real inside a launch of that policy.  Every answer
# must match what the launch could do.  As root and as nobody.
set -u

B=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
GOLDEN=$(cd "$HERE/../../golden" && pwd)
T=$(mktemp -d /var/tmp/omnibox-why.XXXXXX)
chmod 755 "$T"
cleanup() {
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

. "$HERE/../lib.sh"

# The probe inside the launch: for each path on standard input, whether the
# command could read what the host holds there (a fixture file is never
# empty, a fixture directory holds why-marker: a mask shows neither) and
# write it (open an existing file for
# writing, make an entry in a directory, create a missing path; whatever it
# makes is removed).  "PATH<TAB>R<TAB>W".
# shellcheck disable=SC2016
PROBE='
while IFS= read -r p; do
	r=0 w=0
	case $p in
	"$1"/* | "$1" | "$2"/* | "$2") fixture=1 ;;
	*) fixture=0 ;;
	esac
	if [ -d "$p" ]; then
		if [ $fixture = 1 ]; then
			[ -f "$p/why-marker" ] && r=1
		else
			ls -A "$p" >/dev/null 2>&1 && r=1
		fi
		f="$p/why-probe.$$"
		if (: >"$f") 2>/dev/null; then
			w=1
			rm -f "$f"
		fi
	elif [ -e "$p" ]; then
		if [ $fixture = 1 ]; then
			# What the host holds, not an empty file in its place.
			[ -s "$p" ] && head -c 1 "$p" >/dev/null 2>&1 && r=1
		else
			head -c 1 "$p" >/dev/null 2>&1 && r=1
		fi
		(: >>"$p") 2>/dev/null && w=1
	elif (: >"$p") 2>/dev/null; then
		w=1
		rm -f "$p"
	fi
	printf "%s\t%s\t%s\n" "$p" $r $w
done'

compared=0
skipped=0
for who in root nobody; do
	for dir in "$GOLDEN"/*/; do
		policy=$dir/agent.yaml
		[ -f "$policy" ] || continue
		pname=$(basename "$dir")
		U=$T/$who/$pname
		WS=$U/ws
		H=$U/home
		TB=$U/bin
		mkdir -p "$WS" "$H" "$TB"
		cp "$B/omnibox-run" "$B/omnibox-init" "$B/omnibox-compile" "$TB/"
		cp "$policy" "$WS/agent.yaml"
		git init -q "$WS"
		name="--why for $pname"
		if ! "$TB/omnibox-compile" --emit=ir "$WS/agent.yaml" >"$U/ir.json" 2>/dev/null ||
			! python3 "$HERE/why_paths.py" fixture "$U/ir.json" "$WS" "$H" "$U/paths"; then
			skipped=$((skipped + 1))
			rm -rf "$U"
			continue
		fi
		sed 's/^/read /' "$U/paths" >"$U/queries"
		sed 's/^/write /' "$U/paths" >>"$U/queries"
		chmod -R a+rX "$U"
		[ "$who" = nobody ] && chown -R nobody:nogroup "$U"
		# The engine of --why, from the launch resolved here.
		if ! (cd "$WS" && as_user "$TB/omnibox-compile" --resolve --target=linux \
			--query-file="$U/queries" agent.yaml) >"$U/why.out" 2>"$U/why.err"; then
			skipped=$((skipped + 1))
			echo "skip [$who] $pname: --resolve: $(head -c 300 "$U/why.err")" >>"$T/skips"
			rm -rf "$U"
			continue
		fi
		# The same paths, tried in a real launch.
		if ! (cd "$WS" && as_user "$TB/omnibox-run" -q agent.yaml -- sh -c "$PROBE" probe \
			"$U" "$U" <"$U/paths") >"$U/probe.out" 2>"$U/probe.err"; then
			skipped=$((skipped + 1))
			echo "skip [$who] $pname: launch: $(head -c 300 "$U/probe.err")" >>"$T/skips"
			rm -rf "$U"
			continue
		fi
		tests=$((tests + 1))
		n=$(wc -l <"$U/paths")
		if [ "$n" -lt 200 ]; then
			fail "only $n paths"
		fi
		if ! out=$(python3 "$HERE/why_paths.py" compare "$U/why.out" "$U/probe.out"); then
			fail "--why disagrees with the launch"
		fi
		compared=$((compared + 1))
		rm -rf "$U"
	done
done
echo "why: $compared launches compared, $skipped policies without a Linux launch here"
[ -f "$T/skips" ] && sed 's/^/  /' "$T/skips"
# A suite that compares nothing proves nothing.
tests=$((tests + 1))
[ "$compared" -ge 100 ] || fail "only $compared launches were compared"
echo "why: $tests checks, $failures failed, $skips skipped"
[ "$failures" = 0 ]
