#!/bin/sh
# attacks.sh BUILD_DIR - the agent as the adversary, against real launches.
#
# Each test plays one move an agent can make (it writes anything its grants
# allow, between launches as well as during one; it races a launch from a
# second process; it holds what its caller left open) and then checks the
# host, not the agent's word.  Real bwrap, real seccomp, real Landlock; as
# root and as nobody.
set -u

B=$(cd "$1" && pwd)
T=$(mktemp -d /tmp/omnibox-attacks.XXXXXX)
chmod 755 "$T"
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	pkill -f "^$T/.*/probe " 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T" "$MARKER"
}
# A host file outside every grant, readable by all: if it shows inside, the host leaked.
MARKER=/etc/omnibox-attack-marker-$$
echo "host-marker-$$" >"$MARKER"
chmod 644 "$MARKER"
trap cleanup EXIT INT TERM

. "$(dirname "$0")/../lib.sh"

setup_user() {
	U=$T/$who
	H=$U/home
	WS=$U/ws
	P=$U/policies
	TB=$U/bin
	O=$U/outside # a host directory no policy grants
	mkdir -p "$H/.ssh" "$WS/docs" "$WS/lib/data" "$WS/tools" "$P" "$TB" "$O/data" "$O/victim/b"
	echo "host-secret-$who" >"$O/secret.txt"
	echo "host-data-key" >"$O/data/key"
	: >"$O/victim/secret.key"
	echo "ssh-host-key" >"$H/.ssh/id_rsa"
	echo "doc" >"$WS/docs/README"
	cp "$B/omnibox-run" "$B/omnibox-init" "$B/omnibox-proxy" "$B/omnibox-compile" "$B/tests/probe" "$TB/"
	# The probe the sandbox runs: in the workspace, which it sees.
	cp "$B/tests/probe" "$WS/tools/"
	chmod -R a+rX "$U"
	if [ "$who" = nobody ]; then
		chown -R nobody:nogroup "$U"
	fi
	policy default <<-EOF
	os_env:
	  type: caller_process
	EOF
	policy write-ws <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	EOF
	policy write-docs <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    read_paths: [docs]
	EOF
	policy write-lib <<-EOF
	os_env:
	  sandbox:
	    write_paths: [., lib/data]
	EOF
	policy egress <<-EOF
	os_env:
	  sandbox:
	    egress_rules: ["GET example.com/"]
	EOF
	policy masks <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    mask_paths: [a/b/secret.key, c/secret.key]
	EOF
	policy maskrename <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    mask_paths: [config/secret.key]
	    deny_unix_socket_paths: [run/agent.sock]
	EOF
	policy flood-recursive <<-EOF
	os_env:
	  sandbox:
	    cwd_hidden_scan_recursive: true
	    cwd_hidden_scan_max_entries: 1000
	EOF
	policy terminals <<-EOF
	os_env:
	  sandbox:
	    allow_network: false
	terminals:
	  fixed:
	    command: sh
	    args: [-c, pwd]
	  free:
	    command: sh
	    args: [-c, pwd]
	    allow_cwd_override: true
	EOF
}

# ---- 1. a symlink planted where the next launch resolves a grant ------------

# The agent plants with write access to its workspace (a launch where the grant
# is no mount point of its own); the launch that resolves the grant is next.
t_planted_grant_link() {
	name="a grant replaced by a symlink to / is refused on the next launch"
	sbx write-ws sh -c 'rm -rf docs && ln -s / docs && echo planted'
	expect_out "planted"
	sbx write-docs sh -c "cat docs$O/secret.txt; echo pwned > docs$O/pwned; echo command-ran"
	expect_rc 125
	expect_out "write-docs.yaml:4:18: error: read_paths $WS/docs goes through the symlink $WS/docs -> /"
	expect_out "    4 |     read_paths: [docs]
      |                  ^~~~"
	expect_out "omnibox-run: $P/write-docs.yaml: cannot launch; nothing ran"
	expect_no_out "host-secret"
	expect_no_out "command-ran"
	tests=$((tests + 1))
	[ ! -e "$O/pwned" ] || fail "the sandbox wrote $O/pwned on the host"
	name="--dry-run and --resolve refuse the planted link too"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --dry-run "$P/write-docs.yaml" -- true 2>&1)
	rc=$?
	expect_rc 125
	expect_out "goes through the symlink $WS/docs -> /"
	run_err=$out
	out=$(cd "$WS" && as_user "$TB/omnibox-compile" --resolve "$P/write-docs.yaml" 2>&1)
	rc=$?
	expect_rc 65
	expect_out "goes through the symlink $WS/docs -> /"
	name="omnibox-run and --resolve print the refusal alike"
	expect_out "$(printf '%s\n' "$run_err" | grep -v '^omnibox-run: ')"

	name="a grant replaced by a symlink to \$HOME is refused"
	rm -f "$WS/docs"
	sbx write-ws sh -c "ln -s '$H' docs && echo planted"
	sbx write-docs sh -c 'cat docs/.ssh/id_rsa; echo ran'
	expect_rc 125
	expect_out "goes through the symlink $WS/docs -> $H"
	expect_no_out "ssh-host-key"

	name="a grant reached through a parent the agent replaced is refused"
	sbx write-ws sh -c "rm -rf lib && ln -s '$O' lib && echo planted"
	expect_out "planted"
	sbx write-lib sh -c 'cat lib/data/key; echo pwned > lib/data/pwned; echo ran'
	expect_rc 125
	expect_out "goes through the symlink $WS/lib -> $O"
	expect_no_out "host-data-key"
	tests=$((tests + 1))
	[ ! -e "$O/data/pwned" ] || fail "the sandbox wrote through the parent link"

	name="a symlink that stays in the workspace is followed"
	rm -f "$WS/docs" "$WS/lib"
	mkdir -p "$WS/lib/data" "$WS/real-docs"
	echo "inside-doc" >"$WS/real-docs/README"
	ln -s real-docs "$WS/docs"
	[ "$who" = nobody ] && chown -R -h nobody:nogroup "$WS"
	sbx write-docs cat docs/README
	expect_rc 0
	expect_out "inside-doc"
	rm -f "$WS/docs"
	mkdir -p "$WS/docs"
	[ "$who" = nobody ] && chown nobody:nogroup "$WS/docs"
}

# ---- 2. a second process racing the launch ----------------------------------

# swap_race N A B DIR POLICY SCRIPT SECRET WHAT: a racer exchanging A and B
# as fast as it can while N launches of POLICY in DIR run SCRIPT; each must
# either run without showing SECRET (a case pattern) or refuse.
swap_race() {
	as_user "$TB/probe" swap "$2" "$3" >/dev/null 2>&1 &
	pids="$pids $!"
	leaks=0 ran=0 refused=0 other=
	for _ in $(seq "$1"); do
		out=$(cd "$4" && as_user "$TB/omnibox-run" -q "$P/$5.yaml" -- sh -c "$6" 2>&1)
		case $? in
		0) ran=$((ran + 1)) ;;
		125) refused=$((refused + 1)) ;;
		*) other="$other
$out" ;;
		esac
		case $out in
		*$7*) leaks=$((leaks + 1)) ;;
		esac
	done
	tests=$((tests + 1))
	pgrep -f "^$TB/probe swap" >/dev/null || fail "the swapper was not racing to the end"
	pkill -f "^$TB/probe swap" 2>/dev/null
	sleep 0.1
	echo "    [$who] $1 racing launches: $ran ran, $refused refused, $leaks $8"
	expect_eq "launches that $8" "$leaks" 0
	out=$other
	expect_eq "launches that neither ran nor refused" "$((ran + refused))" "$1"
}

t_race() {
	name="a swapper racing 200 launches never exposes a host path"
	ln -s / "$WS/rootlink"
	[ "$who" = nobody ] && chown -h nobody:nogroup "$WS/rootlink"
	swap_race 200 "$WS/docs" "$WS/rootlink" "$WS" write-docs \
		"cat docs$O/secret.txt docs$MARKER $MARKER 2>/dev/null; echo x > docs$O/raced; true" \
		'host-[ms][ae][rc]' "exposed the host"
	# Put the workspace back the way it was, whichever way round the race left it.
	if [ -L "$WS/docs" ]; then
		mv "$WS/docs" "$WS/docs.link" && mv "$WS/rootlink" "$WS/docs" && mv "$WS/docs.link" "$WS/rootlink"
	fi
	rm -f "$WS/rootlink"
	tests=$((tests + 1))
	[ ! -e "$O/raced" ] || fail "a racing launch wrote $O/raced on the host"
}

# ---- 3. descriptors the caller left open ------------------------------------

t_inherited_fds() {
	"$TB/probe" listen-tcp >"$U/tcp.out" 2>&1 &
	pids="$pids $!"
	wait_for "$U/tcp.out" '^port '
	port=$(sed -n 's/^port //p' "$U/tcp.out")
	for pol in default egress; do
		name="an inherited directory and TCP socket are unusable inside ($pol)"
		out=$(cd "$WS" && as_user bash -c 'exec 7<"$1" 8<>"/dev/tcp/127.0.0.1/$2"; shift 2; exec "$@"' \
			_ "$O" "$port" "$TB/omnibox-run" -q "$P/$pol.yaml" -- sh -c \
			'echo "fd7=$(probe write-fd 7)"; echo "fd8=$(probe write-fd 8)";
			ls /proc/self/fd/7/../.. 2>&1; cat /proc/self/fd/7/secret.txt 2>&1; ls /proc/self/fd' 2>&1)
		rc=$?
		expect_rc 0
		expect_out "fd7=EBADF"
		expect_out "fd8=EBADF"
		expect_no_out "host-secret"
	done
	sleep 0.2
	out=$(cat "$U/tcp.out")
	name="the host listener behind the inherited socket received nothing"
	expect_no_out "received"
	# The launch's own descriptors (a grant's, the home's, the scratch
	# dir's, each of the host's mount namespace) serve omnibox-init's
	# mounts and go: the agent holds 0, 1 and 2 alone (and the listing its
	# directory's, the lowest free number).
	for pol in default write-docs egress; do
		name="no descriptor of the launch's reaches the agent ($pol)"
		out=$(cd "$WS" && as_user "$TB/omnibox-run" -q "$P/$pol.yaml" -- sh -c \
			'cd /proc/$$/fd && for f in *; do echo "fd $f "; done' 2>&1)
		rc=$?
		expect_rc 0
		expect_out "fd 2 "
		tests=$((tests + 1))
		if [ "$(printf '%s\n' "$out" | grep '^fd ' | grep -c -v '^fd [012] ')" -gt 1 ]; then
			fail "a descriptor beyond 0, 1 and 2 is open in the agent"
		fi
	done
}

# The launch ends when bwrap's status stream says omnibox-init's exit code.
# No process of the sandbox may hold that stream: the agent writes a forged
# end to every descriptor it can reach in any of them, then plants a
# repository whose configuration runs a command.  The launch must still end
# with the agent (its status), and the check after it find the repository.
t_forged_end() {
	name="a forged end of the sandbox does not end the launch: no process in it holds bwrap's status stream"
	rm -rf "$WS/forged" "$U/forged-ran"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" "$P/write-ws.yaml" -- sh -c '
		for f in /proc/[0-9]*/fd/*; do
			case $f in /proc/$$/*|*/fd/0|*/fd/1|*/fd/2) continue ;; esac
			echo "held $f"
			printf "{ \"exit-code\": 0 }\n" >"$f" 2>/dev/null
		done
		sleep 1
		git init -q forged && git -C forged config core.fsmonitor "touch $0" && exit 7' \
		"$U/forged-ran" 2>&1)
	rc=$?
	expect_rc 7
	expect_no_out "held /proc"
	expect_out "/forged/.git was made inside the sandbox"
	(cd "$WS/forged" 2>/dev/null && as_user git status) >/dev/null 2>&1
	tests=$((tests + 1))
	[ ! -e "$U/forged-ran" ] || fail "the agent's command ran on the host"
	rm -rf "$WS/forged" "$U/forged-ran"
}

# ---- 4. a flood of entries against the dotfile scan ---------------------------

t_flood() {
	name="a 150k-entry flood leaves every top-level secret masked"
	F=$U/flood
	mkdir -p "$F/sub"
	echo "aws-flood-secret" >"$F/.aws-credentials"
	echo "ssh-flood-secret" >"$F/.ssh-key"
	echo "nested-flood-secret" >"$F/sub/.env"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$F"
	out=$(as_user "$TB/probe" mkfiles "$F" 150000 && as_user "$TB/probe" mkfiles "$F/sub" 5000)
	expect_out "ok
ok"
	out=$(cd "$F" && as_user "$TB/omnibox-run" -q "$P/default.yaml" -- \
		sh -c 'cat .aws-credentials .ssh-key; echo ran' 2>&1)
	rc=$?
	expect_rc 0
	expect_out "ran"
	expect_no_out "aws-flood-secret"
	expect_no_out "ssh-flood-secret"
	name="past the cap, warn hides the unscanned directory whole (never less than a full scan)"
	out=$(cd "$F" && as_user "$TB/omnibox-run" "$P/flood-recursive.yaml" -- \
		sh -c 'cat .aws-credentials .ssh-key sub/.env; ls sub | head -1; echo ran' 2>&1)
	rc=$?
	expect_rc 0
	expect_out "ran"
	expect_out "warning: the dotfile scan stopped"
	expect_no_out "flood-secret"
	expect_no_out "flood-00"
	rm -rf "$F"
}

# ---- 5. the placeholders' cleanup ------------------------------------------

t_placeholder_parent() {
	name="inside the sandbox, the directories above a mask cannot be renamed"
	mkdir -p "$WS/a" "$WS/c"
	[ "$who" = nobody ] && chown nobody:nogroup "$WS/a" "$WS/c"
	sbx masks sh -c 'mv a a.moved; mv c c.moved; echo tried'
	expect_out "tried"
	expect_out "Device or resource busy"
	tests=$((tests + 1))
	[ -d "$WS/a" ] && [ -d "$WS/c" ] || fail "a mask's parent was renamed from inside"
	name="a placeholder's parent re-pointed by a racing process leaves the host's files in place"
	rm -f "$WS/go" "$WS/started"
	(cd "$WS" && as_user "$TB/omnibox-run" -q "$P/masks.yaml" -- sh -c \
		'echo up > started; while [ ! -e go ]; do sleep 0.05; done') >"$U/ph.out" 2>&1 &
	bg=$!
	wait_for "$WS/started" up
	# The racer: outside this sandbox, with write access to the workspace.
	as_user sh -c "cd '$WS' && mv a a.moved && ln -s '$O/victim' a && mv c c.moved &&
		ln -s '$O/victim' c && touch go"
	wait "$bg"
	rc=$?
	out=$(cat "$U/ph.out")
	expect_rc 0
	tests=$((tests + 1))
	[ -d "$O/victim/b" ] || fail "the cleanup removed the host directory $O/victim/b"
	tests=$((tests + 1))
	[ -f "$O/victim/secret.key" ] || fail "the cleanup removed the host file $O/victim/secret.key"
	rm -rf "$WS/a" "$WS/c" "$WS/a.moved" "$WS/c.moved" "$WS/go" "$WS/started"
}

# ---- 6. host abstract sockets with the network shared -------------------------

t_abstract_socket() {
	name="a host abstract Unix socket receives nothing with the network on"
	if [ "$("$TB/probe" landlock-abi)" -lt 6 ] 2>/dev/null; then
		echo "SKIP [$who] $name: the kernel's Landlock cannot scope abstract sockets (ABI < 6)"
		skips=$((skips + 1))
		return
	fi
	sock="@omnibox-attack-$who-$$"
	as_user "$TB/probe" listen-unix "$sock" >"$U/abs.out" 2>&1 &
	pids="$pids $!"
	wait_for "$U/abs.out" listening
	out=$(as_user "$TB/probe" connect-unix "$sock" hello)
	expect_out "ok"
	wait_for "$U/abs.out" "received hello"
	: >"$U/abs.out"
	sbx default probe connect-unix "$sock" leak
	expect_out "EPERM"
	sleep 0.2
	out=$(cat "$U/abs.out")
	expect_no_out "accepted"
	expect_no_out "leak"
}

# ---- 7. terminals and --cwd ------------------------------------------------------

t_terminal_cwd() {
	name="--cwd naming the terminal's own workspace is no override"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" -q --terminal=fixed --cwd="$WS" "$P/terminals.yaml" 2>&1)
	rc=$?
	expect_rc 0
	expect_out "$WS"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" -q --terminal=fixed --cwd=docs "$P/terminals.yaml" 2>&1)
	rc=$?
	expect_rc 125
	expect_out "allow_cwd_override"
	name="allow_cwd_override accepts a directory inside the workspace, nothing else"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" -q --terminal=free --cwd=docs "$P/terminals.yaml" 2>&1)
	rc=$?
	expect_rc 0
	expect_out "$WS/docs"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" -q --terminal=free --cwd="$H" "$P/terminals.yaml" 2>&1)
	rc=$?
	expect_rc 125
	expect_out "is outside the workspace $WS of terminal 'free'"
	name="--resolve follows the same --cwd rule"
	out=$(cd "$WS" && as_user "$TB/omnibox-compile" --resolve --terminal=fixed --cwd="$WS" "$P/terminals.yaml" 2>&1)
	rc=$?
	expect_rc 0
	out=$(cd "$WS" && as_user "$TB/omnibox-compile" --resolve --terminal=fixed --cwd=docs "$P/terminals.yaml" 2>&1)
	rc=$?
	expect_rc 65
	expect_out "allow_cwd_override"
}

# ---- what the red team found next ---------------------------------------------

# A script's #! line is the agent's when the script lies in a writable root:
# it must not make anything visible, whatever ".." and links say, and
# whatever the kernel reads at exec.
t_interpreter() {
	name="a #! line with '..' after a link exposes nothing of the host"
	k=$(($(printf '%s' "$WS" | tr -cd / | wc -c) + 1)) # the workspace's depth, plus one
	deep=$WS/deep
	i=1
	while [ $i -le $k ]; do
		deep=$deep/d$i
		i=$((i + 1))
	done
	mkdir -p "$deep" "$WS/deep/etc"
	ln -sfn "$deep" "$WS/L"
	ups=
	i=1
	while [ $i -le $k ]; do
		ups="$ups../"
		i=$((i + 1))
	done
	# As written the interpreter is /etc/x; the kernel, applying ".." after
	# the link, finds the agent's $WS/deep/etc/x, which it may run: nothing
	# of the host may be made visible for it.
	printf '#!/bin/sh\nhead -1 %s\n' "$MARKER" >"$WS/deep/etc/x"
	printf '#!%s/L/%setc/x\n' "$WS" "$ups" >"$WS/test.sh"
	chmod 755 "$WS/deep/etc/x" "$WS/test.sh"
	[ "$who" = nobody ] && chown -R -h nobody:nogroup "$WS"
	sbx write-ws ./test.sh
	expect_no_out "host-marker"
	expect_no_out "ro-bind"

	name="a #! line naming a host program outside every grant is refused, not exposed"
	cp /bin/sh "$O/hostsh"
	chmod 755 "$O/hostsh"
	printf '#!%s/hostsh\ncat %s/secret.txt\n' "$O" "$O" >"$WS/test2.sh"
	chmod 755 "$WS/test2.sh"
	[ "$who" = nobody ] && chown nobody:nogroup "$WS/test2.sh" "$O/hostsh"
	sbx write-ws ./test2.sh
	expect_rc 125
	expect_out "its #! line is the agent's"
	expect_no_out "host-secret"
	rm -f "$O/hostsh" "$WS/test2.sh"

	name="a #! line swapped during 40 launches never exposes a host path"
	printf '#!/etc/omnibox-nonexistent\n' >"$WS/t.sh"
	printf '#!/bin/sh\nhead -1 %s\n' "$MARKER" >"$WS/t.alt"
	chmod 755 "$WS/t.sh" "$WS/t.alt"
	[ "$who" = nobody ] && chown nobody:nogroup "$WS/t.sh" "$WS/t.alt"
	as_user "$TB/probe" swap "$WS/t.sh" "$WS/t.alt" >/dev/null 2>&1 &
	pids="$pids $!"
	leaks=0
	for _ in $(seq 40); do
		out=$(cd "$WS" && as_user "$TB/omnibox-run" -q "$P/write-ws.yaml" -- ./t.sh 2>&1)
		case $out in *host-marker*) leaks=$((leaks + 1)) ;; esac
	done
	pkill -f "^$TB/probe swap" 2>/dev/null
	expect_eq "launches that showed a host file" "$leaks" 0
	rm -rf "$WS/deep" "$WS/etc" "$WS/L" "$WS/test.sh" "$WS/t.sh" "$WS/t.alt"
}

t_bwrap_on_path() {
	name="a bwrap the agent put first on PATH is refused, never run"
	printf '#!/bin/sh\necho pwned > %s/pwned-by-bwrap\nexec /usr/bin/bwrap "$@"\n' "$O" \
		>"$WS/tools/bwrap"
	chmod 755 "$WS/tools/bwrap"
	[ "$who" = nobody ] && chown nobody:nogroup "$WS/tools/bwrap"
	out=$(cd "$WS" && as_user env PATH="$WS/tools:/usr/bin:/bin" "$TB/omnibox-run" -q \
		"$P/write-ws.yaml" -- true 2>&1)
	rc=$?
	expect_rc 125
	expect_out "lies in a directory the sandbox can write"
	tests=$((tests + 1))
	[ ! -e "$O/pwned-by-bwrap" ] || fail "the agent's bwrap ran outside the sandbox"
	name="--resolve refuses the same bwrap, in the same words"
	out=$(cd "$WS" && as_user env PATH="$WS/tools:/usr/bin:/bin" "$TB/omnibox-compile" \
		--resolve --target=linux "$P/write-ws.yaml" 2>&1)
	rc=$?
	expect_rc 65
	expect_out "the bwrap found first on PATH, lies in a directory the sandbox can write"
	name="a relative PATH entry is never searched for bwrap"
	cp "$WS/tools/bwrap" "$WS/bwrap"
	[ "$who" = nobody ] && chown nobody:nogroup "$WS/bwrap"
	out=$(cd "$WS" && as_user env PATH=".:/usr/bin:/bin" "$TB/omnibox-run" -q \
		"$P/default.yaml" -- true 2>&1)
	rc=$?
	expect_rc 0
	tests=$((tests + 1))
	[ ! -e "$O/pwned-by-bwrap" ] || fail "bwrap was taken from a relative PATH entry"
	rm -f "$WS/tools/bwrap" "$WS/bwrap" "$O/pwned-by-bwrap"
}

t_mask_rename() {
	name="a mask_paths entry survives the agent renaming its parent"
	mkdir -p "$WS/config" "$WS/run"
	echo "renamed-mask-secret" >"$WS/config/secret.key"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$WS/config" "$WS/run"
	as_user "$TB/probe" listen-unix "$WS/run/agent.sock" >"$U/sock.out" 2>&1 &
	pids="$pids $!"
	wait_for "$U/sock.out" listening
	sbx maskrename sh -c 'mv config config.old; mv run run.old; echo tried'
	expect_out "tried"
	expect_out "Device or resource busy"
	sbx maskrename sh -c 'cat config.old/secret.key config/secret.key;
		probe connect-unix run.old/agent.sock leak; probe connect-unix run/agent.sock leak'
	expect_no_out "renamed-mask-secret"
	expect_no_out "ok"
	sleep 0.2
	out=$(cat "$U/sock.out")
	expect_no_out "received"
	rm -rf "$WS/config" "$WS/run" "$WS/config.old" "$WS/run.old"
}

# init_masked CAPS SCRIPT: a bare bwrap with the workspace, a tmpfs on
# $WS/hid, and omnibox-init mounting the masks of $U/masks (descriptor 9)
# before it runs SCRIPT, given CAPS ("" or "sys_admin"); $out, $rc.
init_masked() {
	caps=
	[ "$1" = sys_admin ] && caps="--cap-add CAP_SYS_ADMIN --cap-add CAP_SETFCAP --uid 0 --gid 0"
	out=$(as_user sh -c 'exec 9<"$1"; shift; exec "$@"' _ "$U/masks" bwrap --ro-bind / / \
		--dev /dev --proc /proc --bind "$WS" "$WS" --tmpfs "$WS/hid" \
		--unshare-pid --die-with-parent --cap-drop ALL $caps -- "$TB/omnibox-init" \
		--launcher-ids --masks-fd 9 --exec /bin/sh -- sh -c "$2" 2>&1)
	rc=$?
}

# mask_entry KIND DIR PATH: the entry of the list for PATH, found in DIR.
mask_entry() {
	printf '%s%s:%s:%s\000' "$1" "$(stat -c %d "$2")" "$(stat -c %i "$2")" "$3"
}

# omnibox-init mounts each mask itself, by descriptor in the directory the
# launch checked, and checks it in place; anything else than what the
# launch found there stops the launch before anything runs.
t_mask_check() {
	name="omnibox-init masks a file and makes a directory's tmpfs read-only"
	mkdir -p "$WS/sub" "$WS/decoy" "$WS/hid"
	echo "misplaced-mask-secret" >"$WS/sub/secret.key"
	: >"$WS/decoy/secret.key"
	ln -sf ../decoy/secret.key "$WS/sub/link.key"
	[ "$who" = nobody ] && chown -R -h nobody:nogroup "$WS/sub" "$WS/decoy" "$WS/hid"
	{ mask_entry f "$WS/sub" "$WS/sub/secret.key"; mask_entry d "$WS" "$WS/hid"; } >"$U/masks"
	[ "$who" = nobody ] && chown nobody:nogroup "$U/masks"
	init_masked sys_admin "echo command-ran; cat '$WS/sub/secret.key'; touch '$WS/hid/x'; id -u; true"
	expect_rc 0
	expect_out "command-ran"
	expect_no_out "misplaced-mask-secret"
	expect_out "Read-only file system"
	expect_out "$(id -u "$who")"
	name="without CAP_SYS_ADMIN no mask is made and nothing runs"
	init_masked "" "echo command-ran"
	expect_rc 125
	expect_out "cannot mask $WS/sub/secret.key"
	expect_no_out "command-ran"
	name="a mask in another directory than the one the launch checked stops the launch"
	# The directory's identity as the resolver saw it, and a path where a
	# racing rename could have put another one.
	mask_entry f "$WS/decoy" "$WS/sub/secret.key" >"$U/masks"
	init_masked sys_admin "echo command-ran"
	expect_rc 125
	expect_out "the directory of $WS/sub/secret.key is not the one the launch checked"
	expect_no_out "command-ran"
	name="a masked file turned into a symlink stops the launch, nothing mounted through it"
	mask_entry f "$WS/sub" "$WS/sub/link.key" >"$U/masks"
	init_masked sys_admin "echo command-ran"
	expect_rc 125
	expect_out "$WS/sub/link.key is not the file the launch found"
	expect_no_out "command-ran"
	name="a directory hidden whole gets omnibox-init's read-only tmpfs, on that very directory"
	mkdir -p "$WS/whole" "$WS/whole-decoy"
	echo "whole-dir-secret" >"$WS/whole/.key"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$WS/whole" "$WS/whole-decoy"
	printf 't%s:%s:%s:%s:%s\000' "$(stat -c %d "$WS")" "$(stat -c %i "$WS")" \
		"$(stat -c %d "$WS/whole")" "$(stat -c %i "$WS/whole")" "$WS/whole" >"$U/masks"
	init_masked sys_admin "echo command-ran; ls -A '$WS/whole'; cat '$WS/whole/.key'; touch '$WS/whole/x'; true"
	expect_rc 0
	expect_out "command-ran"
	expect_no_out "whole-dir-secret"
	expect_out "Read-only file system"
	name="a directory hidden whole that is not the one the scan listed stops the launch"
	# A racer's rename after the scan: another directory by that name.
	printf 't%s:%s:%s:%s:%s\000' "$(stat -c %d "$WS")" "$(stat -c %i "$WS")" \
		"$(stat -c %d "$WS/whole-decoy")" "$(stat -c %i "$WS/whole-decoy")" "$WS/whole" >"$U/masks"
	init_masked sys_admin "echo command-ran"
	expect_rc 125
	expect_out "$WS/whole is not the directory the launch found"
	expect_no_out "command-ran"
	rm -rf "$WS/whole" "$WS/whole-decoy"
	name="a directory's mask with no tmpfs of bwrap's there stops the launch"
	mask_entry d "$WS" "$WS/decoy" >"$U/masks"
	init_masked sys_admin "echo command-ran"
	expect_rc 125
	expect_out "$WS/decoy is not the directory the launch found"
	expect_no_out "command-ran"
	tests=$((tests + 1))
	[ ! -w "$WS/decoy" ] || touch "$WS/decoy/still-writable" ||
		fail "the workspace was made read-only on the host"
	rm -rf "$WS/sub" "$WS/decoy" "$WS/hid" "$U/masks"
}

# init_granted FD-PATH FLAG PATH SCRIPT [RACE]: a bare bwrap with $WS
# writable and the host's root at /mnt/host, and omnibox-init, given the
# launch's descriptor 9 on FD-PATH (and RACE run once it is open, as a
# racer would between the launch's check and the mount), mounting the
# grant FLAG 9 PATH from there before it runs SCRIPT; $out, $rc.
init_granted() {
	out=$(as_user sh -c 'exec 9<"$1"; eval "$2"; shift 2; exec "$@"' _ "$1" "${5:-}" bwrap --ro-bind / / \
		--dev /dev --proc /proc --bind "$WS" "$WS" --tmpfs /mnt --bind / /mnt/host \
		--unshare-pid --die-with-parent --cap-drop ALL --cap-add CAP_SYS_ADMIN \
		--cap-add CAP_SETFCAP --uid 0 --gid 0 -- "$TB/omnibox-init" --launcher-ids \
		--system-root /mnt/host "$2" 9 "$3" --exec /bin/sh -- sh -c "$4" 2>&1)
	rc=$?
}

# omnibox-init makes a grant from the launch's descriptor, of the host's
# mount namespace: found at its path in the host's root, and only if it is
# that descriptor's directory.
t_grant_check() {
	name="omnibox-init mounts a read-only grant of the launch's descriptor at its path"
	mkdir -p "$WS/granted" "$WS/decoy"
	echo "granted-content" >"$WS/granted/file"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$WS/granted" "$WS/decoy"
	init_granted "$WS/granted" --ro-bind-fd "$WS/granted" \
		"echo command-ran; cat '$WS/granted/file'; touch '$WS/granted/x'; touch '$WS/decoy/x' && echo decoy-written; ls /proc/self/fd | tr '\\n' ' '"
	expect_rc 0
	expect_out "command-ran"
	expect_out "granted-content"
	expect_out "Read-only file system"
	expect_out "decoy-written"
	expect_no_out " 9 "
	tests=$((tests + 1))
	[ ! -e "$WS/granted/x" ] || fail "the read-only grant was written on the host"
	name="a grant is the directory the launch checked, though a racer put another at its path"
	# Renamed away between the launch's check and the mount, another
	# directory made by its name: the checked one is mounted, over it.
	init_granted "$WS/granted" --ro-bind-fd "$WS/granted" "cat '$WS/granted/file'" \
		"mv '$WS/granted' '$WS/granted.old' && mkdir '$WS/granted' && echo racer-file >'$WS/granted/file'"
	expect_rc 0
	expect_out "granted-content"
	expect_no_out "racer-file"
	rm -rf "$WS/granted"
	mv "$WS/granted.old" "$WS/granted"
	name="a grant whose directory is gone by the mount stops the launch"
	mkdir -p "$WS/gone"
	[ "$who" = nobody ] && chown nobody:nogroup "$WS/gone"
	init_granted "$WS/gone" --ro-bind-fd "$WS/granted" "echo command-ran" "rmdir '$WS/gone'"
	expect_rc 125
	expect_out "the grant of $WS/granted is not the one the launch checked"
	expect_no_out "command-ran"
	name="a grant's mount point reached through a symlink a racer planted stops the launch"
	# The mount point's parent made a link to a host directory between the
	# launch's check and the mount: nothing is made or mounted through it.
	init_granted "$WS/granted" --ro-bind-fd "$WS/via/new/granted" "echo command-ran" \
		"ln -s '$O' '$WS/via'"
	expect_rc 125
	expect_no_out "command-ran"
	tests=$((tests + 1))
	[ ! -e "$O/new" ] || fail "a directory was made on the host through the racer's link"
	rm -f "$WS/via"
	name="a writable grant keeps a read-only mount of the host's below it read-only"
	mkdir -p "$WS/rosub"
	if mount --bind "$WS/rosub" "$WS/rosub" && mount -o remount,bind,ro "$WS/rosub"; then
		init_granted "$WS" --bind-fd "$WS" \
			"touch '$WS/rosub/y' 2>&1; touch '$WS/decoy/y' && echo ws-written"
		expect_rc 0
		expect_out "ws-written"
		expect_out "Read-only file system"
		umount "$WS/rosub"
	else
		echo "  skip [$who] $name: cannot make a read-only bind mount here"
		skips=$((skips + 1))
	fi
	rm -rf "$WS/granted" "$WS/decoy" "$WS/rosub"
}

# A racer exchanging a secret dotfile with a dotfile directory, over and
# over, while launches run: each either runs with both hidden or refuses.
t_mask_race() {
	name="a swapper racing 100 launches between a dotfile and a directory never shows the dotfile"
	mkdir -p "$WS/race/.cfg"
	echo "raced-dotfile-secret" >"$WS/race/.token"
	echo "raced-dir-secret" >"$WS/race/.cfg/inner"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$WS/race"
	swap_race 100 "$WS/race/.token" "$WS/race/.cfg" "$WS/race" default \
		'cat .token .cfg/inner .token/inner .cfg 2>/dev/null; true' 'raced-' \
		"showed a hidden dotfile"
	rm -rf "$WS/race"
}

# The recursive scan reopens directories by name: a racer exchanging a
# directory of dotfiles with a decoy of the same shape must not have it
# list the decoy twice and the real one never.
t_scan_race() {
	name="a swapper racing 100 recursive scans between a directory of dotfiles and a decoy never shows one"
	mkdir -p "$WS/sr/A/.ssh" "$WS/sr/B"
	echo "SCANRACE_env" >"$WS/sr/A/.env"
	echo "SCANRACE_ssh" >"$WS/sr/A/.ssh/id"
	for k in $(seq 30); do
		mkdir -p "$WS/sr/A/d$k" "$WS/sr/B/d$k"
		echo "SCANRACE_$k" >"$WS/sr/A/d$k/.tok"
		echo "visible" >"$WS/sr/B/d$k/file"
	done
	[ "$who" = nobody ] && chown -R nobody:nogroup "$WS/sr"
	policy scanrace <<-EOF
	os_env:
	  sandbox:
	    write_paths: ["."]
	    cwd_hidden_scan_recursive: true
	EOF
	swap_race 100 "$WS/sr/A" "$WS/sr/B" "$WS/sr" scanrace \
		'grep -rh SCANRACE_ . 2>/dev/null; true' 'SCANRACE_' "showed a hidden dotfile"
	rm -rf "$WS/sr"
}

# The racer with perfect timing: the moment the scan has listed a directory
# (it opens the first of its subdirectories), it renames one it has not
# reached yet to a name the listing never saw.
t_scan_rename() {
	name="a directory of dotfiles renamed away while the scan runs ends the launch"
	mkdir -p "$WS/rn/P/zD"
	(cd "$WS/rn/P" && mkdir $(seq -f 's%g' 1 2000))
	echo "RENAMED_secret" >"$WS/rn/P/zD/.env"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$WS/rn"
	policy scanrec <<-EOF
	os_env:
	  sandbox:
	    cwd_hidden_scan_recursive: true
	EOF
	rm -f "$U/rn.out"
	as_user "$TB/probe" rename-on-open "$WS/rn/P" zD Y >"$U/rn.out" 2>&1 &
	pids="$pids $!"
	wait_for "$U/rn.out" watching
	out=$(cd "$WS/rn" && as_user "$TB/omnibox-run" -q "$P/scanrec.yaml" -- \
		sh -c 'cat P/Y/.env P/zD/.env; echo command-ran' 2>&1)
	rc=$?
	expect_rc 125
	expect_out "went away while it ran"
	expect_no_out "RENAMED_secret"
	expect_no_out "command-ran"
	tests=$((tests + 1))
	grep -q renamed "$U/rn.out" || fail "the racer did not rename: $(cat "$U/rn.out")"
	rm -rf "$WS/rn" "$U/rn.out"
}

t_hardlink() {
	name="a masked file with another hard link is named in a warning"
	echo "linked-secret" >"$WS/.env"
	ln "$WS/.env" "$WS/notes.txt"
	[ "$who" = nobody ] && chown nobody:nogroup "$WS/.env" "$WS/notes.txt"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" "$P/default.yaml" -- cat .env 2>&1)
	rc=$?
	expect_out "$WS/.env (dotfile) has 1 other hard links"
	expect_no_out "linked-secret"
	rm -f "$WS/.env" "$WS/notes.txt"
}

# ---- round two ---------------------------------------------------------------

# A link planted by a sandbox of another policy (one that can write where
# this policy's paths lie) must not take a workspace or a grant to the
# system's trees, a home or a hidden path.
t_cross_policy_links() {
	name="a workspace planted as a link to /etc by another policy's sandbox is refused"
	mkdir -p "$WS/proj/app" "$WS/proj/docs"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$WS/proj"
	policy proj <<-EOF
	os_env:
	  cwd: $WS/proj
	  sandbox: {write_paths: [.]}
	EOF
	policy app <<-EOF
	os_env:
	  cwd: $WS/proj/app
	  sandbox: {write_paths: [.]}
	EOF
	policy readdocs <<-EOF
	os_env:
	  sandbox: {read_paths: ["$WS/proj/docs"]}
	EOF
	sbx proj sh -c 'rmdir app && ln -s /etc app && rm -rf docs && ln -s "$HOME/.ssh" docs; echo planted'
	expect_out "planted"
	sbx app sh -c "echo pwned > omnibox-attack-pwned-$who; echo command-ran"
	expect_rc 125
	expect_out "resolves through a symlink to /etc"
	expect_no_out "command-ran"
	tests=$((tests + 1))
	[ ! -e "/etc/omnibox-attack-pwned-$who" ] || fail "a sandbox wrote the host's /etc"
	rm -f "/etc/omnibox-attack-pwned-$who"
	name="a grant planted as a link to a hidden path by another policy's sandbox is refused"
	sbx readdocs sh -c "cat '$WS/proj/docs/id_rsa'; echo command-ran"
	expect_rc 125
	# The link lies in the workspace, which another launch may have written:
	# refused for leading out of it, before its hidden target is looked at.
	expect_out "goes through the symlink $WS/proj/docs -> $H/.ssh, which leads out of $WS"
	expect_no_out "command-ran"
	expect_no_out "ssh-host-key"
	rm -rf "$WS/proj"
}

t_unreadable() {
	name="a workspace the agent made unlistable refuses the next launch"
	sbx write-ws sh -c 'chmod 0300 .; echo done'
	expect_out "done"
	echo "unlisted-secret" >"$WS/.hidden-env" 2>/dev/null || true
	sbx write-ws sh -c 'chmod 755 .; cat .hidden-env; echo command-ran'
	chmod 755 "$WS"
	if [ "$who" = root ]; then
		# root lists it anyway (the scan runs with root's powers): masked as usual.
		expect_no_out "unlisted-secret"
	else
		expect_rc 125
		expect_out "cannot list $WS (permission denied)"
		expect_no_out "unlisted-secret"
	fi
	rm -f "$WS/.hidden-env"
	name="a subdirectory the agent made unlistable is hidden whole (recursive scan)"
	mkdir -p "$WS/locked"
	echo "locked-secret" >"$WS/locked/.npmrc"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$WS/locked"
	policy write-recursive <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    cwd_hidden_scan_recursive: true
	EOF
	sbx write-recursive sh -c 'chmod 0 locked; echo done'
	if [ "$who" = nobody ]; then
		# One the user made unlistable is hidden by omnibox-init, on the
		# directory the scan could not list: renamed away after the scan,
		# the one found there would not be it.
		mkdir -p "$WS/shut"
		chown nobody:nogroup "$WS/shut"
		chmod 0 "$WS/shut"
		out=$(cd "$WS" && as_user "$TB/omnibox-run" --dry-run "$P/write-recursive.yaml" -- true 2>&1)
		expect_out "# omnibox-init: --tmpfs $WS/shut"
		rmdir "$WS/shut"
	fi
	sbx write-recursive sh -c 'chmod 755 locked; cat locked/.npmrc; echo command-ran'
	chmod -R u+rwx "$WS/locked"
	expect_no_out "locked-secret"
	rm -rf "$WS/locked"
}

t_mask_created_later() {
	name="a mask_paths entry missing at launch under a read-only grant stays hidden when the user creates it"
	mkdir -p "$U/data"
	[ "$who" = nobody ] && chown nobody:nogroup "$U/data"
	policy later <<-EOF
	os_env:
	  sandbox:
	    read_paths: ["$U/data"]
	    mask_paths: ["$U/data/token"]
	EOF
	rm -f "$WS/go"
	(cd "$WS" && as_user "$TB/omnibox-run" -q "$P/later.yaml" -- sh -c \
		"while [ ! -e '$U/data/go' ]; do sleep 0.05; done; cat '$U/data/token'; echo command-ran") \
		>"$U/later.out" 2>&1 &
	bg=$!
	sleep 1
	as_user sh -c "echo later-token-secret > '$U/data/token'; touch '$U/data/go'"
	wait "$bg"
	out=$(cat "$U/later.out")
	expect_out "command-ran"
	expect_no_out "later-token-secret"
	rm -rf "$U/data"
}

# ---- the second layer: Landlock holds where a mount would not --------------------

t_landlock_layer() {
	name="Landlock: a host directory mounted writable by mistake stays unwritable"
	out=$(as_user bwrap --ro-bind / / --dev /dev --proc /proc --bind "$O" "$O" --bind "$WS" "$WS" \
		--unshare-pid --die-with-parent -- "$TB/omnibox-init" --exec /bin/sh --fs-write "$WS" -- \
		sh -c "echo x > '$O/mistake'; echo y > '$WS/fine' && echo fine-written" 2>&1)
	rc=$?
	expect_out "fine-written"
	expect_out "Permission denied"
	tests=$((tests + 1))
	[ ! -e "$O/mistake" ] || fail "the mount alone decided: $O/mistake was written"
	rm -f "$WS/fine"
}

# ---- the seccomp filter's refusals, reported to omnibox-run -----------------------

# The calls the filter refuses are held by the kernel until omnibox-run
# answers EPERM: the agent must still see EPERM, never a hang, and the user
# must see what it tried (-v live, the exit summary always but with -q).

# seccomp_run OPTIONS... -- CMD...: the default policy's sandbox, in $WS, as
# the user under test, given at most 120 s (a refused call nobody answers
# hangs: that is a failure here, status 124); $out, $rc.
seccomp_run() {
	_opts=
	while [ "$1" != -- ]; do
		_opts="$_opts $1"
		shift
	done
	shift
	# shellcheck disable=SC2086
	out=$(cd "$WS" && as_user timeout 120 "$TB/omnibox-run" $_opts "$P/default.yaml" -- "$@" 2>&1)
	rc=$?
}

t_seccomp_reports() {
	calls='for p in mount unshare-user ptrace-traceme tiocsti clone3; do echo "$p=$(probe $p)"; done'
	name="seccomp: refused calls still fail with EPERM, -v names each as it happens"
	seccomp_run -v -- sh -c "$calls"
	expect_rc 0
	for p in mount unshare-user ptrace-traceme tiocsti; do
		expect_out "$p=EPERM"
	done
	expect_out "clone3=ENOSYS"
	for c in mount unshare ptrace ioctl; do
		expect_out "omnibox-run: refused syscall $c (pid "
	done
	expect_no_out "refused syscall clone3"
	name="seccomp: the exit summary names and counts the refusals"
	expect_out "omnibox-run: the seccomp filter refused 4 system calls (each failed with EPERM):"
	for c in mount unshare ptrace ioctl; do
		tests=$((tests + 1))
		printf '%s\n' "$out" | grep -Eq "^  $c +1\$" || fail "no summary line '$c 1'"
	done

	name="seccomp: without -v only the summary, with -q nothing"
	seccomp_run -- sh -c "$calls"
	expect_rc 0
	expect_out "mount=EPERM"
	expect_no_out "refused syscall"
	expect_out "the seccomp filter refused 4 system calls"
	seccomp_run -q -- sh -c "$calls"
	expect_out "mount=EPERM"
	expect_no_out "seccomp filter refused"

	name="seccomp: a launch that refuses nothing reports nothing"
	seccomp_run -v -- sh -c 'ls / >/dev/null; echo ran'
	expect_out "ran"
	expect_no_out "refused"

	# Four threads refusing at once, 10000 calls in all: each one waits for
	# omnibox-run's answer, none may be lost (a missing answer would hang it)
	# or come back other than EPERM.
	name="seccomp: 10000 refused calls from four threads at once: no hang, all EPERM, all counted"
	seccomp_run -v -- /usr/bin/python3 -c '
import ctypes, threading
libc = ctypes.CDLL(None, use_errno=True)
wrong = []
def refuse():
    for _ in range(2500):
        # mount("none", "/nonexistent", "tmpfs", 0, NULL)
        if libc.mount(b"none", b"/nonexistent", b"tmpfs", 0, None) != -1 or ctypes.get_errno() != 1:
            wrong.append(ctypes.get_errno())
ts = [threading.Thread(target=refuse) for _ in range(4)]
for t in ts: t.start()
for t in ts: t.join()
print("not-eperm=%d" % len(wrong))
'
	expect_rc 0
	expect_out "not-eperm=0"
	expect_out "the seccomp filter refused 10000 system calls"
	tests=$((tests + 1))
	printf '%s\n' "$out" | grep -Eq '^  mount +10000$' || fail "no summary line 'mount 10000'"
	expect_out "omnibox-run: more refusals not shown"
	tests=$((tests + 1))
	shown=$(printf '%s\n' "$out" | grep -c 'refused syscall mount')
	[ "$shown" = 50 ] || fail "-v showed $shown refusals, not the first 50"

	# omnibox-run's own PID (the shell execs it), to signal it and nothing else.
	name="seccomp: an agent looping on refused calls still ends on omnibox-run's SIGTERM"
	rm -f "$U/loop.pid" "$U/loop.out"
	as_user sh -c 'cd "$1" && echo $$ >"$5" && exec "$2" -q "$3" -- /usr/bin/python3 -c "
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print(\"looping\", flush=True)
while True: libc.unshare(0x10000000)
" >"$4" 2>&1' _ "$WS" "$TB/omnibox-run" "$P/default.yaml" "$U/loop.out" "$U/loop.pid" &
	bg=$!
	wait_for "$U/loop.out" looping
	loop=$(cat "$U/loop.pid")
	tests=$((tests + 1))
	case $(cat "/proc/$loop/cmdline" 2>/dev/null | tr '\0' ' ') in
	*omnibox-run*) ;;
	*) fail "no omnibox-run at pid $loop" ;;
	esac
	kill -TERM "$loop"
	for _ in $(seq 50); do
		kill -0 "$loop" 2>/dev/null || break
		sleep 0.1
	done
	tests=$((tests + 1))
	if kill -0 "$loop" 2>/dev/null; then
		fail "omnibox-run still runs 5 s after SIGTERM"
		kill -KILL "$loop" 2>/dev/null
	fi
	wait "$bg" 2>/dev/null
}

# Calls newer than libseccomp's tables, each of which works unfiltered (as root
# and as nobody), and a number no kernel has yet: refused, reported by name.
t_seccomp_new_calls() {
	name="seccomp: open_tree_attr, listmount, statmount and future calls fail with EPERM, named"
	seccomp_run -v -- sh -c 'for p in open-tree-attr listmount statmount future-syscall; do
		echo "$p=$(probe $p)"; done'
	expect_rc 0
	for p in open-tree-attr listmount statmount future-syscall; do
		expect_out "$p=EPERM"
	done
	for c in open_tree_attr listmount statmount; do
		expect_out "omnibox-run: refused syscall $c (pid "
	done
	expect_out "omnibox-run: refused syscall 1000 [x86_64] (pid "
	expect_out "the seccomp filter refused 4 system calls"
}

# omnibox-init alone under a bare bwrap, its filter on descriptor 9 (FILE), no
# ready socket and so no listener: it must load the filter as emitted, its
# refusals EPERM, or stop before SCRIPT runs; $out, $rc.
init_filtered() {
	out=$(as_user sh -c 'exec 9<"$1"; shift; exec "$@"' _ "$1" bwrap --ro-bind / / \
		--dev /dev --proc /proc --bind "$WS" "$WS" --unshare-pid --die-with-parent -- \
		"$TB/omnibox-init" --seccomp-fd 9 --exec /bin/sh -- sh -c "$2" 2>&1)
	rc=$?
}

t_seccomp_init_alone() {
	name="seccomp: without omnibox-run to report to, omnibox-init's filter refuses with EPERM"
	cp "$B/gen/seccomp.bpf" "$U/seccomp.bpf"
	chmod 644 "$U/seccomp.bpf"
	init_filtered "$U/seccomp.bpf" 'echo "mount=$(probe mount) unshare=$(probe unshare-user)"'
	expect_rc 0
	expect_out "mount=EPERM unshare=EPERM"
	name="seccomp: a filter omnibox-init cannot load stops the launch before the command"
	printf 'abc' >"$U/broken.bpf"
	chmod 644 "$U/broken.bpf"
	init_filtered "$U/broken.bpf" 'echo command-ran'
	expect_rc 125
	expect_out "not a program; nothing ran"
	expect_no_out "command-ran"
	name="seccomp: --seccomp-fd naming no usable descriptor stops the launch too"
	for fd in 0 x; do
		out=$(as_user bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid --die-with-parent \
			-- "$TB/omnibox-init" --seccomp-fd $fd --exec /bin/sh -- sh -c 'echo command-ran' 2>&1)
		rc=$?
		expect_rc 125
		expect_no_out "command-ran"
	done
	rm -f "$U/seccomp.bpf" "$U/broken.bpf"
}

# The artifact --emit=seccomp-bpf writes is the standalone filter, whoever
# loads it: here bwrap itself (--seccomp), with no omnibox-init and so no
# listener.  A report nobody answers would fail with ENOSYS; each refusal
# must fail with EPERM, clone3 with ENOSYS, and ordinary calls must work.
t_seccomp_standalone() {
	name="seccomp: --emit=seccomp-bpf writes the filter"
	rm -f "$U/f.bpf"
	out=$(as_user "$TB/omnibox-compile" --quiet --target=linux --emit=seccomp-bpf \
		-o "$U/f.bpf" "$P/default.yaml" 2>&1)
	rc=$?
	expect_rc 0
	refused="mount unshare-user clone-newuser ptrace-traceme keyctl tiocsti open-tree-attr future-syscall"
	name="seccomp: the emitted filter under bwrap --seccomp refuses with EPERM, clone3 with ENOSYS"
	out=$(as_user sh -c 'exec 3<"$1"; shift; exec "$@"' _ "$U/f.bpf" bwrap --ro-bind / / \
		--dev /dev --proc /proc --seccomp 3 -- \
		sh -c 'for p in $1 clone3 fork socket-inet; do echo "$p=$(probe $p)"; done' _ "$refused" 2>&1)
	rc=$?
	expect_rc 0
	for p in $refused; do
		expect_out "$p=EPERM"
	done
	expect_out "clone3=ENOSYS"
	expect_out "fork=ok"
	expect_out "socket-inet=ok"
	rm -f "$U/f.bpf"
}

# The kernel gives no second listener while a filter above holds one (as a
# container runtime's may): omnibox-init then loads the filter as emitted, its
# refusals EPERM, and omnibox-run says the refusals go uncounted.
t_seccomp_listener_taken() {
	cat >"$U/taken.py" <<-'EOF'
	import ctypes, os, platform, sys
	class Insn(ctypes.Structure):
	    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8),
	                ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]
	class Prog(ctypes.Structure):
	    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(Insn))]
	libc = ctypes.CDLL(None, use_errno=True)
	SYS_seccomp = {"x86_64": 317, "aarch64": 277}[platform.machine()]
	allow = (Insn * 1)(Insn(0x06, 0, 0, 0x7fff0000))  # ret SECCOMP_RET_ALLOW
	prog = Prog(1, allow)
	if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
	    sys.exit("PR_SET_NO_NEW_PRIVS: errno %d" % ctypes.get_errno())
	# SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER
	fd = libc.syscall(SYS_seccomp, 1, 8, ctypes.byref(prog))
	if fd < 0:
	    sys.exit("seccomp: errno %d" % ctypes.get_errno())
	os.set_inheritable(fd, True)  # held open through exec: the listener stays taken
	os.execv(sys.argv[1], sys.argv[1:])
	EOF
	chmod 644 "$U/taken.py"
	name="seccomp: with a listener above omnibox's, refusals still fail with EPERM, uncounted, and it says so"
	out=$(cd "$WS" && as_user timeout 120 /usr/bin/python3 "$U/taken.py" "$TB/omnibox-run" -v \
		"$P/default.yaml" -- sh -c 'echo "mount=$(probe mount) unshare=$(probe unshare-user)"' 2>&1)
	rc=$?
	expect_rc 0
	expect_out "mount=EPERM unshare=EPERM"
	expect_out "syscall refusals will not be counted"
	expect_no_out "refused syscall"
	expect_no_out "seccomp filter refused"
	name="seccomp: -q silences the uncounted-refusals warning"
	out=$(cd "$WS" && as_user timeout 120 /usr/bin/python3 "$U/taken.py" "$TB/omnibox-run" -q \
		"$P/default.yaml" -- sh -c 'echo "mount=$(probe mount)"' 2>&1)
	expect_out "mount=EPERM"
	expect_no_out "warning"
	rm -f "$U/taken.py"
}

# ---- terminal escapes in what the next launch prints --------------------------

# The agent names directories and a link target so that the next launch's
# warning and refusal carry terminal sequences: OSC 52 (set the clipboard),
# CSI 2J (erase), a line break before a forged omnibox-run line, and a raw
# C1 CSI byte.  The user's terminal must receive none of them, only their
# escaped forms.
t_terminal_escapes() {
	policy escapes-scan <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    cwd_hidden_scan_recursive: true
	    cwd_hidden_scan_max_entries: 4
	EOF
	esc=$(printf '\033')
	bel=$(printf '\007')
	csi=$(printf '\233')
	rm -rf "$WS/docs"
	# shellcheck disable=SC2016
	sbx write-ws sh -c '
		for n in "o$(printf "\033]52;c;cHduZWQ=\007")" "c$(printf "\033[2J")" \
			"n$(printf "\nomnibox-run: forged all clear")" "r$(printf "\233")x"; do
			mkdir -p "e/$n/.x" && : >"e/$n/.x/f" || exit 1
		done
		ln -s "/tmp/$(printf "\033]52;c;cHduZWQ=\007\033[2J\nomnibox-run: forged link\233")" docs &&
		echo planted'
	expect_out "planted"
	# no_raw WHAT: $out holds no terminal sequence and no forged line.
	no_raw() {
		name="$1: no raw ESC, BEL or C1 CSI byte, no forged line"
		expect_no_out "$esc"
		expect_no_out "$bel"
		expect_no_out "$csi"
		tests=$((tests + 1))
		if printf '%s\n' "$out" | grep -q '^omnibox-run: forged'; then
			fail "a forged line starts a line"
		fi
	}
	name="the refusal of the link shows its target escaped"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" "$P/write-docs.yaml" -- true 2>&1)
	rc=$?
	expect_rc 125
	expect_out 'goes through the symlink'
	expect_out '/tmp/\x1b]52;c;cHduZWQ=\x07\x1b[2J\nomnibox-run: forged link\x9b'
	no_raw "the refusal"
	name="--dry-run refuses the link with its target escaped"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --dry-run "$P/write-docs.yaml" -- true 2>&1)
	rc=$?
	expect_rc 125
	expect_out '\x1b]52;c;cHduZWQ=\x07\x1b[2J\nomnibox-run: forged link\x9b'
	no_raw "--dry-run's refusal"
	name="--resolve refuses the link with its target escaped"
	out=$(cd "$WS" && as_user "$TB/omnibox-compile" --resolve "$P/write-docs.yaml" 2>&1)
	rc=$?
	expect_rc 65
	expect_out '\x1b]52;c;cHduZWQ=\x07\x1b[2J\nomnibox-run: forged link\x9b'
	no_raw "--resolve's refusal"
	rm -f "$WS/docs"
	mkdir -p "$WS/docs"
	[ "$who" = nobody ] && chown nobody:nogroup "$WS/docs"

	name="the dotfile scan's warning shows directory names escaped"
	# Run in e/: its four directories are listed, what they hold is not.
	out=$(cd "$WS/e" && as_user "$TB/omnibox-run" "$P/escapes-scan.yaml" -- true 2>&1)
	rc=$?
	expect_rc 0
	expect_out 'dotfile scan stopped'
	expect_out "$WS/e/o\\x1b]52;c;cHduZWQ=\\x07"
	expect_out "$WS/e/c\\x1b[2J"
	expect_out "$WS/e/n\\nomnibox-run: forged all clear"
	expect_out "$WS/e/r\\x9bx"
	no_raw "the scan's warning"
	name="--dry-run shows the scan's masks and warning escaped"
	out=$(cd "$WS/e" && as_user "$TB/omnibox-run" --dry-run "$P/escapes-scan.yaml" -- true 2>&1)
	rc=$?
	expect_rc 0
	expect_out "$WS/e/n\\nomnibox-run: forged all clear"
	expect_out "$WS/e/r\\x9bx"
	no_raw "--dry-run"
	rm -rf "$WS/e"
}

# ---- the egress log --------------------------------------------------------------

# The egress log lies where others may write ($TMPDIR for an interactive
# launch, or wherever --egress-log names): a link planted at its name must
# not be written through, and a file of someone else is not appended to.
# An existing log of the user's own still is.
t_egress_log_link() {
	L=$U/logtmp
	mkdir -p "$L"
	chmod 1777 "$L"
	: >"$O/victim.log"
	chmod 666 "$O/victim.log"
	ln -s "$O/victim.log" "$L/egress.log"
	name="--egress-log naming a planted link is refused, not written through"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --egress-log="$L/egress.log" "$P/egress.yaml" \
		-- sh -c 'echo command-ran' 2>&1)
	rc=$?
	expect_rc 125
	expect_out "--egress-log $L/egress.log is a symbolic link"
	expect_no_out "command-ran"
	tests=$((tests + 1))
	[ ! -s "$O/victim.log" ] || fail "the log was written through the link"
	name="--egress-log naming an existing log of the user's appends to it"
	rm -f "$L/egress.log"
	echo "earlier line" >"$L/mine.log"
	[ "$who" = nobody ] && chown nobody:nogroup "$L/mine.log"
	out=$(cd "$WS" && as_user "$TB/omnibox-run" --egress-log="$L/mine.log" "$P/egress.yaml" \
		-- sh -c 'echo command-ran' 2>&1)
	rc=$?
	expect_rc 0
	expect_out "command-ran"
	expect_eq "the log's first line" "$(head -n 1 "$L/mine.log")" "earlier line"
	rm -rf "$L" "$O/victim.log"
}

# ---- copy_on_write gives no more than the user could read in place -----------

t_cow_owner() {
	name="copy_on_write: another user's mode-0600 file and 0700 directory stay unreadable in the copy"
	if [ "$who" = nobody ]; then
		# As nobody, omnibox-run cannot read another user's 0600 file itself,
		# so its copy has nothing to give away: the move exists as root only.
		echo "SKIP [$who] $name: only root's copy can read another user's file"
		skips=$((skips + 1))
		return
	fi
	C=$WS/cowtree
	rm -rf "$C"
	mkdir -p "$C/otherdir" "$C/owndir"
	echo "own-content" >"$C/own.txt"
	echo "own-inner" >"$C/owndir/f"
	echo "other-secret" >"$C/other.txt"
	echo "other-readable" >"$C/otherread.txt"
	echo "inner-secret" >"$C/otherdir/inner.txt"
	chmod 600 "$C/own.txt" "$C/other.txt"
	chmod 644 "$C/otherread.txt" "$C/otherdir/inner.txt"
	chmod 700 "$C/otherdir"
	chown 4321:4321 "$C/other.txt" "$C/otherread.txt" "$C/otherdir" "$C/otherdir/inner.txt"
	policy cow-owner <<-EOF
	os_env:
	  sandbox:
	    write_paths: [{path: cowtree, copy_on_write: true}]
	EOF
	sbx cow-owner sh -c 'cd cowtree; cat other.txt; cat otherdir/inner.txt; ls otherdir | sed s/^/listed:/;
		cat otherread.txt; cat own.txt; echo more >>own.txt && echo own-writable;
		cat owndir/f; echo new >owndir/g && echo own-dir-writable; ls -A; echo end'
	expect_out "end"
	expect_no_out "other-secret"
	expect_no_out "inner-secret"
	expect_no_out "listed:"
	expect_out "other-readable"
	expect_out "own-content"
	expect_out "own-writable"
	expect_out "own-inner"
	expect_out "own-dir-writable"
	# The names stay, as the agent would see them in place.
	expect_out "other.txt"
	expect_out "otherdir"
	tests=$((tests + 1))
	[ "$(cat "$C/own.txt")" = own-content ] && [ ! -e "$C/owndir/g" ] ||
		fail "the host's cowtree changed"
	rm -rf "$C"
}

# ---- what the agent leaves in the scratch dir goes, however it is shaped -------

# The agent's tree in its $TMPDIR: 5,000 levels (more than the launch's
# descriptor limit), 2,000 directories wide, a closed directory, links to the
# host outside.  Run under a limit of 1,024 descriptors, soft and hard.
SCRATCH_TREE='W=$PWD && cd "$TMPDIR" && probe tree . 5000 2000 "$0/data" >/dev/null &&
ln -s "$0/secret.txt" secret && ln -s "$0" outside && mkdir -p closed/in &&
echo x >closed/in/f && chmod 0 closed/in closed && echo built'

# scratch_run DIR CMD...: omnibox-run CMD... with TMPDIR=DIR and 1,024 descriptors.
scratch_run() {
	_tmp=$1
	shift
	as_user sh -c 'ulimit -n 1024 && export TMPDIR="$0" && exec "$@"' "$_tmp" "$@"
}

# scratch_gone DIR: up to 30 s for DIR to hold nothing (the cleanup may be a
# process of its own); false if something is still there.
scratch_gone() {
	for _ in $(seq 300); do
		[ -z "$(ls -A "$1" 2>/dev/null)" ] && return 0
		sleep 0.1
	done
	return 1
}

# The host's files the agent's links name are still there, whole.
expect_outside_intact() {
	tests=$((tests + 1))
	[ "$(cat "$O/secret.txt" 2>/dev/null)" = "host-secret-$who" ] &&
		[ "$(cat "$O/data/key" 2>/dev/null)" = "host-data-key" ] ||
		fail "a host file a link in the scratch dir named was removed"
}

t_scratch_tree() {
	name="a scratch tree deeper than the descriptor limit, closed and linked out, is removed after the launch"
	S=$U/scratch-tree
	rm -rf "$S"
	mkdir -p "$S"
	[ "$who" = nobody ] && chown nobody:nogroup "$S"
	out=$(cd "$WS" && scratch_run "$S" "$TB/omnibox-run" -q "$P/write-ws.yaml" -- \
		sh -c "$SCRATCH_TREE" "$O" 2>&1)
	rc=$?
	expect_out "built"
	tests=$((tests + 1))
	scratch_gone "$S" || fail "the scratch dir is still on the host: $(ls -A "$S" | head -3 | tr '\n' ' ')"
	expect_outside_intact
	chmod -R u+rwx "$S" 2>/dev/null
	rm -rf "$S"
}

t_scratch_tree_killed() {
	name="the scratch tree goes even when omnibox-run is killed during the launch"
	S=$U/scratch-killed
	rm -rf "$S" "$WS/scratch-built"
	mkdir -p "$S"
	[ "$who" = nobody ] && chown nobody:nogroup "$S"
	(cd "$WS" && scratch_run "$S" "$TB/omnibox-run" -q "$P/write-ws.yaml" -- \
		sh -c "$SCRATCH_TREE"' >"$W/scratch-built" && exec sleep 120' "$O") >"$U/killed.out" 2>&1 &
	bg=$!
	pids="$pids $bg"
	for _ in $(seq 600); do
		grep -q built "$WS/scratch-built" 2>/dev/null && break
		sleep 0.1
	done
	out=$(cat "$WS/scratch-built" "$U/killed.out" 2>/dev/null)
	expect_out "built"
	run_pid=$(main_run_pid "$P/write-ws.yaml")
	tests=$((tests + 1))
	if [ -z "$run_pid" ]; then
		fail "omnibox-run did not start"
		return
	fi
	kill -KILL "$run_pid"
	wait "$bg" 2>/dev/null
	tests=$((tests + 1))
	scratch_gone "$S" || fail "the scratch dir is still on the host: $(ls -A "$S" | head -3 | tr '\n' ' ')"
	expect_outside_intact
	chmod -R u+rwx "$S" 2>/dev/null
	rm -rf "$S" "$WS/scratch-built"
}

# The dotfile scan's memo (runtime/resolve/scan_memo.h): what the agent does
# between two launches, to a workspace whose listings were kept and to the
# memo file itself (a policy lets it write the user's cache), never keeps a
# dotfile from being hidden at the next launch.
t_scan_memo() {
	name="the scan's memo: dotfiles made behind a reset mtime and a replayed or forged memo are hidden at the next launch"
	rm -rf "$WS/mm" "$H/.cache"
	mkdir -m 700 "$H/.cache"
	[ "$who" = nobody ] && chown nobody:nogroup "$H/.cache"
	for k in $(seq 20); do
		mkdir -p "$WS/mm/d$k"
		: >"$WS/mm/d$k/file"
	done
	[ "$who" = nobody ] && chown -R nobody:nogroup "$WS/mm"
	policy memo <<-EOF
	os_env:
	  sandbox:
	    write_paths: [".", "~/.cache"]
	    cwd_hidden_scan_recursive: true
	EOF
	# A second old: the listings are kept (SCAN_MEMO_SETTLED_NS).
	sleep 1.2
	out=$(cd "$WS/mm" && as_user "$TB/omnibox-run" -q "$P/memo.yaml" -- true 2>&1)
	memo=$(ls "$H/.cache/omnibox/"scan2-dotfiles-* 2>/dev/null | head -n 1)
	tests=$((tests + 1))
	if [ ! -f "$memo" ]; then
		fail "no memo was kept in $H/.cache/omnibox"
		return
	fi
	cp "$memo" "$WS/mm/d20/memo.old"
	[ "$who" = nobody ] && chown nobody:nogroup "$WS/mm/d20/memo.old"
	sleep 1.2
	# In the sandbox: secrets made in kept directories, their mtimes set
	# back; the memo from before put back; the keyring's key asked for.
	out=$(cd "$WS/mm" && as_user "$TB/omnibox-run" -q "$P/memo.yaml" -- sh -c '
		echo MEMO_secret_made >d3/.env
		echo MEMO_secret_renamed >d5/file && mv d5/file d5/.netrc
		touch -d 2001-01-01 d3 d5
		cp d20/memo.old "$0"
		python3 -c "import ctypes; c = ctypes.CDLL(None, use_errno=True); \
			print(\"KEY_FOUND\" if c.syscall(250, 10, -4, b\"user\", b\"omnibox:scan-memo\", 0) >= 0 \
			else \"no key: errno %d\" % ctypes.get_errno())"' "$memo" 2>&1)
	expect_no_out KEY_FOUND
	expect_out "no key: errno"
	out=$(cd "$WS/mm" && as_user "$TB/omnibox-run" -q "$P/memo.yaml" -- \
		sh -c 'cat d3/.env d5/.netrc; ls -a d3 d5' 2>&1)
	expect_no_out MEMO_secret
	expect_out ".netrc"
	# A forged memo: the old one with a listing's bytes changed.
	out=$(cd "$WS/mm" && as_user "$TB/omnibox-run" -q "$P/memo.yaml" -- sh -c '
		printf "\\377\\377\\377\\377" | dd of="$0" bs=1 seek=200 conv=notrunc 2>/dev/null
		echo MEMO_secret_late >d7/.env; touch -d 2001-01-01 d7' "$memo" 2>&1)
	out=$(cd "$WS/mm" && as_user "$TB/omnibox-run" -q "$P/memo.yaml" -- \
		sh -c 'cat d3/.env d5/.netrc d7/.env; echo read-done' 2>&1)
	expect_out read-done
	expect_no_out MEMO_secret
	rm -rf "$WS/mm" "$H/.cache"
}

run_all() {
	setup_user
	# ONLY="t_a t_b": just those tests.
	if [ -n "${ONLY:-}" ]; then
		for t in $ONLY; do "$t"; done
		return
	fi
	t_planted_grant_link
	t_race
	t_inherited_fds
	t_forged_end
	t_flood
	t_placeholder_parent
	t_abstract_socket
	t_terminal_cwd
	t_landlock_layer
	t_interpreter
	t_bwrap_on_path
	t_mask_rename
	t_mask_check
	t_grant_check
	t_mask_race
	t_scan_race
	t_scan_rename
	t_hardlink
	t_cross_policy_links
	t_unreadable
	t_mask_created_later
	t_seccomp_reports
	t_seccomp_new_calls
	t_seccomp_init_alone
	t_seccomp_standalone
	t_seccomp_listener_taken
	t_terminal_escapes
	t_egress_log_link
	t_scratch_tree
	t_scratch_tree_killed
	t_cow_owner
	t_scan_memo
}

if [ "$(id -u)" != 0 ]; then
	echo "attacks: must run as root, to test both as root and as nobody" >&2
	exit 1
fi
for who in root nobody; do
	run_all
done
echo "attacks: $tests checks, $failures failed, $skips skipped"
[ "$failures" = 0 ]
