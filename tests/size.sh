#!/bin/sh
# tests/size.sh [DIR...]: no function over 150 lines, no source file over 1,500.
#
# A function is counted from the line that starts its signature (its name at
# the start of the line, or after a return type or attribute on that line),
# through the `{` on its own line, to the `}` in column 0 that closes it: the
# layout .clang-format gives every definition here.  A function over the
# limit fails; a file over its limit is reported as a warning only.
#
# Generated code lives in build/ and is not looked at; the re2c and lemon
# sources (.re, .y) are mostly generator input and are not counted either.
set -eu
cd "$(dirname "$0")/.."

FUNC_MAX=150
FILE_MAX=1500
[ $# -gt 0 ] || set -- compiler grammar emitters runtime

files=$(find "$@" -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)
[ -n "$files" ] || { echo "size: no sources under $*" >&2; exit 2; }

# shellcheck disable=SC2086 # one file name a word; none has a space
awk -v func_max="$FUNC_MAX" -v file_max="$FILE_MAX" '
FNR == 1 {
	if (prev != "" && prev_lines > file_max)
		printf "size: warning: %s: %d lines (over %d)\n", prev, prev_lines, file_max
	name = ""; body = 0
}
{ prev = FILENAME; prev_lines = FNR }
# In a body, only a `}` in column 0 closes it.
body {
	if ($0 ~ /^}/) {
		n = FNR - start + 1
		if (n > func_max) {
			printf "size: %s:%d: %s is %d lines (over %d)\n", FILENAME, start, name, n, func_max
			bad++
		}
		body = 0; name = ""
	}
	next
}
# A signature starts in column 0: the name before the parameter list, after
# any return type or attribute on the same line.
/^[A-Za-z_]/ && /\(/ {
	sig = $0
	gsub(/__attribute__[ \t]*\(\([^)]*\)\)/, "", sig)
	if (match(sig, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
		name = substr(sig, RSTART, RLENGTH - 1); sub(/[ \t]+$/, "", name)
		start = FNR
	}
}
# A prototype, a macro call or a declaration ends before any body.
name != "" && /;[ \t]*(\/\*.*\*\/)?[ \t]*$/ { name = ""; next }
name != "" && /^{[ \t]*$/ { body = 1; next }
# Anything else in column 0 (a comment, a directive, a type) is not a signature.
name != "" && FNR != start && /^[^ \t]/ && !/^[A-Za-z_]/ { name = "" }
END {
	if (prev != "" && prev_lines > file_max)
		printf "size: warning: %s: %d lines (over %d)\n", prev, prev_lines, file_max
	if (bad) {
		printf "size: %d function(s) over %d lines\n", bad, func_max
		exit 1
	}
	print "size: ok"
}
' $files
