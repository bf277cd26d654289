#!/bin/sh
# selftest.sh - validate.mjs can fail.
#
# Every fixtures/good-*.yaml validates, every document "ok"; every
# fixtures/bad-*.yaml is refused, exactly one of its documents, for the
# reason its first line names ("# expect: TEXT", a fixed string of the
# output).  The bad ones are each broken one way: a required field missing,
# a wrong type, an unknown or misplaced field, a value outside an enum, a
# malformed quantity, an unquoted YAML 1.1 boolean, a duplicate key, an
# apiVersion/kind outside the list, a bad name, a Deployment selecting
# other labels, an empty document, and a broken second document of three.
# Runs validate.mjs with the npm packages .ci/install-deps installs.
set -u

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib.sh
. "$here/../lib.sh"

validate() {
	out=$(node "$here/validate.mjs" "$@" 2>&1)
	rc=$?
}

good=0
bad=0
for f in "$here"/fixtures/good-*.yaml; do
	name=$(basename "$f")
	good=$((good + 1))
	validate "$f"
	expect_rc 0
	docs=$(grep -c '^---' "$f")
	expect_eq "documents ok" "$(printf '%s\n' "$out" | grep -c ': ok$')" $((docs + 1))
	expect_no_out "invalid"
done

for f in "$here"/fixtures/bad-*.yaml; do
	name=$(basename "$f")
	bad=$((bad + 1))
	want=$(sed -n '1s/^# expect: //p' "$f")
	tests=$((tests + 1))
	[ -n "$want" ] || fail "no '# expect: TEXT' first line"
	validate "$f"
	expect_rc 1
	expect_out "$want"
	expect_eq "documents refused" \
		"$(printf '%s\n' "$out" | grep -c -e ': invalid$' -e ': not valid YAML$' -e ': empty document$')" 1
done

name="at least the fixtures this suite was written with"
tests=$((tests + 1))
if [ "$good" -lt 4 ] || [ "$bad" -lt 15 ]; then fail "$good good and $bad bad fixtures"; fi

name="one bad file among good ones fails the run"
validate "$here"/fixtures/good-agent.yaml "$here"/fixtures/bad-pod-unknown-field.yaml \
	"$here"/fixtures/good-proxy.yaml
expect_rc 1
expect_out "good-proxy.yaml: doc 5 (Service/omnibox-egress): ok"

name="no file is a usage error"
validate
expect_rc 2
expect_out "usage: validate.mjs FILE..."

name="a missing file fails"
validate "$here/fixtures/no-such-file.yaml"
expect_rc 1
expect_out "no-such-file.yaml: ENOENT"

name="without the npm packages"
out=$(OMNIBOX_NODE_MODULES=/nonexistent node "$here/validate.mjs" "$here/fixtures/good-agent.yaml" 2>&1)
rc=$?
expect_rc 2
expect_out "run .ci/install-deps"

echo "kubernetes-selftest: $tests checks, $failures failed"
[ "$failures" = 0 ]
