#!/usr/bin/env bash
# completion.sh [FILE] - the bash completion of omnibox-compile and omnibox-run
# (default: examples/completion/omnibox.bash): each case sets COMP_WORDS,
# COMP_CWORD and COMP_LINE as bash does for a command line, calls the
# completion function and compares COMPREPLY with what it must be.
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
file=${1:-$root/examples/completion/omnibox.bash}
case $file in /*) ;; *) file=$PWD/$file ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2

# shellcheck source=/dev/null
if ! source "$file"; then
	echo "FAIL: cannot source $file"
	exit 1
fi

cat >agent.yaml <<'EOF'
name: sample
os_env:
  sandbox:
    write_paths: [.]
terminals:
  bash:
    command: bash
    args: [-l]
  "tests":
    command: make
    env: {CI: "1"}
  lint:   # the linters
    command: make
    os_env:
      sandbox:
        allow_network: false
  # a comment, not a terminal
  web-ui: {command: npm}
tools:
  search: {type: builtin}
EOF
printf 'os_env:\r\n  type: caller_process\r\nterminals:\r\n  crlf:\r\n    command: sh\r\n' >dos.yaml
printf 'name: none\nos_env: {}\n' >plain.yaml
printf 'x\n' >notes.txt
mkdir -p sub/deeper
touch sub/inner.yml

tests=0
failures=0
breaks=$COMP_WORDBREAKS

# complete PROG LINE [CWORD]: COMPREPLY, sorted, on one line, in $got, for LINE
# with the cursor at its end (or on word CWORD).  Words are split at blanks,
# and at "=" and ":" when COMP_WORDBREAKS holds them, as bash splits them.
complete_line() {
	local prog=$1 line=$2 tok seg
	local -a words=()
	for tok in $line; do
		if [[ $COMP_WORDBREAKS == *=* ]]; then
			while [[ -n $tok ]]; do
				if [[ $tok == [=:]* ]]; then
					seg=${tok%%[!=:]*}
				else
					seg=${tok%%[=:]*}
				fi
				words+=("$seg")
				tok=${tok:${#seg}}
			done
		else
			words+=("$tok")
		fi
	done
	[[ $line == *' ' ]] && words+=("")
	COMP_WORDS=("${words[@]}")
	COMP_CWORD=${3:-$((${#words[@]} - 1))}
	COMP_LINE=$line
	COMP_POINT=${#line}
	COMPREPLY=()
	case $prog in
	omnibox-compile) _omnibox_compile ;;
	omnibox-run) _omnibox_run ;;
	esac
	got=$(printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort | tr '\n' ' ')
	got=${got% }
}

# expect PROG LINE WANT [CWORD]: the replies are exactly WANT (sorted, blank-separated).
expect() {
	tests=$((tests + 1))
	complete_line "$1" "$2" "${4:-}"
	if [[ $got != "$3" ]]; then
		echo "FAIL: $1 '$2'${4:+ (word $4)}: got '$got', expected '$3'"
		failures=$((failures + 1))
	fi
}

# expect_has PROG LINE WORD: the replies include WORD.
expect_has() {
	tests=$((tests + 1))
	complete_line "$1" "$2"
	if [[ " $got " != *" $3 "* ]]; then
		echo "FAIL: $1 '$2': '$3' missing from '$got'"
		failures=$((failures + 1))
	fi
}

for prog in omnibox-compile omnibox-run; do
	tests=$((tests + 1))
	if ! complete -p "$prog" 2>/dev/null | grep -q -- "-F _omnibox_"; then
		echo "FAIL: no completion registered for $prog"
		failures=$((failures + 1))
	fi
done

# Terminal names, from the terminals: block of the policy on the line.
expect omnibox-compile 'omnibox-compile agent.yaml --terminal=' 'bash lint tests web-ui'
expect omnibox-compile 'omnibox-compile agent.yaml --terminal=t' 'tests'
expect omnibox-compile 'omnibox-compile -q --target=linux agent.yaml --terminal ' \
	'bash lint tests web-ui'
expect omnibox-compile 'omnibox-compile --terminal= agent.yaml' 'bash lint tests web-ui' 2
expect omnibox-run 'omnibox-run --terminal=l agent.yaml' 'lint' 3
expect omnibox-run 'omnibox-run --terminal b agent.yaml -- make' 'bash' 2
expect omnibox-compile 'omnibox-compile dos.yaml --terminal=' 'crlf'
expect omnibox-compile 'omnibox-compile plain.yaml --terminal=' ''
expect omnibox-compile 'omnibox-compile --terminal=' ''
expect omnibox-compile 'omnibox-compile missing.yaml --terminal=' ''

# --emit kinds, --target values, --format values.
expect omnibox-compile 'omnibox-compile agent.yaml --emit=' \
	'bwrap egress egress-table env ir kubernetes landlock oci sbpl sbpl-params seccomp seccomp-bpf seccomp-landlock seccomp-landlock-bpf seccomp-landlock-net seccomp-landlock-net-bpf seccomp-oci winjob'
expect omnibox-compile 'omnibox-compile agent.yaml --emit=sec' \
	'seccomp seccomp-bpf seccomp-landlock seccomp-landlock-bpf seccomp-landlock-net seccomp-landlock-net-bpf seccomp-oci'
expect omnibox-compile 'omnibox-compile -e sb' 'sbpl sbpl-params'
expect omnibox-compile 'omnibox-compile --emit w' 'winjob'
expect omnibox-compile 'omnibox-compile agent.yaml --target=' 'all darwin kubernetes linux oci windows'
expect omnibox-compile 'omnibox-compile -t d' 'darwin'
expect omnibox-compile 'omnibox-compile --explain --target=w' 'windows'
expect omnibox-compile 'omnibox-compile agent.yaml --diff=main --format=' 'json markdown text'

# Options of each program.
expect omnibox-compile 'omnibox-compile --ex' '--explain'
expect omnibox-compile 'omnibox-compile --q' '--query-file= --query= --quiet'
expect omnibox-compile 'omnibox-compile --st' '--strict --strict-toplevel'
expect_has omnibox-compile 'omnibox-compile -' '-V'
expect_has omnibox-compile 'omnibox-compile -' '-h'
expect_has omnibox-compile 'omnibox-compile -' '--diff='
expect omnibox-run 'omnibox-run --e' '--egress-ca= --egress-hosts= --egress-log= --egress-resolv='
expect omnibox-run 'omnibox-run --ex' ''
expect_has omnibox-run 'omnibox-run -' '--dry-run'
expect_has omnibox-run 'omnibox-run -' '-V'

# The policy argument: YAML files and directories; paths for path options.
expect omnibox-compile 'omnibox-compile ' 'agent.yaml dos.yaml plain.yaml sub'
expect omnibox-compile 'omnibox-compile a' 'agent.yaml'
expect omnibox-compile 'omnibox-compile sub/' 'sub/deeper sub/inner.yml'
expect omnibox-compile 'omnibox-compile n' 'notes.txt'
expect omnibox-run 'omnibox-run -q p' 'plain.yaml'
expect omnibox-compile 'omnibox-compile agent.yaml --cwd=s' 'sub'
expect omnibox-compile 'omnibox-compile agent.yaml --query-file=n' 'notes.txt'
expect omnibox-compile 'omnibox-compile agent.yaml -o n' 'notes.txt'
expect omnibox-compile 'omnibox-compile agent.yaml --diff=p' 'plain.yaml'
expect_has omnibox-run 'omnibox-run agent.yaml -- bas' 'bash'

# With "=" not a word break, the whole word is replaced.
COMP_WORDBREAKS=${breaks//[=:]/}
expect omnibox-compile 'omnibox-compile agent.yaml --terminal=l' '--terminal=lint'
expect omnibox-compile 'omnibox-compile --emit=sbpl' '--emit=sbpl --emit=sbpl-params'
expect omnibox-compile 'omnibox-compile --target=a' '--target=all'
expect omnibox-compile 'omnibox-compile agent.yaml --query-file=n' '--query-file=notes.txt'
COMP_WORDBREAKS=$breaks

echo "completion: $((tests - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
