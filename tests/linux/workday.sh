#!/bin/sh
# workday.sh BUILD_DIR - a developer's working day inside real launches.
#
# A fresh repository with tracked dotfiles (.gitignore, .editorconfig,
# .github/workflows/ci.yml, .npmrc naming a cafile that is not the session's),
# a Makefile, package.json and an untracked .env holding a secret; the
# README's policy (write_paths [.], cwd_allow_hidden [.git, .venv]) with
# egress_rules naming only test hosts on loopback.  Inside launches, with no
# proxy or CA setting given to any client: git's daily commands, a home to
# cache in, python venv, make, npm test and install, go, javac and java's
# HttpClient, wget, pip download, git clone over HTTPS and curl; the same
# clients refused; no seccomp noise from ps, node or npm; the warnings a
# launch owes its user.  As root and as nobody.
#
# The upstreams (tests/workday/servers.py) are one HTTPS server on port 443
# of a random 127.x.y.z address, with a certificate from a CA made here;
# omnibox-run resolves the test names to it (--egress-hosts) and trusts the
# CA (--egress-ca).  Nothing reaches the internet.  The test user's home is
# a directory below /home made for the run, never below /tmp.
#
# A toolchain that is not installed (go, javac, wget, npm, pip) is a counted
# skip.  Must run as root.  ONLY="t_git t_home" runs some parts,
# WORKDAY_USERS=root one user, WORKDAY_KEEP=1 keeps the files.
set -u

B=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d /tmp/omnibox-workday.XXXXXX)
# The homes are where homes are, not below /tmp (which every sandbox has
# of its own, so that a home there would look writable by accident).
mkdir -p /home
HB=$(mktemp -d /home/omnibox-workday.XXXXXX)
chmod 755 "$T" "$HB"
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ -n "${WORKDAY_KEEP:-}" ]; then echo "kept $T $HB"; else rm -rf "$T" "$HB"; fi
}
trap cleanup EXIT INT TERM

. "$HERE/lib.sh"

export LC_ALL=C.UTF-8 LANG=C.UTF-8
SECRET=workday-dotenv-secret-5e1f9a77
FAKE_BLOB=0123456789abcdef0123456789abcdef01234567
start=$(date +%s)

if [ "$(id -u)" != 0 ]; then
	echo "workday: must run as root, to test both as root and as nobody" >&2
	exit 1
fi
for t in git python3 openssl curl; do
	command -v $t >/dev/null || {
		echo "workday: $t is needed (.ci/install-deps installs it)" >&2
		exit 1
	}
done

# skip WHY: a check that cannot run here, counted.
skip() {
	echo "SKIP [$who] $name: $*"
	skips=$((skips + 1))
}

# ---- the upstreams ------------------------------------------------------------

HOSTS="files.test registry.test pypi.test git.test other.test"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj "/CN=omnibox workday CA" -keyout "$T/ca.key" -out "$T/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=files.test" \
	-keyout "$T/srv.key" -out "$T/srv.csr" 2>/dev/null
printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' \
	"$(for h in $HOSTS; do printf 'DNS:%s,' "$h"; done | sed 's/,$//')" >"$T/srv.ext"
openssl x509 -req -in "$T/srv.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial \
	-days 2 -extfile "$T/srv.ext" -out "$T/srv.pem" 2>/dev/null || {
	echo "workday: cannot make the test certificates" >&2
	exit 1
}
chmod 644 "$T"/*.pem

S=$T/served
mkdir -p "$S"
python3 "$HERE/workday/fixtures.py" "$S" || exit 1
# The repository git.test serves.
git init -q --bare -b main "$S/git/repo.git"
(cd "$T" && git init -q -b main src && cd src && git config user.email t@t && git config user.name t &&
	echo "cloned-from-git-test" >README && git add README && git commit -q -m init &&
	git push -q "$S/git/repo.git" HEAD:refs/heads/main) || exit 1
git -C "$S/git/repo.git" config http.receivepack false
chmod -R a+rX "$T"

# Port 443 on a loopback address of its own, so that URLs carry no port.
: >"$T/upstream.log"
ADDR=
for _ in 1 2 3 4 5; do
	a=127.$(shuf -i 100-250 -n 1).$(shuf -i 1-250 -n 1).$(shuf -i 2-250 -n 1)
	python3 "$HERE/workday/servers.py" "$a" "$T/srv.pem" "$T/srv.key" "$S" "$T/upstream.log" \
		>"$T/upstream.out" 2>&1 &
	p=$!
	for _ in $(seq 100); do
		grep -q '^ready' "$T/upstream.out" 2>/dev/null && break
		kill -0 "$p" 2>/dev/null || break
		sleep 0.05
	done
	if grep -q '^ready' "$T/upstream.out"; then
		ADDR=$a
		pids="$pids $p"
		break
	fi
	kill "$p" 2>/dev/null
done
[ -n "$ADDR" ] || {
	echo "workday: the test server did not start: $(cat "$T/upstream.out")" >&2
	exit 1
}
for h in $HOSTS; do echo "$ADDR $h"; done >"$T/hosts"
chmod 644 "$T/hosts"

# ---- the user, the repository, the policies --------------------------------------

as_user() {
	if [ "$who" = root ]; then
		env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" USER=root LOGNAME=root TMPDIR=/tmp \
			LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=dumb "$@"
	else
		runuser -u nobody -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$H" USER=nobody \
			LOGNAME=nobody TMPDIR=/tmp LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=dumb "$@"
	fi
}

policy() {
	cat >"$P/$1.yaml"
	chmod 644 "$P/$1.yaml"
	[ "$who" = nobody ] && chown nobody:nogroup "$P/$1.yaml"
	return 0
}

# launch [OPTIONS] POLICY SCRIPT: sh -c SCRIPT in a real launch of
# $P/POLICY.yaml from the repository; $out holds stdout+stderr, $rc the
# status, $log the proxy's decisions.  Every output is kept in $U/all.out.
launch() {
	_opts=
	while :; do
		case $1 in
		-*) _opts="$_opts $1"; shift ;;
		*) break ;;
		esac
	done
	_p=$P/$1.yaml
	# shellcheck disable=SC2086
	out=$(cd "$R" && as_user timeout -k 5 150 "$TB/omnibox-run" $_opts --egress-hosts="$T/hosts" \
		--egress-ca="$T/ca.pem" --egress-log="$U/egress.log" "$_p" -- sh -c "$2" 2>&1 </dev/null)
	rc=$?
	log=$(cat "$U/egress.log" 2>/dev/null)
	: >"$U/egress.log"
	printf '%s\n%s\n' "$out" "$log" >>"$U/all.out"
}

# host CMD...: the user's own command on the host, in the repository.
host() {
	(cd "$R" && as_user "$@") 2>&1
}

# served PATTERN: how many requests the upstream logged that match PATTERN.
served() {
	grep -c -- "$1" "$T/upstream.log"
}

setup_user() {
	U=$T/$who
	H=$HB/$who
	WS=$U/ws
	P=$U/policies
	TB=$U/bin
	R=$WS/proj
	mkdir -p "$H" "$WS" "$P" "$TB" "$R"
	cp "$B/omnibox-run" "$B/omnibox-init" "$B/omnibox-proxy" "$TB/"
	: >"$U/egress.log"
	: >"$U/all.out"

	rules='      - "GET files.test/allowed/**"
      - "GET,POST registry.test/**"
      - "GET pypi.test/simple/**"
      - "GET pypi.test/packages/**"
      - "GET,POST git.test/**"'
	policy day <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    cwd_allow_hidden: [.git, .venv]
	    egress_allow_private_destinations: true
	    egress_rules:
	$rules
	EOF
	policy private <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    cwd_allow_hidden: [.git, .venv]
	    egress_rules:
	$rules
	EOF
	policy missing_read <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    cwd_allow_hidden: [.git, .venv]
	    read_paths: [/nonexistent/workday-missing-grant]
	EOF
	policy net_false <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    cwd_allow_hidden: [.git, .venv]
	    allow_network: false
	    egress_allow_private_destinations: true
	    egress_rules:
	$rules
	EOF
	policy no_venv <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    cwd_allow_hidden: [.git]
	EOF
	policy star <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	    cwd_allow_hidden: ["*"]
	EOF
	policy default_hidden <<-EOF
	os_env:
	  sandbox:
	    write_paths: [.]
	EOF

	# The repository, as a developer has it.
	git init -q -b main "$R"
	git -C "$R" config user.email dev@example.com
	git -C "$R" config user.name dev
	printf '.env\nnode_modules/\n.venv/\nout/\ndl/\nclone/\n*.class\n' >"$R/.gitignore"
	printf 'root = true\n\n[*]\nindent_style = tab\n' >"$R/.editorconfig"
	mkdir -p "$R/.github/workflows"
	printf 'name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make\n' \
		>"$R/.github/workflows/ci.yml"
	printf 'cafile=/etc/ssl/certs/ca-certificates.crt\nregistry=https://registry.test/\naudit=false\nfund=false\nupdate-notifier=false\n' \
		>"$R/.npmrc"
	printf 'hello:\n\t@echo make-ran-$$((6 * 7))\n' >"$R/Makefile"
	cat >"$R/package.json" <<-'EOF'
	{
	  "name": "proj",
	  "version": "1.0.0",
	  "private": true,
	  "scripts": { "test": "node -e \"console.log('npm-test-' + (6 * 7))\"" }
	}
	EOF
	printf '# proj\n' >"$R/README.md"
	printf 'module example.com/hello\n\ngo 1.18\n' >"$R/go.mod"
	printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("go-hello-", 6*7) }\n' >"$R/hello.go"
	cat >"$R/Fetch.java" <<-'EOF'
	import java.net.URI;
	import java.net.http.HttpClient;
	import java.net.http.HttpRequest;
	import java.net.http.HttpResponse;

	public class Fetch {
	    public static void main(String[] args) {
	        for (String url : args) {
	            try {
	                HttpResponse<String> r = HttpClient.newHttpClient().send(
	                    HttpRequest.newBuilder(URI.create(url)).build(),
	                    HttpResponse.BodyHandlers.ofString());
	                System.out.println("java-status=" + r.statusCode() + " " + url);
	                System.out.print(r.body());
	            } catch (Exception e) {
	                System.out.println("java-error=" + e + " " + url);
	            }
	        }
	    }
	}
	EOF
	git -C "$R" add -A
	git -C "$R" commit -q -m "the project"
	printf 'API_KEY=%s\n' "$SECRET" >"$R/.env"
	chmod 600 "$R/.env"
	chmod -R a+rX "$U"
	chmod 600 "$R/.env"
	[ "$who" = nobody ] && chown -R nobody:nogroup "$U" "$H"
	return 0
}

# ---- 1. git -------------------------------------------------------------------

t_git() {
	name="git status --porcelain is empty inside"
	launch day 's=$(git status --porcelain); echo "status-rc=$? porcelain<<$s>>"'
	expect_out "status-rc=0 porcelain<<>>"

	name="git diff and git log work inside"
	launch day 'd=$(mktemp) && l=$(mktemp) && echo more >>README.md
		git diff >"$d"; echo "diff-rc=$?"; grep -q "^+more" "$d" && echo diff-shows-edit
		git log --oneline >"$l"; echo "log-rc=$?"; grep -q "the project" "$l" && echo log-shows-commit
		git checkout -q -- README.md'
	for w in diff-rc=0 diff-shows-edit log-rc=0 log-shows-commit; do
		expect_out "$w"
	done

	name="git stash after an edit, then git stash pop"
	launch day 'echo more >>README.md
		git stash -q && echo stashed && ! grep -q more README.md && echo stash-clean
		git stash pop -q && grep -q more README.md && echo popped'
	for w in stashed stash-clean popped; do
		expect_out "$w"
	done

	name="git switch -c b, then git switch -"
	launch day 'git switch -q -c b && git switch -q - && echo "back-on-$(git branch --show-current)"'
	expect_out "back-on-main"

	name="git add -A and git commit inside"
	launch day 'grep -q more README.md || echo more >>README.md
		git add -A && git commit -q -m x && echo committed'
	expect_out "committed"

	name="the commit made inside changes no tracked dotfile (git show --stat on the host)"
	out=$(host git show --stat --format=subject=%s HEAD)
	tests=$((tests + 1))
	case $out in
	subject=x*)
		for f in .gitignore .editorconfig .github .npmrc .env .envrc .gitmodules .mcp.json; do
			expect_no_out "$f"
		done
		;;
	*) fail "no commit was made inside, so there is nothing to look at" ;;
	esac

	name="the host's tracked dotfiles are as they were"
	out=$(host git ls-tree -r --name-only HEAD)
	for f in .gitignore .editorconfig .github/workflows/ci.yml .npmrc; do
		expect_out "$f"
	done
	out=$(host git status --porcelain -- .gitignore .editorconfig .github .npmrc)
	expect_eq "git status --porcelain of the dotfiles on the host" "$out" ""
	out=$(cat "$R/.npmrc" "$R/.github/workflows/ci.yml" 2>&1)
	expect_out "cafile=/etc/ssl/certs/ca-certificates.crt"
	expect_out "runs-on: ubuntu-latest"
	# What a failed step left, undone for what follows.
	host sh -c 'git checkout -q -- README.md; git stash clear' >/dev/null
}

# ---- 2. .env ------------------------------------------------------------------

t_dotenv() {
	name=".env is unreadable inside"
	launch day 'cat .env && echo read-dotenv; grep -r API_KEY . 2>/dev/null | head -3; echo done'
	expect_no_out "read-dotenv"
	expect_no_out "$SECRET"
	expect_out "done"

	name=".env stays unreadable after the agent adds an index entry for it"
	launch day "git update-index --add --cacheinfo 100644,$FAKE_BLOB,.env && echo indexed"
	expect_out "indexed"
	launch day 'cat .env && echo read-dotenv; git diff -- .env; git diff --no-index /dev/null .env;
		git status --porcelain; git stash -q 2>&1; git stash show -p 2>&1; echo done'
	expect_no_out "read-dotenv"
	expect_no_out "$SECRET"
	expect_out "done"
	# The host's own repository back to normal for what follows.
	host sh -c 'git update-index --force-remove .env; git stash clear; git reset -q --hard' >/dev/null 2>&1
	tests=$((tests + 1))
	grep -q "$SECRET" "$R/.env" 2>/dev/null || fail "the host's .env lost its content"
}

# ---- 3. a home ----------------------------------------------------------------

t_home() {
	name="a home to write caches in, and nothing of it left in the host's home"
	launch day 'mkdir -p ~/.cache/x && echo hi >~/.cache/x/f && echo "cache=$(cat ~/.cache/x/f)"
		echo "home=$HOME xdg=${XDG_CACHE_HOME-unset}"'
	expect_out "cache=hi"
	tests=$((tests + 1))
	if [ -e "$H/.cache" ]; then fail "the host's home has .cache: $(find "$H/.cache" | head -5)"; fi
	name="\$XDG_CACHE_HOME, when set, is under \$HOME"
	xdg=$(printf '%s\n' "$out" | sed -n 's/^home=\(.*\) xdg=\(.*\)$/\2/p')
	hm=$(printf '%s\n' "$out" | sed -n 's/^home=\(.*\) xdg=\(.*\)$/\1/p')
	tests=$((tests + 1))
	case $xdg in
	unset | "$hm"/*) ;;
	*) fail "XDG_CACHE_HOME=$xdg is not under HOME=$hm" ;;
	esac
}

# ---- 4. toolchains, allowed ------------------------------------------------------

t_toolchains() {
	name="python3 -m venv .venv, then .venv/bin/python"
	launch day 'python3 -m venv .venv && .venv/bin/python -c "print(\"venv-\" + str(6 * 7))"'
	expect_out "venv-42"

	name="make"
	launch day 'make hello'
	expect_out "make-ran-42"

	if command -v npm >/dev/null; then
		name="npm test"
		launch day 'npm test'
		expect_out "npm-test-42"
		expect_rc 0

		# The policy hides dotfiles but .git and .venv, so whether npm meets
		# the project's .npmrc (and its cafile, not the session's) depends
		# on the product; said, not counted.
		launch day 'echo "npm-registry=$(npm config get registry)"'
		case $out in
		*npm-registry=https://registry.test/*) echo "NOTE [$who] npm reads the project's .npmrc (its cafile is in play)" ;;
		*) echo "NOTE [$who] npm does not see the project's .npmrc (hidden): its cafile is not in play" ;;
		esac

		# --registry says where, as pip's --index-url does; whatever the
		# .npmrc says, the session's CA must be the one npm trusts.
		name="npm install tinypkg from the registry, the project's .npmrc naming another cafile"
		launch day 'npm install --registry=https://registry.test/ tinypkg 2>&1 | tail -15;
			node -e "console.log(require(\"tinypkg\"))"'
		expect_out "tinypkg-loaded"
		tests=$((tests + 1))
		[ "$(served 'registry.test GET /tinypkg/-/tinypkg-1.0.0.tgz 200')" -ge 1 ] ||
			fail "the registry never served the tarball"
	else
		name="npm"
		skip "npm is not installed"
	fi

	name="go build and go run of a hello module"
	if command -v go >/dev/null; then
		launch day 'go build -o hello-bin . && ./hello-bin && go run .'
		tests=$((tests + 1))
		[ "$(printf '%s\n' "$out" | grep -c 'go-hello- 42')" = 2 ] || fail "go build and go run did not both print"
	else
		skip "go is not installed"
	fi

	name="javac, then java's HttpClient fetches from the file server (no -D flags)"
	if command -v javac >/dev/null && command -v java >/dev/null; then
		launch day 'javac -d out Fetch.java && java -cp out Fetch https://files.test/allowed/java.txt'
		expect_out "java-status=200"
		expect_out "java-fetched-this"
	else
		skip "javac or java is not installed"
	fi

	name="wget from the file server"
	if command -v wget >/dev/null; then
		launch day 'wget -q -O - https://files.test/allowed/hello.txt; echo "wget-rc=$?"'
		expect_out "hello-from-the-file-server"
		tests=$((tests + 1))
		case $out in
		*wget-rc=0*) ;;
		*wget-rc=5*) fail "wget exit 5: TLS verification failed, wget does not trust the session CA" ;;
		*) fail "wget failed" ;;
		esac
	else
		skip "wget is not installed"
	fi

	name="pip download from the index (--index-url only)"
	if python3 -m pip --version >/dev/null 2>&1; then
		launch day 'python3 -m pip download --no-deps -d dl --index-url https://pypi.test/simple tinywheel 2>&1 | tail -5;
			ls dl'
		expect_out "tinywheel-1.0-py3-none-any.whl"
	else
		skip "pip is not installed for python3"
	fi

	name="git clone https://git.test/repo.git"
	launch day 'git clone -q https://git.test/repo.git clone && cat clone/README'
	expect_out "cloned-from-git-test"

	name="curl from the file server"
	launch day 'curl -sS https://files.test/allowed/hello.txt'
	expect_out "hello-from-the-file-server"
	expect_rc 0
}

# ---- 5. the same clients, refused ---------------------------------------------

# refused WHAT REQUEST: the proxy logged the refusal of REQUEST ("GET URL"
# or "CONNECT HOST:PORT").
refused() {
	tests=$((tests + 1))
	case $log in
	*"deny $2"*) ;;
	*) fail "$1: the proxy's log shows no refusal of $2 (the client may not have got that far): $(printf '%s\n' "$log" | grep -v -e listening -e 'proxy: done' | head -4)" ;;
	esac
}

t_refusals() {
	priv=https://files.test/private/secret.txt
	other=https://other.test/allowed/hello.txt

	name="curl: a path no rule allows and a host not in the rules are refused"
	launch day "curl -sS -o /dev/null -w 'curl-path=%{http_code}\\n' $priv; curl -sS $other 2>&1; echo curl-other-rc=\$?"
	expect_out "curl-path=403"
	expect_no_out "curl-other-rc=0"
	expect_no_out "hello-from-the-file-server"
	refused curl "GET $priv"
	refused curl "CONNECT other.test:443"

	name="wget: refused"
	if command -v wget >/dev/null; then
		launch day "wget -q -O - $priv; echo wget-path-rc=\$?; wget -q -O - $other; echo wget-other-rc=\$?"
		expect_no_out "wget-path-rc=0"
		expect_no_out "wget-other-rc=0"
		expect_no_out "private-file-content"
		refused wget "GET $priv"
		refused wget "CONNECT other.test:443"
	else
		skip "wget is not installed"
	fi

	name="java's HttpClient: refused"
	if command -v javac >/dev/null && command -v java >/dev/null; then
		launch day "javac -d out Fetch.java && java -cp out Fetch $priv $other"
		expect_out "java-status=403 $priv"
		expect_no_out "java-status=200"
		expect_no_out "private-file-content"
		refused java "GET $priv"
		refused java "CONNECT other.test:443"
	else
		skip "javac or java is not installed"
	fi

	name="pip: refused"
	if python3 -m pip --version >/dev/null 2>&1; then
		launch day 'python3 -m pip download --no-deps -d dl2 --index-url https://pypi.test/private/simple tinywheel; echo pip-path-rc=$?
			python3 -m pip download --no-deps -d dl3 --index-url https://other.test/simple tinywheel; echo pip-other-rc=$?'
		expect_no_out "pip-path-rc=0"
		expect_no_out "pip-other-rc=0"
		refused pip "GET https://pypi.test/private/simple/tinywheel/"
		refused pip "CONNECT other.test:443"
	else
		skip "pip is not installed for python3"
	fi

	name="no refused request reached the upstream"
	tests=$((tests + 1))
	if grep -q -e '/private/' -e '^other.test' "$T/upstream.log"; then
		fail "the upstream served: $(grep -e '/private/' -e '^other.test' "$T/upstream.log" | head -3)"
	fi
}

# ---- 6. no seccomp noise -------------------------------------------------------

t_quiet_tools() {
	name="ps -e, node -e 1 and npm --version: no seccomp summary"
	launch day 'ps -e >/dev/null && echo ps-ok; node -e 1 && echo node-ok; npm --version >/dev/null && echo npm-ok'
	expect_out "ps-ok"
	expect_out "node-ok"
	command -v npm >/dev/null && expect_out "npm-ok"
	expect_no_out "the seccomp filter refused"

	name="node's os.networkInterfaces() succeeds"
	launch day 'node -e "require(\"os\").networkInterfaces(); console.log(\"ni-ok\")"'
	expect_out "ni-ok"
	expect_rc 0
	expect_no_out "the seccomp filter refused"
}

# ---- 7. the warnings a launch owes ---------------------------------------------

t_warnings() {
	name="a read_paths entry that does not exist: a warning at launch naming it"
	launch missing_read 'echo ran'
	expect_out "ran"
	expect_out "/nonexistent/workday-missing-grant"

	name="allow_network: false beside egress_rules: a warning"
	launch net_false 'echo ran'
	expect_out "ran"
	expect_out "warning"
	expect_out "allow_network"

	name="cwd_allow_hidden without .venv: a warning"
	launch no_venv 'echo ran'
	expect_out "ran"
	expect_out "warning"
	expect_out ".venv"

	name="\"*\" in cwd_allow_hidden: a warning"
	launch star 'echo ran'
	expect_out "ran"
	expect_out "warning"
	expect_out "'*' in os_env.sandbox.cwd_allow_hidden"

	name="with the default cwd_allow_hidden, the launch names what it hid at the top level and how to show it"
	launch default_hidden 'echo ran'
	expect_out "ran"
	expect_out ".git"
	expect_out ".env"
	expect_out "cwd_allow_hidden"

	name="-q: none of the launch's own chatter (the proxy's log left on stderr)"
	out=$(cd "$R" && as_user timeout -k 5 150 "$TB/omnibox-run" -q --egress-hosts="$T/hosts" \
		--egress-ca="$T/ca.pem" "$P/day.yaml" -- sh -c 'echo ran; curl -sS -o /dev/null https://files.test/allowed/hello.txt' 2>&1 </dev/null)
	printf '%s\n' "$out" >>"$U/all.out"
	expect_out "ran"
	expect_no_out "omnibox-egress: listening"
	expect_no_out "proxy: done"
	expect_no_out "omnibox-run:"

	name="a private upstream refused without egress_allow_private_destinations: the summary names the setting"
	launch private 'curl -sS https://files.test/allowed/hello.txt; echo "curl-rc=$?"'
	expect_no_out "curl-rc=0"
	expect_no_out "hello-from-the-file-server"
	expect_out "egress_allow_private_destinations"
	out=$log
	expect_out "blocked-destination CONNECT files.test:443"
}

# ---- 8. protected names held by files --------------------------------------------

t_placeholders() {
	name="a missing .mcp.json is held by a read-only file, not a directory"
	launch day 'echo {} >.mcp.json; echo done'
	expect_out "Read-only file system"
	expect_no_out "Is a directory"
	expect_out "done"
	tests=$((tests + 1))
	[ -s "$R/.mcp.json" ] && fail ".mcp.json was written on the host"
}

run_all() {
	setup_user
	if [ -n "${ONLY:-}" ]; then
		for t in $ONLY; do "$t"; done
	else
		t_git
		t_dotenv
		t_home
		t_toolchains
		t_refusals
		t_quiet_tools
		t_warnings
		t_placeholders
	fi
	name="the .env secret never appears in any output of the day"
	tests=$((tests + 1))
	if grep -q "$SECRET" "$U/all.out"; then
		out=$(grep "$SECRET" "$U/all.out")
		fail "the secret was seen"
	fi
}

for who in ${WORKDAY_USERS:-root nobody}; do
	run_all
done
echo "workday: $tests checks, $failures failed, $skips skipped ($(($(date +%s) - start)) s)"
[ "$failures" = 0 ]
