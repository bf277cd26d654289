# bash completion for omnibox-compile and omnibox-run
#
# Installed by `make install` as share/bash-completion/completions/omnibox-compile
# (and omnibox-run, a link to it); or source it from ~/.bashrc.  It needs bash
# only, not the bash-completion package.

_omnibox_compile_long=(--target= --emit= --output= --terminal= --resolve --cwd= --home=
	--check= --explain --strict --diff= --format= --query= --query-file= --strict-toplevel
	--quiet --verbose
	--version --help)
_omnibox_compile_short=(-t -e -o -q -v -V -h)
_omnibox_run_long=(--terminal= --cwd= --dry-run --egress-log= --egress-hosts= --egress-resolv= --egress-ca=
	--why= --pty --no-pty --strict-toplevel --quiet --verbose --version --help)
_omnibox_run_short=(-q -v -V -h)
_omnibox_emit_kinds=(ir egress egress-table bwrap landlock seccomp seccomp-bpf seccomp-oci seccomp-landlock
	seccomp-landlock-bpf seccomp-landlock-net seccomp-landlock-net-bpf env sbpl sbpl-params winjob oci kubernetes)
_omnibox_targets=(linux darwin windows oci kubernetes all)
_omnibox_formats=(text json markdown)

# _omnibox_terminals FILE: the names under the top-level `terminals:` of FILE,
# its keys indented by two spaces.
_omnibox_terminals() {
	[ -r "$1" ] && [ -f "$1" ] || return 0
	awk '
		{ sub(/\r$/, "") }
		/^terminals:[ \t]*(#.*)?$/ { t = 1; next }
		t && /^[^ \t#]/ { t = 0 }
		t && /^  [^ \t#-]/ {
			k = substr($0, 3)
			if (k !~ /:([ \t]|$)/) next
			sub(/:([ \t].*)?$/, "", k)
			if (k ~ /^".*"$/ || k ~ /^\047.*\047$/) k = substr(k, 2, length(k) - 2)
			print k
		}
	' "$1" 2>/dev/null
}

# _omnibox_words: COMP_WORDS with the words bash split at "=" or ":" joined
# again (--emit=bwrap, not --emit = bwrap), in _omnibox_w; the current word's
# index in _omnibox_cw.  Words are joined only where COMP_LINE has no space
# between them (without COMP_LINE, a "=" always takes the word after it).
_omnibox_words() {
	local i w n=${#COMP_WORDS[@]} pos=0 rest lead
	local -a start=() end=()
	_omnibox_w=()
	_omnibox_cw=0
	if [[ -n ${COMP_LINE-} ]]; then
		for ((i = 0; i < n; i++)); do
			rest=${COMP_LINE:pos}
			lead=${rest%%[![:space:]]*}
			start[i]=$((pos + ${#lead}))
			end[i]=$((start[i] + ${#COMP_WORDS[i]}))
			pos=${end[i]}
		done
	fi
	for ((i = 0; i < n; i++)); do
		w=${COMP_WORDS[i]}
		if ((i > 0)) && [[ -n $w && -z ${w//[=:]/} ]] &&
			{ [[ -z ${COMP_LINE-} ]] || ((start[i] == end[i - 1])); }; then
			# "=" or ":" alone: glue it, and the word right after it unless
			# the cursor is on the "=" itself, to the word before.
			_omnibox_w[${#_omnibox_w[@]} - 1]+=$w
			((i == COMP_CWORD)) && _omnibox_cw=$((${#_omnibox_w[@]} - 1))
			if ((i != COMP_CWORD && i + 1 < n)) && [[ -n ${COMP_WORDS[i + 1]} ]] &&
				{ [[ -z ${COMP_LINE-} ]] || ((start[i + 1] == end[i])); }; then
				i=$((i + 1))
				_omnibox_w[${#_omnibox_w[@]} - 1]+=${COMP_WORDS[i]}
				((i == COMP_CWORD)) && _omnibox_cw=$((${#_omnibox_w[@]} - 1))
			fi
			continue
		fi
		_omnibox_w+=("$w")
		((i == COMP_CWORD)) && _omnibox_cw=$((${#_omnibox_w[@]} - 1))
	done
	return 0
}

# _omnibox_reply OPT VALUE WORDS...: COMPREPLY from WORDS that begin with
# VALUE, each as OPT=WORD when OPT is given.
_omnibox_reply() {
	local opt=$1 val=$2 w
	shift 2
	COMPREPLY=()
	for w in "$@"; do
		[[ $w == "$val"* ]] && COMPREPLY+=("$w")
	done
	_omnibox_prefix "$opt"
}

_omnibox_prefix() {
	local i
	[[ -n $1 ]] || return 0
	for i in "${!COMPREPLY[@]}"; do
		COMPREPLY[i]=$1=${COMPREPLY[i]}
	done
}

# _omnibox_trim: the replies are whole words (--emit=bwrap); bash replaces
# only the text after the last "=" or ":" that COMP_WORDBREAKS holds, so take
# off what comes before it.
_omnibox_trim() {
	local i rw=${COMP_WORDS[COMP_CWORD]} full=${_omnibox_w[_omnibox_cw]}
	[[ -n $rw && -z ${rw//[=:]/} ]] && rw=
	local cut=$((${#full} - ${#rw}))
	((cut > 0)) || return 0
	for i in "${!COMPREPLY[@]}"; do
		COMPREPLY[i]=${COMPREPLY[i]:cut}
	done
}

# _omnibox_files OPT VALUE [dirs|yaml]: paths for VALUE.
_omnibox_files() {
	local opt=$1 val=$2 kind=${3:-} f
	local -a all=()
	COMPREPLY=()
	compopt -o filenames 2>/dev/null
	if [[ $kind == dirs ]]; then
		mapfile -t COMPREPLY < <(compgen -d -- "$val")
	else
		mapfile -t all < <(compgen -f -- "$val")
		if [[ $kind == yaml ]]; then
			for f in "${all[@]}"; do
				[[ -d $f || $f == *.yaml || $f == *.yml ]] && COMPREPLY+=("$f")
			done
		fi
		((${#COMPREPLY[@]})) || COMPREPLY=("${all[@]}")
	fi
	_omnibox_prefix "$opt"
}

# _omnibox_policy: the policy file already on the command line (the first word
# that is neither an option nor an option's value, before "--").
_omnibox_policy() {
	local i w skip=
	for ((i = 1; i < ${#_omnibox_w[@]}; i++)); do
		if [[ -n $skip ]]; then
			skip=
			continue
		fi
		((i == _omnibox_cw)) && continue
		w=${_omnibox_w[i]}
		case $w in
		--) return 1 ;;
		-t | -e | -o | --target | --emit | --output | --terminal | --cwd | --home | --check | \
			--diff | --format | --query | --query-file | --egress-log | --egress-hosts | --egress-resolv | --egress-ca)
			skip=1 ;;
		-?*) ;;
		*)
			[[ $w == \~/* ]] && w=$HOME/${w:2}
			printf '%s\n' "$w"
			return 0
			;;
		esac
	done
	return 1
}

# _omnibox_complete PROGRAM: the completion of omnibox-compile or omnibox-run.
_omnibox_complete() {
	local prog=$1 cur prev opt="" val i policy
	local -a terms=() refs=() long=() short=()
	_omnibox_words
	cur=${_omnibox_w[_omnibox_cw]}
	prev=
	((_omnibox_cw > 0)) && prev=${_omnibox_w[_omnibox_cw - 1]}
	COMPREPLY=()

	# After "--": the command, then its arguments.
	for ((i = 1; i < _omnibox_cw; i++)); do
		if [[ ${_omnibox_w[i]} == -- ]]; then
			if ((i + 1 == _omnibox_cw)); then
				mapfile -t COMPREPLY < <(compgen -c -- "$cur")
			else
				_omnibox_files "" "$cur"
			fi
			return 0
		fi
	done

	if [[ $cur == --*=* ]]; then
		opt=${cur%%=*}
		val=${cur#*=}
	else
		case $prev in
		-t | -e | -o | --target | --emit | --output | --terminal | --cwd | --home | --check | \
			--diff | --format | --query | --query-file | --egress-log | --egress-hosts | --egress-resolv | --egress-ca)
			opt=$prev
			val=$cur
			;;
		esac
	fi

	if [[ -n $opt ]]; then
		# A value: as OPT=VALUE when it is written so, else alone.
		local p=$opt
		[[ $cur == --*=* ]] || p=
		case $opt in
		-t | --target) _omnibox_reply "$p" "$val" "${_omnibox_targets[@]}" ;;
		-e | --emit) _omnibox_reply "$p" "$val" "${_omnibox_emit_kinds[@]}" ;;
		--format) _omnibox_reply "$p" "$val" "${_omnibox_formats[@]}" ;;
		--terminal)
			if policy=$(_omnibox_policy); then
				mapfile -t terms < <(_omnibox_terminals "$policy")
			fi
			_omnibox_reply "$p" "$val" "${terms[@]}"
			;;
		--cwd | --home | --check) _omnibox_files "$p" "$val" dirs ;;
		--diff)
			# A policy file, or a git revision to read the same path from.
			_omnibox_files "" "$val" yaml
			mapfile -t refs < <(git for-each-ref --format='%(refname:short)' refs/heads \
				refs/remotes refs/tags 2>/dev/null)
			for i in "${refs[@]}" HEAD HEAD~1; do
				[[ $i == "$val"* ]] && COMPREPLY+=("$i")
			done
			_omnibox_prefix "$p"
			;;
		--query) ;;
		*) _omnibox_files "$p" "$val" ;;
		esac
		return 0
	fi

	if [[ $cur == -* ]]; then
		if [[ $prog == omnibox-run ]]; then
			long=("${_omnibox_run_long[@]}") short=("${_omnibox_run_short[@]}")
		else
			long=("${_omnibox_compile_long[@]}") short=("${_omnibox_compile_short[@]}")
		fi
		if [[ $cur == --* ]]; then
			_omnibox_reply "" "$cur" "${long[@]}" --
		else
			_omnibox_reply "" "$cur" "${short[@]}" "${long[@]}"
		fi
		[[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
		return 0
	fi

	# The policy: one file (omnibox-run takes its options before it).
	if [[ $prog == omnibox-run ]] || ! _omnibox_policy >/dev/null; then
		_omnibox_files "" "$cur" yaml
	fi
	return 0
}

_omnibox_compile() {
	_omnibox_complete omnibox-compile
	_omnibox_trim
}
_omnibox_run() {
	_omnibox_complete omnibox-run
	_omnibox_trim
}

complete -F _omnibox_compile omnibox-compile
complete -F _omnibox_run omnibox-run
