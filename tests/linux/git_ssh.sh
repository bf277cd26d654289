#!/bin/sh
# git_ssh.sh BUILD_DIR - git over ssh through the git_ssh broker, against a
# real sshd on loopback (its own host key, config and authorized key in a
# temp dir, serving bare repositories as root), from inside a real sandbox
# with no network, as root and as nobody: what the policy binds works, the
# rest is refused, and the key never enters the sandbox.
set -u

B=$(cd "$1" && pwd)
T=$(mktemp -d /tmp/omnibox-gitssh.XXXXXX)
chmod 755 "$T"
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

. "$(dirname "$0")/../lib.sh"

SSHD=$(command -v sshd || echo /usr/sbin/sshd)
if [ ! -x "$SSHD" ]; then
	echo "SKIP git_ssh: no sshd (Debian: openssh-server; .ci/install-deps installs it)"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "SKIP git_ssh: the test sshd serves the root account and needs root to start"
	exit 0
fi
command -v ssh >/dev/null || { echo "FAIL git_ssh: ssh (openssh-client) is missing"; exit 1; }

# ---- the server ---------------------------------------------------------------------

S=$T/sshd
mkdir -p "$S" /run/sshd
ssh-keygen -q -t ed25519 -N '' -f "$S/host_key" </dev/null
ssh-keygen -q -t ed25519 -N '' -f "$S/other_host_key" </dev/null
ssh-keygen -q -t ed25519 -N '' -f "$S/client_key" -C git-ssh-test </dev/null
cp "$S/client_key.pub" "$S/authorized_keys"
chmod 644 "$S/authorized_keys"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$S/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $PORT
HostKey $S/host_key
PidFile $S/sshd.pid
AuthorizedKeysFile $S/authorized_keys
StrictModes no
UsePAM no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
AcceptEnv GIT_PROTOCOL
AllowTcpForwarding no
X11Forwarding no
LogLevel VERBOSE
EOF
"$SSHD" -D -e -f "$S/sshd_config" 2>"$S/sshd.log" &
pids="$pids $!"
for _ in $(seq 100); do
	grep -q "Server listening" "$S/sshd.log" 2>/dev/null && break
	sleep 0.05
done
if ! grep -q "Server listening" "$S/sshd.log"; then
	echo "FAIL git_ssh: the test sshd did not start:"
	sed 's/^/    | /' "$S/sshd.log"
	exit 1
fi

# Bare repositories on the server: one bound for fetch and push, one for
# fetch only, one bound nowhere.
G=$T/git
mkdir -p "$G"
(cd "$T" && git init -q src && cd src && git config user.email t@t && git config user.name t &&
	echo "fetched-over-ssh" >README && git add README && git commit -q -m init) || exit 2
for r in rw ro other; do
	git init -q --bare "$G/$r.git"
	git -C "$T/src" push -q "$G/$r.git" HEAD:refs/heads/main
	git -C "$G/$r.git" symbolic-ref HEAD refs/heads/main
done
# The repository paths as the policy writes them (no leading '/').
RW=${G#/}/rw.git
RO=${G#/}/ro.git

# state REPO: everything a push could change in a bare repository.
state() {
	(cd "$1" && git for-each-ref && find objects refs -type f | sort && cat packed-refs 2>/dev/null)
}

# ---- the users ------------------------------------------------------------------------

as_user() {
	if [ "$who" = root ]; then
		env -i PATH=/usr/bin:/bin HOME="$H" LANG=C.UTF-8 TMPDIR=/tmp \
			SSH_AUTH_SOCK=/tmp/host-agent.sock "$@"
	else
		runuser -u nobody -- env -i PATH=/usr/bin:/bin HOME="$H" LANG=C.UTF-8 TMPDIR=/tmp \
			SSH_AUTH_SOCK=/tmp/host-agent.sock "$@"
	fi
}

# sbx POLICY CMD...: CMD in the sandbox of $P/POLICY.yaml, from $WS; $out is
# stdout and stderr, $rc the status, $log the broker's lines.
sbx() {
	_policy=$P/$1.yaml
	shift
	out=$(cd "$WS" && as_user "$TB/omnibox-run" -q --egress-hosts="$T/hosts" \
		--egress-log="$U/broker.log" "$_policy" -- "$@" 2>&1)
	rc=$?
	log=$(cat "$U/broker.log" 2>/dev/null)
	: >"$U/broker.log"
}

printf '127.0.0.1 git.test noloop.test badkey.test\n' >"$T/hosts"
chmod 644 "$T/hosts"

setup_user() {
	U=$T/$who
	H=$U/home
	WS=$U/ws
	P=$U/policies
	TB=$U/bin
	mkdir -p "$H/.ssh" "$WS" "$P" "$TB"
	cp "$B/omnibox-run" "$B/omnibox-init" "$B/omnibox-proxy" "$TB/"
	cp "$S/client_key" "$H/.ssh/deploy_key"
	chmod 600 "$H/.ssh/deploy_key"
	k=$(cut -d ' ' -f 1-2 "$S/host_key.pub")
	printf '[127.0.0.1]:%s %s\n[git.test]:%s %s\n[noloop.test]:%s %s\n' \
		"$PORT" "$k" "$PORT" "$k" "$PORT" "$k" >"$H/.ssh/known_hosts"
	# A key that is not the server's, for the name badkey.test.
	printf '[badkey.test]:%s %s\n' "$PORT" "$(cut -d ' ' -f 1-2 "$S/other_host_key.pub")" \
		>"$H/.ssh/bad_known_hosts"
	: >"$U/broker.log"
	cat >"$P/git.yaml" <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    allow_network: false
	    git_ssh:
	      - host: 127.0.0.1
	        port: $PORT
	        username: root
	        repository: $RW
	        operations: [fetch, push]
	        identity_file: ~/.ssh/deploy_key
	        allow_loopback: true
	      - host: 127.0.0.1
	        port: $PORT
	        username: root
	        repository: $RO
	        identity_file: ~/.ssh/deploy_key
	        allow_loopback: true
	      - host: git.test
	        port: $PORT
	        username: root
	        repository: $RO
	        identity_file: ~/.ssh/deploy_key
	        allow_loopback: true
	      - host: noloop.test
	        port: $PORT
	        username: root
	        repository: $RO
	        identity_file: ~/.ssh/deploy_key
	      - host: badkey.test
	        port: $PORT
	        username: root
	        repository: $RO
	        identity_file: ~/.ssh/deploy_key
	        known_hosts_file: ~/.ssh/bad_known_hosts
	        allow_loopback: true
	      - host: badkey.test
	        port: $PORT
	        username: root
	        repository: ${G#/}/other.git
	        identity_file: ~/.ssh/deploy_key
	        allow_loopback: true
	EOF
	# allowed_cidrs that leave the server's address out.
	cat >"$P/cidrs.yaml" <<-EOF
	os_env:
	  sandbox:
	    allow_network: false
	    git_ssh:
	      - host: 127.0.0.1
	        port: $PORT
	        username: root
	        repository: $RO
	        identity_file: ~/.ssh/deploy_key
	        allow_loopback: true
	        allowed_cidrs: [140.82.112.0/20]
	EOF
	chmod -R a+rX "$U"
	chmod 700 "$H/.ssh"
	chmod 600 "$H/.ssh/deploy_key"
	if [ "$who" = nobody ]; then
		chown -R nobody:nogroup "$U"
	fi
}

url() { # REPO-PATH [HOST [PORT]]: an ssh:// URL for the test server
	echo "ssh://root@${2:-127.0.0.1}:${3:-$PORT}$1"
}

run_all() {
	setup_user

	name="git clone over ssh: the bound repository, fetch"
	sbx git sh -c "cd \$TMPDIR && git clone -q $(url "$G/ro.git") c && cat c/README"
	expect_rc 0
	expect_out "fetched-over-ssh"
	out=$log
	expect_out "allow fetch root@127.0.0.1:$PORT /$RO"
	expect_out "exit 0"

	name="-q without --egress-log: the broker's session lines are silent too"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" -q --egress-hosts="$T/hosts" "$P/git.yaml" -- \
		sh -c "cd \$TMPDIR && git clone -q $(url "$G/ro.git") c && cat c/README" 2>&1)
	expect_out "fetched-over-ssh"
	expect_no_out "omnibox-git-ssh:"

	name="the sandbox's git runs the helper, with a token; no agent socket"
	sbx git sh -c 'echo "cmd=$GIT_SSH_COMMAND variant=$GIT_SSH_VARIANT"; env | grep -c "^SSH_AUTH_SOCK=" ;
		echo "token=${#OMNIBOX_GIT_SSH_TOKEN}"'
	expect_out "cmd=/.omnibox/init --git-ssh variant=ssh"
	expect_out "token=64"
	expect_no_out "host-agent.sock"

	name="git clone and push over ssh: the repository bound for both"
	before=$(git -C "$G/rw.git" rev-parse main)
	sbx git sh -c "cd \$TMPDIR && git clone -q $(url "$G/rw.git") c && cd c &&
		echo pushed-by-$who >NEW && git add NEW &&
		git -c user.name=a -c user.email=a@a commit -q -m sandboxed && git push -q origin HEAD:main &&
		echo push-ok"
	expect_rc 0
	expect_out "push-ok"
	tests=$((tests + 1))
	[ "$(git -C "$G/rw.git" show main:NEW 2>/dev/null)" = "pushed-by-$who" ] &&
		[ "$(git -C "$G/rw.git" rev-parse main~1)" = "$before" ] ||
		fail "the bare repository did not get the push"
	out=$log
	expect_out "allow push root@127.0.0.1:$PORT /$RW"

	name="16 MiB each way: pushed, then cloned back whole"
	sbx git sh -c "cd \$TMPDIR && git clone -q $(url "$G/rw.git") c && cd c &&
		head -c 16777216 /dev/urandom >big && git add big &&
		git -c user.name=a -c user.email=a@a commit -q -m big && git push -q origin HEAD:main &&
		cd .. && git clone -q $(url "$G/rw.git") d && cmp c/big d/big && echo big-ok"
	expect_out "big-ok"
	expect_eq "the blob on the server" "$(git -C "$G/rw.git" cat-file -s main:big 2>&1)" 16777216
	sent=$(printf '%s\n' "$log" | sed -n 's/.*allow push.* \([0-9]*\) bytes sent.*/\1/p')
	tests=$((tests + 1))
	[ "${sent:-0}" -gt 16777216 ] || fail "the broker counted ${sent:-no} bytes sent for the push"

	name="push to a repository bound for fetch only: refused, the bare repository unchanged"
	ro_before=$(state "$G/ro.git")
	sbx git sh -c "cd \$TMPDIR && git clone -q $(url "$G/ro.git") c && cd c &&
		echo not-allowed >X && git add X && git -c user.name=a -c user.email=a@a commit -q -m x &&
		git push origin HEAD:main HEAD:refs/heads/other; echo push-rc=\$?"
	expect_out "push-rc=128"
	expect_out "refused: push of /$RO on 127.0.0.1:$PORT is not allowed"
	expect_eq "the fetch-only bare repository" "$(state "$G/ro.git")" "$ro_before"
	out=$log
	expect_out "deny"
	expect_out "is not allowed"

	name="another repository on the same server: refused"
	sbx git sh -c "cd \$TMPDIR && git clone $(url "$G/other.git") c; echo rc=\$?;
		git ls-remote $(url "$G/rw.git/../other.git"); echo rc=\$?"
	expect_out "rc=128"
	expect_out "no git_ssh entry for 127.0.0.1:$PORT names repository $G/other.git"
	expect_out "names repository $G/rw.git/../other.git"
	expect_no_out "fetched-over-ssh"

	name="another host name for the same server, another port, another user: refused"
	sbx git sh -c "git ls-remote $(url "$G/ro.git" localhost); echo rc=\$?
		git ls-remote $(url "$G/ro.git" 127.0.0.1 $((PORT + 1))); echo rc=\$?
		git ls-remote $(url "$G/ro.git" 127.0.0.1 22); echo rc=\$?
		git ls-remote ssh://git@127.0.0.1:$PORT$G/ro.git; echo rc=\$?"
	expect_out "no git_ssh entry names host localhost, port $PORT"
	expect_out "no git_ssh entry names host 127.0.0.1, port $((PORT + 1))"
	expect_out "no git_ssh entry names host 127.0.0.1, port 22"
	expect_out "names user git"
	expect_no_out "refs/heads/main"

	name="an arbitrary command through the helper: refused, exit 255"
	sbx git sh -c "/.omnibox/init --git-ssh -p $PORT root@127.0.0.1 id; echo rc=\$?
		\$GIT_SSH_COMMAND -p $PORT root@127.0.0.1 \"git-upload-pack '$G/ro.git'; touch /tmp/pwned\"; echo rc=\$?
		\$GIT_SSH_COMMAND -p $PORT root@127.0.0.1 \"git-upload-archive '$G/ro.git'\"; echo rc=\$?
		\$GIT_SSH_COMMAND -p $PORT root@127.0.0.1; echo rc=\$?
		\$GIT_SSH_COMMAND -o ProxyCommand=id -p $PORT root@127.0.0.1 \"git-upload-pack '$G/ro.git'\"; echo rc=\$?
		git clone -u 'sh -c id' $(url "$G/ro.git") \$TMPDIR/c; echo rc=\$?"
	expect_out "not 'id'"
	expect_out "the repository must be one word quoted as git quotes it"
	expect_out "not 'git-upload-archive'"
	expect_out "no command given"
	expect_out "ssh option '-o' is not one git passes"
	expect_out "not 'sh'"
	expect_no_out "uid="
	tests=$((tests + 1))
	[ "$(printf '%s\n' "$out" | grep -c '^rc=255$')" = 5 ] || fail "expected five exits with 255"
	tests=$((tests + 1))
	[ ! -e /tmp/pwned ] || fail "a command reached the server's shell"

	name="a repository name with ESC, BEL and a newline: refused, shown escaped to git and in the log"
	cat >"$WS/esc.sh" <<-EOF
	r=\$(printf 'r\033[2J\007x')
	git ls-remote "$(url '/$r.git')"; echo rc=\$?
	\$GIT_SSH_COMMAND -p $PORT root@127.0.0.1 "git-upload-pack '\$(printf 'a\033]0;t\007\nb')'"
	echo rc=\$?
	EOF
	sbx git sh esc.sh
	expect_out "quoted as git quotes it, not '/r\x1b[2J\x07x.git'"
	expect_out "quoted as git quotes it, not 'a\x1b]0;t\x07\nb'"
	expect_no_out "$(printf '\033')"
	expect_no_out "$(printf '\007')"
	out=$log
	expect_out "git-upload-pack '/r\x1b[2J\x07x.git']: the repository must be one word"
	expect_out "git-upload-pack 'a\x1b]0;t\x07\nb']: the repository must be one word"
	expect_no_out "$(printf '\033')"
	expect_no_out "$(printf '\007')"
	tests=$((tests + 1))
	[ "$(printf '%s\n' "$log" | grep -c '^omnibox-git-ssh: ')" = "$(printf '%s\n' "$log" | wc -l)" ] ||
		fail "a log line does not start with omnibox-git-ssh:"

	name="git archive --remote (git-upload-archive): refused"
	sbx git sh -c "git archive --remote=$(url "$G/ro.git") HEAD >/dev/null; echo rc=\$?"
	expect_out "not 'git-upload-archive'"
	expect_no_out "rc=0"

	name="a wrong token: refused before anything is looked at"
	sbx git sh -c "OMNIBOX_GIT_SSH_TOKEN=0000 git ls-remote $(url "$G/ro.git"); echo rc=\$?
		OMNIBOX_GIT_SSH_TOKEN=\${OMNIBOX_GIT_SSH_TOKEN%?}x git ls-remote $(url "$G/ro.git"); echo rc=\$?"
	expect_out "refused: wrong OMNIBOX_GIT_SSH_TOKEN"
	expect_no_out "refs/heads/main"
	out=$log
	expect_out "wrong OMNIBOX_GIT_SSH_TOKEN"
	expect_no_out "allow"

	name="the identity never enters the sandbox"
	sbx git sh -c "cat $H/.ssh/deploy_key; ls $H/.ssh; cat ~/.ssh/deploy_key; env; cat /proc/*/environ | tr '\\0' '\\n'
		ls -l /proc/*/fd/ 2>/dev/null | grep -c deploy_key"
	expect_no_out "PRIVATE KEY"
	expect_no_out "$(sed -n 2p "$S/client_key")"
	expect_no_out "known_hosts"
	expect_out "No such file or directory"

	name="a direct connection to the ssh port from inside fails; so does the system ssh"
	sbx git sh -c "bash -c 'exec 3<>/dev/tcp/127.0.0.1/$PORT && head -c 7 <&3' 2>&1 || echo direct-failed
		ssh -o BatchMode=yes -p $PORT root@127.0.0.1 id 2>&1 || echo ssh-failed"
	expect_out "direct-failed"
	expect_out "ssh-failed"
	expect_no_out "SSH-2.0"
	expect_no_out "uid="

	name="a name is pinned to an address the entry allows: git.test works, loopback refused without allow_loopback"
	sbx git sh -c "git ls-remote $(url "$G/ro.git" git.test); echo rc=\$?
		git ls-remote $(url "$G/ro.git" noloop.test); echo rc=\$?"
	expect_out "refs/heads/main"
	expect_out "noloop.test is at 127.0.0.1, which git_ssh refuses: 127.0.0.0/8 (loopback)"
	out=$log
	expect_out "allow fetch root@git.test:$PORT /$RO (git_ssh at line "
	expect_out "via 127.0.0.1"

	name="allowed_cidrs: an address outside every block is refused"
	sbx cidrs sh -c "git ls-remote $(url "$G/ro.git"); echo rc=\$?"
	expect_out "outside allowed_cidrs"
	expect_no_out "refs/heads/main"

	name="the host key is checked against the entry's known hosts, under the policy's name"
	sbx git sh -c "git ls-remote $(url "$G/ro.git" badkey.test); echo rc=\$?
		git ls-remote $(url "$G/other.git" badkey.test); echo rc=\$?"
	expect_out "Host key verification failed"
	expect_out "No ED25519 host key is known for [badkey.test]:$PORT"
	expect_no_out "refs/heads/main"

	name="protocol v2 through SendEnv=GIT_PROTOCOL"
	sbx git sh -c "GIT_TRACE_PACKET=1 git -c protocol.version=2 ls-remote $(url "$G/ro.git") 2>&1 |
		grep -q '< version 2' && echo spoke-v2"
	expect_out "spoke-v2"

	name="at most $((8)) sessions at once; the next is refused"
	sbx git sh -c "for i in 1 2 3 4 5 6 7 8; do
			(sleep 4 | \$GIT_SSH_COMMAND -p $PORT root@127.0.0.1 \"git-upload-pack '$G/ro.git'\" >/dev/null 2>&1 &)
		done
		sleep 1.5
		git ls-remote $(url "$G/ro.git"); echo rc=\$?; sleep 3"
	expect_out "refused: 8 git ssh sessions are running already"
	expect_out "rc=128"

	name="killing omnibox-run ends the broker, its sessions and their ssh"
	(cd "$WS" && as_user "$TB/omnibox-run" -q "$P/git.yaml" -- sh -c "sleep 60 |
		\$GIT_SSH_COMMAND -p $PORT root@127.0.0.1 \"git-upload-pack '$G/ro.git'\"" \
		>/dev/null 2>&1 &)
	pat="HostKeyAlias=\[127.0.0.1\]:$PORT"
	for _ in $(seq 100); do
		pgrep -f "$pat" >/dev/null && break
		sleep 0.1
	done
	ssh_pid=$(pgrep -f "$pat" | head -n 1)
	session=$(ps -o ppid= -p "${ssh_pid:-0}" | tr -d ' ')
	broker=$(ps -o ppid= -p "${session:-0}" | tr -d ' ')
	run=$(ps -o ppid= -p "${broker:-0}" | tr -d ' ')
	tests=$((tests + 1))
	case $(tr '\0' ' ' <"/proc/${run:-0}/cmdline" 2>/dev/null) in
	"$TB/omnibox-run"*)
		kill -KILL "$run"
		gone "$pat" || fail "ssh outlived omnibox-run"
		tests=$((tests + 1))
		for _ in $(seq 30); do
			# Gone, or a zombie waiting for whoever inherited it.
			case $(cut -d ' ' -f 3 "/proc/$broker/stat" 2>/dev/null) in
			'' | Z) break ;;
			esac
			sleep 0.1
		done
		case $(cut -d ' ' -f 3 "/proc/$broker/stat" 2>/dev/null) in
		'' | Z) ;;
		*) fail "the broker outlived omnibox-run" ;;
		esac ;;
	*) fail "no ssh session under a broker under omnibox-run (ssh ${ssh_pid:-none})" ;;
	esac
}

for who in root nobody; do
	run_all
done
echo "git_ssh: $tests checks, $failures failed, $skips skipped"
[ "$failures" = 0 ]
