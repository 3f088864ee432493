# bash completion for cryptoctl(1)                          -*- shell-script -*-
# SPDX-License-Identifier: MIT
#
# Installed as /usr/share/bash-completion/completions/cryptoctl. Nothing
# is listed twice: commands, subcommands and options come from cryptoctl's
# own --help texts, algorithm and engine names from the running daemon
# ('cryptoctl engines --names'), key names from 'cryptoctl key list
# --names'. Without a daemon those three complete to nothing.

# cryptoctl with the --socket the command line gave, quiet.
_cryptoctl_run()
{
	"${_cryptoctl_bin:-cryptoctl}" "${_cryptoctl_sock[@]}" "$@" 2>/dev/null
}

_cryptoctl_commands()
{
	_cryptoctl_run --help | awk '/^Commands:/ { c = 1; next } /^$/ { c = 0 }
		c && /^  [a-z]/ { print $1 }'
}

# The long options a command's --help names (the global ones without one).
_cryptoctl_options()
{
	if [ -n "$1" ]; then
		_cryptoctl_run "$1" --help
	else
		_cryptoctl_run --help
	fi | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

# Algorithm names of the kinds given (aead cipher ...; none: all kinds).
_cryptoctl_algs()
{
	_cryptoctl_run engines --names | awk -v kinds=" $* " \
		'kinds == "  " || index(kinds, " " $2 " ") { print $1 }' | sort -u
}

_cryptoctl_engines()
{
	_cryptoctl_run engines --names | awk '{ print $3 }' | sort -u
}

_cryptoctl()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=
	local cmd='' sub='' i w
	local -a _cryptoctl_sock=()
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	local _cryptoctl_bin=${COMP_WORDS[0]}
	COMPREPLY=()

	# The command, key's subcommand and --socket, before the cursor.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		-s | --socket)
			_cryptoctl_sock=(--socket "${COMP_WORDS[i + 1]}")
			i=$((i + 1))
			;;
		--socket=*) _cryptoctl_sock=("$w") ;;
		-a | --alg | -e | --engine | -k | --key | -i | --iv | --in | --out | \
			--key-file | --key-name | --uid | --gid | --usage | --bits | \
			-d | --digest | --sig | --peer | -o | --saltlen | \
			--passphrase-file | --version)
			i=$((i + 1)) # and its value
			;;
		-*) ;;
		*)
			if [ -z "$cmd" ]; then
				cmd=$w
			elif [ -z "$sub" ]; then
				sub=$w
			fi
			;;
		esac
	done

	# An option's value.
	case $prev in
	-s | --socket | --in | --out | --key-file | --auth-key-file | \
		--wrapping-key-file | --wrapped-file | --png | --spawn-daemon | \
		--sig | --peer | -o | --passphrase-file)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return 0
		;;
	-a | --alg)
		local kinds=
		case $cmd in
		encrypt | decrypt) kinds="aead cipher authenc mac none" ;;
		digest) kinds="hash" ;;
		mac) kinds="mac" ;;
		key) kinds="aead cipher mac pkey" ;;
		sign | verify | derive) kinds="pkey" ;;
		esac
		# shellcheck disable=SC2086 # kinds is a list
		mapfile -t COMPREPLY < <(compgen -W "$(_cryptoctl_algs $kinds)" -- "$cur")
		return 0
		;;
	-e | --engine)
		mapfile -t COMPREPLY < <(compgen -W "$(_cryptoctl_engines)" -- "$cur")
		return 0
		;;
	-d | --digest)
		mapfile -t COMPREPLY < <(compgen -W "sha1 sha224 sha256 sha384 sha512" -- "$cur")
		return 0
		;;
	-k)
		# sign, verify, derive: -k is --key-name (elsewhere a hex key)
		[[ " sign verify derive " == *" $cmd "* ]] || return 0
		mapfile -t COMPREPLY < <(compgen -W "$(_cryptoctl_run key list --names)" -- "$cur")
		return 0
		;;
	--key-name)
		mapfile -t COMPREPLY < <(compgen -W "$(_cryptoctl_run key list --names)" -- "$cur")
		return 0
		;;
	--uid)
		mapfile -t COMPREPLY < <(compgen -u -- "$cur")
		return 0
		;;
	--gid)
		mapfile -t COMPREPLY < <(compgen -g -- "$cur")
		return 0
		;;
	--usage)
		mapfile -t COMPREPLY < <(compgen -W "encrypt decrypt mac-generate mac-verify sign verify derive" -- "$cur")
		return 0
		;;
	esac

	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_cryptoctl_options "$cmd")" -- "$cur")
		return 0
	fi
	case $cmd in
	"")
		mapfile -t COMPREPLY < <(compgen -W "$(_cryptoctl_commands)" -- "$cur")
		;;
	help)
		[ -z "$sub" ] &&
			mapfile -t COMPREPLY < <(compgen -W "$(_cryptoctl_commands)" -- "$cur")
		;;
	key)
		if [ -z "$sub" ]; then
			mapfile -t COMPREPLY < <(compgen -W "$(_cryptoctl_run key --help |
				grep -oE 'cryptoctl key [a-z]+' | awk '{ print $3 }')" -- "$cur")
		elif [ "$prev" = "$sub" ] && [[ " show rotate wrap delete pub ref " == *" $sub "* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$(_cryptoctl_run key list --names)" -- "$cur")
		fi
		;;
	esac
	return 0
}
complete -F _cryptoctl -o default cryptoctl
