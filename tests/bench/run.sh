#!/bin/sh
# run.sh BUILD_DIR - the benchmarks behind `make bench`.  Every figure is
# measured side by side in one run and printed as a ratio where a baseline
# exists; absolute times on a shared machine mean little.
set -eu
B=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
largest=$(ls -S "$root"/examples/*.yaml | head -n 1)

echo "== compile latency: whole process, $(basename "$largest") (baseline: /bin/true)"
"$B/bench/bench_exec" -n 300 \
	"/bin/true=/bin/true" \
	"compile --emit=ir=$B/omnibox-compile $largest --emit=ir" \
	"compile --emit=egress=$B/omnibox-compile $largest --emit=egress"
echo
echo "== egress rule matching (compiled matcher vs a linear scan of the rules)"
"$B/bench/bench_match"
