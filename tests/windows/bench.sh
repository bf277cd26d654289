#!/bin/sh
# bench.sh BUILD_DIR [ROUNDS] - launch overhead of omnibox-run.exe under Wine:
# the same program (wt_agent.exe exit 0) started directly and through
# omnibox-run.exe, alternating in one run, one Wine prefix and one warm
# wineserver.  Prints both medians and the ratio, twice: as a shell sees it
# (`wine64 X`, which includes Wine's own process start-up) and as a Windows
# program sees it (CreateProcess + wait, timed inside Wine by wt_bench.exe).
set -u

if [ $# -lt 1 ]; then
	echo "usage: $0 BUILD_DIR [ROUNDS]" >&2
	exit 2
fi
B=$(cd "$1" && pwd)
ROUNDS=${2:-40}
# Debian's wine64 package puts the loader here; WINE=... overrides.
if [ -z "${WINE:-}" ]; then
	WINE=/usr/lib/wine/wine64
	[ -x "$WINE" ] || WINE=$(command -v wine64 || command -v wine || echo /usr/lib/wine/wine64)
fi
WINESERVER=${WINESERVER:-$(dirname "$WINE")/wineserver}
if [ ! -x "$WINE" ]; then
	echo "bench.sh: SKIP: $WINE not found; install the Debian package wine64"
	exit 0
fi
RUN=$B/windows/omnibox-run.exe
AGENT=$B/windows/wt_agent.exe

T=$(mktemp -d /tmp/omnibox-winbench.XXXXXX)
export WINEPREFIX="$T/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree=;mshtml="
cleanup() {
	[ -d "$WINEPREFIX" ] && "$WINESERVER" -k 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

"$WINE" wineboot -i >/dev/null 2>&1 || {
	echo "bench.sh: cannot create a Wine prefix" >&2
	exit 1
}
# Keep the wineserver up between launches, as a desktop session would.
"$WINESERVER" -p
printf 'os_env:\n  sandbox:\n    limits: {memory: 1GiB, processes: 32, cpu_time: 10m}\n' \
	>"$T/agent.yaml"
"$B/omnibox-compile" -q --target=windows --emit=winjob -o "$T/agent.manifest" "$T/agent.yaml" ||
	exit 1
cd "$T" || exit 1

now_ns() {
	date +%s%N
}

# Warm-up, and a check that both paths work at all.
if ! "$WINE" "$AGENT" exit 0 || ! "$WINE" "$RUN" -q agent.manifest -- "$AGENT" exit 0; then
	echo "bench.sh: a launch failed" >&2
	exit 1
fi
: >direct.ns
: >wrapped.ns
i=0
while [ $i -lt "$ROUNDS" ]; do
	t0=$(now_ns)
	"$WINE" "$AGENT" exit 0
	t1=$(now_ns)
	"$WINE" "$RUN" -q agent.manifest -- "$AGENT" exit 0
	t2=$(now_ns)
	echo $((t1 - t0)) >>direct.ns
	echo $((t2 - t1)) >>wrapped.ns
	i=$((i + 1))
done

median() {
	sort -n "$1" | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.2f", m / 1e6 }'
}
md=$(median direct.ns)
mw=$(median wrapped.ns)
echo "from the shell (wine64 PROGRAM), $ROUNDS rounds:"
printf '  direct           median %8s ms\n' "$md"
printf '  omnibox-run.exe  median %8s ms\n' "$mw"
awk -v a="$mw" -v b="$md" 'BEGIN { printf "  ratio            %.2fx\n", a / b }'
"$WINE" "$B/windows/wt_bench.exe" "$ROUNDS" agent.manifest "$AGENT" exit 0
