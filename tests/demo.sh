#!/bin/sh
# demo.sh BUILD_DIR - what `make demo` shows: every example compiled for
# every target, then one command run in a real sandbox, with what it was
# allowed to do and what it was refused.
set -eu
B=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
out="$B/demo"
rm -rf "$out"
mkdir -p "$out"

for f in "$root"/examples/*.yaml; do
	name=$(basename "$f" .yaml)
	"$B/omnibox-compile" --quiet --target=all -o "$out/$name" "$f"
	echo "compiled examples/$name.yaml -> $out/$name/: $(cd "$out/$name" && find . -type f | sort | sed 's|^\./||' | tr '\n' ' ')"
done

echo
echo "== examples/seed-agent.yaml: the egress allow-list the proxy enforces"
"$B/omnibox-compile" --emit=egress "$root/examples/seed-agent.yaml"

echo
echo "== an invalid policy is refused with a located error"
printf 'os_env:\n  sandbox:\n    allow_network: no\n    egress_rules: ["FETCH api.github.com"]\n' \
	>"$out/invalid.yaml"
if "$B/omnibox-compile" "$out/invalid.yaml" >/dev/null; then
	echo "demo: the invalid policy compiled" >&2
	exit 1
fi

# A workspace with the usual secrets in it, and a policy for it.
ws="$out/workspace"
mkdir -p "$ws/src" "$ws/.aws"
echo 'int main(void) { return 0; }' >"$ws/src/main.c"
echo 'OPENAI_API_KEY=sk-demo-secret' >"$ws/.env"
echo '[default] aws_secret_access_key=demo' >"$ws/.aws/credentials"
cat >"$out/demo-agent.yaml" <<'YAML'
name: demo
os_env:
  type: caller_process
  sandbox:
    write_paths: []
    allow_network: false
    env_passthrough: []
YAML

echo
echo "== omnibox-run $out/demo-agent.yaml -- bash: what the sandbox allows and refuses"
cd "$ws"
AWS_SECRET_ACCESS_KEY=host-secret "$B/omnibox-run" -q "$out/demo-agent.yaml" -- bash -c '
try() { what=$1; shift; if err=$("$@" 2>&1 >/dev/null); then echo "  ALLOWED  $what"; else echo "  DENIED   $what${err:+ (${err##*: })}"; fi; }
try "read src/main.c" cat src/main.c
try "write src/new.c (workspace is read-only)" sh -c "echo x > src/new.c"
try "write \$TMPDIR/build.log (private scratch dir)" sh -c "echo x > \$TMPDIR/build.log"
try "read .env (dotfiles are masked)" sh -c "cat .env | grep -q sk-"
try "list .aws (masked)" sh -c "ls .aws/credentials"
try "read /etc/shadow" cat /etc/shadow
try "see \$AWS_SECRET_ACCESS_KEY" sh -c "test -n \"\$AWS_SECRET_ACCESS_KEY\""
try "open a TCP connection (network off)" bash -c "exec 3<>/dev/tcp/1.1.1.1/80"
try "create a user namespace (seccomp)" unshare -U true
'
