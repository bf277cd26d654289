#!/bin/sh
# landlock_attacks.sh BUILD_DIR - the agent as the adversary against real
# launches of sandbox.type: linux_landlock (omnibox-init started directly:
# no namespace, Landlock + seccomp + no_new_privs the whole confinement).
#
# One function a move.  Each plays what an agent can do from inside and then
# checks the host, not the agent's word: files, modes, processes, what host
# listeners received.  As root and as nobody.  A move the backend defends
# asserts the defence; a hole asserts the defended behaviour and so fails
# until the product closes it; a documented approximation asserts exactly
# what docs/linux-landlock.md says is reachable.
set -u

B=$(cd "$1" && pwd)
T=$(mktemp -d /tmp/omnibox-rt.XXXXXX)
chmod 755 "$T"
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	# The helpers run as nobody under runuser: their own pids are not in $pids.
	pkill -f "^python3 -I $T/" 2>/dev/null
	pkill -f "^python3 -I -c .* $T/" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

. "$(dirname "$0")/../lib.sh"

# The agent's moves, one a call: "rt MOVE ARGS" prints MOVE=ok or MOVE=ERRNO.
write_rt() {
	cat >"$1" <<-'EOF'
	import ctypes, errno, os, socket, struct, sys
	libc = ctypes.CDLL(None, use_errno=True)
	libc.syscall.restype = ctypes.c_long
	NR = {"ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_open": 434,
	      "pidfd_getfd": 438, "io_uring_setup": 425, "open_by_handle_at": 304,
	      "name_to_handle_at": 303, "prlimit64": 302, "setpriority": 141, "ioprio_set": 251,
	      "sched_setaffinity": 203, "kcmp": 312, "add_key": 248, "keyctl": 250}
	def sc(name, *a):
	    r = libc.syscall(ctypes.c_long(NR[name]), *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
	    return r, ctypes.get_errno()
	def res(r, e):
	    return "ok" if r >= 0 else errno.errorcode.get(e, str(e))
	def out(k, v):
	    print("%s=%s" % (k, v), flush=True)
	def oserr(f):
	    try:
	        f()
	        return "ok"
	    except OSError as x:
	        return errno.errorcode.get(x.errno, str(x.errno))
	class IOV(ctypes.Structure):
	    _fields_ = [("b", ctypes.c_void_p), ("l", ctypes.c_size_t)]
	m, a = sys.argv[1], sys.argv[2:]
	if m == "ptrace-attach":
	    out(m, res(*sc("ptrace", 16, int(a[0]), 0, 0)))
	elif m == "ptrace-seize":
	    out(m, res(*sc("ptrace", 0x4206, int(a[0]), 0, 0)))
	elif m in ("vm-readv", "vm-writev"):
	    buf = ctypes.create_string_buffer(64)
	    l = IOV(ctypes.cast(buf, ctypes.c_void_p), 8)
	    r = IOV(0x400000, 8)
	    n = "process_vm_readv" if m == "vm-readv" else "process_vm_writev"
	    out(m, res(*sc(n, int(a[0]), ctypes.byref(l), 1, ctypes.byref(r), 1, 0)))
	elif m == "pidfd-getfd":
	    pfd, e = sc("pidfd_open", int(a[0]), 0)
	    out(m, res(pfd, e) if pfd < 0 else res(*sc("pidfd_getfd", pfd, int(a[1]), 0)))
	elif m == "kcmp":
	    out(m, res(*sc("kcmp", os.getpid(), int(a[0]), 0, 0, 0)))
	elif m == "kill":
	    out(m, oserr(lambda: os.kill(int(a[0]), int(a[1]))))
	elif m == "key-find":
	    # KEYCTL_SEARCH of the user's keyring (KEY_SPEC_USER_KEYRING, -4) for A[0]
	    out(m, res(*sc("keyctl", 10, -4, b"user", a[0].encode(), 0)))
	elif m == "key-add":
	    out(m, res(*sc("add_key", b"user", a[0].encode(), b"0123456789abcdef", 16, -4)))
	elif m == "io_uring":
	    p = ctypes.create_string_buffer(120)
	    out(m, res(*sc("io_uring_setup", 4, p)))
	elif m in ("name_to_handle_at", "open_by_handle_at"):
	    h = ctypes.create_string_buffer(8 + 128)
	    struct.pack_into("I", h, 0, 128)
	    mid = ctypes.c_int()
	    r, e = sc("name_to_handle_at", -100, a[0].encode(), h, ctypes.byref(mid), 0)
	    if m == "name_to_handle_at":
	        out(m, res(r, e))
	    else:
	        if r < 0:  # a handle made up: inode 2 of the filesystem
	            struct.pack_into("IiII", h, 0, 8, 1, 2, 0)
	        fd = os.open("/", os.O_PATH)
	        r, e = sc("open_by_handle_at", fd, h, 0)
	        if r >= 0:
	            print(os.read(r, 200).decode(errors="replace"), end="")
	        out(m, res(r, e))
	elif m == "prlimit":
	    out(m, res(*sc("prlimit64", int(a[0]), 7, struct.pack("QQ", 64, 64), 0)))
	elif m == "setpriority":  # which who
	    out(m, res(*sc("setpriority", int(a[0]), int(a[1]), 7)))
	elif m == "ioprio":  # which who: idle class
	    out(m, res(*sc("ioprio_set", int(a[0]), int(a[1]), 3 << 13)))
	elif m == "sched":
	    mask = ctypes.c_ulong(1)
	    out(m, res(*sc("sched_setaffinity", int(a[0]), 8, ctypes.byref(mask))))
	elif m == "sock":  # family type proto
	    out(m, oserr(lambda: socket.socket(int(a[0]), int(a[1]), int(a[2]))))
	elif m in ("tcp", "mptcp"):  # host port
	    def f():
	        s = socket.socket(socket.AF_INET6 if ":" in a[0] else socket.AF_INET, socket.SOCK_STREAM,
	                          262 if m == "mptcp" else 0)
	        s.settimeout(5)
	        s.connect((a[0], int(a[1])))
	        s.sendall(b"leak-" + m.encode() + b"\n")
	    out(m, oserr(f))
	elif m == "udp":
	    out(m, oserr(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(
	        b"leak-udp\n", (a[0], int(a[1])))))
	elif m in ("tfo-sendto", "tfo-sendmsg", "tfo-connect"):
	    def f():
	        s = socket.socket()
	        s.settimeout(5)
	        if m == "tfo-sendto":
	            s.sendto(b"leak-tfo\n", 0x20000000, (a[0], int(a[1])))
	        elif m == "tfo-sendmsg":
	            s.sendmsg([b"leak-tfo\n"], [], 0x20000000, (a[0], int(a[1])))
	        else:
	            s.setsockopt(6, 30, 1)  # TCP_FASTOPEN_CONNECT
	            s.connect((a[0], int(a[1])))
	            s.sendall(b"leak-tfo\n")
	    out(m, oserr(f))
	elif m == "listen":
	    out(m, oserr(lambda: socket.socket().listen(1)))
	elif m == "unix":  # path, or @name
	    def f():
	        s = socket.socket(socket.AF_UNIX)
	        s.connect("\0" + a[0][1:] if a[0][0] == "@" else a[0])
	        s.sendall(b"leak-unix\n")
	    out(m, oserr(f))
	elif m == "tiocsti":  # fd
	    import fcntl, termios
	    out(m, oserr(lambda: fcntl.ioctl(int(a[0]), termios.TIOCSTI, b"x")))
	elif m in ("read", "write", "trunc"):  # path
	    def f():
	        if m == "read":
	            fd = os.open(a[0], os.O_RDONLY | os.O_NOCTTY)
	            print(os.read(fd, 300).decode(errors="replace"))
	        else:
	            fd = os.open(a[0], os.O_WRONLY | os.O_NOCTTY | (os.O_TRUNC if m == "trunc" else os.O_APPEND | os.O_CREAT), 0o644)
	            os.write(fd, b"leak-written\n")
	    out(m, oserr(f))
	elif m == "readlink":
	    def f():
	        print(os.readlink(a[0]))
	    out(m, oserr(f))
	elif m == "write-fd":
	    out(m, oserr(lambda: os.write(int(a[0]), b"leak-fd\n")))
	elif m == "chmod":
	    out(m, oserr(lambda: os.chmod(a[0], int(a[1], 8))))
	elif m == "utime":
	    out(m, oserr(lambda: os.utime(a[0], (1000000000, 1000000000))))
	elif m == "setxattr":
	    out(m, oserr(lambda: os.setxattr(a[0], "user.omnibox-rt", b"planted")))
	elif m == "truncate":
	    out(m, oserr(lambda: os.truncate(a[0], 0)))
	elif m == "link":
	    out(m, oserr(lambda: os.link(a[0], a[1])))
	elif m == "rename":
	    out(m, oserr(lambda: os.rename(a[0], a[1])))
	elif m == "hopper":  # a process that forks and exits, over and over, till killed
	    while True:
	        if os.fork():
	            os._exit(0)
	        try:
	            os.setsid()
	        except OSError:
	            pass
	else:
	    sys.exit("rt: no move " + m)
	EOF
}

setup_user() {
	U=$T/$who
	H=$U/home
	WS=$U/ws
	P=$U/policies
	TB=$U/bin
	O=$U/outside # a host directory no policy grants
	mkdir -p "$H/.ssh" "$WS/sub" "$WS/docs" "$WS/tools" "$P" "$TB" "$O/dir"
	echo "host-secret-$who" >"$O/secret.txt"
	chmod 600 "$O/secret.txt"
	cp /bin/true "$O/hostbin"
	chmod 755 "$O/hostbin"
	echo "ssh-host-key-$who" >"$H/.ssh/id_rsa"
	chmod 600 "$H/.ssh/id_rsa"
	echo "ro-doc-$who" >"$WS/docs/README"
	echo "dotenv-secret-$who" >"$WS/.env"
	cp "$B/omnibox-run" "$B/omnibox-init" "$B/omnibox-proxy" "$B/omnibox-compile" "$TB/"
	cp "$B/tests/probe" "$WS/tools/"
	write_rt "$WS/tools/rt.py"
	printf '#!/bin/sh\nexec python3 -I "$(dirname "$0")/rt.py" "$@"\n' >"$WS/tools/rt"
	chmod 755 "$WS/tools/rt"
	chmod -R a+rX "$U"
	chmod 600 "$O/secret.txt" "$H/.ssh/id_rsa"
	if [ "$who" = nobody ]; then
		chown -R nobody:nogroup "$U"
	fi
	policy ro <<-EOF
	os_env:
	  sandbox:
	    type: linux_landlock
	EOF
	policy rw <<-EOF
	os_env:
	  sandbox:
	    type: linux_landlock
	    write_paths: [.]
	EOF
	policy netoff <<-EOF
	os_env:
	  sandbox:
	    type: linux_landlock
	    write_paths: [.]
	    allow_network: false
	EOF
	policy egress <<-EOF
	os_env:
	  sandbox:
	    type: linux_landlock
	    write_paths: [.]
	    egress_rules: ["GET example.com/"]
	EOF
}

# mode PATH: its octal mode, as the host sees it.
mode() { stat -c %a "$1"; }

# host_sleeper MARK: a host process of the user's, with a secret in its
# environment and its cwd in $O; its pid in $sleeper.
host_sleeper() {
	rm -f "$U/sleeper.pid"
	(cd "$O" && as_user env SLEEPER_SECRET="sleeper-env-secret-$who" sh -c \
		'echo $$ >"$1"; exec sleep 300' sh "$U/sleeper.pid") >/dev/null 2>&1 8>&- &
	pids="$pids $!"
	for _ in $(seq 100); do
		[ -s "$U/sleeper.pid" ] && break
		sleep 0.05
	done
	sleeper=$(cat "$U/sleeper.pid")
	pids="$pids $sleeper"
}

# host_server: a host server of the user's on 127.0.0.1:$SRV (TCP with fast
# open, and UDP), a pathname Unix socket $O/host.sock and an abstract one
# @$ABS; whatever reaches it is logged in $U/srv.log.
host_server() {
	cat >"$U/srv.py" <<-'EOF'
	import socket, sys, threading
	log = sys.argv[1]
	def note(s):
	    with open(log, "a") as f:
	        f.write(s + "\n")
	def tcp(s):
	    while True:
	        c, _ = s.accept()
	        c.settimeout(2)
	        try:
	            note("tcp %r" % c.recv(100))
	        except OSError:
	            note("tcp connected")
	        c.close()
	def udp(u):
	    while True:
	        note("udp %r" % u.recvfrom(100)[0])
	t = socket.socket()
	t.setsockopt(6, 23, 5)  # TCP_FASTOPEN
	t.bind(("127.0.0.1", 0))
	t.listen(16)
	u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
	u.bind(("127.0.0.1", t.getsockname()[1]))
	ss = [(tcp, t), (udp, u)]
	for name in sys.argv[2:]:
	    x = socket.socket(socket.AF_UNIX)
	    x.bind(name.replace("@", "\0", 1))
	    x.listen(4)
	    ss.append((tcp, x))
	for f, s in ss:
	    threading.Thread(target=f, args=(s,), daemon=True).start()
	print(t.getsockname()[1], flush=True)
	sys.stdin.read()
	EOF
	chmod 644 "$U/srv.py"
	rm -f "$U/srv.port" "$O/host.sock"
	ABS="omnibox-rt-$$-$who"
	mkfifo "$U/srv.fifo"
	chmod 666 "$U/srv.fifo"
	: >"$U/srv.log"
	chmod 666 "$U/srv.log"
	as_user python3 -I "$U/srv.py" "$U/srv.log" "$O/host.sock" "@$ABS" <"$U/srv.fifo" >"$U/srv.port" 2>&1 8>&- &
	pids="$pids $!"
	exec 8>"$U/srv.fifo"
	for _ in $(seq 100); do
		[ -s "$U/srv.port" ] && break
		sleep 0.05
	done
	SRV=$(cat "$U/srv.port")
}

# ---- 1. links the agent plants ---------------------------------------------------

m_planted_links() {
	name="planted links: symlinks out and hard links, during the launch that plants them"
	shadow_head=$(head -c 5 /etc/shadow 2>/dev/null)
	sbx rw sh -c "cd sub && ln -s /etc/shadow shadow && ln -s '$O' out && ln -s '$H/.ssh' ssh &&
		echo planted; rt link '$O/secret.txt' hard; rt link /etc/shadow hard2;
		rt read shadow; rt read out/secret.txt; rt read ssh/id_rsa; rt write out/secret.txt;
		rt write out/pwned; rt write ssh/id_rsa; rt chmod out/secret.txt 666"
	expect_out planted
	expect_out "link=EXDEV"
	expect_no_out "link=ok"
	expect_no_out "read=ok"
	expect_no_out "write=ok"
	expect_no_out "host-secret-$who"
	expect_no_out "ssh-host-key"
	tests=$((tests + 1))
	[ ! -e "$WS/sub/hard" ] && [ ! -e "$WS/sub/hard2" ] || fail "a hard link to a host file was made"
	tests=$((tests + 1))
	[ -L "$WS/sub/shadow" ] && [ -L "$WS/sub/out" ] && [ -L "$WS/sub/ssh" ] || fail "the links were not planted"
	expect_eq "$name: \$O/secret.txt" "$(cat "$O/secret.txt")" "host-secret-$who"
	expect_eq "$name: ssh key" "$(cat "$H/.ssh/id_rsa")" "ssh-host-key-$who"
	tests=$((tests + 1))
	[ ! -e "$O/pwned" ] || fail "the sandbox made $O/pwned through a link"
	name="planted links: a second launch does not follow them either"
	sbx rw sh -c 'cd sub; rt read shadow; rt read out/secret.txt; rt read ssh/id_rsa;
		rt write out/pwned; cat shadow out/secret.txt ssh/id_rsa; ls out ssh'
	expect_no_out "read=ok"
	expect_no_out "write=ok"
	expect_no_out "host-secret-$who"
	expect_no_out "ssh-host-key"
	[ -n "$shadow_head" ] && expect_no_out "$shadow_head"
	tests=$((tests + 1))
	[ ! -e "$O/pwned" ] || fail "the second launch made $O/pwned through a link"

	# A later policy naming a planted link as a grant: with the workspace
	# writable (the link lies in one of its writable roots), and without.
	for l in ssh out shadow; do
		for ws in rw ro; do
			for kind in read write; do
				grant="${kind}_paths: [sub/$l]"
				[ "$ws" = rw ] && [ "$kind" = read ] && grant="$grant
    write_paths: [.]"
				[ "$ws" = rw ] && [ "$kind" = write ] && grant="write_paths: [., sub/$l]"
				name="planted links: a later policy ($ws workspace) granting sub/$l ($kind) is refused"
				policy "grant-$l-$ws-$kind" <<-EOF
				os_env:
				  sandbox:
				    type: linux_landlock
				    $grant
				EOF
				sbx "grant-$l-$ws-$kind" sh -c "rt read sub/$l/id_rsa; rt read sub/$l/secret.txt; rt read sub/$l;
					rt write sub/$l/pwned; echo command-ran"
				expect_rc 125
				expect_out "symlink"
				expect_no_out "command-ran"
				expect_no_out "host-secret-$who"
				expect_no_out "ssh-host-key"
				tests=$((tests + 1))
				[ ! -e "$O/pwned" ] && [ ! -e "$H/.ssh/pwned" ] || fail "a grant through sub/$l wrote outside"
				rm -f "$O/pwned" "$H/.ssh/pwned"
			done
		done
	done
	expect_eq "$name: ssh key" "$(cat "$H/.ssh/id_rsa")" "ssh-host-key-$who"
	rm -f "$WS/sub/shadow" "$WS/sub/out" "$WS/sub/ssh"
}

# ---- 2. /proc ----------------------------------------------------------------------

# PROC_SCRIPT: every /proc entry of PID $1 that ptrace guards, read and written
# ($2: a host directory outside the grants, seen through its root).
PROC_SCRIPT='p=$1
for f in environ mem maps cwd/secret.txt root/etc/hostname "root$2/secret.txt"; do
	printf "%s " "$f"; rt read /proc/$p/$f; printf "%s " "$f"; rt write /proc/$p/$f; done
for n in $(ls /proc/$p/fd 2>/dev/null); do
	printf "fd%s " "$n"; rt readlink /proc/$p/fd/$n; printf "fd%s " "$n"; rt read /proc/$p/fd/$n
	printf "fd%s " "$n"; rt write /proc/$p/fd/$n; done
printf "ns "; rt readlink /proc/$p/ns/mnt'

m_proc() {
	host_sleeper
	name="/proc of a host process of the user's: environ, mem, cwd, root, fds"
	sbx ro sh -c "$PROC_SCRIPT" sh "$sleeper" "$O"
	expect_no_out "read=ok"
	expect_no_out "write=ok"
	expect_no_out "readlink=ok"
	expect_no_out "sleeper-env-secret"
	expect_no_out "host-secret-$who"
	expect_out "environ read=EACCES"
	name="/proc of omnibox-run (the grandparent, outside): environ, mem, cwd, root, its fds"
	# The proxy's log, the scratch dir, the relay and the seccomp listener are its fds with egress.
	out=$(cd "$WS" && as_user "$TB/omnibox-run" -q --egress-log="$U/egress.log" "$P/egress.yaml" -- sh -c \
		'gp=$(awk "{print \$4}" /proc/$PPID/stat); echo "run=$(cat /proc/$gp/comm)";
		set -- "$gp" "$0"; '"$PROC_SCRIPT" "$O" 2>&1)
	rc=$?
	expect_out "run=omnibox-run"
	expect_no_out "read=ok"
	expect_no_out "write=ok"
	expect_no_out "readlink=ok"
	expect_no_out "aws-host-secret"
	expect_no_out "openai-host-secret"
	expect_out "environ read=EACCES"
	tests=$((tests + 1))
	! grep -q leak "$U/egress.log" 2>/dev/null || fail "the proxy's log was written through /proc"
	name="/proc/self/fd holds nothing of the caller's"
	sbx ro sh -c 'ls /proc/self/fd | tr "\n" " "'
	expect_eq "$name" "$out" "0 1 2 3 "
	name="/proc of omnibox-init (in the sandbox): no write to its memory"
	sbx ro sh -c 'rt write /proc/$PPID/mem; rt vm-writev $PPID; rt ptrace-attach $PPID'
	expect_out "write=EACCES"
	expect_out "vm-writev=EPERM"
	expect_out "ptrace-attach=EPERM"
}

# ---- 3. file handles ----------------------------------------------------------------

m_handles() {
	name="open_by_handle_at refused; name_to_handle_at opens nothing"
	sbx ro sh -c "rt name_to_handle_at '$O/secret.txt'; rt open_by_handle_at '$O/secret.txt';
		rt open_by_handle_at /etc/hostname"
	expect_out "open_by_handle_at=EPERM"
	expect_no_out "open_by_handle_at=ok"
	expect_no_out "host-secret-$who"
}

# ---- 4. ptrace and its relatives ---------------------------------------------------------

m_ptrace() {
	host_sleeper
	name="ptrace, process_vm_readv, pidfd_getfd, kcmp: omnibox-init, omnibox-run, a host process"
	sbx ro sh -c 'gp=$(awk "{print \$4}" /proc/$PPID/stat)
		for p in $PPID $gp $1; do for m in ptrace-attach ptrace-seize vm-readv vm-writev kcmp; do
			rt $m $p; done; rt pidfd-getfd $p 0; rt pidfd-getfd $p 3; done' sh "$sleeper"
	expect_no_out "=ok"
	expect_out "ptrace-attach=EPERM"
	expect_out "pidfd-getfd=EPERM"
	tests=$((tests + 1))
	grep -q '^TracerPid:[[:space:]]*0$' "/proc/$sleeper/status" || fail "the host process is traced"
}

# ---- 5. io_uring --------------------------------------------------------------------------

m_io_uring() {
	name="io_uring_setup refused"
	sbx rw rt io_uring
	expect_eq "$name" "$(printf '%s\n' "$out" | grep '^io_uring=')" "io_uring=EPERM"
}

# No user namespace here: the sandbox's user is the host user, whose
# keyring holds the key of the dotfile scan's memo (runtime/resolve/scan_memo.h).
# The filter refuses every keyring call, so the agent can neither read it
# nor replace it.
m_keyring() {
	name="the user's keyring: a key the host holds is neither found nor replaced"
	as_user python3 -I "$WS/tools/rt.py" key-add omnibox:landlock-test >/dev/null
	host=$(as_user python3 -I "$WS/tools/rt.py" key-find omnibox:landlock-test)
	expect_eq "the host finds its own key" "$host" "key-find=ok"
	sbx rw sh -c 'rt key-find omnibox:landlock-test; rt key-add omnibox:landlock-test;
		for p in keyctl i386-keyctl; do echo "$p=$(probe $p)"; done'
	expect_out "key-find=EPERM"
	expect_out "key-add=EPERM"
	expect_out "keyctl=EPERM"
	expect_out "i386-keyctl=EPERM"
	expect_no_out "=ok"
}

# ---- 6. TCP to another host on the proxy's port (documented approximation) ----------------

m_proxy_port() {
	name="egress: another host on the proxy's loopback port (documented approximation)"
	rm -f "$WS/sub/port" "$WS/sub/go" "$U/other.log"
	(cd "$WS" && as_user "$TB/omnibox-run" -q "$P/egress.yaml" -- sh -c '
		port=${HTTPS_PROXY##*:}; port=${port%%/*}; echo "$port" >sub/port
		while [ ! -e sub/go ]; do sleep 0.05; done
		rt tcp 127.0.0.2 "$port"; rt tcp ::1 "$port"; rt tcp 127.0.0.2 "$((port + 1))"
		rt udp 127.0.0.2 "$port"') >"$U/pp.out" 2>&1 &
	bg=$!
	for _ in $(seq 200); do
		[ -s "$WS/sub/port" ] && break
		sleep 0.05
	done
	port=$(cat "$WS/sub/port" 2>/dev/null)
	# Listeners of the host's on 127.0.0.2 and ::1 at the proxy's port and the next.
	as_user python3 -I -c '
import socket, sys, threading
log, port = sys.argv[1], int(sys.argv[2])
def serve(s):
    while True:
        c, a = s.accept()
        with open(log, "a") as f:
            f.write("reached %s:%d %r\n" % (s.getsockname()[0], s.getsockname()[1], c.recv(100)))
        c.close()
for fam, host, p in ((socket.AF_INET, "127.0.0.2", port), (socket.AF_INET, "127.0.0.2", port + 1),
                     (socket.AF_INET6, "::1", port)):
    try:
        s = socket.socket(fam)
        s.bind((host, p))
        s.listen(4)
        threading.Thread(target=serve, args=(s,), daemon=True).start()
    except OSError as e:
        print("no listener on", host, p, e, flush=True)
print("ready", flush=True)
sys.stdin.read()
' "$U/other.log" "$port" <"$U/srv.fifo" >"$U/other.out" 2>&1 8>&- &
	pids="$pids $!"
	wait_for "$U/other.out" ready
	: >"$WS/sub/go"
	wait "$bg"
	sleep 0.3
	out=$(cat "$U/pp.out" "$U/other.out" "$U/other.log" 2>/dev/null)
	# What docs/linux-landlock.md says: Landlock allows TCP connect to the
	# proxy's port on any address; every other port and UDP are refused.
	expect_out "reached 127.0.0.2:$port b'leak-tcp"
	expect_out "reached ::1:$port b'leak-tcp"
	expect_no_out "reached 127.0.0.2:$((port + 1))"
	expect_out "tcp=EACCES"
	expect_out "udp=EPERM"
	rm -f "$WS/sub/port" "$WS/sub/go"
}

# ---- sockets beyond TCP -------------------------------------------------------------------

m_sockets() {
	for pol in netoff egress; do
		name="sockets ($pol): host Unix sockets, UDP, fast open, MPTCP, listen, other families"
		sbx "$pol" sh -c "rt unix '$O/host.sock'; rt unix '@$ABS'; rt udp 127.0.0.1 $SRV;
			rt tcp 127.0.0.1 $SRV; rt tfo-sendto 127.0.0.1 $SRV; rt tfo-sendmsg 127.0.0.1 $SRV;
			rt tfo-connect 127.0.0.1 $SRV; rt mptcp 127.0.0.1 $SRV; rt listen;
			for s in '17 3 0' '16 3 0' '16 3 9' '1 1 0' '1 2 0' '2 2 0' '10 2 0' '2 3 1' '2 5 0' '2 1 262' \
				'2 1 132' '40 1 0' '38 5 0' '2 2050 0'; do printf '%s: ' \"\$s\"; rt sock \$s; done
			for p in i386-socketcall-netlink i386-socket-netlink socket-packet socket-vsock tiocsti; do
				echo \"\$p=\$(probe \$p)\"; done"
		expect_out "unix=EPERM"
		expect_out "udp=EPERM"
		expect_out "tfo-sendto=EPERM"
		expect_out "tfo-sendmsg=EPERM"
		expect_out "tfo-connect=EPERM"
		expect_out "mptcp=EPERM"
		expect_out "listen=EPERM"
		expect_out "tcp=EACCES"
		expect_no_out "=ok"
		expect_no_out "sock=ok"
	done
	sleep 0.3
	out=$(cat "$U/srv.log")
	name="sockets: the host's listeners received nothing"
	expect_eq "$name" "$out" ""
}

# ---- terminals ----------------------------------------------------------------------------

m_terminals() {
	name="terminals: another of the user's pseudo-terminals, TIOCSTI"
	# A pseudo-terminal of the host's, held by a process of the user's that
	# logs what reaches its master.
	rm -f "$U/pty.out"
	as_user python3 -I -c '
import os, pty, sys, select
m, s = pty.openpty()
print(os.ttyname(s), flush=True)
while True:
    r, _, _ = select.select([m, 0], [], [])
    if 0 in r and not os.read(0, 10):
        break
    if m in r:
        print("got %r" % os.read(m, 100), flush=True)
' <"$U/srv.fifo" >"$U/pty.out" 2>&1 8>&- &
	pids="$pids $!"
	wait_for "$U/pty.out" /dev/pts/
	tty=$(head -1 "$U/pty.out")
	sbx rw sh -c "rt write $tty; rt read $tty; rt tiocsti 0; rt tiocsti 1; rt write /dev/tty; ls /dev/pts"
	expect_out "write=EACCES"
	expect_no_out "write=ok"
	expect_no_out "tiocsti=ok"
	sleep 0.2
	out=$(cat "$U/pty.out")
	expect_no_out "got"
}

# ---- signals, limits, priorities ---------------------------------------------------------

m_signals() {
	host_sleeper
	nofile=$(awk '/^Max open files/ {print $4}' "/proc/$sleeper/limits")
	name="signals, limits, priorities: a host process and omnibox-run"
	sbx ro sh -c 'gp=$(awk "{print \$4}" /proc/$PPID/stat)
		for p in $1 $gp; do rt kill $p 19; rt kill $p 9; rt prlimit $p; rt setpriority 0 $p;
			rt ioprio 1 $p; rt sched $p; done
		rt setpriority 1 0; rt setpriority 2 0; rt ioprio 2 0; rt ioprio 3 0; echo end' sh "$sleeper"
	expect_out end
	expect_no_out "=ok"
	expect_out "kill=EPERM"
	expect_out "prlimit=EPERM"
	tests=$((tests + 1))
	state=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$sleeper/status" 2>/dev/null)
	[ "$state" = S ] || fail "the host process is in state '$state'"
	expect_eq "the host process's nice" "$(ps -o ni= -p "$sleeper" | tr -d ' ')" 0
	expect_eq "the host process's open-files limit" \
		"$(awk '/^Max open files/ {print $4}' "/proc/$sleeper/limits")" "$nofile"
}

# ---- metadata of host files outside the grants --------------------------------------------

m_metadata() {
	mkdir -p "$O/meta"
	echo "meta-$who" >"$O/meta/f"
	cp /bin/true "$O/meta/bin"
	chmod 600 "$O/meta/f"
	chmod 755 "$O/meta" "$O/meta/bin"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$O/meta"
	before=$(stat -c '%a %Y' "$O/meta/f" "$O/meta/bin" "$O/meta" "$H/.ssh/id_rsa" "$WS/docs/README")
	name="metadata outside the grants: chmod o+rw of a file of the user's"
	sbx ro rt chmod "$O/meta/f" 666
	expect_eq "$name (host mode)" "$(mode "$O/meta/f")" 600
	name="metadata outside the grants: chmod u+s of a program of the user's"
	sbx ro rt chmod "$O/meta/bin" 4755
	expect_eq "$name (host mode)" "$(mode "$O/meta/bin")" 755
	name="metadata outside the grants: chmod 777 of a directory of the user's"
	sbx ro rt chmod "$O/meta" 777
	expect_eq "$name (host mode)" "$(mode "$O/meta")" 755
	name="metadata outside the grants: chmod 644 of the user's ssh key"
	sbx ro rt chmod "$H/.ssh/id_rsa" 644
	expect_eq "$name (host mode)" "$(mode "$H/.ssh/id_rsa")" 600
	name="metadata of a read-only grant: chmod 666 of a workspace file"
	sbx ro rt chmod docs/README 666
	expect_eq "$name (host mode)" "$(mode "$WS/docs/README")" 644
	name="metadata outside the grants: utimes and a user.* extended attribute"
	sbx ro sh -c "rt utime '$O/meta/f'; rt setxattr '$O/meta/f'"
	expect_out "utime=EPERM"
	expect_out "setxattr=EPERM"
	tests=$((tests + 1))
	python3 -c 'import os, sys; os.getxattr(sys.argv[1], "user.omnibox-rt")' "$O/meta/f" 2>/dev/null &&
		fail "the sandbox set an extended attribute on $O/meta/f"
	expect_eq "modes and times, before and after" \
		"$(stat -c '%a %Y' "$O/meta/f" "$O/meta/bin" "$O/meta" "$H/.ssh/id_rsa" "$WS/docs/README")" "$before"
	chmod 644 "$WS/docs/README"
	chmod 600 "$H/.ssh/id_rsa"
	rm -rf "$O/meta"

	name="truncate: a read-only grant's file and a host file outside"
	sbx ro sh -c "rt truncate docs/README; rt trunc docs/README; rt truncate '$O/secret.txt'"
	expect_no_out "=ok"
	expect_eq "$name: README" "$(cat "$WS/docs/README")" "ro-doc-$who"
	expect_eq "$name: secret" "$(cat "$O/secret.txt")" "host-secret-$who"
}

# ---- masks in a writable workspace --------------------------------------------------------

m_masked_rename() {
	mkdir -p "$WS/config"
	echo "masked-key-$who" >"$WS/config/secret.key"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$WS/config"
	policy masks <<-EOF
	os_env:
	  sandbox:
	    type: linux_landlock
	    write_paths: [.]
	    mask_paths: [config/secret.key]
	EOF
	name="a masked .env and mask_paths entry: renamed, linked, copied to a visible name"
	sbx masks sh -c 'rt rename .env env.txt; rt rename .env sub/env.txt; rt rename config/secret.key config/k;
		rt rename config/secret.key sub/k; rt link .env sub/env.lnk; rt link config/secret.key sub/k.lnk;
		rt rename config sub/config; cat .env config/secret.key > sub/copy; echo end'
	expect_out end
	expect_no_out "rename=ok"
	expect_no_out "link=ok"
	expect_no_out "dotenv-secret"
	expect_no_out "masked-key"
	name="a second launch sees no masked content under another name"
	sbx masks sh -c 'cat env.txt sub/* config/k 2>/dev/null; echo end'
	expect_out end
	expect_no_out "dotenv-secret"
	expect_no_out "masked-key"
	tests=$((tests + 1))
	[ -f "$WS/.env" ] && [ -f "$WS/config/secret.key" ] || fail "a masked file was moved on the host"
	rm -rf "$WS/config" "$WS/sub/"*
}

# ---- git: hooks and config ------------------------------------------------------------------

m_git() {
	G=$U/repo
	rm -rf "$G"
	mkdir -p "$G"
	git -C "$G" init -q
	echo "#!/bin/sh" >"$G/.git/hooks/pre-commit"
	chmod 644 "$G/.git/hooks/pre-commit" # the user's hook, turned off
	echo "src" >"$G/file"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$G"
	cfg=$(cat "$G/.git/config")
	policy git <<-EOF
	os_env:
	  cwd: $G
	  sandbox:
	    type: linux_landlock
	    write_paths: [.]
	    cwd_allow_hidden: [.git]
	EOF
	name="git: a new hook, .git/config, info/attributes, commondir, .envrc, .vscode"
	sbx git sh -c 'cd "'"$G"'"; printf "#!/bin/sh\necho pwned\n" >.git/hooks/post-checkout;
		echo "[core] fsmonitor = touch /tmp/pwned" >>.git/config; git config core.hooksPath /tmp;
		mkdir -p .git/info; echo "* filter=x" >.git/info/attributes; echo /tmp >.git/commondir;
		echo "echo pwned" >.envrc; mkdir -p .vscode; echo "{}" >.vscode/tasks.json;
		mkdir -p .git/modules/m/hooks; echo x > .git/modules/m/hooks/pre-commit;
		echo changed >file; echo end'
	expect_out end
	tests=$((tests + 1))
	[ ! -e "$G/.git/hooks/post-checkout" ] || fail "a hook was made"
	expect_eq "$name: .git/config" "$(cat "$G/.git/config")" "$cfg"
	tests=$((tests + 1))
	[ ! -e "$G/.git/info/attributes" ] && [ ! -e "$G/.git/commondir" ] && [ ! -e "$G/.envrc" ] &&
		[ ! -e "$G/.vscode" ] && [ ! -e "$G/.git/modules" ] || fail "a protected path was made: $(ls -A "$G" "$G/.git")"
	expect_eq "$name: the workspace is writable" "$(cat "$G/file")" changed
	name="git: a disabled hook of the user's made executable"
	sbx git sh -c 'cd "'"$G"'"; rt chmod .git/hooks/pre-commit 755'
	expect_eq "$name (host mode)" "$(mode "$G/.git/hooks/pre-commit")" 644
	rm -rf "$G"
}

# ---- processes left behind ----------------------------------------------------------------------

m_daemons() {
	mark="omnibox-rt-daemon-$$-$who"
	name="daemons: setsid, double fork, nohup, a hopping process: none outlives the launch"
	sbx ro sh -c '
		setsid python3 -I -c "import time; time.sleep(300)" "$1-setsid" &
		(python3 -I -c "import time; time.sleep(300)" "$1-double" &) &
		nohup python3 -I -c "import time, signal; signal.signal(signal.SIGHUP, signal.SIG_IGN); time.sleep(300)" "$1-nohup" >/dev/null 2>&1 &
		python3 -I tools/rt.py hopper "$1-hopper" &
		sleep 0.5; echo left' sh "$mark"
	expect_out left
	tests=$((tests + 1))
	gone "$mark" || fail "left behind: $(pgrep -af "$mark" | head -3)"
	pkill -KILL -f "$mark" 2>/dev/null
	name="killing omnibox-init: nothing escapes supervision"
	sbx ro sh -c '
		setsid python3 -I -c "import time; time.sleep(300)" "$1-setsid" &
		python3 -I tools/rt.py hopper "$1-hopper" &
		sleep 0.3; rt kill $PPID 9; sleep 1; echo survived' sh "$mark"
	tests=$((tests + 1))
	[ "$rc" != 0 ] || fail "the launch ended well after omnibox-init was killed"
	tests=$((tests + 1))
	gone "$mark" || fail "left behind: $(pgrep -af "$mark" | head -3)"
	pkill -KILL -f "$mark" 2>/dev/null
	name="SIGSTOP of omnibox-init: the launch still ends, nothing left"
	out=$(cd "$WS" && as_user timeout 20 "$TB/omnibox-run" -q "$P/ro.yaml" -- sh -c '
		python3 -I -c "import time; time.sleep(300)" "$1-stopped" & sleep 0.2; kill -STOP $PPID; echo stopped' \
		sh "$mark" 2>&1)
	rc=$?
	expect_out stopped
	tests=$((tests + 1))
	[ "$rc" != 124 ] || fail "the launch hung with omnibox-init stopped"
	tests=$((tests + 1))
	gone "$mark" || fail "left behind: $(pgrep -af "$mark" | head -3)"
	pkill -KILL -f "$mark" 2>/dev/null
}

# ---- descriptors the caller left open -----------------------------------------------------------

m_inherited_fds() {
	: >"$O/inherited.log"
	[ "$who" = nobody ] && chown nobody:nogroup "$O/inherited.log"
	name="inherited descriptors 3+: a directory, a writable file, a TCP socket"
	out=$(cd "$WS" && as_user bash -c 'exec 4<"$1" 5>>"$2" 6<>"/dev/tcp/127.0.0.1/$3"; shift 3; exec "$@"' \
		_ "$O" "$O/inherited.log" "$SRV" "$TB/omnibox-run" -q "$P/rw.yaml" -- sh -c \
		'for fd in 3 4 5 6 7 9; do rt write-fd $fd; done; rt read /proc/self/fd/4/secret.txt; ls /proc/self/fd' 2>&1)
	rc=$?
	expect_rc 0
	expect_no_out "write-fd=ok"
	expect_no_out "host-secret"
	expect_eq "$name: the file" "$(cat "$O/inherited.log")" ""
	sleep 0.2
	out=$(cat "$U/srv.log")
	expect_no_out "leak"
	rm -f "$O/inherited.log"
}

run_all() {
	setup_user
	host_server
	# ONLY="m_a m_b": just those moves.
	if [ -n "${ONLY:-}" ]; then
		for m in $ONLY; do "$m"; done
	else
		m_planted_links
		m_proc
		m_handles
		m_ptrace
		m_io_uring
		m_keyring
		m_proxy_port
		m_sockets
		m_terminals
		m_signals
		m_metadata
		m_masked_rename
		m_git
		m_daemons
		m_inherited_fds
	fi
	exec 8>&-
}

if [ "$(id -u)" != 0 ]; then
	echo "landlock-attacks: must run as root, to test both as root and as nobody" >&2
	exit 1
fi
abi=$("$B/omnibox-init" --ll-min-abi 1000 --exec /bin/true -- true 2>&1 |
	sed -n "s/.*this kernel's Landlock ABI is \([0-9]*\),.*/\1/p")
if [ -z "$abi" ] || [ "$abi" -lt 6 ]; then
	echo "landlock-attacks: 0 checks, 0 failed, 1 skipped (Landlock ABI ${abi:-0}, the backend needs 6)"
	exit 0
fi
for who in root nobody; do
	run_all
done
echo "landlock-attacks: $tests checks, $failures failed, $skips skipped"
[ "$failures" = 0 ]
