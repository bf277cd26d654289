#!/bin/sh
# landlock.sh BUILD_DIR [MODE...] - the linux_landlock backend (no
# namespaces: omnibox-init started directly, no_new_privs, one Landlock
# ruleset, a seccomp filter) against real launches, as root and as nobody.
# Each check plays one move of the agent and then looks at the host, not at
# the agent's word: a file that must not appear, a listener that must have
# heard nothing, a process that must still be alive.
#
# MODEs (default: landlock nons auto):
#   bwrap     the same checks with `type: linux_bwrap` on this host, to show
#             each check holds against the backend that is known to work
#   landlock  `type: linux_landlock` on this ordinary host
#   nons      `type: linux_landlock`, every omnibox-run under
#             BUILD_DIR/tests/nons (no namespace can be made, as in Docker)
#   auto      under nons with no type: a policy enforced exactly runs on
#             linux_landlock and says so; an inexact one is refused (125)
#             with the settings it cannot enforce, and nothing runs
# A check that cannot apply in a mode is skipped with its reason.
set -u

if [ $# -lt 1 ]; then
	echo "usage: landlock.sh BUILD_DIR [bwrap|landlock|nons|auto]..." >&2
	exit 2
fi
B=$(cd "$1" && pwd)
shift
MODES=${*:-landlock nons auto}
for m in $MODES; do
	case $m in
	bwrap | landlock | nons | auto) ;;
	*)
		echo "landlock.sh: unknown mode '$m' (bwrap, landlock, nons, auto)" >&2
		exit 2
		;;
	esac
done
if [ "$(id -u)" != 0 ]; then
	echo "landlock.sh: must run as root, to test both as root and as nobody" >&2
	exit 1
fi

T=$(mktemp -d /tmp/omnibox-ll.XXXXXX)
chmod 755 "$T"
pids=
# A host file outside every grant, readable by all (/etc itself is not
# granted: only some of its files are).
MARKER=/etc/omnibox-ll-marker-$$
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T" "$MARKER"
}
trap cleanup EXIT INT TERM
echo "host-marker-$$" >"$MARKER"
chmod 644 "$MARKER"

. "$(dirname "$0")/../lib.sh"

# The launcher's environment carries this secret; no sandbox may see it.
ENV_SECRET=env-host-secret-$$

# bg_user FILE CMD...: CMD as $who in the background, stdout and stderr
# in FILE; $bgpid is CMD's own process (not runuser nor a subshell), which
# joins $pids.
bg_user() {
	_f=$1
	shift
	rm -f "$_f.pid"
	as_user sh -c 'echo $$ >"$0"; exec "$@"' "$_f.pid" "$@" >"$_f" 2>&1 &
	wait_for "$_f.pid" . || fail "$1 did not start"
	bgpid=$(cat "$_f.pid" 2>/dev/null)
	pids="$pids $bgpid"
}

skip() {
	echo "SKIP [$who] $name: $*"
	skips=$((skips + 1))
}

# ---- the host side: an upstream for egress, a UDP listener ------------------

test_upstream "$T" "$B"
cat >"$T/udp.py" <<-'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
print("port", s.getsockname()[1], flush=True)
while True:
    d, a = s.recvfrom(512)
    print("received", d.decode(errors="replace"), flush=True)
EOF
chmod 644 "$T/udp.py"

# ---- each mode, each user -----------------------------------------------------

# The policy header for $mode: bwrap, landlock, nons name their backend;
# auto names none.
type_line() {
	case $mode in
	bwrap) echo "    type: linux_bwrap" ;;
	landlock | nons) echo "    type: linux_landlock" ;;
	auto) ;;
	esac
}

setup_user() {
	U=$T/$mode/$who
	H=$U/home
	WS=$U/ws
	P=$U/policies
	TB=$U/bin
	O=$U/outside # a host directory writable by the user, in no grant
	RW=$U/rw     # a directory granted writable (write_paths)
	SB=$U/shadow/bin # a directory of programs on PATH, in no grant
	GB=$U/gbin       # a directory of programs on PATH, granted (read_paths)
	# data/: a directory of the workspace with nothing hidden or protected in
	# it, where linux_landlock lets new names be made (at the top of a
	# writable root, where protected names are, it cannot: docs/linux-landlock.md).
	mkdir -p "$U/plain" "$H" "$WS/sub" "$WS/.venv" "$WS/secrets" "$WS/private" "$WS/data/docs" \
		"$WS/data/lib" "$WS/run" "$WS/tools" "$P" "$TB" "$O" "$RW/sub" "$SB" "$GB"
	echo "outside-secret-$who" >"$O/secret.txt"
	echo "outside-original" >"$O/existing"
	echo "fd-secret-$who" >"$O/fd-secret"
	echo "ws-readme" >"$WS/README"
	echo "plain-readme" >"$U/plain/README"
	cp "$B/tests/probe" "$U/plain/probe"
	echo "SECRET=dotenv-secret-$who" >"$WS/.env"
	echo "API_KEY=nested-secret-$who" >"$WS/sub/.env"
	echo "venv-ok" >"$WS/.venv/site.py"
	echo "tool-versions-ok" >"$WS/.tool-versions"
	echo "prod-key-$who" >"$WS/secrets/production.key"
	echo "private-dir-$who" >"$WS/private/inner"
	echo "doc" >"$WS/data/docs/README"
	ln -s "$O/secret.txt" "$WS/link-out"
	ln -s "$MARKER" "$WS/link-marker"
	ln -s "$O" "$WS/link-dir"
	cp "$B/omnibox-run" "$B/omnibox-init" "$B/omnibox-proxy" "$B/tests/nons" "$B/tests/probe" "$TB/"
	cp "$B/tests/probe" "$WS/tools/"
	# A python3 that would leave a mark in a writable grant and say so.
	printf '#!/bin/sh\necho SHADOW-RAN\n: >"%s/shadow-ran"\n' "$RW" >"$SB/python3"
	printf '#!/bin/sh\necho granted-tool-ran\n' >"$GB/omnibox-ll-tool"
	chmod 755 "$SB/python3" "$GB/omnibox-ll-tool"
	: >"$U/egress.log"
	chmod -R a+rX "$U"
	chmod 777 "$O"
	if [ "$who" = nobody ]; then
		chown -R -h nobody:nogroup "$U"
	fi
	chmod 755 "$TB"
	TL=$(type_line)

	# Read-only workspace, network off; dotfiles scanned at every depth,
	# two allowed by name; a file and a directory masked.
	policy ro <<-EOF
	os_env:
	  sandbox:
	$TL
	    allow_network: false
	    cwd_hidden_scan_recursive: true
	    cwd_allow_hidden: [.venv, .tool-versions]
	    mask_paths: [secrets/production.key, private]
	    env_passthrough: [PASSME]
	EOF
	policy rw <<-EOF
	os_env:
	  sandbox:
	$TL
	    allow_network: false
	    write_paths: [., "$RW"]
	EOF
	policy path <<-EOF
	os_env:
	  sandbox:
	$TL
	    allow_network: false
	    read_paths: ["$GB"]
	    write_paths: ["$RW"]
	EOF
	policy sockets <<-EOF
	os_env:
	  sandbox:
	$TL
	    allow_network: false
	    deny_unix_socket_paths: [run/denied.sock]
	EOF
	policy write-docs <<-EOF
	os_env:
	  sandbox:
	$TL
	    allow_network: false
	    write_paths: [.]
	    read_paths: [data/docs]
	EOF
	policy write-lib <<-EOF
	os_env:
	  sandbox:
	$TL
	    allow_network: false
	    write_paths: [., data/lib]
	EOF
	policy git <<-EOF
	os_env:
	  sandbox:
	$TL
	    allow_network: false
	    write_paths: [.]
	    cwd_allow_hidden: [.git]
	EOF
	policy egress <<-EOF
	os_env:
	  sandbox:
	$TL
	    egress_allow_private_destinations: true
	    egress_rules: ["GET upstream.test:$HTTPS/echo/**", "GET upstream.test:$HTTP/echo/**"]
	    write_paths: ["$RW"]
	EOF
	# auto: exact (read-only workspace, network off, nothing hidden: a
	# hidden directory's names stay listed under Landlock) and inexact
	# (writable).
	policy exact <<-EOF
	os_env:
	  sandbox:
	    allow_network: false
	    cwd_allow_hidden: ["*"]
	EOF
	policy inexact <<-EOF
	os_env:
	  sandbox:
	    allow_network: false
	    write_paths: [.]
	EOF
}

# launch POLICY CMD...: CMD in the sandbox of $P/POLICY.yaml, as $who, from
# $WS (or $CWD), through omnibox-run $RUNOPTS (-q unless set), under nons in
# the nons and auto modes, within 60 s.  The launcher holds $O/fd-secret on
# descriptor 7 and $ENV_SECRET in its environment, and PATH=$LPATH when set
# (as_user's otherwise).  $out: stdout and stderr; $rc.
CWD=
RUNOPTS=-q
LPATH=
launch() {
	_pol=$P/$1.yaml
	shift
	case $mode in
	nons | auto) _nons="$TB/nons --quiet --" ;;
	*) _nons= ;;
	esac
	# shellcheck disable=SC2086 # $_nons and $RUNOPTS are words or nothing
	out=$(cd "${CWD:-$WS}" && as_user env OMNIBOX_TEST_SECRET="$ENV_SECRET" ${LPATH:+"PATH=$LPATH"} \
		sh -c 'exec 7<"$0"; exec "$@"' "$O/fd-secret" \
		timeout -k 5 60 $_nons "$TB/omnibox-run" $RUNOPTS "$_pol" -- "$@" 2>&1)
	rc=$?
	[ -n "${LL_DEBUG:-}" ] && printf '>>> [%s/%s] %s rc=%s\n%s\n' "$mode" "$who" "$name" "$rc" "$out" >&2
}

# ran: the launch ran its command to the end (its last line "end"), so that
# what it failed to do is the sandbox's doing, not a launch that never was.
ran() {
	expect_rc 0
	expect_out "end"
}

# 1. Reads outside every grant.
t_read_outside() {
	name="reads outside the grants are refused"
	launch ro sh -c "cat '$MARKER' && echo READ-MARKER; cat '$O/secret.txt' && echo READ-OUTSIDE;
		ls '$O' && echo LISTED-OUTSIDE; head -c 100 /etc/shadow && echo READ-SHADOW; echo end"
	ran
	expect_no_out "host-marker-$$"
	expect_no_out "outside-secret"
	expect_no_out "READ-"
	expect_no_out "LISTED-OUTSIDE"
	name="a symlink in the workspace to outside reads nothing"
	launch ro sh -c 'cat link-out && echo READ-LINK; cat link-marker && echo READ-LINK;
		cat link-dir/secret.txt && echo READ-LINK; ls link-dir/ && echo LISTED-LINK; echo end'
	ran
	expect_no_out "outside-secret"
	expect_no_out "host-marker-$$"
	expect_no_out "READ-LINK"
	expect_no_out "LISTED-LINK"
}

# 2. Writes outside every grant, in a host directory the user can write.
t_write_outside() {
	name="writes outside the grants land nowhere on the host"
	before=$(ls -A "$O" | tr '\n' ' ')
	launch rw sh -c "echo x >'$O/new' && echo WROTE; echo y >>'$O/existing' && echo WROTE;
		mkdir '$O/dir' && echo WROTE; ln -s / '$O/link' && echo WROTE; rm '$O/secret.txt' && echo WROTE;
		mv '$O/existing' '$O/moved' && echo WROTE; echo x >'$MARKER' && echo WROTE; echo end"
	ran
	expect_no_out "WROTE"
	expect_eq "the outside directory's entries" "$(ls -A "$O" | tr '\n' ' ')" "$before"
	expect_eq "the outside file" "$(cat "$O/existing")" "outside-original"
	expect_eq "the marker" "$(cat "$MARKER")" "host-marker-$$"
}

# 3. Writes inside a writable grant reach the host.
t_write_grant() {
	name="writes in the write_paths land on the host"
	rm -f "$RW/sub/granted" "$WS/data/ws-new" "$WS/ws-top"
	launch rw sh -c "echo granted >'$RW/sub/granted' && echo ws >data/ws-new && echo end;
		(echo top >ws-top) 2>/dev/null && echo TOP-WROTE; true"
	ran
	expect_eq "the granted file on the host" "$(cat "$RW/sub/granted" 2>/dev/null)" granted
	expect_eq "the workspace file on the host" "$(cat "$WS/data/ws-new" 2>/dev/null)" ws
	# A new name at the top of a writable root, beside the protected ones:
	# bwrap makes it; linux_landlock cannot (the approximation it lists).
	if [ "$mode" = bwrap ]; then
		expect_out "TOP-WROTE"
		expect_eq "a new top-level file on the host" "$(cat "$WS/ws-top" 2>/dev/null)" top
	else
		expect_no_out "TOP-WROTE"
		tests=$((tests + 1))
		[ ! -e "$WS/ws-top" ] || fail "linux_landlock made a name beside the protected ones"
	fi
	rm -f "$RW/sub/granted" "$WS/data/ws-new" "$WS/ws-top"
}

# 4. The read-only workspace.
t_ro_workspace() {
	name="a read-only workspace takes no write"
	launch ro sh -c 'cat README; echo x >README && echo WROTE; echo y >newfile && echo WROTE;
		rm -f README && echo WROTE; mv data data2 && echo WROTE; mkdir newdir && echo WROTE; echo end'
	ran
	expect_out "ws-readme"
	expect_no_out "WROTE"
	expect_eq "README on the host" "$(cat "$WS/README")" "ws-readme"
	tests=$((tests + 1))
	[ ! -e "$WS/newfile" ] && [ ! -e "$WS/newdir" ] && [ -d "$WS/data" ] ||
		fail "the read-only workspace changed on the host"
}

# 5 and 6. Dotfiles and mask_paths.
t_dotfiles_masks() {
	name="dotfiles: .env and a nested .env hidden, allowed dotfiles readable"
	launch ro sh -c 'cat .env; cat sub/.env; cat .venv/site.py; cat .tool-versions; echo end'
	ran
	expect_no_out "dotenv-secret"
	expect_no_out "nested-secret"
	expect_out "venv-ok"
	expect_out "tool-versions-ok"
	name="mask_paths: a masked file and a masked directory read nothing"
	launch ro sh -c 'cat secrets/production.key; cat private/inner; ls -A private | sed "s/^/listed:/"; echo end'
	ran
	expect_no_out "prod-key"
	expect_no_out "private-dir"
	# bwrap mounts an empty directory there; under Landlock the list right
	# of the directory above reaches below it: the names, not their contents.
	if [ "$mode" = bwrap ]; then
		expect_no_out "listed:"
	else
		expect_out "listed:inner"
	fi
}

# 7. The protected paths in a writable git workspace.
t_protected() {
	name="protected paths: hooks, config and commondir stay as they were on the host"
	R=$U/repo
	rm -rf "$R"
	mkdir -p "$R"
	(cd "$R" && git init -q && echo one >f && git add f &&
		git -c user.email=t@t -c user.name=t commit -qm one) || fail "git init on the host"
	rm -f "$R"/.git/hooks/*
	[ "$who" = nobody ] && chown -R nobody:nogroup "$R"
	config=$(md5sum <"$R/.git/config")
	CWD=$R
	launch git sh -c 'echo evil >.git/hooks/pre-commit && echo HOOK-WRITTEN
		printf "[core]\n\thooksPath = /tmp\n" >>.git/config && echo CONFIG-WRITTEN
		echo /tmp >.git/commondir && echo COMMONDIR-MADE
		echo two >f && echo end'
	CWD=
	ran
	expect_no_out "HOOK-WRITTEN"
	expect_no_out "CONFIG-WRITTEN"
	expect_no_out "COMMONDIR-MADE"
	expect_eq "the hooks directory on the host" "$(ls -A "$R/.git/hooks")" ""
	expect_eq "the config on the host" "$(md5sum <"$R/.git/config")" "$config"
	tests=$((tests + 1))
	[ ! -e "$R/.git/commondir" ] || fail ".git/commondir was created on the host"
	expect_eq "a file of the workspace, written" "$(cat "$R/f" 2>/dev/null)" two
	rm -rf "$R"
}

# Metadata, which Landlock does not see: chmod and touch work where the
# sandbox may write, and change nothing anywhere else (a host file outside
# the grants, the read-only workspace, a protected path, a masked one).
t_metadata() {
	name="metadata: chmod and touch where writable, nowhere else"
	R=$U/meta
	rm -rf "$R"
	mkdir -p "$R/.git/hooks" "$R/data"
	echo x >"$R/data/tool.sh"
	echo hook >"$R/.git/hooks/pre-commit"
	echo s >"$R/.env"
	chmod 644 "$R/data/tool.sh" "$R/.git/hooks/pre-commit" "$R/.env" "$O/secret.txt" "$WS/README"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$R"
	before=$(stat -c '%a %Y' "$O/secret.txt" "$WS/README" "$R/.git/hooks/pre-commit" "$R/.env")
	CWD=$R
	launch git sh -c "chmod +x data/tool.sh && echo CHMOD-OK; touch -d 2001-02-03 data/tool.sh && echo TOUCH-OK
		chmod 777 '$O/secret.txt' && echo OUT-CHMOD; touch -d 2001-02-03 '$O/secret.txt' && echo OUT-TOUCH
		chmod 777 '$WS/README' && echo RO-CHMOD; chmod +x .git/hooks/pre-commit && echo HOOK-CHMOD
		touch -d 2001-02-03 .git/hooks/pre-commit && echo HOOK-TOUCH; chmod 777 .env && echo ENV-CHMOD
		chmod u+s data/tool.sh && echo SUID; chown $(id -u "$who") data/tool.sh && echo CHOWN
		chmod 777 /proc/self/fd/1 && echo PROC-CHMOD; echo end"
	CWD=
	ran
	expect_out "CHMOD-OK"
	expect_out "TOUCH-OK"
	for w in OUT-CHMOD OUT-TOUCH RO-CHMOD HOOK-CHMOD HOOK-TOUCH ENV-CHMOD; do
		expect_no_out "$w"
	done
	# linux_landlock's own refusals: no set-user-ID bit, no chown on a path,
	# nothing through a /proc magic link (a pipe here).
	if [ "$mode" != bwrap ]; then
		for w in SUID CHOWN PROC-CHMOD; do
			expect_no_out "$w"
		done
	fi
	expect_eq "the writable file's mode and time on the host" \
		"$(stat -c '%a %y' "$R/data/tool.sh" | cut -c 1-14)" "755 2001-02-03"
	expect_eq "everything else's mode and time on the host" \
		"$(stat -c '%a %Y' "$O/secret.txt" "$WS/README" "$R/.git/hooks/pre-commit" "$R/.env")" \
		"$before"
	rm -rf "$R"
}

# 8. The environment.
t_environment() {
	name="environment: the launcher's secrets are absent, env_passthrough passes, HOME private"
	rm -f "$H/x"
	launch ro sh -c 'env; echo "home=$HOME"; echo x >"$HOME/x" && echo home-writable; echo end'
	ran
	expect_no_out "$ENV_SECRET"
	expect_no_out "OMNIBOX_TEST_SECRET"
	expect_no_out "aws-host-secret"
	expect_no_out "openai-host-secret"
	expect_out "PASSME=passed-through"
	expect_out "home-writable"
	tests=$((tests + 1))
	[ ! -e "$H/x" ] || fail "writing \$HOME/x created a file in the host's home"
	expect_eq "the host's home" "$(ls -A "$H")" ""
}

# 8b. PATH: an entry the sandbox can neither read nor execute (a directory
# in no grant, like a version manager's shims in the home) placed before
# /usr/bin shadows nothing.  bwrap shows no such directory at all, and
# passes PATH as it is; linux_landlock sees the host's filesystem, so it
# leaves the entry out of PATH, and keeps the rest in order: the granted
# bin directory, the system's, the workspace's, a directory yet to be made
# in a writable grant.  The interpreter Python records for itself
# (sys.executable, which python3 -m venv writes down) is found on PATH.
t_path() {
	name="PATH: a directory outside every rule is left out, the granted ones stay in order"
	rm -f "$RW/shadow-ran"
	kept="$GB:/usr/bin:$WS/tools:$RW/sub/later/bin:/bin"
	LPATH="$SB:$GB:/usr/bin:$WS/tools:$RW/sub/later/bin:/bin"
	# shellcheck disable=SC2016 # expanded inside the sandbox
	launch path sh -c 'echo "path=$PATH"; echo "found=$(command -v python3)"
		python3 -c "import sys; print(\"exe=\" + sys.executable)"
		echo "tool=$(omnibox-ll-tool)"; echo end'
	ran
	if [ "$mode" = bwrap ]; then
		expect_out "path=$LPATH
"
	else
		expect_out "path=$kept
"
		expect_no_out "$SB"
	fi
	expect_out "found=/usr/bin/python3
"
	expect_out "exe=/usr/bin/python3
"
	expect_out "tool=granted-tool-ran"
	expect_no_out "SHADOW-RAN"
	tests=$((tests + 1))
	[ ! -e "$RW/shadow-ran" ] || fail "the python3 outside every grant ran"
	if [ "$mode" != bwrap ]; then
		name="PATH: omnibox-run says which entries it left out"
		RUNOPTS=
		launch path sh -c 'echo end'
		RUNOPTS=-q
		ran
		expect_out "PATH inside leaves out $SB"
	fi
	LPATH=
}

# 9. Network off: TCP and UDP to host listeners on loopback.
t_network_off() {
	name="network off: no TCP or UDP reaches a host listener on 127.0.0.1"
	"$TB/probe" listen-tcp >"$U/tcp.out" 2>&1 &
	tcp_pid=$!
	pids="$pids $tcp_pid"
	/usr/bin/python3 "$T/udp.py" >"$U/udp.out" 2>&1 &
	udp_pid=$!
	pids="$pids $udp_pid"
	wait_for "$U/tcp.out" '^port ' && wait_for "$U/udp.out" '^port ' || fail "the host listeners did not start"
	tport=$(sed -n 's/^port //p' "$U/tcp.out")
	uport=$(sed -n 's/^port //p' "$U/udp.out")
	# Controls: the listeners hear the host.
	out=$(as_user "$TB/probe" tcp-connect 127.0.0.1 "$tport")
	expect_eq "the host reaches its own TCP listener" "$out" ok
	as_user /usr/bin/python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'control', ('127.0.0.1', $uport))"
	tests=$((tests + 1))
	wait_for "$U/udp.out" "received control" || fail "the host's UDP listener heard nothing from the host"
	sleep 0.2
	: >"$U/tcp.out"
	: >"$U/udp.out"
	launch ro sh -c "echo tcp=\$(probe tcp-connect 127.0.0.1 $tport)
		bash -c 'echo leak-devtcp >/dev/tcp/127.0.0.1/$tport' && echo DEVTCP-OK
		curl -sS -m 5 http://127.0.0.1:$tport/leak-curl && echo CURL-OK
		/usr/bin/python3 -c \"import socket; s = socket.create_connection(('127.0.0.1', $tport), 3); s.send(b'leak-py'); print('PYTCP-OK')\"
		/usr/bin/python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'leak-udp', ('127.0.0.1', $uport)); print('udp sent')\"
		echo end"
	ran
	expect_no_out "tcp=ok"
	expect_no_out "DEVTCP-OK"
	expect_no_out "CURL-OK"
	expect_no_out "PYTCP-OK"
	sleep 0.3
	out=$(cat "$U/tcp.out")
	expect_no_out "accepted"
	expect_no_out "leak"
	out=$(cat "$U/udp.out")
	expect_no_out "leak-udp"
	kill "$tcp_pid" "$udp_pid" 2>/dev/null
	wait "$tcp_pid" "$udp_pid" 2>/dev/null
}

# 9b. A port the agent listens on is not the host's: the host, connecting
# to it while the agent waits, reaches nothing.
t_listen() {
	name="a TCP port the agent listens on cannot be reached from the host"
	rm -f "$RW/sub/listen-state"
	"$TB/probe" listen-tcp >"$U/free.out" 2>&1 &
	free_pid=$!
	wait_for "$U/free.out" '^port ' || fail "no free port"
	lport=$(sed -n 's/^port //p' "$U/free.out")
	kill "$free_pid" 2>/dev/null
	wait "$free_pid" 2>/dev/null
	# The agent says "listening" or "refused" in a writable grant, then waits.
	(launch rw /usr/bin/python3 -c "
import socket, sys, time
st = open('$RW/sub/listen-state', 'w')
try:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('127.0.0.1', $lport))
    s.listen(8)
    s.settimeout(4)
    st.write('listening\\n'); st.flush()
    try:
        c, a = s.accept()
        print('AGENT-ACCEPTED', flush=True)
    except OSError:
        pass
except OSError as e:
    st.write('refused %s\\n' % e); st.flush()
print('end')
"
	printf '%s\n' "$out" >"$U/listen.out") &
	bgl=$!
	wait_for "$RW/sub/listen-state" . || fail "the agent said nothing"
	out=$("$TB/probe" tcp-connect 127.0.0.1 "$lport")
	expect_no_out "ok"
	wait "$bgl"
	out=$(cat "$U/listen.out")
	expect_out "end"
	expect_no_out "AGENT-ACCEPTED"
	rm -f "$RW/sub/listen-state"
}

# 10. Host Unix sockets: abstract, and by path in a readable grant.
t_unix_sockets() {
	name="a host abstract Unix socket receives nothing"
	sock="@omnibox-ll-test-$mode-$who-$$"
	bg_user "$U/abs.out" "$TB/probe" listen-unix "$sock"
	abs_pid=$bgpid
	wait_for "$U/abs.out" listening || fail "the abstract listener did not start"
	out=$(as_user "$TB/probe" connect-unix "$sock" control)
	expect_eq "the host reaches its own abstract socket" "$out" ok
	wait_for "$U/abs.out" "received control"
	: >"$U/abs.out"
	launch ro sh -c "echo abs=\$(probe connect-unix '$sock' leak)
		/usr/bin/python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('\\\\0${sock#@}'); s.send(b'leak-py'); print('PYABS-OK')\"
		echo end"
	ran
	expect_no_out "abs=ok"
	expect_no_out "PYABS-OK"
	sleep 0.2
	out=$(cat "$U/abs.out")
	expect_no_out "accepted"
	expect_no_out "leak"

	name="a host Unix socket in the workspace, in deny_unix_socket_paths, receives nothing"
	bg_user "$U/denied.out" "$TB/probe" listen-unix "$WS/run/denied.sock"
	denied_pid=$bgpid
	bg_user "$U/plain.out" "$TB/probe" listen-unix "$WS/run/plain.sock"
	plain_pid=$bgpid
	wait_for "$U/denied.out" listening && wait_for "$U/plain.out" listening ||
		fail "the path listeners did not start"
	launch sockets sh -c 'echo denied=$(probe connect-unix run/denied.sock leak)
		echo plain=$(probe connect-unix run/plain.sock leak)
		/usr/bin/python3 -c "import socket; a, b = socket.socketpair(); a.send(b\"pair-ok\"); print(b.recv(7).decode())"
		echo end'
	ran
	expect_no_out "denied=ok"
	expect_out "pair-ok"
	sleep 0.2
	plain_out=$out
	out=$(cat "$U/denied.out")
	expect_no_out "accepted"
	name="a host Unix socket in a readable grant, not listed, receives nothing"
	if [ "$mode" = bwrap ]; then
		# bwrap binds the workspace; its sockets stay reachable unless
		# deny_unix_socket_paths names them (documented).
		skip "bwrap leaves a socket in a grant reachable unless deny_unix_socket_paths names it"
	else
		out=$plain_out
		expect_no_out "plain=ok"
		out=$(cat "$U/plain.out")
		expect_no_out "accepted"
	fi
	kill "$abs_pid" "$denied_pid" "$plain_pid" 2>/dev/null
}

# 11. A host process of the same user.
t_host_process() {
	name="a host process of the same user can be neither killed nor read"
	bg_user "$U/sleep.out" env PROC_SECRET="proc-secret-$$" sleep 1000
	spid=$bgpid
	launch ro sh -c "kill -9 $spid && echo KILLED; kill -STOP $spid && echo STOPPED;
		cat /proc/$spid/environ | tr '\\0' '\\n'; ls -l /proc/$spid/cwd/ && echo CWD-LISTED;
		echo end"
	ran
	expect_no_out "KILLED"
	expect_no_out "STOPPED"
	expect_no_out "proc-secret"
	expect_no_out "CWD-LISTED"
	tests=$((tests + 1))
	state=$(awk '/^State:/ { print $2 }' "/proc/$spid/status" 2>/dev/null)
	[ "$state" = S ] || fail "the host process is not sleeping as it was (state '$state')"
	if command -v strace >/dev/null; then
		name="a host process cannot be traced"
		launch ro sh -c "strace -p $spid -e trace=none -o /dev/null & s=\$!; sleep 1; kill \$s 2>/dev/null;
			wait \$s; echo strace=\$?; grep TracerPid /proc/$spid/status; echo end"
		ran
		tests=$((tests + 1))
		tracer=$(awk '/^TracerPid:/ { print $2 }' "/proc/$spid/status")
		[ "$tracer" = 0 ] || fail "the host process is traced by $tracer"
	fi
	kill "$spid" 2>/dev/null
}

# 12. Descriptors the launcher held.
t_inherited_fds() {
	name="descriptor 7, open in the launcher, is closed inside"
	launch ro sh -c 'cat /proc/self/fd/7; cat <&7; echo "fd7=$(probe write-fd 7)";
		for f in /proc/self/fd/*; do echo "fd:${f##*/}"; done; echo end'
	ran
	expect_no_out "fd-secret"
	expect_out "fd7=EBADF"
	expect_no_out "fd:7"
	expect_eq "the file behind descriptor 7" "$(cat "$O/fd-secret")" "fd-secret-$who"
}

# 13. Symlinks the agent planted where the next launch resolves a grant
# (attacks.sh t_planted_grant_link).
t_planted_links() {
	name="a read grant planted as a symlink to / refuses the next launch"
	launch rw sh -c 'rm -rf data/docs && ln -s / data/docs && echo planted'
	expect_out "planted"
	launch write-docs sh -c "cat data/docs$O/secret.txt; cat data/docs$MARKER;
		echo pwned >data/docs$O/pwned; echo command-ran"
	expect_rc 125
	expect_out "goes through the symlink $WS/data/docs -> /"
	expect_no_out "outside-secret"
	expect_no_out "host-marker-$$"
	expect_no_out "command-ran"
	tests=$((tests + 1))
	[ ! -e "$O/pwned" ] || fail "the sandbox wrote $O/pwned on the host"
	rm -rf "${WS:?}/data/docs"
	mkdir -p "$WS/data/docs"
	[ "$who" = nobody ] && chown nobody:nogroup "$WS/data/docs"

	name="a write grant planted as a symlink to outside refuses the next launch"
	launch rw sh -c "rm -rf data/lib && ln -s '$O' data/lib && echo planted"
	expect_out "planted"
	launch write-lib sh -c 'cat data/lib/secret.txt; echo pwned >data/lib/pwned; echo command-ran'
	expect_rc 125
	expect_out "goes through the symlink $WS/data/lib -> $O"
	expect_no_out "outside-secret"
	expect_no_out "command-ran"
	tests=$((tests + 1))
	[ ! -e "$O/pwned" ] || fail "the sandbox wrote through the planted link"
	rm -rf "${WS:?}/data/lib"
	mkdir -p "$WS/data/lib"
	[ "$who" = nobody ] && chown nobody:nogroup "$WS/data/lib"
}

# 14. Egress: through the proxy, by its rules, and no other way.
t_egress() {
	name="egress: an allowed request passes through the proxy"
	url=https://upstream.test:$HTTPS
	: >"$T/upstream.log"
	RUNOPTS="-q --egress-hosts=$T/hosts --egress-ca=$T/ca.pem --egress-log=$U/egress.log"
	launch egress sh -c "curl -sS -m 10 $url/echo/allowed; echo end"
	ran
	expect_out "GET /echo/allowed"
	out=$(cat "$U/egress.log")
	expect_out "allow GET"
	: >"$U/egress.log"

	name="egress: a host no rule names is refused by the proxy"
	launch egress sh -c "curl -sS -m 10 -i https://other.test:$HTTPS/echo/denied; echo end"
	ran
	expect_out "403"
	expect_out "blocked-by-policy"
	tests=$((tests + 1))
	! grep -q '/echo/denied' "$T/upstream.log" || fail "the upstream saw the denied request"

	name="egress: a direct connection that bypasses the proxy fails"
	# A TCP listener no rule names, beside the upstream's ports (which a
	# relay inside the sandbox may answer for the proxy).
	"$TB/probe" listen-tcp >"$U/etcp.out" 2>&1 &
	etcp_pid=$!
	pids="$pids $etcp_pid"
	wait_for "$U/etcp.out" '^port ' || fail "the host listener did not start"
	eport=$(sed -n 's/^port //p' "$U/etcp.out")
	: >"$U/etcp.out"
	launch egress sh -c "curl -sS -m 5 --noproxy '*' -k https://127.0.0.1:$HTTPS/echo/direct || echo direct-failed;
		curl -sS -m 5 --noproxy '*' http://127.0.0.1:$HTTP/echo/direct-http || echo direct-http-failed;
		echo tcp=\$(probe tcp-connect 127.0.0.1 $eport);
		bash -c 'echo leak >/dev/tcp/127.0.0.1/$eport' && echo DEVTCP-OK; echo end"
	RUNOPTS=-q
	ran
	expect_out "direct-failed"
	expect_out "direct-http-failed"
	expect_no_out "tcp=ok"
	expect_no_out "DEVTCP-OK"
	tests=$((tests + 1))
	! grep -q '/echo/direct' "$T/upstream.log" || fail "the upstream saw a direct request"
	sleep 0.2
	out=$(cat "$U/etcp.out")
	expect_no_out "accepted"
	kill "$etcp_pid" 2>/dev/null
	wait "$etcp_pid" 2>/dev/null
	: >"$U/egress.log"

	# linux_landlock's relay listens on the host's loopback: while a launch
	# runs, another user's process connecting to it gets nothing (the proxy
	# would add the policy's credentials), the launcher's own do.
	if [ "$mode" != bwrap ]; then
		name="egress: another user cannot use the relay on the host's loopback"
		rm -f "$RW/sub/proxy-url"
		RUNOPTS="-q --egress-hosts=$T/hosts --egress-ca=$T/ca.pem --egress-log=$U/egress.log"
		(launch egress sh -c "echo \$HTTPS_PROXY >'$RW/sub/proxy-url'; sleep 4; echo end") &
		bge=$!
		wait_for "$RW/sub/proxy-url" http || fail "the launch said no proxy"
		purl=$(cat "$RW/sub/proxy-url" 2>/dev/null)
		if [ "$who" = root ]; then other=nobody; else other=root; fi
		out=
		case $purl in
		http://127.0.0.1:*)
			out=$(runuser -u "$other" -- curl -sS -k -m 5 -x "$purl" \
				"$url/echo/other-user" 2>&1)
			# The launcher's own user does reach it, so the refusal is the uid's.
			mine=$(as_user curl -sS -k -m 5 -x "$purl" "$url/echo/same-user" 2>&1)
			case $mine in
			*"GET /echo/same-user"*) ;;
			*) fail "the launcher's own user could not use the relay: $mine" ;;
			esac
			;;
		*) fail "no proxy URL from the launch: '$purl'" ;;
		esac
		expect_no_out "GET /echo/other-user"
		wait "$bge"
		RUNOPTS=-q
		tests=$((tests + 1))
		! grep -q 'other-user' "$U/egress.log" "$T/upstream.log" ||
			fail "another user's request reached the proxy or the upstream"
		: >"$U/egress.log"
	fi

	name="egress without client settings (transparent)"
	case $mode in
	bwrap) skip "transparent egress needs a test resolver (transparent.sh covers it for bwrap)" ;;
	*) skip "linux_landlock has no transparent egress: clients must use the proxy variables" ;;
	esac
}

checks() {
	t_read_outside
	t_write_outside
	t_write_grant
	t_ro_workspace
	t_dotfiles_masks
	t_protected
	t_metadata
	t_environment
	t_path
	t_network_off
	t_listen
	t_unix_sockets
	t_host_process
	t_inherited_fds
	t_planted_links
	t_egress
}

# ---- auto: under nons with no type ----------------------------------------------

# The workspace is $U/plain, with no dotfile: a read-only workspace with
# the network off is all the policy says.
t_auto() {
	RUNOPTS=
	CWD=$U/plain
	name="auto under nons: an exact policy runs on linux_landlock and says so"
	launch exact sh -c "cat README; cat '$MARKER' && echo READ-MARKER; echo x >newfile && echo WROTE;
		echo x >'$O/new' && echo WROTE; echo tcp=\$(./probe tcp-connect 127.0.0.1 $HTTPS);
		env; echo end"
	ran
	expect_out "linux_landlock"
	expect_out "plain-readme"
	expect_no_out "host-marker-$$"
	expect_no_out "READ-MARKER"
	expect_no_out "WROTE"
	expect_no_out "tcp=ok"
	expect_no_out "$ENV_SECRET"
	tests=$((tests + 1))
	[ ! -e "$U/plain/newfile" ] && [ ! -e "$O/new" ] || fail "a write landed on the host"
	tests=$((tests + 1))
	[ "$(printf '%s\n' "$out" | grep -c 'linux_landlock')" = 1 ] ||
		fail "linux_landlock is named on more than one line"

	name="auto under nons: an inexact policy is refused with what it cannot enforce, nothing ran"
	rm -f "$U/ran-inexact"
	launch inexact sh -c "touch '$U/ran-inexact'; echo COMMAND-RAN"
	expect_rc 125
	expect_out "linux_landlock"
	expect_out "workspace"
	expect_no_out "COMMAND-RAN"
	tests=$((tests + 1))
	[ ! -e "$U/ran-inexact" ] || fail "the command ran: $U/ran-inexact exists"
	name="auto under nons: -q still says why"
	RUNOPTS=-q
	launch inexact sh -c "touch '$U/ran-inexact'; echo COMMAND-RAN"
	expect_rc 125
	expect_out "workspace"
	expect_no_out "COMMAND-RAN"
	tests=$((tests + 1))
	[ ! -e "$U/ran-inexact" ] || fail "the command ran: $U/ran-inexact exists"

	name="auto under nons: --dry-run names linux_landlock and runs nothing"
	rm -f "$U/ran-dry"
	RUNOPTS=--dry-run
	launch exact sh -c "touch '$U/ran-dry'; echo COMMAND-RAN"
	RUNOPTS=-q
	expect_rc 0
	expect_out "linux_landlock"
	tests=$((tests + 1))
	[ ! -e "$U/ran-dry" ] || fail "--dry-run ran the command"
	CWD=
}

for mode in $MODES; do
	t0=$tests f0=$failures s0=$skips
	for who in root nobody; do
		setup_user
		if [ "$mode" != bwrap ] && [ "$("$TB/probe" landlock-abi)" -lt 6 ] 2>/dev/null; then
			name="$mode"
			skip "the kernel's Landlock ABI is below 6 (no signal or abstract socket scoping)"
			continue
		fi
		t1=$tests
		if [ "$mode" = auto ]; then
			t_auto
		else
			checks
		fi
		echo "    [$mode/$who] $((tests - t1)) checks"
	done
	echo "  $mode: $((tests - t0)) checks, $((failures - f0)) failed, $((skips - s0)) skipped"
done
echo "landlock.sh: $tests checks, $failures failures, $skips skipped"
[ "$failures" = 0 ]
