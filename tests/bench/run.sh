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
# The workspace writable, as a coding agent's usually is: its protected
# paths (the git entries, the editors' and agents' settings) are bound
# read-only onto themselves, placeholders where missing.
printf 'os_env:\n  sandbox:\n    write_paths: [.]\n' >"$tmp/writable.yaml"
echo "   (writable: write_paths [.], its protected paths read-only)"
# The listings of unchanged directories come from the last launch's scan
# (runtime/resolve/scan_memo.h), kept in the bench's own cache directory; the
# row without a memo points XDG_CACHE_HOME where there is none.
mkdir -p "$tmp/cache"
export XDG_CACHE_HOME="$tmp/cache"
# A workspace made this moment is kept from the memo for a second (only a
# directory that changed a second before a scan is taken back): one an
# agent works in is older.
sleep 1.1
echo "   (each scan takes the listings of unchanged directories from the last one's memo;"
echo "   'recursive, no memo': every directory read, as at a workspace's first launch)"
if [ -n "${BENCH_BEFORE:-}" ]; then
	before=$(cd "$BENCH_BEFORE" && pwd)
	"$B/bench/bench_exec" -n 100 \
		"bare bwrap=bwrap --ro-bind / / --dev /dev --proc /proc /bin/true" \
		"omnibox-run minimal=$B/omnibox-run -q --cwd=$ws $root/examples/minimal.yaml -- /bin/true" \
		"before: minimal=$before/omnibox-run -q --cwd=$ws $root/examples/minimal.yaml -- /bin/true" \
		"omnibox-run recursive=$B/omnibox-run -q --cwd=$ws $tmp/recursive.yaml -- /bin/true" \
		"before: recursive=$before/omnibox-run -q --cwd=$ws $tmp/recursive.yaml -- /bin/true" \
		"recursive, no memo=XDG_CACHE_HOME=$tmp/none $B/omnibox-run -q --cwd=$ws $tmp/recursive.yaml -- /bin/true" \
		"omnibox-run writable=$B/omnibox-run -q --cwd=$ws $tmp/writable.yaml -- /bin/true" \
		"before: writable=$before/omnibox-run -q --cwd=$ws $tmp/writable.yaml -- /bin/true"
else
	"$B/bench/bench_exec" -n 100 \
		"bare bwrap=bwrap --ro-bind / / --dev /dev --proc /proc /bin/true" \
		"omnibox-run minimal=$B/omnibox-run -q --cwd=$ws $root/examples/minimal.yaml -- /bin/true" \
		"omnibox-run recursive=$B/omnibox-run -q --cwd=$ws $tmp/recursive.yaml -- /bin/true" \
		"recursive, no memo=XDG_CACHE_HOME=$tmp/none $B/omnibox-run -q --cwd=$ws $tmp/recursive.yaml -- /bin/true" \
		"omnibox-run writable=$B/omnibox-run -q --cwd=$ws $tmp/writable.yaml -- /bin/true"
fi
echo "   the cost of each mask: a recursive scan of 10 directories holding 100 visible files"
echo "   each and N hidden ones spread among them (omnibox-init mounts /dev/null over each)"
for n in 0 100 1000; do
	i=0
	while [ $i -lt 10 ]; do
		mkdir -p "$tmp/m$n/d$i"
		(cd "$tmp/m$n/d$i" && touch $(seq -f 'f%g' 1 100))
		[ "$n" -eq 0 ] || (cd "$tmp/m$n/d$i" && touch $(seq -f '.h%g' 1 $((n / 10))))
		i=$((i + 1))
	done
done
mkdir -p "$tmp/all"
i=0
while [ $i -lt 10 ]; do
	mkdir -p "$tmp/all/d$i"
	(cd "$tmp/all/d$i" && touch $(seq -f '.h%g' 1 100))
	i=$((i + 1))
done
touch "$tmp/all/README"
per_mask() {
	"$B/bench/bench_exec" -n 20 "$@" | tee "$tmp/permask.out"
	awk '$1 == "masks" { ms[$2] = $4 } $1 == "before:" && $2 == "masks" { old[$3] = $5 }
	END {
		if (("0" in ms) && ("1000" in ms))
			printf "   per mask: %.3f ms (0 to 100), %.3f ms (100 to 1000)\n", (ms[100] - ms[0]) / 100, (ms[1000] - ms[100]) / 900
		if (("0" in old) && ("1000" in old))
			printf "   before:   %.3f ms (0 to 100), %.3f ms (100 to 1000)\n", (old[100] - old[0]) / 100, (old[1000] - old[100]) / 900
	}' "$tmp/permask.out"
}
if [ -n "${BENCH_BEFORE:-}" ]; then
	per_mask "bare bwrap=bwrap --ro-bind / / --dev /dev --proc /proc /bin/true" \
		"masks 0=$B/omnibox-run -q --cwd=$tmp/m0 $tmp/recursive.yaml -- /bin/true" \
		"masks 100=$B/omnibox-run -q --cwd=$tmp/m100 $tmp/recursive.yaml -- /bin/true" \
		"masks 1000=$B/omnibox-run -q --cwd=$tmp/m1000 $tmp/recursive.yaml -- /bin/true" \
		"before: masks 0=$before/omnibox-run -q --cwd=$tmp/m0 $tmp/recursive.yaml -- /bin/true" \
		"before: masks 100=$before/omnibox-run -q --cwd=$tmp/m100 $tmp/recursive.yaml -- /bin/true" \
		"before: masks 1000=$before/omnibox-run -q --cwd=$tmp/m1000 $tmp/recursive.yaml -- /bin/true"
else
	per_mask "bare bwrap=bwrap --ro-bind / / --dev /dev --proc /proc /bin/true" \
		"masks 0=$B/omnibox-run -q --cwd=$tmp/m0 $tmp/recursive.yaml -- /bin/true" \
		"masks 100=$B/omnibox-run -q --cwd=$tmp/m100 $tmp/recursive.yaml -- /bin/true" \
		"masks 1000=$B/omnibox-run -q --cwd=$tmp/m1000 $tmp/recursive.yaml -- /bin/true"
fi
echo "   1000 hidden files in 10 directories that hold nothing else (read-only workspace):"
echo "   each directory is hidden whole, one mount instead of 100"
if [ -n "${BENCH_BEFORE:-}" ]; then
	"$B/bench/bench_exec" -n 20 "bare bwrap=bwrap --ro-bind / / --dev /dev --proc /proc /bin/true" \
		"all hidden 1000=$B/omnibox-run -q --cwd=$tmp/all $tmp/recursive.yaml -- /bin/true" \
		"before: all hidden 1000=$before/omnibox-run -q --cwd=$tmp/all $tmp/recursive.yaml -- /bin/true"
else
	"$B/bench/bench_exec" -n 20 "bare bwrap=bwrap --ro-bind / / --dev /dev --proc /proc /bin/true" \
		"all hidden 1000=$B/omnibox-run -q --cwd=$tmp/all $tmp/recursive.yaml -- /bin/true"
fi
echo "   the default policy on both Linux backends: bwrap, and linux_landlock (no namespace)"
printf 'os_env:\n  sandbox:\n    type: linux_landlock\n' >"$tmp/landlock.yaml"
"$B/bench/bench_exec" -n 100 \
	"/bin/true=/bin/true" \
	"omnibox-run bwrap=$B/omnibox-run -q --cwd=$ws $root/examples/minimal.yaml -- /bin/true" \
	"omnibox-run linux_landlock=$B/omnibox-run -q --cwd=$ws $tmp/landlock.yaml -- /bin/true"
echo "   the floor of this design here: a launcher that only starts bwrap and waits (linked as"
echo "   omnibox-run is), bwrap with a default launch's own arguments (and /usr, which omnibox-init"
echo "   mounts), and a first process that only runs the command (built as omnibox-init is)"
if [ "$(id -u)" = 0 ]; then
	"$B/bench/bench_exec" -n 100 \
		"bare bwrap=bwrap --ro-bind / / --dev /dev --proc /proc /bin/true" \
		"floor=$B/bench/floor_run bwrap --ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/bin /bin --symlink usr/sbin /sbin --proc /proc --tmpfs /tmp --ro-bind $B/bench/floor_init /.omnibox/init --bind / /.omnibox/host --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup-try --die-with-parent --new-session --cap-drop ALL --cap-add CAP_SYS_ADMIN --cap-add CAP_DAC_READ_SEARCH --cap-add CAP_SETPCAP --cap-add CAP_SETFCAP --uid 0 --gid 0 --as-pid-1 -- /.omnibox/init /bin/true" \
		"omnibox-run minimal=$B/omnibox-run -q --cwd=$ws $root/examples/minimal.yaml -- /bin/true"
else
	echo "   (measured as root only: a user's launch makes a user namespace the floor would not)"
fi
echo "   where it goes: the two processes a launch adds to bare bwrap, each started alone"
"$B/bench/bench_exec" -n 100 \
	"/bin/true=/bin/true" \
	"omnibox-run --version=$B/omnibox-run --version" \
	"omnibox-init, then true=$B/omnibox-init --exec /bin/true -- /bin/true"
echo "   egress_rules: omnibox-run starts omnibox-proxy (OpenSSL: the session CA, the trust"
echo "   bundle, the socket) before the agent; a launch without them loads no TLS library"
printf 'os_env:\n  sandbox:\n    egress_rules: ["GET example.com/**"]\n' >"$tmp/egress.yaml"
if [ -n "${BENCH_BEFORE:-}" ]; then
	"$B/bench/bench_exec" -n 300 \
		"/bin/true=/bin/true" \
		"omnibox-run --version=$B/omnibox-run --version" \
		"before: omnibox-run --version=$before/omnibox-run --version"
	"$B/bench/bench_exec" -n 100 \
		"bare bwrap=bwrap --ro-bind / / --dev /dev --proc /proc /bin/true" \
		"omnibox-run minimal=$B/omnibox-run -q --cwd=$ws $root/examples/minimal.yaml -- /bin/true" \
		"before: minimal=$before/omnibox-run -q --cwd=$ws $root/examples/minimal.yaml -- /bin/true" \
		"omnibox-run egress=$B/omnibox-run -q --cwd=$ws $tmp/egress.yaml -- /bin/true" \
		"before: egress=$before/omnibox-run -q --cwd=$ws $tmp/egress.yaml -- /bin/true"
else
	"$B/bench/bench_exec" -n 100 \
		"bare bwrap=bwrap --ro-bind / / --dev /dev --proc /proc /bin/true" \
		"omnibox-run minimal=$B/omnibox-run -q --cwd=$ws $root/examples/minimal.yaml -- /bin/true" \
		"omnibox-run egress=$B/omnibox-run -q --cwd=$ws $tmp/egress.yaml -- /bin/true"
fi
echo "   omnibox-proxy alone, as omnibox-run starts it: from its exec to its ready answer"
echo "   (the session CA, the trust bundle, its JKS and hashed files, the socket)"
if [ -n "${BENCH_BEFORE:-}" ]; then
	"$B/bench/bench_proxy_start" -n 100 \
		"omnibox-proxy start=$B/omnibox-proxy" \
		"before: omnibox-proxy start=$before/omnibox-proxy"
else
	"$B/bench/bench_proxy_start" -n 100 "omnibox-proxy start=$B/omnibox-proxy"
fi
echo
echo "== dotfile scan of a generated 1,000,000-entry tree, recursive"
"$B/bench/bench_scan" "$tmp/tree"
echo
echo "== seccomp: ns per allowed, argument-checked system call"
"$B/bench/bench_seccomp"
echo
echo "== Seatbelt profile for 10,000 dotfiles: the regex form vs per-file enumeration"
"$B/bench/bench_sbpl"
