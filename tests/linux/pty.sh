#!/bin/sh
# pty.sh BUILD_DIR - an interactive launch, driven through tmux as a user
# types: job control, Ctrl-C, Ctrl-Z, bg/fg, a resize, the exit status, and
# the user's terminal mode restored afterwards; as root and as nobody.
set -u

B=$(cd "$1" && pwd)
T=$(mktemp -d /tmp/omnibox-pty.XXXXXX)
chmod 755 "$T"
# A server of its own for each session: a new session must never reach one
# that kill-server is still taking down.
n_sock=0
sock=$T/tmux.0.sock
new_server() {
	n_sock=$((n_sock + 1))
	sock=$T/tmux.$n_sock.sock
}
trap 'for s in "$T"/tmux.*.sock; do tmux -S "$s" kill-server 2>/dev/null; done; rm -rf "$T"' EXIT INT TERM

. "$(dirname "$0")/../lib.sh"

if ! command -v tmux >/dev/null; then
	echo "pty: SKIP: tmux is not installed (Debian package tmux)"
	exit 0
fi
cp "$B/omnibox-run" "$B/omnibox-init" "$T/"
mkdir -p "$T/ws"
chmod 777 "$T/ws"
chmod 755 "$T/omnibox-run" "$T/omnibox-init"
printf 'os_env:\n  sandbox:\n    write_paths: [.]\n' >"$T/agent.yaml"
chmod 644 "$T/agent.yaml"

# keys ARGS...: type into the session, then give it a moment.
keys() {
	tmux -S "$sock" send-keys -t t "$@"
	sleep 0.4
}

# screen: what the session shows now.
screen() {
	tmux -S "$sock" capture-pane -t t -p -S -100
}

# wait_for TEXT: until the screen shows it (15 s at most: the sanitizer builds start slowly).
wait_for() {
	i=0
	while [ $i -lt 150 ]; do
		screen | grep -q -- "$1" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

run_as() {
	who=$1
	shift
	if [ "$who" = root ]; then
		echo "$@"
	else
		echo "runuser -u nobody -- $*"
	fi
}

scenario() {
	who=$1
	rm -f "$T/rc" "$T/stty.before" "$T/stty.after"
	cmd=$(run_as "$who" "env -i PATH=/usr/bin:/bin HOME=$T/ws TERM=screen $T/omnibox-run -q $T/agent.yaml -- bash --norc --noprofile -i")
	new_server
	tmux -S "$sock" new-session -d -s t -x 120 -y 40 \
		"cd $T/ws; stty -g >$T/stty.before; $cmd; echo \$? >$T/rc; stty -g >$T/stty.after; sleep 60"
	name="a shell inside has a prompt and job control"
	tests=$((tests + 1))
	wait_for 'bash-[0-9.]*[$#]' || { out=$(screen); fail "no prompt"; return; }
	out=$(screen)
	expect_no_out "no job control"
	expect_no_out "cannot set terminal process group"
	keys 'sleep 3001 &' Enter
	keys 'jobs' Enter
	wait_for 'Running *sleep 3001 &'
	keys 'fg' Enter
	keys C-c
	name="Ctrl-C ends the foreground job, Ctrl-Z stops one, bg resumes it"
	keys 'sleep 3002' Enter
	keys C-z
	wait_for 'Stopped *sleep 3002'
	keys 'bg' Enter
	keys 'jobs; echo jobs-done' Enter
	wait_for 'jobs-done'
	out=$(screen)
	expect_out "Running                 sleep 3002 &"
	tests=$((tests + 1))
	gone 'sleep 3001$' || fail "sleep 3001 still runs after Ctrl-C"
	name="a resize reaches the sandbox's terminal"
	tmux -S "$sock" resize-window -t t -x 100 -y 30
	sleep 0.5
	keys 'stty size' Enter
	wait_for '^30 100'
	out=$(screen)
	expect_out "30 100"
	name="the exit status comes back and the user's terminal is restored"
	keys 'kill %1; exit 7' Enter
	i=0
	while [ ! -s "$T/stty.after" ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	expect_eq "exit status" "$(cat "$T/rc" 2>/dev/null)" 7
	expect_eq "terminal mode (stty -g) after the run" "$(cat "$T/stty.after" 2>/dev/null)" \
		"$(cat "$T/stty.before" 2>/dev/null)"
	tests=$((tests + 1))
	gone 'sleep 3002$' || fail "sleep 3002 outlived the sandbox"
	tmux -S "$sock" kill-server 2>/dev/null

	name="--no-pty keeps the terminal out: no job control"
	rm -f "$T/rc"
	cmd=$(run_as "$who" "env -i PATH=/usr/bin:/bin HOME=$T/ws TERM=screen $T/omnibox-run -q --no-pty $T/agent.yaml -- bash --norc --noprofile -i")
	new_server
	tmux -S "$sock" new-session -d -s t -x 120 -y 40 "cd $T/ws; $cmd; echo \$? >$T/rc; sleep 60"
	tests=$((tests + 1))
	wait_for 'no job control' || { out=$(screen); fail "bash found job control without a pty"; }
	keys 'exit 0' Enter
	tmux -S "$sock" kill-server 2>/dev/null
}

for w in root nobody; do
	scenario "$w"
done
echo "pty: $tests checks, $failures failed, $skips skipped"
[ "$failures" = 0 ]
