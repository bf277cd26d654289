#!/bin/sh
# wine.sh BUILD_DIR - omnibox-run.exe under Wine (spec: windows.md, "Testing
# without Windows").  Policies are compiled with BUILD_DIR/omnibox-compile
# --target=windows --emit=winjob and launched with BUILD_DIR/windows/omnibox-run.exe
# around the helper agent BUILD_DIR/windows/wt_agent.exe.
#
# What Wine enforces is tested for real: exit codes, the agent and its
# grandchildren in the job, no breakaway, the tree killed when omnibox-run.exe
# dies, nothing left behind when the agent exits, a failed assignment that
# stops the launch, the environment allow-list, the scratch dir.  Wine does not
# enforce memory or process-count limits, so their values are checked in the
# --dry-run report of what is passed to SetInformationJobObject.  Every
# behaviour that a broken runtime could fake has a control run outside the
# job that shows the opposite, so each check can fail.
#
# One Wine prefix for the whole run, in a temporary directory removed at the end.
#
# shellcheck disable=SC1003,SC2015
# (Windows paths end in backslashes; `a && b || fail` only reports.)
set -u

if [ $# -ne 1 ]; then
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
fi
B=$(cd "$1" && pwd)
# Debian's wine64 package puts the loader here; WINE=... overrides.
if [ -z "${WINE:-}" ]; then
	WINE=/usr/lib/wine/wine64
	[ -x "$WINE" ] || WINE=$(command -v wine64 || command -v wine || echo /usr/lib/wine/wine64)
fi
WINESERVER=${WINESERVER:-$(dirname "$WINE")/wineserver}
if [ ! -x "$WINE" ]; then
	echo "wine.sh: SKIP: $WINE not found; install the Debian package wine64"
	echo "wine.sh: 0 checks, 0 failed, 1 skipped"
	exit 0
fi
RUN=$B/windows/omnibox-run.exe
AGENT=$B/windows/wt_agent.exe
QUOTE=$B/windows/wt_quote.exe
COMPILE=$B/omnibox-compile
for f in "$RUN" "$AGENT" "$QUOTE" "$COMPILE"; do
	if [ ! -f "$f" ]; then
		echo "wine.sh: $f is missing (make windows)" >&2
		exit 2
	fi
done

# Wine turns arguments, environment strings and output between UTF-16 and the
# Unix locale's character set: without a UTF-8 one (no LANG, as on a minimal
# machine) 'été' reaches the agent with its high bits stripped.  A locale the
# tests need is set here, not expected from the caller's environment.
case $(locale charmap 2>/dev/null) in
UTF-8) ;;
*) export LC_ALL=C.UTF-8 ;;
esac

T=$(mktemp -d /tmp/omnibox-wine.XXXXXX)
export WINEPREFIX="$T/prefix" WINEDEBUG=-all
# No Mono or Gecko installers while the prefix is created: nothing here needs them.
export WINEDLLOVERRIDES="mscoree=;mshtml="
bg=
cleanup() {
	for p in $bg; do kill -9 "$p" 2>/dev/null; done
	# This prefix's own server and processes only.
	[ -d "$WINEPREFIX" ] && "$WINESERVER" -k 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# For env_expect; the rest of what it defines is redefined below.
. "$(dirname "$0")/../lib.sh"

tests=0
failures=0
name=

fail() {
	printf 'FAIL %s: %s\n' "$name" "$*"
	if [ -n "${out:-}" ]; then
		printf '%s\n' "$out" | head -30 | sed 's/^/    | /'
	fi
	failures=$((failures + 1))
}

check() {
	tests=$((tests + 1))
	name=$1
}

# The Windows path of a Unix path (Wine maps / to Z:).
winpath() {
	printf 'Z:%s' "$1" | tr / '\\'
}

size() {
	stat -c %s "$1" 2>/dev/null || echo 0
}

# grows FILE: its size goes up within a second.
grows() {
	s1=$(size "$1")
	i=0
	while [ $i -lt 10 ]; do
		sleep 0.1
		[ "$(size "$1")" -gt "$s1" ] && return 0
		i=$((i + 1))
	done
	return 1
}

# Is there a scratch dir in the prefix's temp dir?
scratch_left() {
	for d in "$temp_dir"/omnibox-*; do
		[ -e "$d" ] && return 0
	done
	return 1
}

# policy NAME: compile $T/NAME.yaml (from stdin) into $T/NAME.manifest.
policy() {
	cat >"$T/$1.yaml"
	if ! "$COMPILE" -q --target=windows --emit=winjob -o "$T/$1.manifest" "$T/$1.yaml"; then
		echo "wine.sh: cannot compile the policy $1" >&2
		exit 2
	fi
}

# capture COMMAND...: run it in $T; output in $out (stdout and stderr), status
# in $rc.  The output goes through a file, not a pipe: a process that wrongly
# survives could hold a pipe open and hang the test instead of failing it.
#
# Status 1 with no output at all is Wine's loader failing before the program
# ran (seen once in CI, in a check whose program prints an error and exits
# 125): neither omnibox-run.exe nor wt_agent.exe ends that way unless told to
# (`exit 1`, run with silent1=y).  That run is made once more, and said so.
silent1=
capture() {
	(cd "$T" && exec "$@") >"$T/out" 2>&1
	rc=$?
	if [ "$rc" = 1 ] && [ ! -s "$T/out" ] && [ -z "$silent1" ]; then
		printf 'wine.sh: %s: status 1 and no output, Wine'"'"'s own failure; once more\n' "$name"
		(cd "$T" && exec "$@") >"$T/out" 2>&1
		rc=$?
	fi
	out=$(cat "$T/out")
}

# run MANIFEST [OPTION...] [-- COMMAND...]: omnibox-run.exe [OPTION...]
# $T/MANIFEST.manifest [-- COMMAND...], through capture.
run() {
	m=$1
	shift
	opts=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts="$opts $1"
		shift
	done
	# shellcheck disable=SC2086
	capture "$WINE" "$RUN" $opts "$T/$m.manifest" "$@"
}

# direct ARGS...: the agent without omnibox-run.exe, for the control runs.
direct() {
	capture "$WINE" "$AGENT" "$@"
}

start=$(date +%s)
if ! "$WINE" wineboot -i >/dev/null 2>&1; then
	echo "wine.sh: cannot create a Wine prefix in $WINEPREFIX" >&2
	exit 1
fi
echo "wine.sh: Wine prefix ready in $(($(date +%s) - start)) s"
temp_dir=$WINEPREFIX/drive_c/users/$(id -un)/Temp

policy plain <<'EOF'
os_env:
  sandbox:
    limits: {processes: 16}
EOF
policy limits <<'EOF'
os_env:
  sandbox:
    limits:
      memory: 2GiB
      processes: 64
      cpu_time: 10m
      cpu_rate: 50%
      open_files: 1024
EOF
policy env <<'EOF'
os_env:
  sandbox:
    env_passthrough: [AWS_PROFILE, GIT_DIR]
EOF
policy scratch <<'EOF'
os_env:
  start_in_scratch: true
EOF
policy none <<'EOF'
os_env:
  sandbox:
    type: none
EOF
policy fork <<'EOF'
os_env:
  fork: true
EOF
mkdir -p "$T/sub"
policy subdir <<'EOF'
os_env:
  cwd: sub
EOF
policy terminal <<'EOF'
os_env:
  sandbox:
    env_passthrough: [AWS_PROFILE]
terminals:
  t:
    command: wt_agent.exe
    args: [env]
    env: {CI: "1"}
    env_unset: [AWS_PROFILE]
EOF
"$COMPILE" -q --target=windows --emit=winjob --terminal=t -o "$T/terminal.manifest" \
	"$T/terminal.yaml" || exit 2
policy envt <<'EOF'
os_env:
  sandbox:
    env_passthrough: [AWS_PROFILE, GIT_DIR, USER]
terminals:
  envt:
    command: wt_agent.exe
    args: [env]
    env: {CI: "1", Path: 'C:\only\this'}
    env_unset: [USER]
EOF
"$COMPILE" -q --target=windows --emit=winjob --terminal=envt -o "$T/envt.manifest" \
	"$T/envt.yaml" || exit 2
"$COMPILE" -q --target=windows --emit=env --terminal=envt "$T/envt.yaml" >"$T/envt.emit" || exit 2

# ---- exit status -------------------------------------------------------------------

for code in 0 1 3 42 124 200 255; do
	check "the agent's exit status $code comes back"
	silent1=$([ "$code" = 1 ] && echo y)
	run plain -q -- "$AGENT" exit $code
	silent1=
	[ "$rc" = "$code" ] || fail "exit status $rc"
done

# ---- inside the job ------------------------------------------------------------------

check "the agent runs inside a job"
run plain -q -- "$AGENT" injob
[ "$rc" = 0 ] && [ "$out" = "injob=1" ] || fail "status $rc"
check "a grandchild of the agent is inside the job"
run plain -q -- "$AGENT" spawn spawn injob
[ "$rc" = 0 ] && [ "$out" = "injob=1" ] || fail "status $rc"
check "control: outside omnibox-run.exe a grandchild is in no job"
direct spawn spawn injob
[ "$out" = "injob=0" ] || fail "status $rc"

check "a process in the job cannot break away from it"
run plain -q -- "$AGENT" breakaway
case $out in "breakaway=refused"*) ;; *) fail "status $rc" ;; esac
check "control: outside a job, CREATE_BREAKAWAY_FROM_JOB is harmless"
direct breakaway
[ "$out" = "breakaway=allowed" ] || fail "status $rc"

# ---- the tree ends with the job ------------------------------------------------------

check "an agent that starts a child and exits leaves no survivor"
rm -f "$T/beat1"
run plain -q -- "$AGENT" detach "$(winpath "$T/beat1")"
[ "$rc" = 0 ] || fail "status $rc"
[ -s "$T/beat1" ] || fail "the child never beat"
grows "$T/beat1" && fail "the child still runs after omnibox-run.exe returned"
check "control: without the job, the same child outlives its parent"
rm -f "$T/beat2"
direct detach "$(winpath "$T/beat2")"
grows "$T/beat2" || fail "the control child did not survive, so the check above proves nothing"
touch "$T/beat2.stop"

check "killing omnibox-run.exe closes the job and kills the agent's whole tree"
rm -f "$T/beat3" "$T/hold.out"
(cd "$T" && exec "$WINE" "$RUN" -q "$T/plain.manifest" -- "$AGENT" hold "$(winpath "$T/beat3")" \
	>"$T/hold.out" 2>&1) &
pid=$!
bg="$bg $pid"
i=0
while [ $i -lt 100 ] && ! grep -q ready "$T/hold.out" 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
out=$(cat "$T/hold.out")
if grep -q ready "$T/hold.out" && grows "$T/beat3"; then
	kill -9 $pid
	wait $pid 2>/dev/null
	sleep 0.3
	grows "$T/beat3" && fail "the grandchild still runs after omnibox-run.exe was killed"
else
	fail "the agent never got ready"
fi
check "control: killing a parent outside a job leaves its child running"
rm -f "$T/beat4" "$T/hold4.out"
(cd "$T" && exec "$WINE" "$AGENT" hold "$(winpath "$T/beat4")" >"$T/hold4.out" 2>&1) &
pid=$!
bg="$bg $pid"
i=0
while [ $i -lt 100 ] && ! grep -q ready "$T/hold4.out" 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
kill -9 $pid
wait $pid 2>/dev/null
sleep 0.3
grows "$T/beat4" || fail "the control child died too, so the check above proves nothing"
touch "$T/beat4.stop"

# ---- failing closed -------------------------------------------------------------------

check "a failed assignment aborts the launch before the agent runs"
rm -f "$T/touched"
capture env OMNIBOX_RUN_TEST_FAIL_ASSIGN=1 "$WINE" "$RUN" -q "$T/plain.manifest" -- "$AGENT" \
	touch "$(winpath "$T/touched")"
[ "$rc" = 125 ] || fail "status $rc, expected 125"
[ -e "$T/touched" ] && fail "the agent ran"
case $out in *"AssignProcessToJobObject"*) ;; *) fail "no word of the assignment" ;; esac
check "control: without the hook the same launch runs the agent"
run plain -q -- "$AGENT" touch "$(winpath "$T/touched")"
[ "$rc" = 0 ] && [ -e "$T/touched" ] || fail "status $rc"

check "a job setting the system refuses stops the launch, never runs the agent unlimited"
rm -f "$T/touched"
run limits -q -- "$AGENT" touch "$(winpath "$T/touched")"
# Wine refuses JobObjectCpuRateControlInformation; Windows 8 and later accept it.
if [ "$rc" = 125 ]; then
	[ -e "$T/touched" ] && fail "status 125, but the agent ran"
elif [ "$rc" != 0 ] || [ ! -e "$T/touched" ]; then
	fail "status $rc"
fi

check "an unknown manifest key stops the launch"
sed 's/^job = create$/job = create\nswap_limit = 1/' "$T/plain.manifest" >"$T/unknown.manifest"
rm -f "$T/touched"
run unknown -- "$AGENT" touch "$(winpath "$T/touched")"
[ "$rc" = 125 ] || fail "status $rc"
[ -e "$T/touched" ] && fail "the agent ran"
case $out in *"unknown.manifest:9: unknown key 'swap_limit'"*) ;; *) fail "message" ;; esac

check "a malformed number in the manifest stops the launch"
sed 's/^active_process_limit = 16$/active_process_limit = 16x/' "$T/plain.manifest" \
	>"$T/badnum.manifest"
run badnum -- "$AGENT" touch "$(winpath "$T/touched")"
[ "$rc" = 125 ] || fail "status $rc"
[ -e "$T/touched" ] && fail "the agent ran"
case $out in *"active_process_limit: '16x' is not a decimal number"*) ;; *) fail "message" ;; esac

check "os_env.fork is refused, in the words of every launcher (refuse_launch)"
run fork -q -- "$AGENT" touch "$(winpath "$T/touched")"
[ "$rc" = 125 ] && [ ! -e "$T/touched" ] || fail "status $rc"
case $out in *"os_env.fork is not supported; remove it to run on the workspace itself"*) ;;
*) fail "message" ;; esac

check "usage errors exit 125"
capture "$WINE" "$RUN"
[ "$rc" = 125 ] || fail "status $rc"
capture "$WINE" "$RUN" "$T/plain.manifest" "$AGENT" exit 0
[ "$rc" = 125 ] || fail "a command without -- ran: status $rc"

# check_escaped WANT...: $out holds each WANT and no ESC or BEL.
check_escaped() {
	case $out in
	*"$(printf '\033')"* | *"$(printf '\007')"*) fail "a control byte reached the output" ;;
	esac
	for want in "$@"; do
		case $out in *"$want"*) ;; *) fail "missing: $want" ;; esac
	done
}

check "a command and an argument with control bytes are shown escaped"
run plain -- "$(printf 'no\033[2Jsuch\007.exe')" "$(printf 'arg\033]0;t\007\nx')"
[ "$rc" = 125 ] || fail "status $rc"
check_escaped 'cannot start no\x1b[2Jsuch\x07.exe "arg\x1b]0;t\x07\nx"'
check "control: the same message with a plain name is the plain name"
run plain -- 'nosuch.exe' 'arg'
check_escaped 'cannot start nosuch.exe arg: '

check "an option with control bytes is shown escaped"
capture "$WINE" "$RUN" "$(printf -- '--x\033[31m\007')" "$T/plain.manifest"
[ "$rc" = 125 ] || fail "status $rc"
check_escaped "unknown option '--x\\x1b[31m\\x07'"

check "a manifest path with control bytes is shown escaped"
capture "$WINE" "$RUN" "$(printf 'Z:\\no\033[2J\007\ndir\\m.manifest')" -- "$AGENT" exit 0
[ "$rc" = 125 ] || fail "status $rc"
check_escaped 'Z:\no\x1b[2J\x07\ndir\m.manifest: '

check "a manifest value with control bytes is shown escaped"
sed 's/^job = create$/job = \\x1b[2J\\x07create/' "$T/plain.manifest" >"$T/escjob.manifest"
run escjob -- "$AGENT" exit 0
[ "$rc" = 125 ] || fail "status $rc"
check_escaped "escjob.manifest:8: job must be create or none, got '\\x1b[2J\\x07create'"

# ---- environment, scratch dir, working directory ---------------------------------------

check "the environment is the allow-list and nothing else"
capture env OMNIBOX_HOST_SECRET=hush AWS_PROFILE=dev git_dir=/repo "$WINE" "$RUN" -q \
	"$T/env.manifest" -- "$AGENT" env
envout=$out
[ "$rc" = 0 ] || fail "status $rc"
case $out in *OMNIBOX_HOST_SECRET*) fail "a host variable that is not listed reached the agent" ;; esac
printf '%s\n' "$out" | grep -qx 'AWS_PROFILE=dev' || fail "env_passthrough AWS_PROFILE is missing"
# Windows compares names without regard to case.
printf '%s\n' "$out" | grep -qx 'git_dir=/repo' || fail "env_passthrough GIT_DIR missed git_dir"
printf '%s\n' "$out" | grep -qi '^PATH=' || fail "PATH is missing"
printf '%s\n' "$out" | grep -qi '^SYSTEMROOT=' || fail "SYSTEMROOT is missing"
# Wine's loader adds its own WINE* variables to every process; they are not ours to judge.
extra=$(printf '%s\n' "$out" | sed 's/=.*//' | grep -v '^WINE' | tr '[:lower:]' '[:upper:]' | grep -vxE \
	'PATH|SYSTEMROOT|SYSTEMDRIVE|WINDIR|COMSPEC|PATHEXT|USERPROFILE|HOMEDRIVE|HOMEPATH|APPDATA|LOCALAPPDATA|NUMBER_OF_PROCESSORS|PROCESSOR_[A-Z_]*|TEMP|TMP|AWS_PROFILE|GIT_DIR')
[ -z "$extra" ] || fail "names beyond the allow-list: $extra"
check "control: outside omnibox-run.exe the host variable does reach a program"
capture env OMNIBOX_HOST_SECRET=hush "$WINE" "$AGENT" env
printf '%s\n' "$out" | grep -qx 'OMNIBOX_HOST_SECRET=hush' || fail "Wine does not pass it at all"

check "the agent's environment is exactly --emit=env's for the same host environment"
# The host environment as a program started by Wine sees it; Wine's loader adds
# its own WINE* variables to every process, so they are left out on both sides.
capture env OMNIBOX_HOST_SECRET=hush AWS_PROFILE=dev git_dir=/repo USER=agent "$WINE" "$AGENT" env
printf '%s\n' "$out" | tr -d '\r' >"$T/envt.host"
capture env OMNIBOX_HOST_SECRET=hush AWS_PROFILE=dev git_dir=/repo USER=agent "$WINE" "$RUN" -q \
	"$T/envt.manifest"
[ "$rc" = 0 ] || fail "status $rc"
got=$(printf '%s\n' "$out" | tr -d '\r' | grep -v '^WINE' | LC_ALL=C sort)
want=$(env_expect "$T/envt.emit" "$T/envt.host" "$(printf '%s\n' "$out" | sed -n 's/^TEMP=//p')" \
	"$(winpath "$T")" fold | grep -v '^WINE')
printf '%s\n' "$want" >"$T/envt.want"
[ "$got" = "$want" ] || fail "differs from --emit=env (- emitted, + got):
$(printf '%s\n' "$got" | diff "$T/envt.want" - | grep '^[<>]' | sed 's/^</-/; s/^>/+/')"

check "TEMP and TMP are one private scratch dir, removed after the launch"
out=$envout
tempv=$(printf '%s\n' "$out" | sed -n 's/^TEMP=//p')
tmpv=$(printf '%s\n' "$out" | sed -n 's/^TMP=//p')
case $tempv in *'\omnibox-'????????????????) ;; *) fail "TEMP=$tempv" ;; esac
[ "$tempv" = "$tmpv" ] || fail "TMP=$tmpv differs from TEMP=$tempv"
capture "$WINE" "$AGENT" exists "$tempv"
[ "$rc" = 3 ] || fail "the scratch dir $tempv is still there (status $rc)"
check "start_in_scratch starts the agent in the scratch dir, removed afterwards"
run scratch -q -- "$AGENT" cwd
cwd=$out
[ "$rc" = 0 ] || fail "status $rc"
case $cwd in *'\omnibox-'????????????????) ;; *) fail "cwd $cwd" ;; esac
capture "$WINE" "$AGENT" exists "$cwd"
[ "$rc" = 3 ] || fail "the scratch dir $cwd is still there (status $rc)"
scratch_left && fail "a scratch dir was left in $temp_dir"

check "the agent starts in the workspace"
run plain -q -- "$AGENT" cwd
[ "$out" = "$(winpath "$T")" ] || fail "cwd"
run subdir -q -- "$AGENT" cwd
[ "$out" = "$(winpath "$T/sub")" ] || fail "cwd for os_env.cwd: sub"

check "--cwd names the workspace, relative to the launch directory"
run plain -q --cwd=sub -- "$AGENT" cwd
[ "$rc" = 0 ] && [ "$out" = "$(winpath "$T/sub")" ] || fail "status $rc"
run plain -q "--cwd=$(winpath "$T/sub")" -- "$AGENT" cwd
[ "$rc" = 0 ] && [ "$out" = "$(winpath "$T/sub")" ] || fail "absolute: status $rc"

check "the root of a drive is never the workspace"
rm -f "$T/touched"
run plain -q '--cwd=Z:\' -- "$AGENT" touch "$(winpath "$T/touched")"
[ "$rc" = 125 ] && [ ! -e "$T/touched" ] || fail "status $rc"
case $out in *'the workspace cannot be Z:\, the root of a drive'*) ;; *) fail "message" ;; esac
check "a link to the root is no workspace either"
ln -s / "$T/rootlink"
run plain -q --cwd=rootlink -- "$AGENT" touch "$(winpath "$T/touched")"
[ "$rc" = 125 ] && [ ! -e "$T/touched" ] || fail "status $rc"
case $out in *'rootlink resolves through a symlink to Z:\: omnibox never takes /'*) ;;
*) fail "message" ;; esac
check "control: a link to a project directory is followed"
ln -s "$T/sub" "$T/sublink"
run plain -q --cwd=sublink -- "$AGENT" cwd
[ "$rc" = 0 ] && [ "$out" = "$(winpath "$T/sub")" ] || fail "status $rc"

check "a terminal's --cwd is its own workspace unless allow_cwd_override"
run terminal -q --cwd=sub
[ "$rc" = 125 ] || fail "status $rc"
case $out in *"--cwd sub: terminal 't' does not allow a cwd override (allow_cwd_override); its workspace is $(winpath "$T")"*) ;;
*) fail "message" ;; esac
run terminal -q --cwd=. -- "$AGENT" cwd
[ "$rc" = 0 ] && [ "$out" = "$(winpath "$T")" ] || fail "its own workspace: status $rc"
check "with allow_cwd_override a terminal's --cwd may name a directory inside its workspace, only"
grep -q '^allow_cwd_override' "$T/terminal.manifest" && fail "a terminal without it allows an override"
sed 's/^    env_unset: \[AWS_PROFILE\]$/&\n    allow_cwd_override: true/' "$T/terminal.yaml" >"$T/override.yaml"
"$COMPILE" -q --target=windows --emit=winjob --terminal=t -o "$T/override.manifest" \
	"$T/override.yaml" || exit 2
grep -q '^allow_cwd_override = true$' "$T/override.manifest" || fail "the compiler does not write allow_cwd_override"
run override -q --cwd=sub -- "$AGENT" cwd
[ "$rc" = 0 ] && [ "$out" = "$(winpath "$T/sub")" ] || fail "status $rc"
run override -q --cwd=.. -- "$AGENT" cwd
[ "$rc" = 125 ] || fail "outside: status $rc"
case $out in *"--cwd .. is outside the workspace $(winpath "$T") of terminal 't'"*) ;;
*) fail "message" ;; esac

check "a terminal's command runs when none is given, with its env and env_unset"
# CreateProcess finds wt_agent.exe in the directory of omnibox-run.exe.
capture env AWS_PROFILE=dev "$WINE" "$RUN" -q "$T/terminal.manifest"
[ "$rc" = 0 ] || fail "status $rc"
printf '%s\n' "$out" | grep -qx 'CI=1' || fail "env CI=1 is missing"
printf '%s\n' "$out" | grep -q '^AWS_PROFILE=' && fail "env_unset AWS_PROFILE is still set"

check "sandbox type none runs the command without a job, with the allow-list"
capture env OMNIBOX_HOST_SECRET=hush "$WINE" "$RUN" "$T/none.manifest" -- "$AGENT" spawn injob
[ "$rc" = 0 ] || fail "status $rc"
printf '%s\n' "$out" | grep -qx 'injob=0' || fail "it ran in a job"
case $out in *"without a Job Object"*) ;; *) fail "no notice" ;; esac
capture env OMNIBOX_HOST_SECRET=hush "$WINE" "$RUN" -q "$T/none.manifest" -- "$AGENT" env
case $out in *OMNIBOX_HOST_SECRET*) fail "type none passed a variable that is not listed" ;; esac

check "settings the job does not enforce are repeated at launch, and -q silences them"
run limits -- "$AGENT" exit 0
case $out in *"not enforced: os_env.sandbox.limits.open_files (line 8)"*) ;; *) fail "no notice" ;; esac
run plain -q -- "$AGENT" exit 0
case $out in *"not enforced"*) fail "-q did not silence it" ;; esac

# ---- the command line ---------------------------------------------------------------------

check "arguments reach the agent exactly, through both command lines"
run plain -q -- "$AGENT" argv 'a b' '' 'c"d' 'e\' 'f\\"g' "$(printf 'tab\tx')" '\\server\share\' \
	'"' '""' 'x y\\' '-' 'été'
expected='<a b>
<>
<c"d>
<e\>
<f\\"g>
<tab\tx>
<\\server\share\>
<">
<"">
<x y\\>
<->
<été>'
[ "$rc" = 0 ] && [ "$out" = "$expected" ] || fail "status $rc; expected:
$expected"

check "winquote_build round-trips through CommandLineToArgvW"
capture "$WINE" "$QUOTE" 20000
[ "$rc" = 0 ] || fail "status $rc"

# ---- the limits, as passed to SetInformationJobObject ----------------------------------

check "--dry-run reports every limit of the policy as passed to the job"
rm -rf "$temp_dir"/omnibox-*
run limits --dry-run -- "$AGENT" exit 0
[ "$rc" = 0 ] || fail "status $rc"
for line in \
	'SetInformationJobObject JobObjectExtendedLimitInformation' \
	'BasicLimitInformation.LimitFlags = 0x0000260c KILL_ON_JOB_CLOSE|DIE_ON_UNHANDLED_EXCEPTION|ACTIVE_PROCESS|JOB_MEMORY|JOB_TIME' \
	'BasicLimitInformation.ActiveProcessLimit = 64' \
	'BasicLimitInformation.PerJobUserTimeLimit = 6000000000' \
	'BasicLimitInformation.PerProcessUserTimeLimit = 0' \
	'JobMemoryLimit = 2147483648' \
	'ProcessMemoryLimit = 0' \
	'SetInformationJobObject JobObjectBasicUIRestrictions' \
	'UIRestrictionsClass = 0x000000ff DESKTOP|DISPLAYSETTINGS|EXITWINDOWS|GLOBALATOMS|HANDLES|READCLIPBOARD|SYSTEMPARAMETERS|WRITECLIPBOARD' \
	'SetInformationJobObject JobObjectCpuRateControlInformation' \
	'ControlFlags = 0x00000005 ENABLE|HARD_CAP' \
	'CpuRate = 5000' \
	'CreateProcessW dwCreationFlags = CREATE_SUSPENDED|CREATE_UNICODE_ENVIRONMENT|EXTENDED_STARTUPINFO_PRESENT' \
	'not-enforced = os_env.sandbox.limits.open_files (line 8): a Job Object cannot limit open files or handles'; do
	printf '%s\n' "$out" | grep -qxF "$line" || fail "missing: $line"
done
scratch_left && fail "--dry-run created a scratch dir"
check "--dry-run without limits passes only the always-on flags"
run env --dry-run -- "$AGENT" exit 0
for line in \
	'BasicLimitInformation.LimitFlags = 0x00002400 KILL_ON_JOB_CLOSE|DIE_ON_UNHANDLED_EXCEPTION' \
	'BasicLimitInformation.ActiveProcessLimit = 0' \
	'JobMemoryLimit = 0' \
	'BasicLimitInformation.PerJobUserTimeLimit = 0'; do
	printf '%s\n' "$out" | grep -qxF "$line" || fail "missing: $line"
done
printf '%s\n' "$out" | grep -q 'CpuRateControl' && fail "rate control without cpu_rate"

echo "wine.sh: $tests checks, $failures failed"
[ $failures = 0 ]
