#!/bin/sh
# cli.sh COMPILER - the command-line contract of omnibox-compile: exit codes,
# atomic output, --target=all directories and --check.
set -u

compiler=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2
failures=0
tests=0
skips=0

# expect_rc WANT DESCRIPTION -- COMMAND...: run COMMAND, check its status.
expect_rc() {
	want=$1
	what=$2
	shift 3
	tests=$((tests + 1))
	"$@" >out 2>err
	got=$?
	if [ "$got" != "$want" ]; then
		echo "FAIL: $what: exit $got, expected $want"
		sed 's/^/    stderr: /' err | head -5
		failures=$((failures + 1))
		return 1
	fi
	return 0
}

# check DESCRIPTION -- COMMAND...: COMMAND must succeed.
check() {
	what=$1
	shift 2
	tests=$((tests + 1))
	if ! "$@"; then
		echo "FAIL: $what"
		failures=$((failures + 1))
	fi
}

cat >agent.yaml <<'YAML'
name: cli
os_env:
  sandbox:
    write_paths: [.]
    egress_rules: ["GET example.com/**"]
terminals:
  bash: {}
YAML
printf 'os_env:\n  sandbox:\n    allow_network: no\n' >bad.yaml

expect_rc 0 "--help" -- "$compiler" --help
check "--help names the usage" -- grep -q '^usage: omnibox-compile' out
check "--help lists the exit codes" -- grep -q '65 invalid policy' out
expect_rc 0 "--version" -- "$compiler" --version
check "--version prints a version" -- grep -Eq '^omnibox-compile [0-9]+\.[0-9]+\.[0-9]+$' out

expect_rc 2 "no input" -- "$compiler"
expect_rc 2 "unknown option" -- "$compiler" --frobnicate agent.yaml
check "usage errors point at --help" -- grep -q "Try 'omnibox-compile --help'" err
expect_rc 2 "unknown target" -- "$compiler" --target=beos agent.yaml
expect_rc 2 "unknown output kind" -- "$compiler" --emit=pdf agent.yaml
expect_rc 2 "two inputs" -- "$compiler" agent.yaml agent.yaml
expect_rc 2 "--target=all without a directory" -- "$compiler" --target=all agent.yaml
expect_rc 2 "--emit with --target=all" -- "$compiler" --target=all --emit=ir -o d agent.yaml
expect_rc 2 "unknown terminal" -- "$compiler" --terminal=zsh agent.yaml
check "unknown terminal is named" -- grep -q "no terminal named 'zsh'" err

expect_rc 74 "missing input" -- "$compiler" missing.yaml
check "missing input says why" -- grep -q 'missing.yaml: No such file or directory' err
mkdir adir
expect_rc 74 "directory as input" -- "$compiler" adir
expect_rc 74 "output in a missing directory" -- "$compiler" -o nodir/x.json agent.yaml

expect_rc 65 "invalid policy" -- "$compiler" bad.yaml
check "invalid policy is located" -- grep -q '^bad.yaml:3:20: error: ' err
expect_rc 65 "invalid policy with -o" -- "$compiler" -o new.json bad.yaml
check "no output file after an error" -- test ! -e new.json
echo keep >old.json
expect_rc 65 "invalid policy over an existing file" -- "$compiler" -o old.json bad.yaml
check "existing output untouched after an error" -- grep -qx keep old.json
check "no temporary files left" -- sh -c '! ls | grep -q tmp-'

expect_rc 0 "stdout" -- "$compiler" --emit=ir agent.yaml
cp out stdout.json
expect_rc 0 "-o FILE" -- "$compiler" --emit=ir -o file.json agent.yaml
check "-o writes what stdout shows" -- cmp -s stdout.json file.json
expect_rc 0 "standard input" -- sh -c "'$compiler' --emit=ir - <agent.yaml"
check "standard input is named <stdin>" -- grep -q '"source": "<stdin>"' out
expect_rc 0 "terminal" -- "$compiler" --emit=ir --terminal=bash agent.yaml
check "terminal is recorded" -- grep -q '"terminal": "bash"' out
expect_rc 0 "same output twice" -- "$compiler" --emit=ir agent.yaml
check "output is deterministic" -- cmp -s out stdout.json

expect_rc 0 "--target=all -o DIR" -- "$compiler" --target=all -o gen agent.yaml
check "the IR is written" -- test -s gen/policy.ir.json
check "the egress table is written" -- test -s gen/egress.rules
expect_rc 0 "--check on a fresh directory" -- "$compiler" --check=gen agent.yaml
check "--check prints nothing when up to date" -- test ! -s out
sed -i 's/example.com/example.org/' agent.yaml
expect_rc 1 "--check after the policy changed" -- "$compiler" --check=gen agent.yaml
check "--check prints a unified diff" -- grep -q '^-    [0-9]*  GET      example.com' out
check "--check diff has a header" -- grep -q '^+++ b/egress.rules' out
check "--check says the directory is stale" -- grep -q 'gen is stale' err
rm gen/egress.rules
expect_rc 1 "--check with a missing file" -- "$compiler" --check=gen agent.yaml
check "--check names the missing file" -- grep -q 'Missing: gen/egress.rules' out
expect_rc 2 "--check with --output" -- "$compiler" --check=gen -o x agent.yaml
expect_rc 65 "--check of an invalid policy" -- "$compiler" --check=gen bad.yaml

expect_rc 0 "-h" -- "$compiler" -h
check "-h prints the usage" -- grep -q '^usage: omnibox-compile' out
expect_rc 0 "-V" -- "$compiler" -V
check "-V prints the version" -- grep -q '^omnibox-compile ' out

printf 'os_env:\n  sandbox:\n    write_paths: [.]\n    cwd_allow_hidden: [.venv, .git]\n' >q.yaml
expect_rc 0 "--query" -- "$compiler" --target=linux --query "write .git/hooks/pre-commit" \
	--query "write src/x" q.yaml
check "--query refuses a hook, with the rule" -- grep -q 'linux    deny  protected path {CWD}/.git/hooks' out
check "--query allows the workspace, with its line" -- grep -q 'allow the workspace, writable (write_paths .) (line 3)' out
printf '# a comment\nread .env\n\nGET https://example.com/\n' >queries
expect_rc 0 "--query-file" -- "$compiler" --target=all --query-file=queries q.yaml
check "--query-file answers each line on each target" -- test "$(grep -c '^  [a-z]' out)" = 6
expect_rc 2 "--query with a bad access" -- "$compiler" --query "open x" q.yaml
expect_rc 2 "--query with --emit" -- "$compiler" --query "read x" --emit=ir q.yaml
# The address table is the proxy's (compiler/decide/address.c): an address in a
# URL that the proxy would refuse is refused here too, whatever rule matches.
printf 'os_env:\n  sandbox:\n    egress_rules: ["GET 169.254.169.254/**", "GET 0x7f.1/**"]\n' >qa.yaml
expect_rc 0 "--query of refused addresses" -- "$compiler" --target=linux \
	--query "GET http://169.254.169.254/latest/meta-data/" --query "GET http://0x7f.1/" qa.yaml
check "--query refuses the metadata address a rule names, and says why" -- grep -q \
	'deny  egress rule 1 matches, but the address is in 169.254.0.0/16 (link-local, cloud metadata), refused unless egress_allow_private_destinations: true' out
check "--query refuses an address in another notation" -- grep -q \
	'deny  the host is an IPv4 address in a non-canonical notation' out
printf '    egress_allow_private_destinations: true\n' >>qa.yaml
expect_rc 0 "--query with private destinations allowed" -- "$compiler" --target=linux \
	--query "GET http://169.254.169.254/latest/meta-data/" qa.yaml
check "--query allows the address once private destinations are" -- grep -q 'allow egress rule 1' out

expect_rc 0 "--explain" -- "$compiler" --explain --target=all q.yaml
check "--explain sums up each target" -- test "$(grep -c '^  summary ' out)" = 5
expect_rc 0 "--explain --strict where all is enforced" -- "$compiler" --explain --strict \
	--target=linux q.yaml
expect_rc 1 "--explain --strict where something is not" -- "$compiler" --explain --strict \
	--target=windows q.yaml
check "--explain says what windows cannot enforce" -- grep -q 'not enforced.*a Job Object does not isolate files' out
expect_rc 2 "--strict without --explain" -- "$compiler" --strict q.yaml
printf 'os_env:\n  sandbox:\n    write_paths: [.]\n' >old.yaml
expect_rc 1 "--diff that widens" -- "$compiler" q.yaml --diff=old.yaml
check "--diff names the widening" -- grep -q 'dotfile: .git becomes visible in the workspace and every granted directory' out
expect_rc 0 "--diff in reverse narrows only" -- "$compiler" old.yaml --diff=q.yaml
check "--diff in reverse says nothing widened" -- grep -q '^nothing widened' out
expect_rc 1 "--diff --format=json" -- "$compiler" q.yaml --diff=old.yaml --format=json
check "--diff JSON parses" -- python3 -c 'import json,sys; d=json.load(open("out")); sys.exit(0 if d["widened"] else 1)'
expect_rc 2 "--format without --diff" -- "$compiler" --format=json q.yaml
expect_rc 2 "--diff with an unknown revision" -- "$compiler" q.yaml --diff=no-such-rev
if command -v git >/dev/null; then
	mkdir -p repo && cp old.yaml repo/agent.yaml &&
		(cd repo && git init -q && git add agent.yaml &&
			git -c user.email=t@t -c user.name=t commit -qm old) && cp q.yaml repo/agent.yaml
	expect_rc 1 "--diff=HEAD reads the old policy from git" -- "$compiler" repo/agent.yaml --diff=HEAD
	check "--diff=HEAD names its source" -- grep -q '^# HEAD:repo/agent.yaml -> repo/agent.yaml' out
else
	skips=$((skips + 1))
	echo "SKIP --diff=HEAD: git is not installed"
fi

# The container forms: what each holds, what neither can, and --resolve's reach.
expect_rc 0 "--explain --target=oci" -- "$compiler" --explain --target=oci q.yaml
check "--explain --target=oci sums up the bundle" -- grep -q '^  summary oci: ' out
expect_rc 0 "--explain --target=kubernetes" -- "$compiler" --explain --target=kubernetes q.yaml
check "--explain --target=kubernetes says dotfiles are not masked in a pod" -- \
	grep -q 'not enforced .*dotfiles (cwd_allow_hidden) .*a pod cannot mask names' out
printf 'os_env:\n  sandbox:\n    write_paths:\n      - {path: build, copy_on_write: true}\n' >cow.yaml
expect_rc 65 "--target=oci refuses copy_on_write" -- "$compiler" --target=oci cow.yaml
check "--target=oci refusal names file:line:col" -- grep -q '^cow.yaml:[0-9]*:[0-9]*: error: write_paths: copy_on_write needs omnibox-run' err
check "--target=oci refusal writes nothing" -- test ! -s out
expect_rc 1 "--explain --strict --target=kubernetes of copy_on_write" -- \
	"$compiler" --explain --strict --target=kubernetes cow.yaml
check "--explain says the kubernetes form is missing" -- grep -q 'no kubernetes form' out
expect_rc 2 "--resolve --target=kubernetes is refused" -- "$compiler" --resolve --target=kubernetes q.yaml
expect_rc 2 "--query --target=oci is refused" -- "$compiler" --target=oci --query "read ~/.ssh" q.yaml
expect_rc 2 "--resolve --target=oci needs the command" -- "$compiler" --resolve --target=oci q.yaml
expect_rc 0 "--resolve --target=oci with a command" -- "$compiler" --resolve --target=oci q.yaml -- sh
check "--resolve --target=oci prints config.json for the command" -- python3 -c \
	'import json,sys; d=json.load(open("out")); sys.exit(0 if d["process"]["args"] == ["sh"] and d["root"]["readonly"] else 1)'

echo "cli: $tests checks, $failures failed, $skips skipped"
[ "$failures" = 0 ]
