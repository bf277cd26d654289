#!/bin/sh
# demo.sh BUILD_DIR - what `make demo` shows: every example compiled for
# every target, and the policy of one example as a reviewer reads it.
set -eu
B=$1
root=$(cd "$(dirname "$0")/.." && pwd)
out="$B/demo"
rm -rf "$out"

for f in "$root"/examples/*.yaml; do
	name=$(basename "$f" .yaml)
	"$B/omnibox-compile" --quiet --target=all -o "$out/$name" "$f"
	echo "compiled examples/$name.yaml -> $out/$name/"
	(cd "$out/$name" && find . -type f | sort | sed 's|^\./|    |')
done

echo
echo "== the egress allow-list of examples/seed-agent.yaml"
"$B/omnibox-compile" --emit=egress "$root/examples/seed-agent.yaml"
echo
echo "== an invalid policy is refused with a located error"
printf 'os_env:\n  sandbox:\n    allow_network: no\n    egress_rules: ["FETCH api.github.com"]\n' \
	>"$out/invalid.yaml"
if "$B/omnibox-compile" "$out/invalid.yaml" >/dev/null; then
	echo "demo: the invalid policy compiled" >&2
	exit 1
fi
