#!/bin/sh
# acceptance.sh BUILD_DIR - the Linux acceptance behaviours (spec: linux.md),
# each a real command in a real bwrap sandbox under the real seccomp filter,
# run as root and as an unprivileged user (nobody).
set -u

B=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d /tmp/omnibox-acceptance.XXXXXX)
chmod 755 "$T"
trap 'cleanup' EXIT INT TERM
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$T"
}

. "$(dirname "$0")/../lib.sh"

# A fresh home, workspace and policy set for user $who.
setup_user() {
	U=$T/$who
	H=$U/home
	WS=$U/ws
	P=$U/policies
	TB=$U/bin
	mkdir -p "$H/.ssh" "$H/.aws" "$H/code/.ssh" "$H/code/project" "$WS/.aws" "$WS/.venv/lib" \
		"$WS/services/api" "$WS/src" "$WS/secrets" "$P" "$TB"
	echo "ssh-host-key" >"$H/.ssh/id_rsa"
	echo "aws-home-key" >"$H/.aws/credentials"
	echo "notes" >"$H/notes.txt"
	echo "code-ssh-key" >"$H/code/.ssh/id_ed25519"
	echo "readme" >"$H/code/project/README"
	echo "SECRET=dotenv-secret" >"$WS/.env"
	echo "aws-ws-key" >"$WS/.aws/credentials"
	echo "venv-ok" >"$WS/.venv/lib/site.py"
	echo "API_KEY=nested-secret" >"$WS/services/api/.env"
	echo "int main(void) { return 0; }" >"$WS/src/main.c"
	echo "prod-key" >"$WS/secrets/production.key"
	echo "secret-dir-file" >"$WS/secrets/inner"
	ln -s /etc/shadow "$WS/shadow-link"
	ln -s "$H/.ssh/id_rsa" "$WS/key-link"
	cp "$B/omnibox-run" "$B/omnibox-init" "$B/omnibox-proxy" "$B/omnibox-compile" "$TB/"
	mkdir -p "$WS/tools"
	cp "$B/tests/probe" "$WS/tools/"
	chmod 755 "$TB" "$TB"/* "$WS/tools" "$WS/tools/probe"
	if [ "$who" = nobody ]; then
		chown -R nobody:nogroup "$U"
	fi
	chmod 755 "$U"

	policy default <<-EOF
	os_env:
	  type: caller_process
	EOF
	policy write-ws <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	EOF
	policy recursive <<-EOF
	os_env:
	  sandbox:
	    cwd_hidden_scan_recursive: true
	EOF
	policy read-home <<-EOF
	os_env:
	  sandbox:
	    read_paths: ["$H", "$H/code"]
	EOF
	policy read-home-allow-aws <<-EOF
	os_env:
	  sandbox:
	    read_paths: ["$H"]
	    cwd_allow_hidden: [.aws]
	EOF
	policy masks <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    mask_paths: [secrets/production.key, secrets, notyet/secret.txt, src/later.key]
	EOF
	policy passthrough <<-EOF
	os_env:
	  sandbox:
	    env_passthrough: [PASSME]
	EOF
	for kind in bwrap none; do
		policy env-$kind <<-EOF
		os_env:
		  sandbox:
		    type: $([ $kind = none ] && echo none || echo linux_bwrap)
		    env_passthrough: [PASSME]
		terminals:
		  envt:
		    command: env
		    env: {TERMVAR: from-terminal, LANG: C}
		    env_unset: [USER]
		EOF
	done
	policy offline <<-EOF
	os_env:
	  sandbox:
	    allow_network: false
	EOF
	policy terminal <<-EOF
	os_env:
	  sandbox:
	    allow_network: false
	terminals:
	  shell:
	    command: sh
	    args: [-c, 'echo term-ran "\$TERMVAR"; echo t > t.txt && echo wrote']
	    env: {TERMVAR: from-terminal}
	    os_env:
	      sandbox:
	        write_paths: [.]
	  fixed:
	    command: sh
	    args: [-c, 'pwd']
	EOF
	policy invalid <<-EOF
	os_env:
	  sandbox:
	    allow_network: no
	EOF
	policy overflow-error <<-EOF
	os_env:
	  sandbox:
	    cwd_hidden_scan_recursive: true
	    cwd_hidden_scan_max_entries: 5
	    cwd_hidden_scan_overflow: error
	    write_paths: [.]
	EOF
	policy overflow-warn <<-EOF
	os_env:
	  sandbox:
	    cwd_hidden_scan_recursive: true
	    cwd_hidden_scan_max_entries: 5
	EOF
	policy none <<-EOF
	os_env:
	  sandbox:
	    type: none
	EOF
	# A null sandbox, however it is written, is the default sandbox; only a
	# null or none type is the opt-out.
	printf 'os_env:\n  sandbox: null\n' >"$P/sandbox-null.yaml"
	printf 'os_env:\n  sandbox: ~\n' >"$P/sandbox-tilde.yaml"
	printf 'os_env:\n  sandbox:\n' >"$P/sandbox-empty.yaml"
	printf 'os_env:\n  sandbox: {type: null}\n' >"$P/type-null.yaml"
	policy limits <<-EOF
	os_env:
	  sandbox:
	    limits: {memory: 256MiB, cpu_time: 1s, open_files: 32}
	EOF
	policy memory-512 <<-EOF
	os_env:
	  sandbox:
	    limits: {memory: 512MiB}
	EOF
	policy fork <<-EOF
	os_env:
	  fork: true
	EOF
	mkdir -p "$U/opt/tool/bin" "$WS/.tools"
	printf '#!/bin/sh\necho tool-ran\necho x > "$(dirname "$0")/new"\n' >"$U/opt/tool/bin/tool"
	printf '#!/bin/sh\necho home-tool-ran\n' >"$H/hometool"
	printf '#!/bin/sh\necho hidden-tool-ran\n' >"$WS/.tools/hidden"
	chmod 755 "$U/opt/tool/bin/tool" "$H/hometool" "$WS/.tools/hidden"
	if [ "$who" = nobody ]; then
		chown -R nobody:nogroup "$U"
	fi
	mkdir -p "$WS/vendor/lib"
	echo "vendor-original" >"$WS/vendor/lib/code.c"
	echo "VENDOR_TOKEN=cow-secret" >"$WS/vendor/.env"
	ln -s "$H/.ssh/id_rsa" "$WS/vendor/key-link"
	ln -s /etc/passwd "$WS/vendor/passwd-link"
	if [ "$who" = nobody ]; then
		chown -R -h nobody:nogroup "$WS/vendor"
	fi
	policy cow <<-EOF
	os_env:
	  sandbox:
	    write_paths: [{path: vendor, copy_on_write: true}]
	EOF
	policy cow-and-write <<-EOF
	os_env:
	  sandbox:
	    write_paths: ["$WS/vendor/lib", {path: vendor, copy_on_write: true}]
	EOF
	policy hidden-all <<-EOF
	os_env:
	  sandbox:
	    cwd_allow_hidden: ["*"]
	    read_paths: ["$H"]
	EOF
	policy identity-in-ws <<-EOF
	os_env:
	  sandbox:
	    allow_network: false
	    git_ssh:
	      - host: github.com
	        repository: org/app
	        identity_file: "$WS/secrets/production.key"
	EOF
	policy protect <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    cwd_allow_hidden: [.git, .vscode, .claude]
	EOF
	policy unprotect <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    cwd_allow_hidden: [.git, .vscode, .claude]
	    unprotect_paths: [.git/hooks, .git/config, .envrc, .vscode, .claude]
	EOF
	policy sockets <<-EOF
	os_env:
	  sandbox:
	    read_paths: ["$U/sock"]
	    deny_unix_socket_paths: ["$U/sock/control.sock"]
	EOF
	policy private-home <<-EOF
	os_env:
	  sandbox:
	    read_paths: [~/.gitconfig]
	    write_paths: [~/notes]
	    env_passthrough: [XDG_CACHE_HOME]
	EOF
	policy home-ws <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	EOF
	mkdir -p "$U/hw/conf/.d" "$U/hw/mixed"
	echo "CONF_SECRET=whole" >"$U/hw/conf/.env.prod"
	echo "CONF_DEV=whole" >"$U/hw/conf/.env.dev"
	echo "inner-secret" >"$U/hw/conf/.d/key"
	echo "MIXED_SECRET=alone" >"$U/hw/mixed/.env"
	echo "mixed-code" >"$U/hw/mixed/app.c"
	if [ "$who" = nobody ]; then
		chown -R nobody:nogroup "$U/hw"
	fi
	policy hidden-whole <<-EOF
	os_env:
	  cwd: "$U/hw"
	  sandbox:
	    cwd_hidden_scan_recursive: true
	EOF
	policy hidden-whole-write <<-EOF
	os_env:
	  cwd: "$U/hw"
	  sandbox:
	    write_paths: [.]
	    cwd_hidden_scan_recursive: true
	EOF
}

t_default_policy() {
	name="default policy: workspace read-only, outside read-only, scratch writable"
	sbx default sh -c 'echo x > newfile; echo x > /usr/newfile; echo x > "$HOME/x";
		echo data > "$TMPDIR/f" && cat "$TMPDIR/f"; echo "tmp=$TMPDIR";
		stat -c "mode=%a" "$TMPDIR"; cat src/main.c'
	expect_out "newfile: Read-only file system"
	expect_out "/usr/newfile: Read-only file system"
	expect_out "data"
	expect_out "tmp=/tmp/omnibox-"
	expect_out "mode=700"
	expect_out "int main(void)"
	tests=$((tests + 1))
	[ ! -e "$WS/newfile" ] || fail "a file appeared in the read-only workspace"
	scratch=$(printf '%s\n' "$out" | sed -n 's/^tmp=//p')
	tests=$((tests + 1))
	[ -n "$scratch" ] && [ ! -e "$scratch" ] || fail "scratch dir $scratch still exists"
}

t_write_workspace() {
	name="write_paths: [.] makes the workspace writable, on the host"
	sbx write-ws sh -c 'echo written > out.txt && echo ok'
	expect_rc 0
	tests=$((tests + 1))
	[ "$(cat "$WS/out.txt" 2>/dev/null)" = written ] || fail "out.txt not written on the host"
	rm -f "$WS/out.txt"
}

t_dotfiles() {
	name="dotfiles: .env and .aws hidden, .venv visible, nested .env only with recursive"
	sbx default sh -c 'cat .env; ls -A .aws; cat .aws/credentials; cat .venv/lib/site.py;
		cat services/api/.env'
	expect_no_out "dotenv-secret"
	expect_no_out "aws-ws-key"
	expect_out "venv-ok"
	expect_out "nested-secret"
	name="dotfiles, recursive: nested services/api/.env hidden"
	sbx recursive sh -c 'cat services/api/.env; echo end'
	expect_no_out "nested-secret"
	expect_out "end"
}

t_dotfile_dirs_hidden_whole() {
	name="recursive scan, read-only: a directory of dotfiles alone is one empty read-only tmpfs"
	sbx hidden-whole sh -c 'cat conf/.env.prod; cat conf/.d/key; echo "entries=$(ls -A conf | wc -l)";
		echo x > conf/new; cat mixed/.env; cat mixed/app.c; echo end'
	expect_rc 0
	expect_no_out "CONF_SECRET"
	expect_no_out "inner-secret"
	expect_no_out "MIXED_SECRET"
	expect_out "entries=0"
	expect_out "conf/new: Read-only file system"
	expect_out "mixed-code"
	expect_out "end"
	out=$(as_user "$TB/omnibox-run" --dry-run "$P/hidden-whole.yaml" -- true 2>&1)
	expect_out "# omnibox-init: --tmpfs $U/hw/conf"
	expect_out "# omnibox-init: --remount-ro $U/hw/conf"
	expect_out "# omnibox-init: --ro-bind /dev/null $U/hw/mixed/.env"
	expect_no_out "$U/hw/conf/.env"
	name="recursive scan, writable: each dotfile masked, the directory stays writable"
	sbx hidden-whole-write sh -c 'cat conf/.env.prod; cat conf/.d/key; echo wrote > conf/new; echo end'
	expect_rc 0
	expect_no_out "CONF_SECRET"
	expect_no_out "inner-secret"
	expect_out "end"
	tests=$((tests + 1))
	[ "$(cat "$U/hw/conf/new" 2>/dev/null)" = wrote ] || fail "conf/new not written on the host"
	rm -f "$U/hw/conf/new"
	out=$(as_user "$TB/omnibox-run" --dry-run "$P/hidden-whole-write.yaml" -- true 2>&1)
	expect_out "# omnibox-init: --ro-bind /dev/null $U/hw/conf/.env.prod"
	expect_no_out "every entry a dotfile"
}

t_read_paths_dotfiles() {
	name="read_paths roots have their own dotfiles masked"
	sbx read-home sh -c 'cat "$HOME/notes.txt"; cat "$HOME/.ssh/id_rsa"; cat "$HOME/.aws/credentials";
		cat "$HOME/code/.ssh/id_ed25519"; cat "$HOME/code/project/README"'
	expect_out "notes"
	expect_out "readme"
	expect_no_out "ssh-host-key"
	expect_no_out "aws-home-key"
	expect_no_out "code-ssh-key"
	name="read_paths: a basename in cwd_allow_hidden stays visible"
	sbx read-home-allow-aws sh -c 'cat "$HOME/.aws/credentials"; cat "$HOME/.ssh/id_rsa"'
	expect_out "aws-home-key"
	expect_no_out "ssh-host-key"
}

t_mask_paths() {
	name="mask_paths hides a file and a directory; a missing path cannot be created"
	sbx masks sh -c 'cat secrets/production.key; ls -A secrets; cat secrets/inner;
		mkdir -p notyet && echo x > notyet/secret.txt; echo x > src/later.key; echo done'
	expect_no_out "prod-key"
	expect_no_out "secret-dir-file"
	expect_out "done"
	tests=$((tests + 1))
	[ ! -e "$WS/notyet" ] || fail "the masked path notyet/ exists on the host after the run"
	tests=$((tests + 1))
	[ ! -e "$WS/src/later.key" ] || fail "the masked file src/later.key was created"
}

t_symlink_escapes() {
	name="symlinks in the workspace to /etc/shadow and ~/.ssh/id_rsa read nothing"
	sbx default sh -c 'cat shadow-link; cat key-link; echo end'
	expect_no_out "root:"
	expect_no_out "ssh-host-key"
	expect_out "end"
}

# omnibox-init clones /etc's system files from the host's root, which bwrap
# binds for that alone: they are the host's, read-only, their symlinks
# followed as on the host; the host's root is gone before the agent starts.
# A bind mount inside the workspace (a volume, a shared directory) is a
# mount point the scan finds: it must neither refuse the launch nor hide
# less, listed, left at the cap, or unreadable.
t_bind_in_workspace() {
	name="a bind mount inside the workspace launches, listed, left at the scan's cap, or unreadable"
	mkdir -p "$WS/bm/a" "$WS/bm/vol" "$U/volsrc"
	touch "$WS/bm/a/f1" "$WS/bm/a/f2" "$WS/bm/a/f3" "$WS/bm/a/f4" "$WS/bm/a/f5" "$WS/bm/a/f6"
	echo "vol-dotfile-secret" >"$U/volsrc/.env"
	echo "vol-visible" >"$U/volsrc/readme"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$WS/bm" "$U/volsrc"
	mount --bind "$U/volsrc" "$WS/bm/vol"
	policy bm-rec <<-EOF
	os_env:
	  sandbox:
	    cwd_hidden_scan_recursive: true
	EOF
	policy bm-cap <<-EOF
	os_env:
	  sandbox:
	    cwd_hidden_scan_recursive: true
	    cwd_hidden_scan_max_entries: 5
	EOF
	out=$(cd "$WS/bm" && as_user "$TB/omnibox-run" -q "$P/bm-rec.yaml" -- sh -c 'cat vol/readme vol/.env' 2>&1)
	rc=$?
	expect_out "vol-visible"
	expect_no_out "vol-dotfile-secret"
	out=$(cd "$WS/bm" && as_user "$TB/omnibox-run" -q "$P/bm-cap.yaml" -- sh -c 'ls -A vol; echo ran' 2>&1)
	rc=$?
	expect_rc 0
	expect_out "ran"
	expect_no_out "readme"
	chmod 0 "$U/volsrc"
	out=$(cd "$WS/bm" && as_user "$TB/omnibox-run" -q "$P/bm-rec.yaml" -- sh -c 'ls -A vol; echo ran' 2>&1)
	rc=$?
	expect_rc 0
	expect_out "ran"
	chmod 755 "$U/volsrc"
	umount "$WS/bm/vol"
	rm -rf "$WS/bm" "$U/volsrc"
}

t_system_files() {
	name="/etc's system files are the host's, read-only, and no other file of the host's root is left"
	passwd_sum=$(md5sum </etc/passwd)
	sbx default sh -c 'md5sum /etc/passwd /etc/localtime /etc/ld.so.cache; cat /etc/shadow;
		echo x >> /etc/passwd; ls -A /.omnibox; grep -c "omnibox/host" /proc/self/mountinfo;
		grep " /etc/passwd " /proc/self/mountinfo; echo end'
	expect_rc 0
	expect_out "$(md5sum /etc/passwd /etc/localtime /etc/ld.so.cache)"
	expect_out "/etc/shadow: No such file or directory"
	expect_out "cannot create /etc/passwd"
	tests=$((tests + 1))
	[ "$(md5sum </etc/passwd)" = "$passwd_sum" ] || fail "the host's /etc/passwd changed"
	expect_out "init
0"
	expect_out " ro,nosuid,nodev"
	expect_out "end"
	name="--dry-run names each file omnibox-init clones, and the host's root it clones from"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --dry-run "$P/default.yaml" -- true 2>&1)
	expect_out "--bind
/
/.omnibox/host"
	expect_out "--system-root
/.omnibox/host"
	expect_out "--system
/etc/passwd"
	expect_out "# omnibox-init: --ro-bind-try /etc/passwd /etc/passwd"
}

# A dynamic omnibox-init (the sanitizers' build) needs its loader and
# libraries before it runs: bwrap keeps /usr and /dev then.
init_is_dynamic() {
	readelf -l "$TB/omnibox-init" 2>/dev/null | grep -q 'program interpreter'
}

t_system_dev() {
	name="/dev is bwrap's --dev, made by omnibox-init: the host's devices, links, a devpts of its own"
	sbx default sh -c 'ls -A /dev | tr "\n" " "; echo; echo x >/dev/null && echo null-ok;
		head -c 4 /dev/zero | od -An -tx1; grep -E " /dev(/[a-z]+)? " /proc/self/mountinfo |
		cut -d" " -f5,6,9; readlink /dev/ptmx /dev/fd /dev/stdin;
		python3 -c "import os; m, s = os.openpty(); print(\"pty\", os.ttyname(s))"; ls /dev/pts'
	expect_rc 0
	expect_out "core fd full null ptmx pts random shm stderr stdin stdout tty urandom zero "
	expect_out "null-ok"
	expect_out " 00 00 00 00"
	expect_out "/dev rw,nosuid,nodev,relatime tmpfs"
	for d in null zero full random urandom tty; do
		expect_out "/dev/$d rw,nosuid,relatime devtmpfs"
	done
	expect_out "/dev/pts rw,nosuid,noexec,relatime devpts"
	expect_out "pts/ptmx
/proc/self/fd
/proc/self/fd/0"
	# A new instance: the host's terminals are not there, the one just opened is.
	expect_out "pty /dev/pts/0"
	name="a grant in /dev or /usr is mounted after that mount: the grant is there and writes the host"
	rm -f "/dev/shm/omnibox-acc-$who"
	policy grant-shm <<-EOF
	os_env:
	  sandbox:
	    write_paths: [/dev/shm]
	    read_paths: [/usr/share/doc]
	EOF
	sbx grant-shm sh -c "echo shm-$who > /dev/shm/omnibox-acc-$who && echo wrote; ls /usr/share/doc | head -1; ls -A /dev | tr '\n' ' '"
	expect_rc 0
	expect_out "wrote"
	expect_out "null"
	tests=$((tests + 1))
	[ "$(cat "/dev/shm/omnibox-acc-$who" 2>/dev/null)" = "shm-$who" ] || fail "/dev/shm/omnibox-acc-$who not written on the host"
	rm -f "/dev/shm/omnibox-acc-$who"
	name="--dry-run: a grant in /dev or /usr comes after that mount, in omnibox-init's order"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --dry-run "$P/grant-shm.yaml" -- true 2>&1)
	# bwrap's mounts (its argument lines, before "--") all come before
	# omnibox-init's ("# omnibox-init:" lines, in their order): /dev and
	# /usr each come before the grant in it, whoever makes them.
	tests=$((tests + 1))
	printf '%s\n' "$out" | awk '
		$0 == "--" { end = 1 }
		!end && p2 == "--dev" && p1 == "/dev" { bd = 1 }
		!end && p2 == "--ro-bind-try" && p1 == "/usr" && $0 == "/usr" { bu = 1 }
		!end && p2 == "--bind-fd" && $0 == "/dev/shm" { bg = 1 }
		!end && p2 == "--ro-bind-fd" && $0 == "/usr/share/doc" { br = 1 }
		$0 == "# omnibox-init: --dev /dev" { d = NR }
		$0 == "# omnibox-init: --ro-bind-try /usr /usr" { u = NR }
		/^# omnibox-init: --bind-fd [^ ]+ \/dev\/shm$/ { g = NR }
		/^# omnibox-init: --ro-bind-fd [^ ]+ \/usr\/share\/doc$/ { r = NR }
		{ p2 = p1; p1 = $0 }
		END {
			dev = (bd && (bg || g)) || (d && g && d < g)
			usr = (bu && (br || r)) || (u && r && u < r)
			exit !(dev && usr)
		}' ||
		fail "/dev or /usr does not come before the grant in it"
	if init_is_dynamic; then
		# A dynamic omnibox-init: /dev and /usr are bwrap's, before all of its.
		expect_out "$(printf -- '--dev\n/dev\n--tmpfs')"
		expect_out "$(printf -- '--ro-bind-try\n/usr\n/usr')"
	else
		# The grants (and /dev/shm's protected paths) are omnibox-init's,
		# so /dev and /usr are too.
		expect_out "# omnibox-init: --ro-bind-try /usr /usr"
		expect_out "# omnibox-init: --dev /dev"
	fi
	name="--dry-run: bwrap makes none of the system's mounts omnibox-init makes, /dev's devices included"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --dry-run "$P/default.yaml" -- true 2>&1)
	expect_out "# omnibox-init: --ro-bind /proc/sys /proc/sys"
	expect_out "--system-required
/proc/sys"
	if init_is_dynamic; then
		# A dynamic omnibox-init (the sanitizers' build) needs its loader
		# and libraries before it runs: bwrap mounts /usr and /dev.
		expect_out "$(printf -- '--ro-bind-try\n/usr')"
		expect_out "$(printf -- '--dev\n/dev\n--tmpfs')"
	else
		expect_out "# omnibox-init: --dev /dev"
		expect_out "# omnibox-init: --ro-bind-try /usr /usr"
		expect_out "--dev
/dev"
		expect_no_out "$(printf -- '--dev\n/dev\n--tmpfs')"
		expect_no_out "$(printf -- '--ro-bind-try\n/usr')"
	fi
}

t_environment() {
	name="host secrets are absent; env_passthrough passes a name"
	sbx default sh -c 'env'
	expect_no_out "aws-host-secret"
	expect_no_out "openai-host-secret"
	expect_no_out "PASSME"
	expect_out "HOME=$H"
	sbx passthrough sh -c 'echo "PASSME=$PASSME"'
	expect_out "PASSME=passed-through"
}

t_network_off() {
	name="allow_network: false: no TCP connect, only lo"
	sbx offline sh -c 'probe tcp-connect 127.0.0.1 9; probe tcp-connect 1.1.1.1 80;
		cut -d: -f1 /proc/net/dev | tail -n +3 | tr -d " "'
	expect_out "ECONNREFUSED"
	expect_out "ENETUNREACH"
	tests=$((tests + 1))
	ifaces=$(printf '%s\n' "$out" | grep -v -e ECONN -e ENETUNREACH | tr '\n' ' ')
	[ "$ifaces" = "lo " ] || fail "interfaces: '$ifaces', expected only lo"
}

t_seccomp() {
	name="seccomp: namespaces, mounts, ptrace, keys, bpf, netlink but route, packet, CLONE_NEWNET refused"
	sbx default sh -c 'for p in unshare-user mount ptrace-traceme keyctl bpf socket-netlink-audit \
		socket-netlink-diag socket-packet socket-vsock clone-newnet clone-newuser io_uring; do
		echo "$p=$(probe $p)"; done;
		echo "clone3=$(probe clone3)"; for p in thread fork execve socket-inet socket-unix; do
		echo "$p=$(probe $p)"; done; unshare -U true 2>&1 | head -1'
	for p in unshare-user mount ptrace-traceme keyctl bpf socket-netlink-audit socket-netlink-diag \
		socket-packet socket-vsock clone-newnet clone-newuser io_uring; do
		expect_out "$p=EPERM"
	done
	expect_out "clone3=ENOSYS"
	for p in thread fork execve socket-inet socket-unix; do
		expect_out "$p=ok"
	done
	expect_out "Operation not permitted"
}

# NETLINK_ROUTE is allowed for what getifaddrs(3) reads; every change over it
# needs CAP_NET_ADMIN, which the sandbox never has, on the host's network and
# on its own.  Outside, the same changes succeed as root (and change nothing).
t_seccomp_netlink_route() {
	changes='for p in netlink-route netlink-route-newaddr netlink-route-newlink get-mempolicy; do
		echo "$p=$(probe $p)"; done'
	for pol in default offline; do
		name="seccomp: NETLINK_ROUTE opens and reads, its changes fail with EPERM ($pol)"
		sbx "$pol" sh -c "$changes"
		expect_out "netlink-route=ok"
		expect_out "netlink-route-newaddr=EPERM"
		expect_out "netlink-route-newlink=EPERM"
		expect_out "get-mempolicy=ok"
	done
	if [ "$who" = root ]; then
		name="seccomp: the NETLINK_ROUTE changes probed are the kernel's refusal, not the probe's"
		out=$(PATH="$B/tests:$PATH" sh -c "$changes" 2>&1)
		expect_out "netlink-route-newaddr=EEXIST"
		expect_out "netlink-route-newlink=ok"
	fi
}

# What ordinary developer commands do must not show in the seccomp summary:
# it would teach users to ignore it.  Run without -q, so a summary would show.
t_seccomp_ordinary_commands() {
	name="seccomp: ps -e refuses nothing worth a summary"
	if command -v ps >/dev/null; then
		out=$(cd "$WS" && as_user "$TB/omnibox-run" "$P/default.yaml" -- ps -e 2>&1)
		rc=$?
		expect_rc 0
		expect_out "PID"
		expect_no_out "seccomp filter refused"
	else
		echo "SKIP [$who] $name: ps is not installed"
		skips=$((skips + 1))
	fi
	name="seccomp: libnuma's probe is counted apart, named only with -v; set_mempolicy itself is not"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" "$P/default.yaml" -- probe set-mempolicy-preferred-many 2>&1)
	expect_out "EPERM"
	expect_no_out "seccomp filter refused"
	expect_no_out "set_mempolicy"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" -v "$P/default.yaml" -- sh -c \
		'probe set-mempolicy-preferred-many; probe set-mempolicy-bind' 2>&1)
	expect_out "omnibox-run: refused syscall set_mempolicy(MPOL_PREFERRED_MANY) (pid "
	expect_out "omnibox-run: the seccomp filter refused 1 system call (each failed with EPERM):"
	expect_out "omnibox-run: 1 refusal ordinary tools make and handle, no action needed: set_mempolicy(MPOL_PREFERRED_MANY) 1"
	tests=$((tests + 1))
	printf '%s\n' "$out" | grep -Eq '^  set_mempolicy +1$' || fail "no summary line 'set_mempolicy 1'"

	name="seccomp: node -e 1, npm --version and os.networkInterfaces() work, refuse nothing"
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		echo "SKIP [$who] $name: node or npm is not installed"
		skips=$((skips + 1))
		return
	fi
	out=$(cd "$WS" && as_user "$TB/omnibox-run" "$P/default.yaml" -- sh -c 'node -e 1 &&
		echo node-ran; npm --version; node -e "
		const i = require(\"os\").networkInterfaces();
		console.log(\"interfaces\", Object.keys(i).includes(\"lo\") ? \"lo\" : \"none\")"' 2>&1)
	rc=$?
	expect_rc 0
	expect_out "node-ran"
	expect_out "interfaces lo"
	expect_no_out "seccomp filter refused"
	expect_no_out "Error"
	tests=$((tests + 1))
	printf '%s\n' "$out" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+$' || fail "npm --version printed no version"
}

t_seccomp_i386() {
	name="seccomp through the i386 ABI (int \$0x80)"
	if ! "$B/tests/probe" i386-getpid >/dev/null 2>&1; then
		echo "SKIP [$who] $name: this machine has no i386 system call entry (int \$0x80 faults)"
		skips=$((skips + 1))
		return
	fi
	sbx default sh -c 'for p in i386-unshare i386-mount i386-keyctl i386-socketcall-netlink \
		i386-socket-netlink; do echo "$p=$(probe $p)"; done; echo "inet=$(probe i386-socket-inet)"
		echo "route=$(probe i386-socket-netlink-route)"'
	for p in i386-unshare i386-mount i386-keyctl i386-socketcall-netlink i386-socket-netlink; do
		expect_out "$p=EPERM"
	done
	expect_out "inet=ok"
	expect_out "route=ok"
}

t_exit_status() {
	name="the command's exit status, and 128+N for a signal"
	sbx default sh -c 'exit 7'
	expect_rc 7
	sbx default sh -c 'kill -TERM $$'
	expect_rc 143
	sbx default sh -c 'kill -KILL $$'
	expect_rc 137
	sbx default /bin/true
	expect_rc 0
}

t_kill_run() {
	name="killing omnibox-run kills the whole sandbox and removes the scratch dir"
	# A duration unique to this run and user, so pgrep finds only ours.
	if [ "$who" = root ]; then marker="1001.$$"; else marker="1002.$$"; fi
	(cd "$WS" && as_user "$TB/omnibox-run" -q "$P/default.yaml" -- sh -c \
		"echo \$TMPDIR; sleep $marker & sleep $marker; wait") >"$T/kill.out" 2>&1 &
	bg=$!
	pids="$pids $bg"
	i=0
	while ! pgrep -f "^sleep $marker" >/dev/null && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	scratch=$(head -1 "$T/kill.out")
	run_pid=$(main_run_pid "$P/default.yaml")
	tests=$((tests + 1))
	if [ -z "$run_pid" ]; then
		fail "omnibox-run did not start"
		return
	fi
	kill -KILL "$run_pid"
	i=0
	while pgrep -f "^sleep $marker" >/dev/null && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	tests=$((tests + 1))
	pgrep -f "^sleep $marker" >/dev/null && fail "the sandbox survived omnibox-run"
	i=0
	while [ -n "$scratch" ] && [ -e "$scratch" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	tests=$((tests + 1))
	[ -n "$scratch" ] && [ ! -e "$scratch" ] || fail "scratch dir '$scratch' left behind: $(cat "$T/kill.out")"
}

t_signal_forwarding() {
	name="a signal to omnibox-run reaches the command"
	(cd "$WS" && as_user "$TB/omnibox-run" -q "$P/default.yaml" -- sh -c \
		'trap "echo got-term; exit 3" TERM; echo ready; while :; do sleep 0.1; done') >"$T/sig.out" 2>&1 &
	bg=$!
	i=0
	while ! grep -q ready "$T/sig.out" && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	run_pid=$(main_run_pid "$P/default.yaml")
	if [ -z "$run_pid" ]; then
		# Never wait for a launch no signal will end.
		fail "omnibox-run not found"
		pkill -KILL -f "^$TB/omnibox-run -q $P/default.yaml"
		wait "$bg"
		return
	fi
	kill -TERM "$run_pid"
	wait "$bg"
	rc=$?
	out=$(cat "$T/sig.out")
	expect_out "got-term"
	expect_rc 3
}

# signal_launches SIG N: N launches of the default policy, each sent SIG a
# moment (0 to 7 ms) after it starts; what each printed, read through a
# pipe as a caller's $(...) reads it, in $T/signal.I; $hung: how many of
# those outputs never ended.
# Their scratch dirs are made in $T/sigtmp (sigtmp_empty checks it).
signal_launches() {
	hung=0
	mkdir -p "$T/sigtmp"
	chmod 1777 "$T/sigtmp"
	for i in $(seq "$2"); do
		out=$(cd "$WS" && as_user timeout -s KILL 20 sh -c "{ TMPDIR='$T/sigtmp' '$TB/omnibox-run' -q \
			'$P/default.yaml' -- sh -c 'echo agent-ran' & p=\$!; sleep 0.00$((i % 8))
			kill -$1 \$p; wait \$p; } 2>&1 | cat")
		[ $? = 137 ] && hung=$((hung + 1))
		printf '%s\n' "$out" >"$T/signal.$i"
	done
}

# bwrap's child takes no death signal from bwrap until it has set the
# sandbox up: a signal that ended bwrap alone then left that child waiting
# forever, holding the caller's output (or setting up a sandbox no one
# watched).  The moment that hits that race comes in some runs only; the
# launch's own words are checked in every one.
t_signal_during_setup() {
	name="a signal while the sandbox is set up: the launch ends, and nothing of it outlives omnibox-run"
	signal_launches TERM 40
	expect_eq "launches whose output never ended" "$hung" 0
	# The agent ran, or the launch said it ended, or omnibox-run was
	# ended before it had a sandbox to end, or the launch was over before
	# the signal came (kill found no process).
	other=$(cat "$T"/signal.* | grep -v -e '^agent-ran$' -e 'Terminated' -e '^$' \
		-e '^sh: [0-9]*: kill: No such process$' \
		-e '^omnibox-run: signal 15 while the sandbox was set up: the launch ends; nothing ran$')
	expect_eq "what else the launches said" "$other" ""
	rm -f "$T"/signal.*
	# omnibox-run killed outright: bwrap dies with it, and the janitor
	# kills what is left in bwrap's process group.
	name="omnibox-run killed while the sandbox is set up: nothing of the launch holds its output"
	signal_launches KILL 100
	expect_eq "launches whose output never ended" "$hung" 0
	rm -f "$T"/signal.*
	# Their janitors, which finish the cleanup, are gone soon after (and
	# the next test would find one for an omnibox-run).
	for _ in $(seq 100); do
		pgrep -f "^$TB/omnibox-run -q $P/default.yaml" >/dev/null || break
		sleep 0.1
	done
	tests=$((tests + 1))
	gone "^$TB/omnibox-run -q $P/default.yaml" || fail "a process of the launches outlived them"
	sigtmp_empty "the launches ended by a signal"
}

# sigtmp_empty WHAT: $T/sigtmp holds no scratch dir (up to 5 s for the
# janitors to finish), and is emptied.
sigtmp_empty() {
	for _ in $(seq 50); do
		[ -z "$(ls -A "$T/sigtmp")" ] && break
		sleep 0.1
	done
	expect_eq "scratch dirs $1 left behind" "$(ls -A "$T/sigtmp" | tr '\n' ' ')" ""
	rm -rf "$T/sigtmp"
}

# At the end of a launch the scratch dir is renamed out of the way and the
# cleanup process removes it after omnibox-run has returned: its name is
# gone at once, and its tree (a home with caches, the mounts the sandbox had
# on it) soon after.
t_scratch_handed_off() {
	name="the scratch dir of a launch that ran: its name gone as omnibox-run returns, its tree soon after"
	mkdir -p "$T/sigtmp"
	chmod 1777 "$T/sigtmp"
	out=$(cd "$WS" && as_user env TMPDIR="$T/sigtmp" "$TB/omnibox-run" -q "$P/default.yaml" -- \
		sh -c 'mkdir -p "$HOME/.cache/x" && echo c >"$HOME/.cache/x/f" && echo t >"$TMPDIR/t" &&
		echo "scratch=$TMPDIR"' 2>&1)
	expect_out "scratch=$T/sigtmp/omnibox-"
	scratch=$(printf '%s\n' "$out" | sed -n 's/^scratch=//p')
	tests=$((tests + 1))
	[ -n "$scratch" ] && [ ! -e "$scratch" ] || fail "scratch dir $scratch still exists"
	sigtmp_empty "by a launch that ran"
}

# omnibox-run killed just after it made its scratch dir (strace holds it
# there, at the exit of that mkdirat): the cleanup process, started before
# and told the name first, removes the directory.
t_scratch_killed() {
	name="omnibox-run killed the moment its scratch dir is made: the directory is not left behind"
	mkdir -p "$T/sigtmp"
	chmod 1777 "$T/sigtmp"
	out=$(cd "$WS" && as_user sh -c "TMPDIR='$T/sigtmp' strace -o /dev/null -e trace=mkdirat \
		-e inject=mkdirat:delay_exit=10000000:when=1 '$TB/omnibox-run' -q '$P/default.yaml' \
		-- sh -c 'echo agent-ran' & s=\$!
		for _ in \$(seq 200); do [ -n \"\$(ls -A '$T/sigtmp')\" ] && break; sleep 0.05; done
		echo made: \$(ls -A '$T/sigtmp')
		pkill -KILL -P \$s; wait \$s" 2>&1)
	expect_out "made: omnibox-"
	expect_no_out "agent-ran"
	sigtmp_empty "by omnibox-run killed as it made it"
}

t_missing_bwrap() {
	name="bwrap missing from PATH: exit 125 with an install hint, nothing runs"
	out=$(cd "$WS" && as_user env PATH="$TB" "$TB/omnibox-run" "$P/write-ws.yaml" -- \
		/bin/sh -c 'echo ran > ran.txt' 2>&1)
	rc=$?
	expect_rc 125
	expect_out "apt install bubblewrap"
	tests=$((tests + 1))
	[ ! -e "$WS/ran.txt" ] || fail "the command ran without bwrap"
}

t_no_namespaces() {
	name="where namespaces are forbidden (a sandbox or container around it), the cause and the fix are named"
	printf 'os_env:\n  sandbox:\n    read_paths: ["%s", "%s"]\n' "$TB" "$P" >"$P/nested.yaml"
	chmod 644 "$P/nested.yaml"
	printf 'os_env:\n  sandbox:\n    type: linux_bwrap\n' >"$P/pinned-bwrap.yaml"
	chmod 644 "$P/pinned-bwrap.yaml"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" -q "$P/nested.yaml" -- \
		"$TB/omnibox-run" -q "$P/pinned-bwrap.yaml" -- sh -c 'echo cmd-executed' 2>&1)
	expect_no_out "cmd-executed"
	expect_out "bwrap could not set up the sandbox"
	expect_out "cannot create namespaces"
	expect_out "a container or sandbox around it forbids them"
	# auto: linux_landlock would approximate the default policy's dotfiles.
	name="where namespaces are forbidden, auto names what linux_landlock cannot enforce"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" -q "$P/nested.yaml" -- \
		"$TB/omnibox-run" -q "$P/default.yaml" -- sh -c 'echo cmd-executed' 2>&1)
	expect_no_out "cmd-executed"
	expect_out "namespaces cannot be made here"
	expect_out "dotfiles (cwd_allow_hidden): approximated"
	expect_out "write \`type: linux_landlock\`"
}

t_escapes() {
	name="escapes: /proc/self/root, hard links and mknod to masked files, remount, ptrace"
	sbx write-ws sh -c 'echo x > /proc/self/root/etc/omnibox-escape; ls /proc/self/root/root 2>&1;
		echo "link=$(probe link .env stolen)"; echo "mknod=$(probe mknod dev-null-copy)";
		echo "remount=$(probe remount-root-rw)"; echo "ptrace=$(probe ptrace-sibling)";
		echo "tiocsti=$(probe tiocsti)"; cat stolen 2>/dev/null'
	expect_no_out "dotenv-secret"
	expect_out "link=EXDEV"
	expect_out "mknod=EPERM"
	expect_out "remount=EPERM"
	expect_out "ptrace=EPERM"
	expect_out "tiocsti=EPERM"
	tests=$((tests + 1))
	[ ! -e /etc/omnibox-escape ] || fail "wrote through /proc/self/root"
	rm -f "$WS/stolen" "$WS/dev-null-copy"
}

t_unix_socket() {
	name="a Unix socket in deny_unix_socket_paths cannot be reached"
	mkdir -p "$U/sock"
	chmod 777 "$U/sock"
	"$B/tests/probe" listen-unix "$U/sock/control.sock" >"$T/listen.out" &
	lp=$!
	pids="$pids $lp"
	i=0
	while ! grep -q listening "$T/listen.out" && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	out=$(as_user "$WS/tools/probe" connect-unix "$U/sock/control.sock" 2>&1)
	tests=$((tests + 1))
	[ "$out" = ok ] || fail "the host cannot reach its own socket: $out"
	sbx sockets probe connect-unix "$U/sock/control.sock"
	expect_out "ECONNREFUSED"
	expect_no_out "ok"
	kill "$lp"
}

t_root_powers() {
	name="no capabilities, /proc/sys read-only, no host processes"
	sbx default sh -c 'sh -c "grep -E \"^Cap(Eff|Prm|Bnd|Amb)\" /proc/self/status";
		echo omnibox > /proc/sys/kernel/hostname; ls /proc | grep -c "^[0-9]"'
	expect_out "CapEff:	0000000000000000"
	expect_out "CapPrm:	0000000000000000"
	# omnibox-init held CAP_SYS_ADMIN for the mounts: gone, the bounding set's too.
	expect_out "CapBnd:	0000000000000000"
	expect_out "CapAmb:	0000000000000000"
	tests=$((tests + 1))
	nproc=$(printf '%s\n' "$out" | tail -1)
	[ "$nproc" -lt 10 ] 2>/dev/null || fail "$nproc processes visible in /proc"
	expect_out "/proc/sys/kernel/hostname"
}

t_terminal() {
	name="--terminal runs the terminal's command, args and env under its own os_env"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" -q --terminal=shell "$P/terminal.yaml" 2>&1)
	rc=$?
	expect_rc 0
	expect_out "term-ran from-terminal"
	expect_out "wrote"
	rm -f "$WS/t.txt"
	name="--cwd picks the workspace; a terminal must allow it"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" -q --cwd=src "$P/default.yaml" -- sh -c 'pwd; cat ../.env; ls -A ..' 2>&1)
	rc=$?
	expect_out "$WS/src"
	expect_no_out "dotenv-secret"
	expect_no_out "services"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" -q --cwd=src --terminal=fixed "$P/terminal.yaml" 2>&1)
	rc=$?
	expect_rc 125
	expect_out "allow_cwd_override"
}

t_dry_run() {
	name="--dry-run prints the resolved launch and runs nothing"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --dry-run "$P/write-ws.yaml" -- sh -c 'echo ran > ran.txt' 2>&1)
	rc=$?
	expect_rc 0
	tests=$((tests + 1))
	printf '%s\n' "$out" | grep -x -A2 -e --bind-fd | grep -q -x -F "$WS" ||
		fail "the writable workspace is not mounted from a descriptor"
	expect_out "# omnibox-init: --ro-bind /dev/null $WS/.env"
	expect_out "# scratch dir: /tmp/omnibox-XXXXXX"
	expect_out "# environment (values not shown):"
	expect_no_out "aws-host-secret"
	tests=$((tests + 1))
	[ ! -e "$WS/ran.txt" ] || fail "--dry-run ran the command"
}

t_fail_closed() {
	name="fail closed: invalid policy, scan overflow with error, invisible command, fork"
	sbx invalid sh -c 'echo ran > ran.txt'
	expect_rc 125
	expect_out "invalid.yaml:3:20: error:"
	expect_out "nothing ran"
	sbx overflow-error sh -c 'echo ran > ran.txt'
	expect_rc 125
	expect_out "cwd_hidden_scan_max_entries"
	expect_out "cwd_hidden_scan_overflow: unlimited"
	tests=$((tests + 1))
	[ ! -e "$WS/ran.txt" ] || fail "the command ran after a scan overflow with error"
	sbx default "$H/hometool"
	expect_rc 125
	expect_out "lives directly in $H"
	expect_no_out "home-tool-ran"
	sbx default "$WS/.tools/hidden"
	expect_rc 125
	expect_out "inside the hidden path $WS/.tools"
	sbx fork /bin/true
	expect_rc 125
	expect_out "fork.yaml:2:9: error: os_env.fork is not supported; remove it to run on the workspace itself
    2 |   fork: true
      |         ^~~~
omnibox-run: $P/fork.yaml: cannot launch; nothing ran"
	name="a refusal reads the same from omnibox-run and omnibox-compile --resolve"
	run_err=$(printf '%s\n' "$out" | grep -v '^omnibox-run: ')
	out=$(cd "$WS" && as_user "$TB/omnibox-compile" -q --resolve "$P/fork.yaml" 2>&1)
	rc=$?
	expect_rc 65
	[ "$out" = "$run_err" ] || fail "omnibox-run printed '$run_err', --resolve '$out'"
	tests=$((tests + 1))
	name="scan overflow with warn: the launch goes on, loudly"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" "$P/overflow-warn.yaml" -- sh -c 'echo ran' 2>&1)
	rc=$?
	expect_rc 0
	expect_out "ran"
	expect_out "warning: the dotfile scan stopped after"
}

t_command_visibility() {
	name="a command outside the system dirs: its own directory is bound read-only"
	sbx default "$U/opt/tool/bin/tool"
	expect_out "tool-ran"
	expect_out "Read-only file system"
	tests=$((tests + 1))
	[ ! -e "$U/opt/tool/bin/new" ] || fail "the command's directory was writable"
}

t_path_shadow() {
	name="a PATH entry the sandbox does not see (shims in the home) does not shadow the system's program"
	mkdir -p "$H/.pyenv/shims"
	printf '#!/bin/sh\necho shim-ran\n' >"$H/.pyenv/shims/python3"
	chmod 755 "$H/.pyenv/shims/python3"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$H/.pyenv"
	out=$(cd "$WS" && as_user env PATH="$H/.pyenv/shims:/usr/bin:/bin" "$TB/omnibox-run" -q \
		"$P/default.yaml" -- python3 -c 'print("python-" + str(6 * 7))' 2>&1)
	rc=$?
	expect_rc 0
	expect_out "python-42"
	expect_no_out "shim-ran"
	name="the command omnibox-run runs is the one sh -c finds inside"
	out=$(cd "$WS" && as_user env PATH="$H/.pyenv/shims:/usr/bin:/bin" "$TB/omnibox-run" -q \
		"$P/default.yaml" -- sh -c 'command -v python3; python3 -c "import sys; print(sys.executable)"' 2>&1)
	expect_rc 0
	expect_out "/usr/bin/python3"
	expect_no_out ".pyenv"
	name="--dry-run shows the system's program, not the shim"
	out=$(cd "$WS" && as_user env PATH="$H/.pyenv/shims:/usr/bin:/bin" "$TB/omnibox-run" -q \
		--dry-run "$P/default.yaml" -- python3 2>&1)
	expect_rc 0
	expect_no_out ".pyenv/shims"
	rm -rf "$H/.pyenv"
}

# The command's environment is what --emit=env prints, for the same host
# environment: with bwrap and with sandbox type none.
t_environment_is_emit_env() {
	for kind in bwrap none; do
		name="sandbox type $kind: the command's environment is exactly --emit=env's"
		as_user env USER=agent LOGNAME=agent LC_ALL=C.UTF-8 BASH_ENV=/dev/null env \
			>"$T/host-$who.env"
		"$B/omnibox-compile" -q --target=linux --emit=env --terminal=envt \
			"$P/env-$kind.yaml" >"$T/emit-$who.env"
		out=$(cd "$WS" && as_user env USER=agent LOGNAME=agent LC_ALL=C.UTF-8 \
			BASH_ENV=/dev/null "$TB/omnibox-run" -q --terminal=envt "$P/env-$kind.yaml" 2>&1)
		rc=$?
		expect_rc 0
		expect_env_is_emit "$T/emit-$who.env" "$T/host-$who.env" \
			"$(printf '%s\n' "$out" | sed -n 's/^TMPDIR=//p')" "$WS"
	done
}

t_none() {
	name="sandbox type none: the explicit opt-out runs unsandboxed, with the env allow-list"
	sbx none sh -c 'echo none > none.txt && echo wrote; env'
	expect_rc 0
	expect_out "wrote"
	expect_no_out "aws-host-secret"
	rm -f "$WS/none.txt"
}

t_null_sandbox() {
	for spelling in null tilde empty; do
		name="sandbox: $spelling is the default sandbox, never none"
		sbx sandbox-$spelling sh -c 'echo x > null-probe.txt 2>&1 || echo ws-read-only; cat "$HOME/.ssh/id_rsa" 2>&1 || echo home-hidden;
			cat .env 2>&1 | grep -q dotenv-secret || echo dotfile-masked; echo "mount=$(probe mount) ptrace=$(probe ptrace-traceme)"'
		expect_out "ws-read-only"
		expect_out "home-hidden"
		expect_out "dotfile-masked"
		expect_out "mount=EPERM ptrace=EPERM"
		expect_no_out "ssh-host-key"
		tests=$((tests + 1))
		[ ! -e "$WS/null-probe.txt" ] || fail "the workspace was written"
		rm -f "$WS/null-probe.txt"
	done
	name="sandbox.type: null is the explicit opt-out"
	sbx type-null sh -c 'echo x > null-probe.txt && echo wrote'
	expect_out "wrote"
	rm -f "$WS/null-probe.txt"
}

t_resolve_matches_dry_run() {
	name="omnibox-compile --resolve prints what omnibox-run --dry-run would run"
	# Descriptor numbers are each process's own: bwrap's on lines of their
	# own, omnibox-init's after its flag.
	fdless() {
		grep -v -e '^--seccomp' -e '^--json-status-fd' -e '^[0-9]*$' -e '^{' |
			sed 's/^\(# omnibox-init: --[a-z-]*-fd\) [0-9{}A-Z]* /\1 FD /'
	}
	a=$(cd "$WS" && as_user "$TB/omnibox-run" --dry-run "$P/masks.yaml" -- /bin/true 2>&1 | fdless)
	b=$(cd "$WS" && as_user "$TB/omnibox-compile" --resolve "$P/masks.yaml" -- /bin/true 2>&1 | fdless)
	tests=$((tests + 1))
	[ "$a" = "$b" ] || { out=$(printf '%s\n' "$a" >"$T/a"; printf '%s\n' "$b" >"$T/b"; diff "$T/a" "$T/b"); fail "--resolve and --dry-run differ"; }
}

t_limits() {
	name="limits: memory over the limit fails to allocate, CPU time kills, open files capped"
	sbx limits sh -c 'probe alloc 64; probe alloc 512; probe open-files 16; probe open-files 64'
	expect_out "ok
ENOMEM"
	expect_out "opened"
	expect_out "EMFILE"
	sbx limits sh -c 'while :; do :; done'
	expect_rc 152
	sbx default sh -c 'probe alloc 512; probe open-files 64'
	expect_out "ok
ok"
}

t_memory_runtimes() {
	name="limits.memory: Node and Python start under 512 MiB, a 1 GiB allocation fails inside"
	if ! command -v node >/dev/null || ! command -v python3 >/dev/null; then
		echo "SKIP [$who] $name: node or python3 is not installed"
		skips=$((skips + 1))
		return
	fi
	sbx memory-512 sh -c 'node -e "console.log(\"node-started\")";
		node -e "try { const a = new Uint8Array(1 << 30); a.fill(1); console.log(\"NODE-GOT-1GIB\") } catch (e) { console.log(\"node-refused \" + e.name) }";
		python3 -c "print(\"python-started\")";
		python3 -c "
import mmap
m = mmap.mmap(-1, 8 << 30, prot=0)
print(\"reserved-8gib\")";
		python3 -c "
try:
    b = bytearray(1 << 30)
    print(\"PYTHON-GOT-1GIB\")
except MemoryError:
    print(\"python-refused\")"'
	expect_out "reserved-8gib"
	expect_out "node-started"
	expect_out "node-refused RangeError"
	expect_out "python-started"
	expect_out "python-refused"
	expect_no_out "GOT-1GIB"
}

t_copy_on_write() {
	name="write_paths copy_on_write: the agent writes a copy, the host's tree is untouched"
	sbx cow sh -c 'echo changed > vendor/lib/code.c && cat vendor/lib/code.c;
		echo new > vendor/new.c && echo created; rm vendor/lib/code.c && echo removed;
		mv vendor/lib vendor/lib2 && echo renamed; cat vendor/.env; cat vendor/key-link;
		ls -A "$TMPDIR/.omnibox-cow"; cat "$TMPDIR"/.omnibox-cow/*/.env; echo end'
	expect_out "changed"
	expect_out "created"
	expect_out "removed"
	expect_out "renamed"
	expect_no_out "cow-secret"
	expect_no_out "ssh-host-key"
	expect_out "end"
	tests=$((tests + 1))
	[ "$(cat "$WS/vendor/lib/code.c" 2>/dev/null)" = vendor-original ] &&
		[ ! -e "$WS/vendor/new.c" ] && [ ! -e "$WS/vendor/lib2" ] ||
		fail "the host's vendor/ changed"
	name="copy_on_write: the next launch starts from the host's tree again"
	sbx cow sh -c 'cat vendor/lib/code.c; ls vendor'
	expect_out "vendor-original"
	expect_no_out "new.c"
	name="copy_on_write below a path the policy makes writable is refused at launch"
	sbx cow-and-write sh -c 'echo cmd-executed'
	expect_no_out "cmd-executed"
	expect_out "a path is one or the other"
	tests=$((tests + 1))
	[ "$rc" != 0 ] || fail "exit status 0"
}

# The agent saves a write_files entry the way editors do, and plays with the
# name; the host file gets the saved contents and nothing else.
t_write_files() {
	printf 'orig\n' >"$H/agent.json"
	printf 'sibling-in-home\n' >"$H/sibling.txt"
	printf 'notes-orig\n' >"$WS/notes.md"
	ln -sf notes.md "$WS/notes-link"
	if [ "$who" = nobody ]; then
		chown -h nobody:nogroup "$H/agent.json" "$H/sibling.txt" "$WS/notes.md" "$WS/notes-link"
	fi
	policy write-files <<-EOF
	os_env:
	  sandbox:
	    write_files: ["$H/agent.json", notes.md]
	EOF
	ino=$(stat -c %i "$H/agent.json")

	name="write_files: sed -i (a rename over the file) lands on the host"
	sbx write-files sh -c 'sed -i s/orig/by-sed/ "$HOME/agent.json" && echo sed-ok'
	expect_out "sed-ok"
	tests=$((tests + 1))
	[ "$(cat "$H/agent.json")" = by-sed ] || fail "host file: $(cat "$H/agent.json")"
	tests=$((tests + 1))
	[ "$(stat -c %i "$H/agent.json")" = "$ino" ] || fail "the host file's inode changed"

	name="write_files: an editor's write-to-new-name-then-rename save lands on the host"
	# vim is installed by .ci/install-deps; backupcopy=no: vim renames the old
	# file away and writes a new one.
	sbx write-files sh -c 'vim -es -u NONE -i NONE -N -c "set backupcopy=no backup" \
		-c "%s/by-sed/by-vim/" -c wq "$HOME/agent.json" && echo vim-ok'
	expect_out "vim-ok"
	tests=$((tests + 1))
	[ "$(cat "$H/agent.json")" = by-vim ] || fail "host file: $(cat "$H/agent.json")"
	sbx write-files sh -c 'cd "$HOME" && cp agent.json agent.json~ && echo by-rename >.agent.json.new &&
		mv -f .agent.json.new agent.json && echo mv-ok'
	expect_out "mv-ok"
	tests=$((tests + 1))
	[ "$(cat "$H/agent.json")" = by-rename ] || fail "host file: $(cat "$H/agent.json")"
	tests=$((tests + 1))
	[ ! -e "$H/agent.json~" ] && [ ! -e "$H/.agent.json.new" ] ||
		fail "a file made beside the grant reached the host"

	name="write_files: Python os.replace, and a read-only workspace stays as the policy shows it"
	sbx write-files sh -c 'python3 -c "
import os
with open(\"notes.tmp\", \"w\") as f: f.write(\"by-python\\n\")
os.replace(\"notes.tmp\", \"notes.md\")
print(\"replace-ok\")"
		cat notes-link; cat src/main.c; cat .env; echo x > src/new.c || echo src-read-only;
		ls "$HOME"; echo "copies seen: $(ls -A "$TMPDIR/.omnibox-wf" | wc -l)"; echo end'
	expect_out "replace-ok"
	expect_out "by-python"
	expect_out "int main"
	expect_no_out "dotenv-secret"
	expect_out "src-read-only"
	expect_no_out "sibling.txt"
	expect_out "copies seen: 0"
	expect_out "end"
	tests=$((tests + 1))
	[ "$(cat "$WS/notes.md")" = by-python ] || fail "host file: $(cat "$WS/notes.md")"
	tests=$((tests + 1))
	[ ! -e "$WS/notes.tmp" ] && [ ! -e "$WS/src/new.c" ] || fail "a new file reached the host"

	name="write_files: a link or a FIFO planted under the name is not written back, nothing hangs"
	sbx write-files sh -c 'cd "$HOME" && ln -sf "$HOME/.ssh/id_rsa" agent.json && echo linked;
		cd "$OLDPWD" && rm notes.md && mkfifo notes.md && echo fifo'
	expect_out "linked"
	expect_out "fifo"
	expect_out "not written back"
	tests=$((tests + 1))
	[ "$(cat "$H/agent.json")" = by-rename ] && [ -f "$WS/notes.md" ] &&
		[ "$(cat "$WS/notes.md")" = by-python ] || fail "the host files changed"

	name="write_files: a sparse file too large to copy back is refused, the host's is kept"
	sbx write-files sh -c 'truncate -s 100M "$HOME/agent.json" && echo grown'
	expect_out "grown"
	expect_out "larger than 64 MiB"
	tests=$((tests + 1))
	[ "$(cat "$H/agent.json")" = by-rename ] || fail "host file changed"

	name="write_files: a save reaches the host while the sandbox still runs"
	(cd "$WS" && as_user "$TB/omnibox-run" -q "$P/write-files.yaml" -- \
		sh -c 'echo live >"$HOME/agent.json"; sleep 6') >/dev/null 2>&1 &
	bg=$!
	i=0
	while [ $i -lt 50 ] && [ "$(cat "$H/agent.json")" != live ]; do
		sleep 0.1
		i=$((i + 1))
	done
	tests=$((tests + 1))
	[ "$(cat "$H/agent.json")" = live ] && kill -0 "$bg" 2>/dev/null ||
		fail "not on the host while the sandbox ran: $(cat "$H/agent.json")"
	wait "$bg"

	name="write_files: a write that is not closed before the sandbox ends still lands"
	sbx write-files sh -c 'exec 3>>"$HOME/agent.json"; echo appended >&3; kill -9 $$'
	tests=$((tests + 1))
	[ "$(tail -n 1 "$H/agent.json")" = appended ] || fail "host file: $(cat "$H/agent.json")"

	name="write_files: one in a read-only grant inside a writable one is written and saved"
	mkdir -p "$U/wfws/ro"
	printf 'lock-orig\n' >"$U/wfws/ro/lock"
	printf 'other\n' >"$U/wfws/ro/other"
	mkfifo "$U/wfws/pipe"
	printf 'theirs\n' >"$U/wfws/theirs.json"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$U/wfws"
	chown 12345:12345 "$U/wfws/theirs.json"
	chmod 644 "$U/wfws/theirs.json"
	policy write-files-nested <<-EOF
	os_env:
	  sandbox:
	    write_paths: ["$U/wfws"]
	    read_paths: ["$U/wfws/ro"]
	    write_files: ["$U/wfws/ro/lock"]
	EOF
	sbx write-files-nested sh -c "sed -i s/orig/saved/ '$U/wfws/ro/lock' && echo saved;
		echo x >'$U/wfws/ro/other' || echo other-read-only"
	expect_out "saved"
	expect_out "other-read-only"
	tests=$((tests + 1))
	[ "$(cat "$U/wfws/ro/lock")" = lock-saved ] || fail "host file: $(cat "$U/wfws/ro/lock")"

	name="write_files: a FIFO keeps its own mount; a file the user may not write stays unwritable"
	policy write-files-odd <<-EOF
	os_env:
	  sandbox:
	    write_files: ["$U/wfws/pipe", "$U/wfws/theirs.json"]
	EOF
	sbx write-files-odd sh -c "echo ran; echo mine >'$U/wfws/theirs.json' || echo refused"
	expect_out "ran"
	expect_out "refused"
	tests=$((tests + 1))
	[ "$(cat "$U/wfws/theirs.json")" = theirs ] || fail "host file: $(cat "$U/wfws/theirs.json")"
	rm -rf "$U/wfws"
	rm -f "$WS/notes.md" "$WS/notes-link" "$H/agent.json" "$H/sibling.txt"
}

t_allow_hidden_all() {
	name="cwd_allow_hidden: [\"*\"] shows every dotfile; symlinks out still lead nowhere"
	sbx hidden-all sh -c 'cat .env; cat .aws/credentials; cat "$HOME/.ssh/id_rsa"; cat shadow-link; echo end'
	expect_out "dotenv-secret"
	expect_out "aws-ws-key"
	expect_out "ssh-host-key"
	expect_no_out "root:"
	expect_out "end"
}

t_secret_files() {
	name="a git_ssh identity the sandbox could read is refused at launch, nothing runs"
	sbx identity-in-ws sh -c 'echo cmd-executed'
	expect_no_out "cmd-executed"
	expect_out "would be readable or writable in the sandbox"
	tests=$((tests + 1))
	[ "$rc" != 0 ] || fail "exit status 0"
}

# creds_run HOME POLICY CMD...: omnibox-run with HOME as the home directory
# (its own ~/.databrickscfg and ~/.aws/credentials); sets $out and $rc.
creds_run() {
	home=$1 policy=$P/$2.yaml
	shift 2
	out=$(cd "$WS" && as_user env HOME="$home" ${DBCFG:+DATABRICKS_CONFIG_FILE="$DBCFG"} \
		"$TB/omnibox-run" -q "$policy" -- "$@" 2>&1)
	rc=$?
}

# creds_policy NAME GRANTS...: a databricks_cli and an aws_sigv4 profile entry
# (the proxy reads ~/.databrickscfg and ~/.aws/credentials), with GRANTS as
# the sandbox's other lines.
creds_policy() {
	name_=$1
	shift
	{
		printf 'os_env:\n  sandbox:\n'
		for l in "$@"; do printf '    %s\n' "$l"; done
		cat <<-EOF
		    egress_rules: ["* dbc.example.com/**", "* s3.example.com/**"]
		    credential_proxy:
		      - {type: databricks_cli, profiles: [dev]}
		      - type: aws_sigv4
		        target: s3.example.com
		        region: us-east-1
		        credential: {profile: default}
		EOF
	} | policy "$name_"
}

# A home holding real-looking databricks and AWS secrets, owned by $who.
creds_home() {
	rm -rf "$1"
	mkdir -p "$1/.aws"
	printf '[dev]\nhost = https://dbc.example.com\ntoken = dapi-real-db-token-4f3e2d\n' \
		>"$1/.databrickscfg"
	printf '[default]\naws_access_key_id = AKIAREALKEY7Q2W3E4R5\naws_secret_access_key = real-aws-secret-9x8y7z6w\n' \
		>"$1/.aws/credentials"
	chmod 600 "$1/.databrickscfg" "$1/.aws/credentials"
	[ "$who" = nobody ] && chown -R -h nobody:nogroup "$1"
	chmod 755 "$1"
}

creds_refused() {
	expect_rc 125
	expect_no_out "cmd-executed"
	expect_no_out "dapi-real-db-token"
	expect_no_out "real-aws-secret"
	expect_no_out "AKIAREALKEY"
}

t_credential_files() {
	CH=$U/credhome
	creds_home "$CH"
	DBCFG=
	creds_policy creds-home-all 'read_paths: ["~"]' 'cwd_allow_hidden: ["*"]'
	creds_policy creds-home-aws 'read_paths: ["~/.aws"]'
	creds_policy creds-home-abs "read_paths: [\"$CH\"]" 'cwd_allow_hidden: ["*"]'
	creds_policy creds-home-safe 'read_paths: ["~"]'
	SHOW='echo cmd-executed; cat ~/.databrickscfg ~/.aws/credentials; echo end'

	name="credential files: ~ with every dotfile shown is refused before anything runs"
	creds_run "$CH" creds-home-all sh -c "$SHOW"
	creds_refused
	expect_out "error: databricks_cli configuration '~/.databrickscfg' would be readable in the sandbox through the grant '~' at line 3"
	expect_out "error: aws_sigv4 shared credentials file '~/.aws/credentials' would be readable in the sandbox through the grant '~' at line 3"

	name="credential files: a grant of ~/.aws is refused"
	creds_run "$CH" creds-home-aws sh -c "$SHOW"
	creds_refused
	expect_out "aws_sigv4 shared credentials file '~/.aws/credentials' would be readable in the sandbox through the grant '~/.aws' at line 3"

	name="credential files: the home granted by its absolute path is refused at launch"
	creds_run "$CH" creds-home-abs sh -c "$SHOW"
	creds_refused
	expect_out "databricks_cli configuration ~/.databrickscfg ($CH/.databrickscfg) would be readable or writable in the sandbox through the grant $CH (line 3)"

	name="credential files: ~ hiding ~/.databrickscfg by a mask on that file alone is refused"
	creds_run "$CH" creds-home-safe sh -c "$SHOW"
	creds_refused
	expect_out "databricks_cli configuration ~/.databrickscfg ($CH/.databrickscfg) would be readable or writable in the sandbox through ~, though hidden: a file the host replaces comes out from under the mask that hides it; keep it in a hidden directory"

	name="credential files: ~ with dotfiles hidden runs, and the secrets in hidden directories stay unreadable"
	mkdir -p "$CH/.databricks"
	cp "$CH/.databrickscfg" "$CH/.databricks/cfg"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$CH/.databricks"
	DBCFG=$CH/.databricks/cfg
	creds_run "$CH" creds-home-safe sh -c "echo cmd-executed; cat ~/.databricks/cfg ~/.aws/credentials; echo end"
	DBCFG=
	expect_rc 0
	expect_out "cmd-executed"
	expect_out "end"
	expect_no_out "dapi-real-db-token"
	expect_no_out "real-aws-secret"
	expect_no_out "AKIAREALKEY"

	name="credential files: a ~/.databrickscfg that links into a grant is refused at launch"
	CL=$U/credhome-link
	creds_home "$CL"
	mkdir -p "$U/shared"
	mv "$CL/.databrickscfg" "$U/shared/databrickscfg"
	ln -s "$U/shared/databrickscfg" "$CL/.databrickscfg"
	[ "$who" = nobody ] && chown -R -h nobody:nogroup "$U/shared" "$CL"
	creds_policy creds-link "read_paths: [\"$U/shared\"]"
	creds_run "$CL" creds-link sh -c "echo cmd-executed; cat '$U/shared/databrickscfg'"
	creds_refused
	expect_out "databricks_cli configuration ~/.databrickscfg ($U/shared/databrickscfg) would be readable or writable in the sandbox through the grant $U/shared (line 3)"

	name="credential files: DATABRICKS_CONFIG_FILE in the workspace is refused at launch"
	cp "$CH/.databrickscfg" "$WS/dbcfg"
	[ "$who" = nobody ] && chown nobody:nogroup "$WS/dbcfg"
	DBCFG=$WS/dbcfg
	creds_run "$CH" creds-home-safe sh -c "echo cmd-executed; cat '$WS/dbcfg'"
	DBCFG=
	creds_refused
	expect_out "databricks_cli configuration $WS/dbcfg ($WS/dbcfg) would be readable or writable in the sandbox through the workspace $WS"
	rm -f "$WS/dbcfg"

	name="credential env source: a variable also in env_passthrough is refused"
	policy creds-env <<-EOF
	os_env:
	  sandbox:
	    env_passthrough: [PASSME]
	    egress_rules: ["* api.example.com/**"]
	    credential_proxy:
	      - {type: https_bearer, target: api.example.com, source: {env: PASSME}}
	EOF
	sbx creds-env sh -c 'echo cmd-executed; echo "PASSME=$PASSME"'
	expect_rc 125
	expect_no_out "cmd-executed"
	expect_no_out "passed-through"
	expect_out "error: credential source env 'PASSME' is also passed to the sandbox by env_passthrough at line 3"
	rm -rf "$CH" "$CL" "$U/shared"
}

# A repository made on the host, its hooks directory empty, owned by $who.
make_repo() {
	R=$U/repo
	rm -rf "$R"
	mkdir -p "$R"
	(cd "$R" && git init -q && echo one >f && git add f &&
		git -c user.email=t@t -c user.name=t commit -qm one) || fail "git init on the host"
	rm -f "$R"/.git/hooks/*
	if [ "$who" = nobody ]; then
		chown -R nobody:nogroup "$R"
	fi
}

# The state of what the protected set covers, to compare before and after.
repo_state() {
	(cd "$R" && ls -A . .git .git/hooks && cat .git/config && git -c safe.directory="*" log --format=%s) 2>&1
}

in_repo() {
	policy=$P/$1.yaml
	shift
	out=$(cd "$R" && as_user "$TB/omnibox-run" -q "$policy" -- sh -c "$@" 2>&1)
	rc=$?
}

GIT_INSIDE='G="git -c user.email=t@t -c user.name=t"'

t_protected() {
	name="protected paths: git works in a writable workspace, hooks and settings stay read-only"
	make_repo
	before=$(repo_state)
	in_repo protect "$GIT_INSIDE"'
		echo two >>f; $G add f && $G commit -qm two && echo commit-ok
		$G status --short && echo status-ok
		$G log --format=%s | head -1
		$G checkout -qb feature && echo branch-ok
		echo three >>f; $G stash -q && echo stash-ok
		echo evil >.git/hooks/pre-commit && echo HOOK-WRITTEN
		$G config core.fsmonitor "touch /tmp/fsmon-$$" && echo FSMONITOR-SET
		$G config core.hooksPath /tmp && echo HOOKSPATH-SET
		echo evil >.envrc && echo ENVRC-MADE
		mkdir -p .vscode && echo evil >.vscode/tasks.json && echo VSCODE-MADE
		mkdir -p .claude && echo evil >.claude/settings.json && echo CLAUDE-MADE
		mv .git g && mkdir .git && echo GIT-LAUNDERED
		echo end'
	expect_out "commit-ok"
	expect_out "status-ok"
	expect_out "two"
	expect_out "branch-ok"
	expect_out "stash-ok"
	expect_out "end"
	for bad in HOOK-WRITTEN FSMONITOR-SET HOOKSPATH-SET ENVRC-MADE VSCODE-MADE CLAUDE-MADE \
		GIT-LAUNDERED; do
		expect_no_out "$bad"
	done
	after=$(repo_state)
	tests=$((tests + 1))
	# Only the work git did itself: the new commits, the branch and the stash.
	[ -z "$(ls -A "$R/.git/hooks")" ] && ! grep -q -e fsmonitor -e hooksPath "$R/.git/config" &&
		[ ! -e "$R/.envrc" ] && [ ! -e "$R/.vscode" ] && [ ! -e "$R/.claude" ] &&
		[ ! -e "$R/g" ] && [ -d "$R/.git/objects" ] ||
		fail "the host's repository changed: $(printf '%s\n' "$before" "--- after" "$after")"
	tests=$((tests + 1))
	[ "$(git -c safe.directory="*" -C "$R" log -1 --format=%s feature 2>/dev/null)" = two ] ||
		fail "the commit made inside is not on the host"
	name="protected paths: unprotect_paths makes them writable again"
	make_repo
	in_repo unprotect "$GIT_INSIDE"'
		echo ok >.git/hooks/pre-commit && echo HOOK-WRITTEN
		$G config core.hooksPath /tmp && echo HOOKSPATH-SET
		echo ok >.envrc && echo ENVRC-MADE
		mkdir -p .vscode && echo ok >.vscode/tasks.json && echo VSCODE-MADE'
	for good in HOOK-WRITTEN HOOKSPATH-SET ENVRC-MADE VSCODE-MADE; do
		expect_out "$good"
	done
	tests=$((tests + 1))
	[ -e "$R/.git/hooks/pre-commit" ] && [ -e "$R/.envrc" ] || fail "the opt-out wrote nothing"
	name="protected paths: the policy file and the profiles committed beside it stay read-only"
	make_repo
	cp "$P/protect.yaml" "$R/agent.yaml"
	"$TB/omnibox-compile" "$R/agent.yaml" --target=all -o "$R/profiles" >/dev/null 2>&1 ||
		fail "omnibox-compile --target=all"
	if [ "$who" = nobody ]; then
		chown -R nobody:nogroup "$R"
	fi
	sums=$(cd "$R" && cat agent.yaml profiles/policy.ir.json profiles/linux/* | md5sum)
	out=$(cd "$R" && as_user "$TB/omnibox-run" -q agent.yaml -- sh -c '
		echo "    write_paths: [/]" >>agent.yaml && echo POLICY-WRITTEN
		echo x >profiles/linux/bwrap.args && echo PROFILE-WRITTEN
		mv profiles p2 && echo PROFILES-MOVED; echo end' 2>&1)
	expect_out "end"
	expect_no_out "POLICY-WRITTEN"
	expect_no_out "PROFILE-WRITTEN"
	expect_no_out "PROFILES-MOVED"
	expect_eq "the policy and profiles on the host" \
		"$(cd "$R" && cat agent.yaml profiles/policy.ir.json profiles/linux/* | md5sum)" "$sums"
	name="protected paths: a symlink planted for .git/hooks refuses the launch"
	make_repo
	mkdir -p "$R/hooks-elsewhere"
	rmdir "$R/.git/hooks" && ln -s ../hooks-elsewhere "$R/.git/hooks"
	in_repo protect 'echo cmd-executed'
	expect_no_out "cmd-executed"
	expect_out "symbolic link"
	rm -rf "$R"
}

t_run_options() {
	name="omnibox-run: -h, -V, options after the policy, clear errors"
	out=$(as_user "$TB/omnibox-run" -h 2>&1)
	expect_out "usage: omnibox-run"
	out=$(as_user "$TB/omnibox-run" -V 2>&1)
	expect_out "omnibox-run "
	out=$(cd "$WS" && as_user "$TB/omnibox-run" "$P/default.yaml" -q -- sh -c 'echo after-ok' 2>&1)
	expect_out "after-ok"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" "$P/default.yaml" sh 2>&1)
	rc=$?
	expect_rc 125
	expect_out "put the command after '--'"
	printf 'os_env:\n  sandbox:\n    egress_rules: ["GET example.com"]\n' >"$P/egress-min.yaml"
	printf 'not a certificate\n' >"$U/garbage.pem"
	chmod 644 "$P/egress-min.yaml" "$U/garbage.pem"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --egress-ca "$U/garbage.pem" "$P/egress-min.yaml" \
		-- true 2>&1)
	expect_out "--egress-ca $U/garbage.pem: holds no PEM certificate"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --egress-log /nonexistent-dir/x.log \
		"$P/egress-min.yaml" -- true 2>&1)
	expect_out "--egress-log /nonexistent-dir/x.log: No such file or directory"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --why .env "$P/masks.yaml" 2>&1)
	expect_out "read $WS/.env: refused, hidden: an empty file in its place (dotfile)"
	relative=$out
	# Every spelling of a path gets the launch's one answer.
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --why "$WS/.env" "$P/masks.yaml" 2>&1)
	expect_eq "--why of the absolute spelling" "$out" "$relative"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --why '~/.ssh/id_rsa' "$P/masks.yaml" 2>&1)
	tilde=$out
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --why "$H/.ssh/id_rsa" "$P/masks.yaml" 2>&1)
	expect_eq "--why of ~ and of the home's path" "$out" "$tilde"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --why src/x.c "$P/masks.yaml" 2>&1)
	expect_out "write $WS/src/x.c: allowed, workspace, writable: write_paths (line"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --why https://example.com/ "$P/offline.yaml" 2>&1)
	expect_out "GET https://example.com/: refused, allow_network: false"
	printf 'os_evn:\n  sandbox:\n    allow_network: false\n' >"$P/typo.yaml"
	chmod 644 "$P/typo.yaml"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" "$P/typo.yaml" -- sh -c 'echo typo-ran' 2>&1)
	expect_out "unknown top-level key 'os_evn' (did you mean 'os_env'?)"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --strict-toplevel "$P/typo.yaml" \
		-- sh -c 'echo cmd-executed' 2>&1)
	expect_no_out "cmd-executed"
	expect_out "unknown top-level key 'os_evn'"
}

# The names in the host's home, one a line, hidden ones too.
home_names() {
	(cd "$H" && find . -mindepth 1 | LC_ALL=C sort)
}

t_private_home() {
	echo "[user]" >"$H/.gitconfig"
	mkdir -p "$H/notes"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$H/.gitconfig" "$H/notes"
	before=$(home_names)

	name="private home: \$HOME is the user's home path inside, and writable"
	sbx private-home sh -c 'echo "home=$HOME"; echo "xdg=${XDG_CACHE_HOME-unset}"
		mkdir -p ~/.cache/x && echo hi >~/.cache/x/f && echo "cache=$(cat ~/.cache/x/f)"
		mkdir -p ~/.npm/_logs && echo log >~/.npm/_logs/debug.log && echo npm-ok
		echo history >~/.bash_history && echo history-ok'
	expect_out "home=$H"
	expect_out "xdg=unset"
	expect_out "cache=hi"
	expect_out "npm-ok"
	expect_out "history-ok"

	name="private home: the host's home is not there, but for its grants"
	sbx private-home sh -c 'cat ~/.ssh/id_rsa; cat ~/notes.txt 2>/dev/null || echo no-notes-txt
		ls -A ~'
	expect_no_out "ssh-host-key"
	expect_out "no-notes-txt"
	expect_out ".gitconfig"

	name="private home: a read grant below it stays read-only, a write grant writes the host"
	sbx private-home sh -c 'cat ~/.gitconfig; echo x >>~/.gitconfig || echo gitconfig-ro
		echo through >~/notes/n.txt && echo notes-ok'
	expect_out "[user]"
	expect_out "gitconfig-ro"
	expect_out "notes-ok"
	tests=$((tests + 1))
	[ "$(cat "$H/notes/n.txt" 2>/dev/null)" = through ] || fail "~/notes/n.txt not written on the host"
	tests=$((tests + 1))
	[ "$(cat "$H/.gitconfig")" = "[user]" ] || fail "the host's .gitconfig changed"
	rm -f "$H/notes/n.txt"

	name="private home: nothing written in it reaches the host's home"
	tests=$((tests + 1))
	after=$(home_names)
	[ "$after" = "$before" ] || fail "the host's home changed: now $(echo $after)"

	name="private home: a workspace inside the home is bound over it, writable on the host"
	mkdir -p "$H/code/project"
	[ "$who" = nobody ] && chown nobody:nogroup "$H/code/project"
	out=$(cd "$H/code/project" && as_user "$TB/omnibox-run" -q "$P/home-ws.yaml" -- sh -c \
		'echo ws >ws.txt && cat README; echo cache >~/.cache-file && echo home-ok' 2>&1)
	expect_out "readme"
	expect_out "home-ok"
	tests=$((tests + 1))
	[ "$(cat "$H/code/project/ws.txt" 2>/dev/null)" = ws ] || fail "ws.txt not written on the host"
	tests=$((tests + 1))
	[ ! -e "$H/.cache-file" ] || fail "a file of the private home reached the host's home"
	rm -f "$H/code/project/ws.txt"

	name="private home: none when a grant holds the home (read_paths: [HOME])"
	sbx read-home sh -c 'echo x >"$HOME/new" || echo home-ro; cat ~/notes.txt'
	expect_out "home-ro"
	expect_out "notes"

	name="private home: --dry-run shows it, --why answers from it"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --dry-run "$P/private-home.yaml" -- true 2>&1)
	expect_out "# 2b. the private home, writable"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --why="$H/.ssh/id_rsa" "$P/private-home.yaml" 2>&1)
	expect_out "the private home holds nothing of the host's"
	rm -f "$H/.gitconfig"
	rm -rf "$H/notes"
}

run_all() {
	setup_user
	t_default_policy
	t_write_workspace
	t_dotfiles
	t_dotfile_dirs_hidden_whole
	t_read_paths_dotfiles
	t_mask_paths
	t_symlink_escapes
	t_system_files
	t_system_dev
	t_bind_in_workspace
	t_environment
	t_environment_is_emit_env
	t_network_off
	t_seccomp
	t_seccomp_netlink_route
	t_seccomp_ordinary_commands
	t_seccomp_i386
	t_exit_status
	t_kill_run
	t_signal_forwarding
	t_signal_during_setup
	t_scratch_killed
	t_scratch_handed_off
	t_missing_bwrap
	t_no_namespaces
	t_escapes
	t_unix_socket
	t_root_powers
	t_terminal
	t_dry_run
	t_fail_closed
	t_command_visibility
	t_path_shadow
	t_none
	t_null_sandbox
	t_resolve_matches_dry_run
	t_limits
	t_memory_runtimes
	t_copy_on_write
	t_write_files
	t_allow_hidden_all
	t_secret_files
	t_credential_files
	t_protected
	t_run_options
	t_private_home
}

if [ "$(id -u)" != 0 ]; then
	echo "acceptance: must run as root, to test both as root and as nobody" >&2
	exit 1
fi
# ONLY="t_a t_b" runs just those (after the setup), for work on one behaviour.
for who in root nobody; do
	if [ -n "${ONLY:-}" ]; then
		setup_user
		for t in $ONLY; do $t; done
	else
		run_all
	fi
done
echo "acceptance: $tests checks, $failures failed, $skips skipped"
[ "$failures" = 0 ]
