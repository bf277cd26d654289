#!/bin/sh
# oci.sh BUILD_DIR - the OCI bundle of `omnibox-compile --target=oci --resolve`
# run by runc, as root and rootless as nobody: what acceptance.sh checks of a
# bwrap launch (the mount view, the environment, the network, seccomp, no
# capabilities, no_new_privs, limits), checked of the container runc makes
# from config.json over a small root filesystem built here.
set -u

B=$(cd "$1" && pwd)
RUNC=$(command -v runc)
if [ -z "$RUNC" ]; then
	echo "oci: skipped: runc is not installed"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "oci: must run as root, to test both as root and as nobody" >&2
	exit 1
fi
PY=/usr/bin/python3
T=$(mktemp -d /tmp/omnibox-oci.XXXXXX)
chmod 755 "$T"
trap 'cleanup' EXIT INT TERM
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	# A container left by an interrupted run (runc run deletes its own).
	for r in "$T"/root/runc-root "$T"/nobody/runc-root; do
		[ -d "$r" ] || continue
		for c in $("$RUNC" --root "$r" list -q 2>/dev/null); do
			if [ "$r" = "$T/nobody/runc-root" ]; then
				runuser -u nobody -- env XDG_RUNTIME_DIR="$T/nobody/xdg" \
					"$RUNC" --root "$r" delete -f "$c" >/dev/null 2>&1
			else
				"$RUNC" --root "$r" delete -f "$c" >/dev/null 2>&1
			fi
		done
	done
	rm -rf "$T"
}

. "$(dirname "$0")/../lib.sh"

# ---- the root filesystem: a shell, a few tools, their libraries, the probe ----

ROOTFS=$T/rootfs
TOOLS="sh true sleep cat ls echo id touch mkdir rm env head tail tr cut wc sort grep stat readlink"

# copy_file PATH: PATH into $ROOTFS at its real directory, under its own name.
copy_file() {
	_d=$(realpath "$(dirname "$1")")
	mkdir -p "$ROOTFS$_d"
	cp -L "$1" "$ROOTFS$_d/"
}

make_rootfs() {
	mkdir -p "$ROOTFS"
	for d in proc dev tmp sys etc root home run usr/bin; do
		mkdir -p "$ROOTFS/$d"
	done
	# A merged-/usr host's top-level links, as they are.
	for l in bin sbin lib lib32 lib64 libx32; do
		[ -L "/$l" ] && ln -s "$(readlink "/$l")" "$ROOTFS/$l"
	done
	for t in $TOOLS; do
		p=
		for d in /usr/bin /bin; do
			[ -x "$d/$t" ] && p=$d/$t && break
		done
		[ -n "$p" ] || continue
		copy_file "$p"
		[ "$(basename "$p")" = "$t" ] || ln -sf "$(realpath "$p")" "$ROOTFS/usr/bin/$t"
		for lib in $(ldd "$p" 2>/dev/null | grep -o '/[^ ]*'); do
			copy_file "$lib"
		done
	done
	# /bin/sh is dash on Debian: the tests name it so.
	[ -e "$ROOTFS/bin/sh" ] || ln -s "$(realpath "$(command -v sh)")" "$ROOTFS/bin/sh"
	cp "$B/tests/probe" "$ROOTFS/usr/bin/probe"
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' \
		>"$ROOTFS/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$ROOTFS/etc/group"
	chmod -R a+rX "$ROOTFS"
}

# ---- the user under test: home, workspace, policies, bundle -------------------

setup_user() {
	U=$T/$who
	H=$U/home
	WS=$U/ws
	P=$U/policies
	TB=$U/bin
	BUNDLE=$U/bundle
	RR=$U/runc-root
	mkdir -p "$H/.ssh" "$H/.aws" "$H/notes" "$WS/.aws" "$WS/.venv/lib" "$WS/src" "$WS/out" "$WS/secrets" \
		"$U/extra" "$P" "$TB" "$BUNDLE" "$RR" "$U/xdg"
	echo "ssh-host-key" >"$H/.ssh/id_rsa"
	echo "aws-home-key" >"$H/.aws/credentials"
	echo "home-notes-text" >"$H/notes.txt"
	printf '[user]\n\tname = host\n' >"$H/.gitconfig"
	echo "SECRET=dotenv-secret" >"$WS/.env"
	echo "aws-ws-key" >"$WS/.aws/credentials"
	echo "venv-ok" >"$WS/.venv/lib/site.py"
	echo "int main(void) { return 0; }" >"$WS/src/main.c"
	echo "prod-key" >"$WS/secrets/production.key"
	echo "secret-dir-file" >"$WS/secrets/inner"
	echo "extra-data" >"$U/extra/data.txt"
	(cd "$WS" && git init -q && git config user.email t@t && git config user.name t &&
		git add src && git commit -qm one) || fail "git init on the host"
	rm -f "$WS"/.git/hooks/*
	cp "$B/omnibox-compile" "$TB/"
	chmod 755 "$TB" "$TB"/*
	cp -a "$ROOTFS" "$BUNDLE/rootfs"
	chmod 700 "$RR" "$U/xdg"
	if [ "$who" = nobody ]; then
		chown -R nobody:nogroup "$U"
	fi
	chmod 755 "$U"

	policy default <<-EOF
	os_env:
	  type: caller_process
	EOF
	policy write-out <<-EOF
	os_env:
	  sandbox:
	    write_paths: [out]
	EOF
	policy read-extra <<-EOF
	os_env:
	  sandbox:
	    read_paths: ["$U/extra"]
	EOF
	policy masks <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    mask_paths: [secrets/production.key, secrets, notyet/secret.txt]
	EOF
	policy protect <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    cwd_allow_hidden: [.git]
	EOF
	policy passthrough <<-EOF
	os_env:
	  sandbox:
	    env_passthrough: [PASSME]
	EOF
	policy offline <<-EOF
	os_env:
	  sandbox:
	    allow_network: false
	EOF
	policy online <<-EOF
	os_env:
	  sandbox:
	    allow_network: true
	EOF
	policy home-grants <<-EOF
	os_env:
	  sandbox:
	    read_paths: [~/.gitconfig]
	    write_paths: [~/notes]
	EOF
	policy limits <<-EOF
	os_env:
	  sandbox:
	    limits: {open_files: 32, processes: 32, memory: 256MiB}
	EOF
}

# oci_config POLICY CMD...: config.json for $P/POLICY.yaml and CMD, made by the
# user under test in $WS (with as_user's secrets in its environment), into
# the bundle.  Sets $rc and, on failure, $out.
oci_config() {
	_policy=$P/$1.yaml
	shift
	set -- "$TB/omnibox-compile" --target=oci --resolve --cwd "$WS" --home "$H" "$_policy" -- "$@"
	out=$(cd "$WS" && as_user sh -c 'f=$1; shift; "$@" >"$f.new" && mv "$f.new" "$f"' _ \
		"$BUNDLE/config.json" "$@" 2>&1)
	rc=$?
}

# as_runc ARGS...: runc as the user under test (rootless for nobody).
n=0
as_runc() {
	if [ "$who" = root ]; then
		"$RUNC" --root "$RR" "$@"
	else
		runuser -u nobody -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$H" \
			XDG_RUNTIME_DIR="$U/xdg" "$RUNC" --root "$RR" "$@"
	fi
}

# ocx POLICY CMD...: CMD in a container of the bundle for POLICY; $out holds
# stdout and stderr (runc's own messages too), $rc the status.  That runc
# ran it at all is a check of its own: a refused bundle would pass every
# expect_no_out after it.
ocx() {
	tests=$((tests + 1))
	oci_config "$@"
	if [ "$rc" != 0 ]; then
		out="config.json not made (status $rc): $out"
		rc=125
		fail "omnibox-compile --target=oci --resolve failed"
		return
	fi
	n=$((n + 1))
	out=$(cd "$U" && as_runc run --bundle "$BUNDLE" "omnibox-oci-$$-$who-$n" </dev/null 2>&1)
	rc=$?
	case $out in
	*"level=error"*) fail "runc did not run the bundle" ;;
	esac
}

# cfg EXPR: a Python expression of the bundle's config.json (d), printed.
cfg() {
	"$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print(v if isinstance(v, str) else json.dumps(v, sort_keys=True))' "$BUNDLE/config.json" "$1" 2>&1
}

# The user's tree, but for what the run may change: to compare before and after.
host_state() {
	find "$U" \( -path "$BUNDLE" -o -path "$RR" -o -path "$U/xdg" -o -path "$WS/out" \) -prune -o \
		-printf '%p %y %s %m %u %T@\n' | LC_ALL=C sort
}

# expect_same WHAT BEFORE AFTER: two listings equal; what differs is named.
expect_same() {
	tests=$((tests + 1))
	[ "$2" = "$3" ] && return
	printf '%s\n' "$2" >"$T/before"
	printf '%s\n' "$3" >"$T/after"
	fail "$1 changed (- before, + after):
$(diff "$T/before" "$T/after" | grep '^[<>]' | sed 's/^</-/; s/^>/+/' | head -20)"
}

ws_names() {
	(cd "$WS" && find . | LC_ALL=C sort)
}

# The names a missing protected path is held by (they stay after a run).
HELD='/(\.git/(commondir|config|hooks|objects|config\.worktree|modules|worktrees|objects/info(/alternates)?|info(/attributes)?)|\.gitmodules|\.envrc|\.vscode|\.idea|\.claude|\.mcp\.json|\.codex)$'

# The workspace's names but those.
ws_names_unheld() {
	ws_names | grep -v -E "$HELD"
}

# ---- the checks ---------------------------------------------------------------

t_config() {
	name="config.json: the bundle's root, the command, the workspace"
	ocx default true
	expect_rc 0
	expect_eq "root.path" "$(cfg 'd["root"]["path"]')" rootfs
	expect_eq "root.readonly" "$(cfg 'd["root"].get("readonly")')" true
	expect_eq "process.args" "$(cfg 'd["process"]["args"]')" '["true"]'
	expect_eq "process.cwd" "$(cfg 'd["process"]["cwd"]')" "$WS"
	expect_eq "process.noNewPrivileges" "$(cfg 'd["process"].get("noNewPrivileges")')" true
	expect_eq "capabilities" \
		"$(cfg 'sorted(set(c for s in d["process"].get("capabilities", {}).values() for c in s))')" '[]'

	name="config.json: linux.seccomp is --emit=seccomp-oci, as parsed JSON"
	as_user "$TB/omnibox-compile" --target=linux --emit=seccomp-oci "$P/default.yaml" >"$U/seccomp.json" 2>&1
	out=$("$PY" -c 'import json, sys
a = json.load(open(sys.argv[1]))["linux"].get("seccomp")
b = json.load(open(sys.argv[2]))
print("same" if a == b else "differ: %d rules in config.json, %d emitted" % (len((a or {}).get("syscalls", [])), len(b["syscalls"])))' \
		"$BUNDLE/config.json" "$U/seccomp.json" 2>&1)
	expect_eq "linux.seccomp" "$out" same
	# The Kubernetes form's Localhost profile is the same file, byte for byte.
	as_user "$TB/omnibox-compile" --target=kubernetes --emit=seccomp-oci "$P/default.yaml" \
		>"$U/seccomp-k8s.json" 2>&1
	tests=$((tests + 1))
	cmp -s "$U/seccomp.json" "$U/seccomp-k8s.json" ||
		fail "the Kubernetes seccomp profile differs from the one runc enforced"

	if [ "$who" = nobody ]; then
		name="config.json, rootless: a user namespace maps 0 to nobody"
		expect_eq "user namespace" "$(cfg '[n["type"] for n in d["linux"]["namespaces"] if n["type"] == "user"]')" '["user"]'
		expect_eq "uidMappings" "$(cfg '[(m["containerID"], m["hostID"], m["size"]) for m in d["linux"]["uidMappings"]]')" '[[0, 65534, 1]]'
		expect_eq "gidMappings" "$(cfg '[(m["containerID"], m["hostID"], m["size"]) for m in d["linux"]["gidMappings"]]')" '[[0, 65534, 1]]'
	fi
}

t_workspace() {
	name="default policy: workspace readable, not writable, root filesystem read-only"
	before=$(host_state)
	ocx default sh -c 'cat src/main.c; echo x > newfile; echo x > /usr/newfile; echo x > src/main.c;
		pwd; id -u'
	expect_out "int main(void)"
	expect_out "newfile: Read-only file system"
	expect_out "/usr/newfile: Read-only file system"
	expect_out "src/main.c: Read-only file system"
	expect_out "$WS"
	tests=$((tests + 1))
	[ ! -e "$WS/newfile" ] && [ ! -e "$BUNDLE/rootfs/usr/newfile" ] || fail "a file appeared on the host"
	expect_same "the host's tree after a read-only run" "$before" "$(host_state)"
}

t_write_grant() {
	name="write_paths: [out] writable, the write on the host; the rest read-only"
	rm -f "$WS/out/"*
	ocx write-out sh -c 'echo written > out/o.txt && echo wrote; echo x > src/x.c; id -u'
	expect_out "wrote"
	expect_out "src/x.c: Read-only file system"
	expect_eq "out/o.txt on the host" "$(cat "$WS/out/o.txt" 2>/dev/null)" written
	# Rootless, the container's root is nobody: what it writes is nobody's.
	expect_eq "owner of out/o.txt" "$(stat -c %U "$WS/out/o.txt" 2>/dev/null)" "$who"
	tests=$((tests + 1))
	[ ! -e "$WS/src/x.c" ] || fail "src/x.c was written on the host"
	rm -f "$WS/out/o.txt"
}

t_read_grant() {
	name="read_paths: a grant outside the workspace readable, not writable"
	ocx read-extra sh -c 'cat "$0/data.txt"; echo x > "$0/data.txt"; echo x > "$0/new"' "$U/extra"
	expect_out "extra-data"
	expect_out "data.txt: Read-only file system"
	tests=$((tests + 1))
	[ "$(cat "$U/extra/data.txt")" = extra-data ] && [ ! -e "$U/extra/new" ] ||
		fail "the read grant changed on the host"
	name="default policy: a path neither granted nor the workspace is not there"
	ocx default sh -c 'cat "$0/data.txt" || echo no-extra' "$U/extra"
	expect_no_out "extra-data"
	expect_out "no-extra"
}

t_home() {
	name="home: a private tmpfs at the host's home path, its secrets not visible"
	ocx default sh -c 'echo "home=$HOME"; cat ~/.ssh/id_rsa; cat ~/.aws/credentials; cat ~/notes.txt;
		echo mine > ~/made && cat ~/made; ls -A ~ | tr "\n" " "; echo'
	expect_out "home=$H"
	expect_no_out "ssh-host-key"
	expect_no_out "aws-home-key"
	expect_no_out "home-notes-text"
	expect_out "mine"
	tests=$((tests + 1))
	[ ! -e "$H/made" ] || fail "a file of the private home reached the host's home"
}

t_home_grants() {
	name="home: grants below the private home bound there, a read grant read-only"
	ocx home-grants sh -c 'cat ~/.gitconfig; echo x >> ~/.gitconfig || echo gitconfig-ro;
		echo through > ~/notes/n.txt && echo notes-ok; cat ~/.ssh/id_rsa; ls -A ~ | tr "\n" " "; echo'
	expect_out "name = host"
	expect_out "gitconfig-ro"
	expect_out "notes-ok"
	expect_no_out "ssh-host-key"
	expect_eq "~/notes/n.txt on the host" "$(cat "$H/notes/n.txt" 2>/dev/null)" through
	expect_eq "~/.gitconfig on the host" "$(cat "$H/.gitconfig")" "$(printf '[user]\n\tname = host')"
	rm -f "$H/notes/n.txt"
}

t_dotfiles() {
	name="dotfiles: .env and .aws/credentials masked, .venv visible"
	ocx default sh -c 'cat .env; ls -A .aws; cat .aws/credentials; cat .venv/lib/site.py;
		echo x > .env; echo end'
	expect_no_out "dotenv-secret"
	expect_no_out "aws-ws-key"
	expect_out "venv-ok"
	expect_out "end"
	expect_eq ".env on the host" "$(cat "$WS/.env")" "SECRET=dotenv-secret"
}

t_mask_paths() {
	name="mask_paths hides a file and a directory; a missing one is held by an empty directory"
	names_before=$(ws_names_unheld)
	ocx masks sh -c 'cat secrets/production.key; ls -A secrets; cat secrets/inner; echo done'
	expect_no_out "prod-key"
	expect_no_out "secret-dir-file"
	expect_out "done"
	tests=$((tests + 1))
	# The runtime makes the mount point of a missing mask (no launcher takes it away).
	[ -d "$WS/notyet" ] && [ -z "$(ls -A "$WS/notyet")" ] ||
		fail "the missing masked path notyet/ is not an empty directory after the run"
	tests=$((tests + 1))
	[ "$(cat "$WS/secrets/production.key")" = prod-key ] || fail "the masked file changed on the host"
	rmdir "$WS/notyet"
	expect_same "the workspace's names" "$names_before" "$(ws_names_unheld)"
}

t_protected() {
	name="protected paths: .git/hooks and .git/config read-only with write_paths [.]"
	cfg_before=$(cat "$WS/.git/config")
	names_before=$(ws_names)
	ocx protect sh -c 'echo evil > .git/hooks/pre-commit && echo HOOK-WRITTEN;
		echo "[core]" >> .git/config && echo CONFIG-WRITTEN; echo w > written.txt && echo ws-ok'
	expect_out "ws-ok"
	expect_no_out "HOOK-WRITTEN"
	expect_no_out "CONFIG-WRITTEN"
	tests=$((tests + 1))
	[ -z "$(ls -A "$WS/.git/hooks")" ] && [ "$(cat "$WS/.git/config")" = "$cfg_before" ] ||
		fail "the host's .git changed"
	expect_eq "written.txt on the host" "$(cat "$WS/written.txt" 2>/dev/null)" w
	rm -f "$WS/written.txt"
	# What --resolve and the runtime hold missing protected paths with stays:
	# protected names only, a file reading as none, and the host's git works.
	ws_names >"$T/names.$who"
	new=$(printf '%s\n' "$names_before" | LC_ALL=C comm -13 - "$T/names.$who")
	tests=$((tests + 1))
	bad=$(printf '%s\n' "$new" | grep -v -E "$HELD" | grep .)
	[ -z "$bad" ] || fail "names other than placeholders appeared: $bad"
	expect_eq ".git/commondir held as the same directory" "$(cat "$WS/.git/commondir")" "."
	tests=$((tests + 1))
	if [ "$who" = nobody ]; then
		runuser -u nobody -- git -C "$WS" status --short >/dev/null 2>&1
	else
		git -C "$WS" status --short >/dev/null 2>&1
	fi || fail "the host's git fails in the workspace after the run"
}

t_environment() {
	name="environment: the allow-list; host secrets absent, PATH and HOME present"
	ocx default env
	expect_no_out "aws-host-secret"
	expect_no_out "openai-host-secret"
	expect_no_out "PASSME"
	expect_out "HOME=$H"
	expect_out "PATH="
	tests=$((tests + 1))
	cfg 'd["process"]["env"]' | grep -q -e aws-host-secret -e openai-host-secret &&
		fail "a secret of the launching environment is in config.json"
	name="environment: env_passthrough passes a name"
	ocx passthrough sh -c 'echo "PASSME=$PASSME"'
	expect_out "PASSME=passed-through"
}

t_network() {
	"$B/tests/probe" listen-tcp >"$U/tcp.out" 2>&1 &
	pids="$pids $!"
	wait_for "$U/tcp.out" '^port ' || fail "the host's listener did not start"
	port=$(sed -n 's/^port //p' "$U/tcp.out")
	name="allow_network: false: the host's listener unreachable, only lo"
	ocx offline sh -c 'probe tcp-connect 127.0.0.1 "$0"; probe tcp-connect 1.1.1.1 80;
		cut -d: -f1 /proc/net/dev | tail -n +3 | tr -d " "' "$port"
	expect_out "ECONNREFUSED"
	expect_out "ENETUNREACH"
	tests=$((tests + 1))
	ifaces=$(printf '%s\n' "$out" | grep -v -e ECONN -e ENETUNREACH | tr '\n' ' ')
	[ "$ifaces" = "lo " ] || fail "interfaces: '$ifaces', expected only lo"
	tests=$((tests + 1))
	! grep -q accepted "$U/tcp.out" || fail "the host's listener accepted a connection"
	name="allow_network: true: the host's listener reachable (the control)"
	ocx online probe tcp-connect 127.0.0.1 "$port"
	expect_out "ok"
	wait_for "$U/tcp.out" accepted || fail "the host's listener saw no connection"
}

t_seccomp() {
	name="seccomp: what the emitted profile refuses fails inside"
	ocx default sh -c 'for p in unshare-user mount ptrace-traceme keyctl bpf clone-newuser io_uring \
		socket-netlink-audit; do echo "$p=$(probe $p)"; done; echo "clone3=$(probe clone3)";
		for p in thread fork execve socket-inet socket-unix; do echo "$p=$(probe $p)"; done'
	for p in unshare-user mount ptrace-traceme keyctl bpf clone-newuser io_uring socket-netlink-audit; do
		expect_out "$p=EPERM"
	done
	expect_out "clone3=ENOSYS"
	for p in thread fork execve socket-inet socket-unix; do
		expect_out "$p=ok"
	done
}

t_privileges() {
	name="no capabilities, no_new_privs, own PID namespace"
	ocx default sh -c 'grep -E "^(Cap(Eff|Prm|Bnd|Amb)|NoNewPrivs|Seccomp):" /proc/self/status;
		ls /proc | grep -c "^[0-9]"'
	expect_out "CapEff:	0000000000000000"
	expect_out "CapPrm:	0000000000000000"
	expect_out "CapBnd:	0000000000000000"
	expect_out "NoNewPrivs:	1"
	expect_out "Seccomp:	2"
	tests=$((tests + 1))
	nproc=$(printf '%s\n' "$out" | tail -1)
	[ "$nproc" -lt 5 ] 2>/dev/null || fail "$nproc processes visible in /proc"
}

# open_files can only be an rlimit; memory and processes may be rlimits or
# cgroup limits (linux.resources), which runc refuses rootless without a
# delegated cgroup: the effect is what is checked.
t_limits() {
	name="limits: open_files an rlimit, ulimit -n inside"
	ocx limits sh -c 'echo "nofile=$(ulimit -n)"; probe open-files 16; probe open-files 64'
	expect_out "nofile=32"
	expect_out "EMFILE"
	expect_eq "RLIMIT_NOFILE in config.json" \
		"$(cfg '[(r["soft"], r["hard"]) for r in d["process"].get("rlimits", []) if r["type"] == "RLIMIT_NOFILE"]')" \
		'[[32, 32]]'
	name="limits: memory: 64 MiB allocate, 512 MiB do not"
	ocx limits sh -c 'echo "alloc64=$(probe alloc 64)"; echo "alloc512=$(probe alloc 512)"'
	expect_out "alloc64=ok"
	if [ "$(wc -l </proc/swaps)" -le 1 ]; then
		expect_no_out "alloc512=ok"
	else
		# With swap a cgroup's memory limit lets the allocation through, swapped.
		expect_eq "the memory limit in config.json" "$(cfg '[r["hard"] for r in d["process"].get("rlimits", []) if r["type"] in ("RLIMIT_DATA", "RLIMIT_AS")] or [d["linux"].get("resources", {}).get("memory", {}).get("limit")]')" '[268435456]'
	fi
	name="limits: processes: 64 at once do not start"
	ocx limits sh -c 'i=0; while [ $i -lt 64 ]; do sleep 2 & i=$((i + 1)); done; wait'
	expect_out "Cannot fork"
}

t_tmp() {
	name="/tmp: a tmpfs of its own, writable, holding nothing of the host's"
	ocx default sh -c 'echo t > /tmp/oci-marker-$0 && cat /tmp/oci-marker-$0; ls -A /tmp | tr "\n" " "; echo' "$$"
	expect_out "t"
	# Nothing but the way to the workspace and home, which live below the host's /tmp here.
	expect_eq "/tmp inside" "$(printf '%s\n' "$out" | tail -1)" "oci-marker-$$ $(basename "$T") "
	tests=$((tests + 1))
	[ ! -e "/tmp/oci-marker-$$" ] || { rm -f "/tmp/oci-marker-$$"; fail "the write reached the host's /tmp"; }
}

t_host_unchanged() {
	name="the host unchanged: writes everywhere but the grant fail, the grant alone changes"
	rm -f "$WS/out/"*
	before=$(host_state)
	ocx write-out sh -c 'for f in new.txt src/main.c .env .git/config "$HOME/x" "$0/data.txt" /etc/passwd \
		/usr/bin/probe /new out/ok.txt; do echo x >> "$f"; done; rm -f src/main.c; mkdir d; echo end' "$U/extra"
	expect_out "end"
	expect_same "the host's tree" "$before" "$(host_state)"
	expect_eq "the grant" "$(ls "$WS/out")" ok.txt
	rm -f "$WS/out/ok.txt"
}

run_all() {
	setup_user
	t_config
	t_workspace
	t_write_grant
	t_read_grant
	t_home
	t_home_grants
	t_dotfiles
	t_mask_paths
	t_protected
	t_environment
	t_network
	t_seccomp
	t_privileges
	t_limits
	t_tmp
	t_host_unchanged
}

printf 'os_env:\n  type: caller_process\n' >"$T/probe.yaml"
if ! "$B/omnibox-compile" --target=oci "$T/probe.yaml" >/dev/null 2>&1; then
	echo "oci: $B/omnibox-compile has no --target=oci" >&2
	exit 1
fi
make_rootfs
for who in root nobody; do
	start=$tests
	if [ -n "${ONLY:-}" ]; then
		setup_user
		for t in $ONLY; do $t; done
	else
		run_all
	fi
	echo "oci [$who]: $((tests - start)) checks"
done
echo "oci: $tests checks, $failures failed, $skips skipped"
[ "$failures" = 0 ]
