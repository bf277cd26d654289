#!/bin/sh
# leftovers.sh BUILD_DIR - the host never runs what the agent wrote.
#
# Each test lets the agent, in a real launch, plant what the host's own
# tools read later: git's commondir, config, hooks, alternates, a nested
# repository behind a gitlink, a hooksPath or included file in the tree, a
# .git file, shell start-up files and PATH directories of a writable home.
# Then the user's ordinary commands run on the host, outside any sandbox
# (git status, git commit, git add through a filter, a login shell), and
# the test checks that nothing of the agent's ran: every command the agent
# plants touches a marker file.  As root and as nobody.
set -u

B=$(cd "$1" && pwd)
T=$(mktemp -d /tmp/omnibox-leftovers.XXXXXX)
chmod 755 "$T"
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	mountpoint -q "$T/btrfs" 2>/dev/null && umount "$T/btrfs"
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

. "$(dirname "$0")/../lib.sh"

# Where every planted command leaves its mark (writable by both users).
M=$T/marks
mkdir -m 1777 "$M"

setup_user() {
	U=$T/$who
	H=$U/home
	WS=$U/ws
	P=$U/policies
	TB=$U/bin
	mkdir -p "$H" "$WS" "$P" "$TB"
	cp "$B/omnibox-run" "$B/omnibox-init" "$B/omnibox-proxy" "$TB/"
	chmod -R a+rX "$U"
	policy repo <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    cwd_allow_hidden: [.git, .venv]
	EOF
	policy home <<-EOF
	os_env:
	  sandbox:
	    write_paths: ["~"]
	EOF
	[ "$who" = nobody ] && chown -R nobody:nogroup "$U"
}

# policy NAME: $P/NAME.yaml from standard input.
policy() {
	cat >"$P/$1.yaml"
	[ "$who" = nobody ] && chown nobody:nogroup "$P/$1.yaml"
	return 0
}

# host CMD...: the user's own command on the host, in the repository.
host() {
	(cd "$R" && as_user "$@") 2>&1
}

# make_repo NAME: a repository $R with one commit, owned by the user.
make_repo() {
	R=$WS/$1
	rm -rf "$R"
	mkdir -p "$R"
	git init -q "$R"
	git -C "$R" config user.email dev@example.com
	git -C "$R" config user.name dev
	echo one >"$R/f"
	git -C "$R" add f
	git -C "$R" commit -qm one
	[ "$who" = nobody ] && chown -R nobody:nogroup "$R"
	rm -f "$M"/*
}

# agent SCRIPT: the agent's moves in a real launch in $R; $out, $rc.
agent() {
	out=$(cd "$R" && as_user "$TB/omnibox-run" "$P/repo.yaml" -- sh -c "$1" 2>&1)
	rc=$?
}

# no_marks: nothing the agent planted has run.
no_marks() {
	tests=$((tests + 1))
	if [ -n "$(ls -A "$M")" ]; then
		fail "the agent's command ran on the host: $(ls -A "$M" | tr '\n' ' ')"
		rm -f "$M"/*
	fi
}

# A git configuration whose every command-bearing key leaves mark $1.
evil_config() {
	printf '[core]\n\tfsmonitor = touch %s/%s-fsmonitor\n\thooksPath = %s\n' "$M" "$1" "$2"
	printf '\tpager = touch %s/%s-pager; cat\n\tsshCommand = touch %s/%s-ssh\n' "$M" "$1" "$M" "$1"
	printf '[filter "evil"]\n\tclean = touch %s/%s-filter; cat\n' "$M" "$1"
	printf '[alias]\n\tst = !touch %s/%s-alias\n' "$M" "$1"
}

# hook NAME MARK: an executable hook script leaving MARK.
hook() {
	printf '#!/bin/sh\ntouch %s/%s\n' "$M" "$2" >"$1"
	chmod 755 "$1"
}

# the user's day after the agent: status, a commit, a filtered add.
host_day() {
	host git status >/dev/null
	host sh -c 'echo two >>f && git commit -qam two' >/dev/null
	host sh -c 'echo x >g.txt && git add g.txt && git commit -qm three' >/dev/null
	host git -p log --oneline >/dev/null
}

# plant NAME: $R/plant/ holds a git configuration whose every command-bearing
# key leaves a mark NAME-..., and hooks that leave NAME-hook: what the agent
# could write itself, put there before the launch to keep the scripts short.
plant() {
	mkdir -p "$R/plant/hooks"
	evil_config "$1" "$R/plant/hooks" >"$R/plant/config"
	for h in pre-commit post-commit post-checkout; do
		hook "$R/plant/hooks/$h" "$1-hook"
	done
	[ "$who" = nobody ] && chown -R nobody:nogroup "$R/plant"
	return 0
}

t_commondir() {
	name="commondir: the agent cannot point git at a directory of its making"
	make_repo commondir
	plant commondir
	agent "cp -r .git evil && cp plant/config evil/config && cp -r plant/hooks evil/ &&
	echo \"$R/evil\" >.git/commondir && echo wrote-commondir;
	git status --short >/dev/null && echo status-ok"
	expect_no_out "wrote-commondir"
	expect_out "status-ok"
	host_day
	no_marks
	tests=$((tests + 1))
	[ -e "$R/.git/commondir" ] && fail "a commondir is left in the host's .git"
}

t_nested_gitlink() {
	name="a nested repository behind a gitlink is set aside after the run"
	make_repo gitlink
	agent "git init -q sub && git -C sub config core.fsmonitor 'touch $M/nested-fsmonitor' &&
	mkdir -p sub/.git/hooks && printf '#!/bin/sh\ntouch $M/nested-hook\n' >sub/.git/hooks/post-checkout &&
	chmod 755 sub/.git/hooks/post-checkout &&
	git update-index --add --cacheinfo 160000,\$(git rev-parse HEAD),sub && echo planted"
	expect_out "planted"
	expect_out "/sub/.git was made inside the sandbox; git on this machine would obey its configuration and hooks, so it is now .git-omnibox-quarantine-"
	host_day
	host git submodule status >/dev/null
	(cd "$R/sub" && as_user git status) >/dev/null 2>&1
	no_marks
	tests=$((tests + 1))
	set -- "$R"/sub/.git-omnibox-quarantine-*
	[ -d "$1" ] && [ ! -e "$R/sub/.git" ] ||
		fail "sub/.git was not set aside"
}

t_nested_existing() {
	name="a repository nested at launch keeps its config and hooks read-only"
	make_repo nested
	git init -q "$R/vendor/lib"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$R/vendor"
	agent "printf '[core]\n\tfsmonitor = touch $M/vendor-fsmonitor\n' >>vendor/lib/.git/config || echo config-refused;
	printf '#!/bin/sh\ntouch $M/vendor-hook\n' >vendor/lib/.git/hooks/pre-commit || echo hook-refused;
	echo ../../../evil >vendor/lib/.git/commondir || echo commondir-refused;
	mv vendor/lib/.git vendor/lib/g 2>/dev/null || echo rename-refused"
	expect_out "config-refused"
	expect_out "hook-refused"
	expect_out "commondir-refused"
	expect_out "rename-refused"
	expect_no_out "was made inside the sandbox"
	(cd "$R/vendor/lib" && as_user sh -c 'git status; echo a >a; git add a; git commit -qm a') >/dev/null 2>&1
	no_marks
}

t_hooks_path() {
	name="core.hooksPath and included configuration inside the tree stay read-only"
	make_repo hookspath
	host git config core.hooksPath .githooks
	host git config include.path ../shared.gitconfig
	agent "mkdir -p .githooks; printf '#!/bin/sh\ntouch $M/hookspath\n' >.githooks/pre-commit || echo hook-refused;
	printf '[core]\n\tfsmonitor = touch $M/include-fsmonitor\n' >shared.gitconfig || echo include-refused;
	git status --short >/dev/null && echo status-ok"
	expect_out "hook-refused"
	expect_out "include-refused"
	expect_out "status-ok"
	host_day
	no_marks
	tests=$((tests + 1))
	[ -e "$R/.githooks" ] || [ -e "$R/shared.gitconfig" ] && fail "a placeholder is left in the tree"
}

t_git_moves() {
	name="git's other moves: worktree config, attributes, alternates, worktrees, modules, a .git file"
	make_repo moves
	agent "git config extensions.worktreeConfig true || echo ext-refused;
	printf '[core]\n\tpager = touch $M/wtconfig-pager; cat\n' >.git/config.worktree || echo wtconfig-refused;
	mkdir -p .git/info; printf '* filter=evil\n' >.git/info/attributes || echo attributes-refused;
	printf '* filter=evil diff=evil\n' >.gitattributes && echo worktree-attributes-written;
	mkdir -p /tmp/x 2>/dev/null; echo /tmp/x >.git/objects/info/alternates || echo alternates-refused;
	mkdir .git/worktrees/w || echo worktrees-refused;
	mkdir .git/modules/m || echo modules-refused;
	git worktree add -q ../wt 2>/dev/null || echo worktree-add-refused;
	mv .git g 2>/dev/null || echo git-rename-refused;
	rm -rf .git 2>/dev/null; printf 'gitdir: evil\n' >.git 2>/dev/null || echo gitfile-refused"
	for w in ext wtconfig attributes alternates worktrees modules worktree-add git-rename gitfile; do
		expect_out "$w-refused"
	done
	expect_out "worktree-attributes-written"
	host_day
	no_marks
	tests=$((tests + 1))
	for f in objects/info/alternates worktrees modules commondir; do
		[ -e "$R/.git/$f" ] && fail "$f is left in the host's .git"
	done
	tests=$((tests + 1))
	[ "$(host git var GIT_PAGER)" = "$(cd / && as_user git var GIT_PAGER)" ] || fail "the host's git has a pager of the agent's: $(host git var GIT_PAGER)"
}

t_killed_run() {
	name="a repository made by a run that was killed is set aside all the same"
	make_repo killed
	(cd "$R" && as_user "$TB/omnibox-run" -q "$P/repo.yaml" -- sh -c \
		"git init -q made && git -C made config core.fsmonitor 'touch $M/killed-fsmonitor' && touch made-done && sleep 60") \
		>/dev/null 2>&1 &
	bg=$!
	for _ in $(seq 100); do
		[ -e "$R/made-done" ] && break
		sleep 0.1
	done
	run_pid=$(main_run_pid "$P/repo.yaml")
	[ -n "$run_pid" ] && kill -KILL "$run_pid"
	wait "$bg" 2>/dev/null
	tests=$((tests + 1))
	for _ in $(seq 100); do
		[ -e "$R/made/.git" ] || break
		sleep 0.1
	done
	set -- "$R"/made/.git-omnibox-quarantine-*
	[ -d "$1" ] && [ ! -e "$R/made/.git" ] ||
		fail "made/.git is still a repository on the host"
	(cd "$R/made" && as_user git status) >/dev/null 2>&1
	no_marks
}

t_rebase_exec() {
	name="a rebase left stopped with a command to run is named after the run"
	make_repo rebase
	host sh -c 'echo two >>f && git commit -qam two' >/dev/null
	agent "GIT_SEQUENCE_EDITOR='printf \"break\\nexec touch $M/rebase-exec\\n\" >' git rebase -i HEAD~1 >/dev/null 2>&1; echo stopped"
	expect_out "stopped"
	expect_out "/.git/rebase-merge/git-rebase-todo holds a command (an exec line) that \`git rebase --continue\` would run on this machine"
	no_marks
}

t_bare_repository() {
	name="a directory git takes for a repository, whatever its name, is set aside after the run"
	make_repo bare
	plant bare
	agent "mkdir -p src/objects src/refs && echo 'ref: refs/heads/main' >src/HEAD &&
	printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = touch $M/bare-fsmonitor\n' >src/config && echo planted"
	expect_out "planted"
	expect_out "/src/HEAD was made inside the sandbox: git on this machine would take its directory for a repository"
	(cd "$R/src" && as_user git status) >/dev/null 2>&1
	host_day
	no_marks
}

t_split_repository() {
	name="a directory git takes for a repository through its commondir is set aside after the run"
	make_repo split
	agent "mkdir -p common/objects common/refs s && echo 'ref: refs/heads/main' >s/HEAD &&
	echo ../common >s/commondir &&
	printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = touch $M/split-fsmonitor\n' >common/config && echo planted"
	expect_out "planted"
	expect_out "/s/HEAD was made inside the sandbox: git on this machine would take its directory for a repository"
	(cd "$R/s" && as_user git status) >/dev/null 2>&1
	host_day
	no_marks
}

t_unreadable_directory() {
	name="a repository in a directory the sandbox made unreadable is found and set aside"
	make_repo unreadable
	agent "git init -q d/sub && git -C d/sub config core.fsmonitor 'touch $M/unreadable-fsmonitor' &&
	git update-index --add --cacheinfo 160000,\$(git rev-parse HEAD),d/sub && chmod 111 d && echo planted"
	expect_out "planted"
	expect_out "/d/sub/.git was made inside the sandbox"
	host_day
	no_marks
	chmod -R u+rwx "$R/d" 2>/dev/null
}

t_pruned_swap() {
	name="a masked directory renamed away and made again does not hide a repository"
	make_repo swap
	mkdir -p "$R/web/.cache"
	echo x >"$R/web/.cache/c"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$R/web"
	policy recursive <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    cwd_allow_hidden: [.git]
	    cwd_hidden_scan_recursive: true
	EOF
	out=$(cd "$R" && as_user "$TB/omnibox-run" "$P/recursive.yaml" -- sh -c "
	mv web web2 && mkdir -p web/.cache/evil && git init -q web/.cache/evil &&
	git -C web/.cache/evil config core.fsmonitor 'touch $M/swap-fsmonitor' &&
	git update-index --add --cacheinfo 160000,\$(git rev-parse HEAD),web/.cache/evil && echo planted" 2>&1)
	expect_out "planted"
	expect_out "/web/.cache/evil/.git was made inside the sandbox"
	host_day
	no_marks
}

t_config_through_link() {
	name="hooksPath and included files named through a symbolic link stay read-only"
	make_repo linked
	ln -sfn "$R" "$U/link-$who"
	host git config core.hooksPath "$U/link-$who/.githooks"
	host git config include.path "$U/link-$who/inc.gitconfig"
	agent "mkdir -p .githooks; printf '#!/bin/sh\ntouch $M/linked-hook\n' >.githooks/pre-commit || echo hook-refused;
	printf '[core]\n\tfsmonitor = touch $M/linked-include\n' >inc.gitconfig || echo include-refused"
	expect_out "hook-refused"
	expect_out "include-refused"
	host_day
	no_marks
}

t_command_paths() {
	name="the programs the host's git configuration names by path stay read-only"
	make_repo programs
	host git config core.pager ./tools/pager
	host git config core.sshCommand "$R/tools/ssh -v"
	host git config alias.go '!./tools/go-alias --flag'
	host git config filter.lfsish.clean 'tools/clean %f'
	agent "mkdir -p tools; for f in pager ssh go-alias clean; do
		printf '#!/bin/sh\ntouch $M/program-\$f\n' >tools/\$f && chmod 755 tools/\$f || echo refused-\$f
	done"
	for f in pager ssh go-alias clean; do
		expect_out "refused-$f"
	done
	host_day
	host git go >/dev/null
	no_marks
}

t_quarantine_names_taken() {
	name="names taken in advance do not keep a repository from being set aside"
	make_repo taken
	agent "mkdir sub && cd sub && touch .git-omnibox-quarantine && i=1 && while [ \$i -lt 1000 ]; do
		: >.git-omnibox-quarantine-\$i; i=\$((i + 1)); done &&
	git init -q && git config core.fsmonitor 'touch $M/taken-fsmonitor' && cd .. &&
	git update-index --add --cacheinfo 160000,\$(git rev-parse HEAD),sub && echo planted"
	expect_out "planted"
	expect_out "/sub/.git was made inside the sandbox"
	host_day
	no_marks
	tests=$((tests + 1))
	[ ! -e "$R/sub/.git" ] || fail "sub/.git is still a repository"
}

t_config_carriage_return() {
	name="a hooksPath git reads through a carriage return is protected as git reads it"
	make_repo carriage
	printf '[core]\n\thooksPath = .githooks\r;comment\n' >>"$R/.git/config"
	[ "$who" = nobody ] && chown nobody:nogroup "$R/.git/config"
	agent "mkdir -p .githooks; printf '#!/bin/sh\ntouch $M/cr-hook\n' >.githooks/pre-commit || echo hook-refused"
	expect_out "hook-refused"
	host_day
	no_marks
}

t_template_dir() {
	name="init.templateDir in a writable home keeps its hooks from the next clone"
	debian_home
	printf '[init]\n\ttemplateDir = ~/git-templates\n' >"$H/.gitconfig"
	[ "$who" = nobody ] && chown nobody:nogroup "$H/.gitconfig"
	out=$(cd "$H" && as_user "$TB/omnibox-run" "$P/home.yaml" -- sh -c "
	mkdir -p git-templates/hooks && printf '#!/bin/sh\ntouch $M/template-hook\n' >git-templates/hooks/post-checkout &&
	chmod 755 git-templates/hooks/post-checkout || echo template-refused" 2>&1)
	expect_out "template-refused"
	make_repo origin
	(cd "$U" && rm -rf clone && as_user git clone -q "$R" clone) >/dev/null 2>&1
	no_marks
}

# A Debian home: .profile and .bashrc, no .bash_profile, no .bash_login.
debian_home() {
	rm -rf "$H"
	mkdir -p "$H"
	cp /etc/skel/.profile /etc/skel/.bashrc "$H/" 2>/dev/null ||
		printf 'PATH="$HOME/bin:$HOME/.local/bin:$PATH"\n' >"$H/.profile"
	echo 'echo profile-ran' >>"$H/.profile"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$H"
	chmod 755 "$H"
	rm -f "$M"/*
}

t_shell_startup() {
	name="a writable home: start-up files and PATH directories stay the user's"
	debian_home
	out=$(cd "$H" && as_user "$TB/omnibox-run" "$P/home.yaml" -- sh -c "
	for f in .bash_login .bash_profile .bash_logout .bash_aliases .zshenv .zshrc .zlogin .inputrc .bashrc .profile \
		.bash_completion .vimrc .tmux.conf .lesskey .selected_editor .npmrc .xsessionrc .pam_environment; do
		echo 'touch $M/startup-'\$f >>\$f || echo refused-\$f
	done
	mkdir -p .local/lib/python3/site-packages && echo 'import os' >.local/lib/python3/site-packages/x.pth || echo refused-pth
	mkdir -p bin .local/bin; for d in bin .local/bin; do
		printf '#!/bin/sh\ntouch $M/path-ls\n' >\$d/ls && chmod 755 \$d/ls || echo refused-\$d
	done
	mkdir -p .config/systemd/user && echo x >.config/systemd/user/evil.service || echo refused-systemd
	cat .bash_profile >/dev/null && echo held" 2>&1)
	for f in .bash_login .bash_profile .bash_logout .bash_aliases .zshenv .zshrc .zlogin .inputrc .bashrc .profile bin .local/bin systemd \
		.bash_completion .vimrc .tmux.conf .lesskey .selected_editor .npmrc .xsessionrc .pam_environment pth; do
		expect_out "refused-$f"
	done
	expect_out "held"
	# The user's next login shell, after the run.
	out=$(cd "$H" && as_user sh -c 'bash -lic "ls >/dev/null; exit" </dev/null' 2>&1)
	expect_out "profile-ran"
	no_marks
	tests=$((tests + 1))
	for f in .bash_login .bash_profile .bash_logout .bash_aliases .zshenv .inputrc bin .local; do
		[ -e "$H/$f" ] && fail "$f is left in the home"
	done
}

t_shell_startup_during() {
	name="while a sandbox runs, the placeholders read as no file to the host's shell"
	debian_home
	(cd "$H" && as_user "$TB/omnibox-run" -q "$P/home.yaml" -- sh -c 'touch started; sleep 30') \
		>/dev/null 2>&1 &
	bg=$!
	for _ in $(seq 100); do
		[ -e "$H/started" ] && break
		sleep 0.1
	done
	out=$(cd "$H" && as_user sh -c 'bash -lic "exit" </dev/null; echo login-done' 2>&1)
	expect_out "profile-ran"
	expect_out "login-done"
	expect_no_out "is a directory"
	run_pid=$(main_run_pid "$P/home.yaml")
	[ -n "$run_pid" ] && kill -TERM "$run_pid"
	wait "$bg" 2>/dev/null
}

t_file_placeholders() {
	name="a missing protected file is held by a read-only file, not a directory"
	make_repo files
	agent 'cat .mcp.json; echo "{}" >.mcp.json; echo "export A=1" >.envrc; test -d .gitmodules && echo gitmodules-is-a-dir; git config -f .gitmodules x.y z; echo agent-done'
	expect_out '{"mcpServers": {}}'
	expect_out "agent-done"
	expect_out "Read-only file system"
	expect_no_out "Is a directory"
	expect_no_out "gitmodules-is-a-dir"
	tests=$((tests + 1))
	for f in .mcp.json .envrc .gitmodules; do
		[ -e "$R/$f" ] && fail "$f is left in the workspace"
	done
	no_marks
}

# A Btrfs file system of the suite's own on a loop device, where an agent
# may make subvolumes (directories with a device of their own, no mount):
# $BT, or empty with $BT_WHY.
btrfs_setup() {
	BT=
	BT_WHY=
	if ! command -v mkfs.btrfs >/dev/null || ! command -v btrfs >/dev/null; then
		BT_WHY="no mkfs.btrfs and btrfs here (btrfs-progs)"
		return
	fi
	mkdir -p "$T/btrfs"
	if ! truncate -s 256M "$T/btrfs.img" || ! mkfs.btrfs -q "$T/btrfs.img" >/dev/null 2>&1 ||
		! mount -o loop "$T/btrfs.img" "$T/btrfs" 2>/dev/null; then
		BT_WHY="this machine mounts no Btrfs loop device (no loop devices, or no btrfs module)"
		return
	fi
	chmod 755 "$T/btrfs"
	BT=$T/btrfs
}

t_btrfs_subvolume() {
	name="a repository the agent plants in a Btrfs subvolume it made is found and set aside"
	if [ -z "$BT" ]; then
		echo "SKIP [$who] $name: $BT_WHY"
		skips=$((skips + 1))
		return
	fi
	R=$BT/$who
	rm -rf "$R"
	mkdir -p "$R"
	git init -q "$R"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$R"
	rm -f "$M"/*
	agent "btrfs subvolume create sub >/dev/null && btrfs subvolume create sub/inner >/dev/null &&
	git init -q sub/evil && git -C sub/evil config core.fsmonitor 'touch $M/subvol-fsmonitor' &&
	git init -q sub/inner && git -C sub/inner config core.fsmonitor 'touch $M/inner-fsmonitor' &&
	echo planted"
	expect_out "planted"
	expect_no_out "no longer the directory"
	expect_out "/sub/evil/.git was made inside the sandbox"
	expect_out "/sub/inner/.git was made inside the sandbox"
	(cd "$R/sub/evil" && as_user git status) >/dev/null 2>&1
	(cd "$R/sub/inner" && as_user git status) >/dev/null 2>&1
	no_marks
	# The next launch's dotfile scan goes into the subvolumes too.
	name="the dotfile scan of a workspace holding Btrfs subvolumes hides the dotfiles in them"
	echo subvol-secret >"$R/sub/inner/.env"
	[ "$who" = nobody ] && chown nobody:nogroup "$R/sub/inner/.env"
	policy subvol <<-EOF
	os_env:
	  sandbox:
	    cwd_hidden_scan_recursive: true
	EOF
	out=$(cd "$R" && as_user "$TB/omnibox-run" -q "$P/subvol.yaml" -- \
		sh -c 'cat sub/inner/.env; echo scanned' 2>&1)
	rc=$?
	expect_rc 0
	expect_out "scanned"
	expect_no_out "subvol-secret"
	btrfs subvolume delete "$R/sub/inner" "$R/sub" >/dev/null 2>&1
	rm -rf "$R"
}

run_all() {
	setup_user
	if [ -n "${ONLY:-}" ]; then
		for t in $ONLY; do "$t"; done
		return
	fi
	t_commondir
	t_nested_gitlink
	t_nested_existing
	t_hooks_path
	t_git_moves
	t_killed_run
	t_rebase_exec
	t_bare_repository
	t_split_repository
	t_unreadable_directory
	t_pruned_swap
	t_config_through_link
	t_command_paths
	t_quarantine_names_taken
	t_config_carriage_return
	t_template_dir
	t_shell_startup
	t_shell_startup_during
	t_file_placeholders
	t_btrfs_subvolume
}

if [ "$(id -u)" != 0 ]; then
	echo "leftovers: must run as root, to test both as root and as nobody" >&2
	exit 1
fi
btrfs_setup
for who in root nobody; do
	run_all
done
echo "leftovers: $tests checks, $failures failed, $skips skipped"
[ "$failures" = 0 ]
