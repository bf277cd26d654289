#!/bin/sh
# run.sh BUILD_DIR - the benchmarks behind `make bench`.  Every figure is
# measured side by side in one run and printed as a ratio where a baseline
# exists; absolute times on a shared machine mean little.
#
# BENCH_BEFORE=DIR (a build directory of another revision, e.g. from `git
# worktree add`) adds that revision's omnibox-compile to the compile rows and
# its omnibox-run to the launch rows, so a change is measured against what it
# replaces in the same run.
set -eu
B=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
largest=$(ls -S "$root"/examples/*.yaml | head -n 1)
tmp=$(mktemp -d /tmp/omnibox-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

echo "== compile latency: whole process, $(basename "$largest") (baseline: /bin/true)"
echo "   (all targets: into the same directory each run, as a regeneration does; target <= 4x)"
if [ -n "${BENCH_BEFORE:-}" ]; then
	before=$(cd "$BENCH_BEFORE" && pwd)
	"$B/bench/bench_exec" -n 300 \
		"/bin/true=/bin/true" \
		"compile ir=$B/omnibox-compile $largest --emit=ir" \
		"before: compile ir=$before/omnibox-compile $largest --emit=ir" \
		"compile all targets=$B/omnibox-compile --quiet $largest --target=all -o $tmp/all" \
		"before: all targets=$before/omnibox-compile --quiet $largest --target=all -o $tmp/all-before"
else
	"$B/bench/bench_exec" -n 300 \
		"/bin/true=/bin/true" \
		"compile ir=$B/omnibox-compile $largest --emit=ir" \
		"compile all targets=$B/omnibox-compile --quiet $largest --target=all -o $tmp/all"
fi
echo
echo "== egress rule matching: the compiled matcher vs a linear scan of the rules"
"$B/bench/bench_match"
echo
echo "== launch: omnibox-run vs bare bwrap, workspace of 10,000 entries"
ws=$tmp/ws
i=0
while [ $i -lt 100 ]; do
	mkdir -p "$ws/d$i"
	(cd "$ws/d$i" && touch $(seq -f 'f%g' 1 98) .env)
	i=$((i + 1))
done
touch "$ws/.env"
mkdir -p "$ws/.git"
echo "   ($(find "$ws" | wc -l) entries; default policy: top-level dotfiles; recursive: all 101 .env)"
printf 'os_env:\n  sandbox:\n    cwd_hidden_scan_recursive: true\n' >"$tmp/recursive.yaml"
if [ -n "${BENCH_BEFORE:-}" ]; then
	before=$(cd "$BENCH_BEFORE" && pwd)
	"$B/bench/bench_exec" -n 100 \
		"bare bwrap=bwrap --ro-bind / / --dev /dev --proc /proc /bin/true" \
		"omnibox-run minimal=$B/omnibox-run -q --cwd=$ws $root/examples/minimal.yaml -- /bin/true" \
		"before: minimal=$before/omnibox-run -q --cwd=$ws $root/examples/minimal.yaml -- /bin/true" \
		"omnibox-run recursive=$B/omnibox-run -q --cwd=$ws $tmp/recursive.yaml -- /bin/true" \
		"before: recursive=$before/omnibox-run -q --cwd=$ws $tmp/recursive.yaml -- /bin/true"
else
	"$B/bench/bench_exec" -n 100 \
		"bare bwrap=bwrap --ro-bind / / --dev /dev --proc /proc /bin/true" \
		"omnibox-run minimal=$B/omnibox-run -q --cwd=$ws $root/examples/minimal.yaml -- /bin/true" \
		"omnibox-run recursive=$B/omnibox-run -q --cwd=$ws $tmp/recursive.yaml -- /bin/true"
fi
echo "   the default policy on both Linux backends: bwrap, and linux_landlock (no namespace)"
printf 'os_env:\n  sandbox:\n    type: linux_landlock\n' >"$tmp/landlock.yaml"
"$B/bench/bench_exec" -n 100 \
	"/bin/true=/bin/true" \
	"omnibox-run bwrap=$B/omnibox-run -q --cwd=$ws $root/examples/minimal.yaml -- /bin/true" \
	"omnibox-run linux_landlock=$B/omnibox-run -q --cwd=$ws $tmp/landlock.yaml -- /bin/true"
echo "   where it goes: the two processes a launch adds to bare bwrap, each started alone"
"$B/bench/bench_exec" -n 100 \
	"/bin/true=/bin/true" \
	"omnibox-run --version=$B/omnibox-run --version" \
	"omnibox-init, then true=$B/omnibox-init --exec /bin/true -- /bin/true"
echo
echo "== dotfile scan of a generated 1,000,000-entry tree, recursive"
"$B/bench/bench_scan" "$tmp/tree"
echo
echo "== seccomp: ns per allowed, argument-checked system call"
"$B/bench/bench_seccomp"
echo
echo "== Seatbelt profile for 10,000 dotfiles: the regex form vs per-file enumeration"
"$B/bench/bench_sbpl"
