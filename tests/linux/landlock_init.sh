#!/bin/sh
# landlock_init.sh BUILD_DIR - omnibox-init's full Landlock mode (--ll-fs,
# --ll-net-connect, --ll-min-abi), run directly as omnibox-run's backend
# without bwrap will run it: no namespace at all, Landlock the whole
# confinement, the rules given as descriptors.  As root and as nobody:
# what a read-only, a writable and a file rule allow and refuse, that
# nothing else is reachable, TCP connect to the listed ports only and no
# bind, signals and abstract Unix sockets kept inside, the launch refused
# (125, nothing ran) on a missing ABI or a bad descriptor, and the rule
# descriptors gone before the agent starts.  Each refusal is seen to be
# Landlock's: the same command succeeds without the --ll-* options.
#
# What Landlock does not see (ABI 7, Linux 6.18) is not checked here, as it
# cannot fail: chmod, utimes, setxattr and stat of any path, connecting to a
# pathname Unix socket anywhere, UDP, and listen() on a TCP socket never
# bound (the kernel binds an ephemeral port without asking Landlock).
#
# Descriptors 5, 6 and 7 are opened by the shell (O_RDONLY: a read-only
# directory, a writable one, a file); the system's (/usr, /lib, /lib64,
# /bin, /etc, /proc, /dev/null) as O_PATH at 20-26, as omnibox-run opens
# them (bash keeps descriptors from 10 up for itself, so python opens them).
set -u

B=$(cd "$1" && pwd)
T=$(mktemp -d /tmp/omnibox-llinit.XXXXXX)
chmod 755 "$T"
pids=
trap 'cleanup' EXIT
trap 'exit 1' INT TERM
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}

. "$(dirname "$0")/../lib.sh"

# The rights, as compiler/decide/landlock.h has them (enum ll_access).
R=13        # LL_R: execute, read, list
W=30655     # LL_W: LL_R, write, make (no devices), remove, refer, truncate
READ=4      # LL_READ_FILE
RW_FILE=6   # LL_READ_FILE | LL_WRITE_FILE
ALL=65535   # every right up to ioctl on devices: a file takes its own

# OPENER FD PATH ... -- CMD...: each PATH opened O_PATH at FD, then CMD.
OPENER='
import os, sys
a = sys.argv[1:]
i = 0
while a[i] != "--":
    fd = os.open(a[i + 1], os.O_PATH)
    if fd != int(a[i]):
        os.dup2(fd, int(a[i]))
        os.close(fd)
    i += 2
os.execv(a[i + 1], a[i + 1:])
'

# The user's tree, readable (and writable) by them alone, and the binary.
setup_user() {
	U=$T/$who
	H=$U/home
	TB=$U/bin
	mkdir -p "$U/ro" "$U/rw" "$U/other" "$U/files" "$H" "$TB"
	echo "ro-content-$who" >"$U/ro/f"
	echo "shadow-secret-$who" >"$U/other/shadow"
	chmod 600 "$U/other/shadow"
	echo "granted-$who" >"$U/files/granted"
	echo "sibling-$who" >"$U/files/sibling"
	echo "home-secret-$who" >"$H/.netrc"
	cp "$B/omnibox-init" "$TB/"
	chmod 755 "$TB" "$TB/omnibox-init"
	if [ "$who" = nobody ]; then
		chown -R nobody:nogroup "$U"
	fi
	chmod 755 "$U"
}

# as_who CMD...: CMD as $who, in a fixed environment, from /.
as_who() {
	if [ "$who" = root ]; then
		(cd / && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" LANG=C.UTF-8 "$@")
	else
		(cd / && runuser -u nobody -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" \
			LANG=C.UTF-8 "$@")
	fi
}

# init SCRIPT OPTION...: omnibox-init with OPTIONS runs /bin/sh -c SCRIPT, as
# $who, with descriptors 5, 6, 7 and 20-26 open; $out (stdout and stderr), $rc.
init() {
	_s=$1
	shift
	out=$(as_who sh -c 'exec 5<"$1" 6<"$2" 7<"$3"; shift 3; exec "$@"' sh \
		"$U/ro" "$U/rw" "$U/files/granted" \
		python3 -I -c "$OPENER" 20 /usr 21 /lib 22 /lib64 23 /bin 24 /etc 25 /proc \
		26 /dev/null -- "$TB/omnibox-init" "$@" --exec /bin/sh -- /bin/sh -c "$_s" 2>&1)
	rc=$?
}

# ll SCRIPT OPTION...: the same, confined: the system's rules (read and
# execute; /dev/null read and write) and OPTIONS.
ll() {
	_s=$1
	shift
	init "$_s" --ll-fs 20 $R --ll-fs 21 $R --ll-fs 22 $R --ll-fs 23 $R --ll-fs 24 $R \
		--ll-fs 25 $R --ll-fs 26 $RW_FILE "$@"
}

# The usual grants: 5 read-only, 6 writable.
llg() {
	_s=$1
	shift
	ll "$_s" --ll-fs 5 $R --ll-fs 6 $W "$@"
}

expect_denied() {
	expect_out "Permission denied"
	tests=$((tests + 1))
	[ "$rc" != 0 ] || fail "exit status 0, expected a failure"
}

# expect_absent PATH: nothing came to be there.
expect_absent() {
	tests=$((tests + 1))
	[ ! -e "$1" ] || fail "$1 exists"
}

t_baseline() {
	name="without --ll-*: everything the checks refuse works"
	init "cat '$U/other/shadow' '$H/.netrc'; echo new >'$U/ro/new' && echo made; rm '$U/ro/new' \
		&& echo removed; ls / >/dev/null && echo listed"
	expect_rc 0
	expect_out "shadow-secret-$who"
	expect_out "home-secret-$who"
	expect_out made
	expect_out removed
	expect_out listed
	expect_absent "$U/ro/new"
}

t_read_only() {
	name="read-only grant: read"
	llg "cat '$U/ro/f'; ls '$U/ro'"
	expect_rc 0
	expect_eq "$name" "$out" "ro-content-$who
f"
	name="read-only grant: write"
	llg "echo x >'$U/ro/f'"
	expect_denied
	name="read-only grant: create"
	llg "echo x >'$U/ro/new'"
	expect_denied
	expect_absent "$U/ro/new"
	name="read-only grant: mkdir"
	llg "mkdir '$U/ro/d'"
	expect_denied
	expect_absent "$U/ro/d"
	name="read-only grant: remove"
	llg "rm -f '$U/ro/f'"
	expect_denied
	name="read-only grant: rename"
	llg "mv '$U/ro/f' '$U/ro/g'"
	expect_denied
	expect_absent "$U/ro/g"
	name="read-only grant: unchanged"
	expect_eq "$name" "$(cat "$U/ro/f")" "ro-content-$who"
}

t_writable() {
	name="writable grant: create, write, rename, remove"
	# rename(2) itself into another directory (mv would copy on EXDEV):
	# refer, ABI 2; below it the kernel refuses every such rename.
	reparent='mv b d/c'
	[ "$abi" -lt 2 ] ||
		reparent='python3 -I -c "import os; os.rename(\"b\", \"d/c\")"'
	llg "cd '$U/rw' && echo data >a && cat a && mv a b && cat b && mkdir d && $reparent &&
		cat d/c && ln -s c d/l && mkfifo p && rm p d/l d/c && rmdir d && echo keep >k &&
		: >k && echo DONE"
	expect_rc 0
	expect_out DONE
	expect_eq "$name: what is left" "$(ls -A "$U/rw")" k
	expect_eq "$name: truncated" "$(wc -c <"$U/rw/k" 2>/dev/null | tr -d ' ')" 0
	name="writable grant: nothing moves out of it"
	echo move >"$U/rw/m"
	llg "mv '$U/rw/m' '$U/ro/m'"
	tests=$((tests + 1))
	[ "$rc" != 0 ] || fail "exit status 0, expected a failure"
	expect_absent "$U/ro/m"
	expect_eq "$name" "$(cat "$U/rw/m")" move
	rm -f "$U/rw/m" "$U/rw/k"
}

t_unreachable() {
	name="no rule: a file"
	llg "cat '$U/other/shadow'"
	expect_denied
	expect_no_out "shadow-secret"
	name="no rule: \$HOME"
	llg "ls \"\$HOME\"; cat \"\$HOME/.netrc\""
	expect_denied
	expect_no_out "home-secret"
	name="no rule: /"
	llg "ls /"
	expect_denied
	name="no rule: write to /tmp"
	llg "echo x >'$T/$who-escaped'"
	expect_denied
	expect_absent "$T/$who-escaped"
	name="no rule: a sibling of a file rule"
	ll "cat '$U/files/sibling'" --ll-fs 7 $READ
	expect_denied
	expect_no_out "sibling-$who"
}

t_system() {
	name="the system's rules: /bin/sh and python3 run"
	llg 'python3 -I -c "import json, socket; print(\"py\", json.dumps(1))"; echo sh-ok'
	expect_rc 0
	expect_out "py 1"
	expect_out sh-ok
}

t_file_rule() {
	name="file rule, read only: read"
	ll "cat '$U/files/granted'" --ll-fs 7 $READ
	expect_rc 0
	expect_eq "$name" "$out" "granted-$who"
	name="file rule, read only: write"
	ll "echo more >>'$U/files/granted'" --ll-fs 7 $READ
	expect_denied
	name="file rule, every right: a file's rights only, and those work"
	ll "echo more >>'$U/files/granted' && cat '$U/files/granted'" --ll-fs 7 $ALL
	expect_rc 0
	expect_out "granted-$who
more"
	printf 'granted-%s\n' "$who" >"$U/files/granted"
}

# A python3 server of the host, as $who: two TCP ports and an abstract
# socket, each accepting; "P1 P2" printed.
start_servers() {
	as_who python3 -I -c '
import os, socket, sys, threading
ss = []
for _ in range(2):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    ss.append(s)
u = socket.socket(socket.AF_UNIX)
u.bind("\0" + sys.argv[1])
u.listen(64)
ss.append(u)
def serve(s):
    while True:
        c, _ = s.accept()
        c.close()
for s in ss:
    threading.Thread(target=serve, args=(s,), daemon=True).start()
print(ss[0].getsockname()[1], ss[1].getsockname()[1], flush=True)
sys.stdin.read()
' "omnibox-test-$$-$who" <"$U/fifo" >"$U/ports" &
	pids="$pids $!"
	exec 9>"$U/fifo" # held open: the server lives while this suite does
	for _ in $(seq 100); do
		[ -s "$U/ports" ] && break
		sleep 0.05
	done
	P1=$(cut -d ' ' -f 1 "$U/ports")
	P2=$(cut -d ' ' -f 2 "$U/ports")
}

CLIENT='
import socket, sys
kind, arg = sys.argv[1], sys.argv[2]
try:
    if kind == "connect":
        socket.create_connection(("127.0.0.1", int(arg)), timeout=5)
    elif kind == "bind":
        socket.socket().bind(("127.0.0.1", int(arg)))
    elif kind == "listen":
        s = socket.socket()
        s.listen(1)
        print("listening on", s.getsockname()[1])
    else:
        socket.socket(socket.AF_UNIX).connect("\0" + arg)
    print(kind, "ok")
except OSError as e:
    print(kind, "failed:", e.strerror)
'

t_tcp() {
	if [ "$abi" -lt 4 ]; then
		skips=$((skips + 1))
		echo "SKIP [$who] tcp: Landlock ABI $abi has no TCP rules"
		return
	fi
	free=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	name="tcp without --ll-*: connect to both, bind"
	init "python3 -I -c '$CLIENT' connect $P1; python3 -I -c '$CLIENT' connect $P2;
		python3 -I -c '$CLIENT' bind $free"
	expect_eq "$name" "$out" "connect ok
connect ok
bind ok"
	name="tcp: connect to the listed port"
	llg "python3 -I -c '$CLIENT' connect $P1" --ll-net-connect "$P1"
	expect_eq "$name" "$out" "connect ok"
	name="tcp: connect to another port"
	llg "python3 -I -c '$CLIENT' connect $P2" --ll-net-connect "$P1"
	expect_eq "$name" "$out" "connect failed: Permission denied"
	name="tcp: no rule, no connect"
	llg "python3 -I -c '$CLIENT' connect $P1"
	expect_eq "$name" "$out" "connect failed: Permission denied"
	name="tcp: bind a port, even a listed one, or port 0"
	llg "python3 -I -c '$CLIENT' bind $free; python3 -I -c '$CLIENT' bind $P1;
		python3 -I -c '$CLIENT' bind 0" --ll-net-connect "$P1"
	expect_eq "$name" "$out" "bind failed: Permission denied
bind failed: Permission denied
bind failed: Permission denied"
}

t_signals() {
	if [ "$abi" -lt 6 ]; then
		skips=$((skips + 1))
		echo "SKIP [$who] signals: Landlock ABI $abi has no scopes"
		return
	fi
	as_who sh -c 'echo $$ >"$1"; exec sleep 300' sh "$U/sleeper" 2>/dev/null &
	pids="$pids $!"
	for _ in $(seq 100); do
		[ -s "$U/sleeper" ] && break
		sleep 0.05
	done
	host=$(cat "$U/sleeper")
	pids="$pids $host"
	name="signals without --ll-*: a host process of the same user"
	init "kill -0 $host && echo alive"
	expect_eq "$name" "$out" alive
	name="signals: a host process of the same user"
	llg "kill -0 $host && echo alive"
	expect_out "Operation not permitted"
	expect_no_out alive
	name="signals: its own child, and omnibox-init"
	llg 'sleep 30 & c=$!; kill -0 $c && echo child-alive; kill $c; wait $c; echo "child $?";
		kill -0 $PPID && echo parent-alive'
	expect_out child-alive
	expect_out "child 143"
	expect_out parent-alive
	expect_no_out "not permitted"
	tests=$((tests + 1))
	kill -0 "$host" 2>/dev/null || fail "the host process is gone"
}

t_abstract() {
	if [ "$abi" -lt 6 ]; then
		skips=$((skips + 1))
		echo "SKIP [$who] abstract: Landlock ABI $abi has no scopes"
		return
	fi
	name="abstract socket without --ll-*"
	init "python3 -I -c '$CLIENT' unix omnibox-test-$$-$who"
	expect_eq "$name" "$out" "unix ok"
	name="abstract socket: outside the domain"
	llg "python3 -I -c '$CLIENT' unix omnibox-test-$$-$who" --ll-net-connect "$P1"
	expect_eq "$name" "$out" "unix failed: Operation not permitted"
}

t_refused() {
	rm -f "$U/rw/marker"
	name="--ll-min-abi above the kernel's"
	llg "touch '$U/rw/marker'" --ll-min-abi 99
	expect_rc 125
	expect_out "omnibox-init: this kernel's Landlock ABI is $abi, the policy needs 99 ("
	expect_out "nothing ran"
	expect_absent "$U/rw/marker"
	name="--ll-min-abi above the kernel's, without --ll-fs"
	init "touch '$U/rw/marker'" --ll-min-abi 99
	expect_rc 125
	expect_out "the policy needs 99"
	expect_absent "$U/rw/marker"
	name="--ll-min-abi of this kernel"
	llg "touch '$U/rw/marker' && echo ran" --ll-min-abi "$abi"
	expect_rc 0
	expect_eq "$name" "$out" ran
	rm -f "$U/rw/marker"
	name="--ll-fs of a descriptor that is not open"
	llg "touch '$U/rw/marker'" --ll-fs 77 $R
	expect_rc 125
	expect_out "--ll-fs 77: not an open descriptor"
	expect_out "nothing ran"
	expect_absent "$U/rw/marker"
	name="--ll-fs of a pipe: the kernel refuses the rule"
	out=$(echo | as_who sh -c 'exec 8<&0 </dev/null; exec "$@"' sh "$TB/omnibox-init" \
		--ll-fs 8 $R --exec /bin/sh -- /bin/sh -c "touch '$U/rw/marker'" 2>&1)
	rc=$?
	expect_rc 125
	expect_out "Landlock refused the rule of --ll-fs 8"
	expect_out "nothing ran"
	expect_absent "$U/rw/marker"
	name="--ll-fs with rights beyond any ABI"
	llg "touch '$U/rw/marker'" --ll-fs 5 65536
	expect_rc 125
	expect_out "nothing ran"
	expect_absent "$U/rw/marker"
	name="--ll-net-connect without --ll-fs"
	init "touch '$U/rw/marker'" --ll-net-connect 80
	expect_rc 125
	expect_out "--ll-net-connect needs --ll-fs"
	expect_absent "$U/rw/marker"
	name="--fs-write with --ll-fs"
	llg "touch '$U/rw/marker'" --fs-write "$U/rw"
	expect_rc 125
	expect_out "--fs-write does not go with --ll-fs"
	expect_absent "$U/rw/marker"
}

t_fds_closed() {
	name="the rule descriptors are closed in the agent"
	llg 'ls /proc/self/fd | tr "\n" " "' --ll-fs 7 $READ
	expect_rc 0
	# 3 is ls's own, the directory it lists.
	expect_eq "$name" "$out" "0 1 2 3 "
}

# The second layer of bwrap's launches, unchanged: writes below --fs-write only.
t_fs_write() {
	name="--fs-write: writes below it only, reads anywhere"
	init "echo a >'$U/rw/x' && echo wrote; echo b >'$U/ro/y'; cat '$U/other/shadow'" \
		--fs-write "$U/rw"
	expect_out wrote
	expect_out "Permission denied"
	expect_out "shadow-secret-$who"
	expect_absent "$U/ro/y"
	rm -f "$U/rw/x"
}

if [ "$(id -u)" != 0 ]; then
	echo "landlock-init: must run as root, to test both as root and as nobody" >&2
	exit 1
fi
abi=$("$B/omnibox-init" --ll-min-abi 1000 --exec /bin/true -- true 2>&1 |
	sed -n "s/.*this kernel's Landlock ABI is \([0-9]*\),.*/\1/p")
if [ -z "$abi" ] || [ "$abi" = 0 ]; then
	echo "landlock-init: 0 checks, 0 failed, 1 skipped (no Landlock on this kernel)"
	exit 0
fi
echo "landlock-init: this kernel's Landlock ABI is $abi"
for who in root nobody; do
	setup_user
	mkfifo "$U/fifo"
	chmod 644 "$U/fifo"
	[ "$who" = root ] || chown nobody:nogroup "$U/fifo"
	start_servers
	t_baseline
	t_read_only
	t_writable
	t_unreachable
	t_system
	t_file_rule
	t_tcp
	t_signals
	t_abstract
	t_refused
	t_fds_closed
	t_fs_write
	exec 9>&-
done
echo "landlock-init: $tests checks, $failures failed, $skips skipped"
[ "$failures" = 0 ]
