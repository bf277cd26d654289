#!/bin/sh
# pty.sh BUILD_DIR - an interactive launch, driven through tmux as a user
# types: job control, Ctrl-C, Ctrl-Z, bg/fg, a resize, the exit status, and
# the user's terminal mode restored afterwards; then less and vim, full
# screen, through the sandbox's terminal; as root and as nobody.
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
cp "$B/omnibox-run" "$B/omnibox-init" "$B/omnibox-proxy" "$T/"
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
	name="tty names the sandbox's own terminal, the one on standard input, not the user's"
	keys 'echo "tty=$(tty) dev=$(stat -L -c %t:%T "$(tty)") in=$(stat -L -c %t:%T /dev/stdin)"' Enter
	wait_for '^tty=/dev/[a-z]'
	line=$(screen | grep '^tty=' | tail -n 1)
	pane=$(stat -L -c %t:%T "$(tmux -S "$sock" display -p -t t '#{pane_tty}')")
	tests=$((tests + 1))
	case $line in
	"tty=/dev/console dev="*) ;;
	*) fail "tty printed: $line" ;;
	esac
	dev=${line#* dev=}
	dev=${dev%% *}
	expect_eq "the device tty names and standard input's" "$dev" "${line##* in=}"
	tests=$((tests + 1))
	[ "$dev" != "$pane" ] || fail "the sandbox's tty is the user's terminal ($pane)"
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

# ---- full-screen programs: less and vim, through the sandbox's terminal ----

# visible: the screen as shown now, without the scrollback: what a
# full-screen program drew, one line per row.
visible() {
	tmux -S "$sock" capture-pane -t t -p
}

# shows LINE: a row of the screen reads exactly LINE.
shows() {
	visible | grep -qx -- "$1"
}

# row N: the screen's row N (from 1), or its last non-empty one for N=last.
row() {
	if [ "$1" = last ]; then
		visible | grep -v '^$' | tail -n 1
	else
		visible | sed -n "${1}p"
	fi
}

# until_ok COND: until the shell condition COND holds (15 s at most), polled
# since a full-screen program draws in pieces; false if it never did.
until_ok() {
	i=0
	while [ $i -lt 150 ]; do
		eval "$1" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# check COND WHY: a check that COND comes to hold; else a failure, with the
# screen.
check() {
	tests=$((tests + 1))
	until_ok "$1" || {
		out=$(visible)
		fail "$2"
	}
}

# The shell's prompt alone on a row (used by the conditions, which are
# eval'd: hence their single quotes).
# shellcheck disable=SC2034
prompt_re='^bash-[0-9.]*[$#]$'

# shell_start WHO: a session of its own, 120x40, whose shell is a sandboxed
# interactive bash with a terminal of its own; the user's terminal mode is
# kept in $T/stty.before and, once omnibox-run is done, $T/stty.after.
# False if no prompt came.
shell_start() {
	rm -f "$T/rc" "$T/stty.before" "$T/stty.after"
	cmd=$(run_as "$1" "env -i PATH=/usr/bin:/bin HOME=$T/ws TERM=screen $T/omnibox-run -q $T/agent.yaml -- bash --norc --noprofile -i")
	new_server
	tmux -S "$sock" new-session -d -s t -x 120 -y 40 \
		"cd $T/ws; stty -g >$T/stty.before; $cmd; echo \$? >$T/rc; stty -g >$T/stty.after; sleep 60"
	tests=$((tests + 1))
	until_ok 'row last | grep -q "$prompt_re"' || {
		out=$(screen)
		fail "no prompt"
		tmux -S "$sock" kill-server 2>/dev/null
		return 1
	}
}

# shell_back TAG: the program has quit: the prompt is back on the last row,
# the shell reads what is typed, and the sandbox's terminal mode is what it
# was before (the shell kept it in TAG.before, in the workspace).
shell_back() {
	check 'row last | grep -q "$prompt_re"' "the prompt did not come back"
	keys "echo ok-\$((6*7)); stty -g >$1.after" Enter
	check 'shows ok-42' "the shell does not answer after it"
	tests=$((tests + 1))
	until_ok "[ -s '$T/ws/$1.after' ]" || {
		out=$(screen)
		fail "no stty -g after it"
	}
	expect_eq "the sandbox's terminal mode (stty -g) after it" \
		"$(cat "$T/ws/$1.after" 2>/dev/null)" "$(cat "$T/ws/$1.before" 2>/dev/null)"
}

# shell_end STATUS: exit the shell with STATUS; it comes back from
# omnibox-run, and the user's terminal mode is what it was before.
shell_end() {
	keys "exit $1" Enter
	until_ok '[ -s "$T/stty.after" ]'
	expect_eq "exit status" "$(cat "$T/rc" 2>/dev/null)" "$1"
	expect_eq "the user's terminal mode (stty -g) after the run" \
		"$(cat "$T/stty.after" 2>/dev/null)" "$(cat "$T/stty.before" 2>/dev/null)"
	tmux -S "$sock" kill-server 2>/dev/null
}

# A file longer than any screen here, for less.
seq 1 500 >"$T/ws/lines"
chmod 644 "$T/ws/lines"

# The vim the system has: the sandbox sees the same /usr.
vim=
for v in vim vim.tiny vi; do
	if command -v "$v" >/dev/null; then
		vim=$v
		break
	fi
done

less_case() {
	who=$1
	rm -f "$T/ws/less.before" "$T/ws/less.after"
	name="less: the sandbox's terminal is described (TERM, terminfo)"
	shell_start "$who" || return
	# TERM came through, and its terminfo entry is readable inside: else
	# less and vim would run on a dumb terminal, or not at all.
	keys "echo term=\$TERM; infocmp >/dev/null && echo terminfo-\$((40+2)); stty -g >less.before" Enter
	check 'shows term=screen' "TERM is not screen inside"
	check 'shows terminfo-42' "the terminfo entry of TERM=screen is not readable in the sandbox"

	name="less shows the first screen of a long file"
	keys "LESSHISTFILE=- less lines" Enter
	# 40 rows: lines 1 to 39, and the prompt (the file's name) on the last.
	check 'shows 1 && shows 39 && ! shows 40 && ! shows 200 && [ "$(row 40)" = lines ]' \
		"not lines 1-39 and the file's name below"
	out=$(visible)
	expect_no_out "not fully functional"
	name="less: space shows the next screen"
	keys Space
	check '[ "$(row 1)" = 40 ] && shows 78 && ! shows 79' "not lines 40-78"
	name="less: G shows the end"
	keys G
	check 'shows 500 && shows "(END)" && ! shows 400' "not the end (500, (END))"
	name="less: /250 finds 250"
	keys g
	check '[ "$(row 1)" = 1 ]' "g did not go back to the top"
	keys /250 Enter
	check '[ "$(row 1)" = 250 ] && shows 288' "the search did not bring 250 to the top"

	# Job control over a full-screen program: only a terminal of the
	# sandbox's own has it (--no-pty hands the user's through, where less
	# still pages but Ctrl-Z cannot stop it).
	name="less: Ctrl-Z stops it, fg brings it back"
	keys C-z
	check 'visible | grep -q "Stopped *LESSHISTFILE=- less lines"' "Ctrl-Z did not stop less"
	keys fg Enter
	check '[ "$(row 1)" = 250 ] && shows 288 && [ "$(row 40)" = : ]' \
		"less did not draw its screen again after fg"

	name="less: a resize is picked up"
	tmux -S "$sock" resize-window -t t -x 100 -y 30
	# 30 rows: less draws 29 lines (250-278) and its prompt on row 30; one
	# that still counted 40 would leave 279 there.
	check '[ "$(row 1)" = 250 ] && shows 278 && ! shows 279 && [ "$(row 30)" = : ]' \
		"less did not redraw for 30 rows"
	# And pages by 29 now: from the top, space brings 30 (not 40) to row 1.
	keys g
	check '[ "$(row 1)" = 1 ] && shows 29 && ! shows 30 && [ "$(row 30)" = : ]' \
		"g after the resize did not show lines 1-29"
	keys Space
	check '[ "$(row 1)" = 30 ] && shows 58 && ! shows 59' \
		"space after the resize did not show lines 30-58"

	name="less: q quits, and the shell and its terminal are as before"
	keys q
	shell_back less
	name="less: the run ends and the user's terminal is restored"
	shell_end 3
}

# The sanity check of the Ctrl-Z one above: with --no-pty the sandbox gets
# the user's terminal itself, outside its session, where less still pages
# but Ctrl-Z is only a key to it: it must not stop, and goes on answering.
less_no_pty() {
	who=$1
	name="--no-pty: Ctrl-Z does not stop less"
	cmd=$(run_as "$who" "env -i PATH=/usr/bin:/bin HOME=$T/ws TERM=screen $T/omnibox-run -q --no-pty $T/agent.yaml -- bash --norc --noprofile -i")
	new_server
	tmux -S "$sock" new-session -d -s t -x 120 -y 40 "cd $T/ws; $cmd; sleep 60"
	tests=$((tests + 1))
	until_ok 'row last | grep -q "$prompt_re"' || fail "no prompt"
	keys "LESSHISTFILE=- less lines" Enter
	check 'shows 39 && [ "$(row 40)" = lines ]' "less did not page without a pty"
	keys C-z
	keys G
	check 'shows 500 && shows "(END)"' "less stopped answering after Ctrl-Z"
	out=$(visible)
	expect_no_out "Stopped"
	keys q
	keys 'exit 0' Enter
	tmux -S "$sock" kill-server 2>/dev/null
}

vim_case() {
	who=$1
	rm -f "$T/ws/vim.before" "$T/ws/vim.after" "$T/ws/note.txt"
	name="vim: a shell to run it in"
	shell_start "$who" || return
	keys "stty -g >vim.before" Enter
	name="$vim opens a new file in the workspace"
	# No vimrc, no viminfo, no swap file: nothing written but the file.
	keys "$vim -u NONE -N -i NONE -n note.txt" Enter
	check 'row 40 | grep -q "^\"note.txt\" \[New"' "no '\"note.txt\" [New' on the last row"
	out=$(visible)
	expect_no_out "E437"
	expect_no_out "E558"
	expect_no_out "not found in terminfo"
	name="$vim: i, text, Escape"
	keys i
	check 'row 40 | grep -q -- "-- INSERT --"' "no insert mode"
	keys "hello from the sandbox"
	check '[ "$(row 1)" = "hello from the sandbox" ]' "the text is not on row 1"
	keys Escape
	check '! row 40 | grep -q -- "-- INSERT --"' "Escape did not leave insert mode"

	name="$vim sees a resize"
	tmux -S "$sock" resize-window -t t -x 132 -y 50
	# Its command line is the new last row, and it answers with the new size.
	keys ":set lines?" Enter
	check '[ "$(row 50)" = "  lines=50" ]' "not 'lines=50' on row 50"
	keys ":set columns?" Enter
	check '[ "$(row 50)" = "  columns=132" ]' "not 'columns=132' on row 50"

	name="$vim: :wq writes the file, seen from outside the sandbox"
	keys ":wq" Enter
	check '[ "$(cat "$T/ws/note.txt" 2>/dev/null)" = "hello from the sandbox" ]' \
		"$T/ws/note.txt is not 'hello from the sandbox'"
	name="$vim: the shell and its terminal are as before"
	shell_back vim
	name="$vim: the run ends and the user's terminal is restored"
	shell_end 4
}

for w in root nobody; do
	scenario "$w"
	less_case "$w"
	less_no_pty "$w"
	if [ -n "$vim" ]; then
		vim_case "$w"
	else
		echo "pty: SKIP: no vim (Debian package vim or vim-tiny)"
		skips=$((skips + 1))
	fi
done
echo "pty: $tests checks, $failures failed, $skips skipped"
[ "$failures" = 0 ]
