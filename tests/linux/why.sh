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
	[ -n "${WHY_KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT INT TERM

. "$HERE/../lib.sh"

# The probe inside the launch: for each path on standard input, whether the
# command could open it for reading (a directory: list it), which object it
# found there (device:inode), and whether it could write it (open an existing
# file for writing, make an entry in a directory, create a missing path;
# whatever it makes is removed).  "PATH<TAB>R<TAB>W<TAB>DEV:INO".  Outside,
# reading counts only where the object is the host's own (a mask, a
# placeholder or a directory bwrap made on the way is not).
# shellcheck disable=SC2016
PROBE='
while IFS= read -r p; do
	r=0 w=0
	id=$(stat -L -c %d:%i "$p" 2>/dev/null)
	if [ -d "$p" ]; then
		ls -A "$p" >/dev/null 2>&1 && r=1
		f="$p/why-probe.$$"
		if (: >"$f") 2>/dev/null; then
			w=1
			rm -f "$f"
		fi
	elif [ -e "$p" ]; then
		head -c 1 "$p" >/dev/null 2>&1 && r=1
		# A program some other process runs right now (ETXTBSY) is still one
		# the command may write: the answer is about the sandbox, not the moment.
		e=$( (: >>"$p") 2>&1) && w=1
		case $e in *"Text file busy"*) w=1 ;; esac
	elif (: >"$p") 2>/dev/null; then
		w=1
		rm -f "$p"
	fi
	printf "%s\t%s\t%s\t%s\n" "$p" $r $w "$id"
done'

compared=0
skipped=0
answers=0
disagree=0
for who in root nobody; do
	for dir in "$GOLDEN"/*/; do
		policy=$dir/agent.yaml
		[ -f "$policy" ] || continue
		pname=$(basename "$dir")
		# WHY_ONLY=PATTERN: the policies whose name matches, for work on one.
		case $pname in ${WHY_ONLY:-*}) ;; *) continue ;; esac
		U=$T/$who/$pname
		WS=$U/ws
		H=$U/home
		TB=$U/bin
		mkdir -p "$WS" "$H" "$TB"
		cp "$B/omnibox-run" "$B/omnibox-init" "$B/omnibox-proxy" "$B/omnibox-compile" "$TB/"
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
		# WHY_FROM_IR=1: ask the engine that answers from the IR alone
		# (omnibox-compile --query), to count where it disagrees.
		engine=--resolve
		[ -n "${WHY_FROM_IR:-}" ] && engine=--quiet
		if ! (cd "$WS" && as_user "$TB/omnibox-compile" "$engine" --target=linux \
			--query-file="$U/queries" agent.yaml) >"$U/why.out" 2>"$U/why.err"; then
			skipped=$((skipped + 1))
			echo "skip [$who] $pname: --resolve: $(head -c 300 "$U/why.err")" >>"$T/skips"
			rm -rf "$U"
			continue
		fi
		# The same paths, tried in a real launch.
		# shellcheck disable=SC2046
		if ! (cd "$WS" && as_user env $(cat "$U/env") "$TB/omnibox-run" -q agent.yaml -- \
			sh -c "$PROBE" probe <"$U/paths") >"$U/probe.out" 2>"$U/probe.err"; then
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
		# "compared N answers, M disagree"
		set -- $(printf '%s\n' "$out" | tail -n 1)
		answers=$((answers + $2))
		disagree=$((disagree + $4))
		compared=$((compared + 1))
		[ -n "${WHY_KEEP:-}" ] || rm -rf "$U"
	done
done
echo "why: $compared launches compared ($answers answers, $disagree disagree), $skipped policies without a Linux launch here"
[ -f "$T/skips" ] && sed 's/^/  /' "$T/skips"
# A suite that compares nothing proves nothing.
tests=$((tests + 1))
[ -n "${WHY_ONLY:-}" ] || [ "$compared" -ge 90 ] || fail "only $compared launches were compared"
echo "why: $tests checks, $failures failed, $skips skipped"
[ "$failures" = 0 ]
