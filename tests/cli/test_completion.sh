#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The bash completion of cryptoctl (cli/cryptoctl.bash), sourced and
# called as bash calls it (COMP_WORDS, COMP_CWORD), against a running
# daemon with named keys: commands, key's subcommands, options from each
# command's --help, algorithm names by command (from 'cryptoctl engines
# --names'), engine names, key names ('cryptoctl key list --names'),
# users; and nothing from a daemon that is not there.
#
#   test_completion.sh CRYPTOD CRYPTOCTL COMPLETION   (cryptoctl_lib.sh)
set -u
COMPLETION=$3

daemon_setup()
{
	mkdir -m 0700 "$tmp/creds"
	head -c 32 /dev/urandom >"$tmp/creds/kek"
	chmod 0400 "$tmp/creds/kek"
	export CREDENTIALS_DIRECTORY=$tmp/creds
	DAEMON_ARGS="--set keys.kek=credential:kek --set keys.dir=$tmp/keys"
}
. "$(dirname "$0")/cryptoctl_lib.sh"
# shellcheck source=../../cli/cryptoctl.bash
. "$COMPLETION"

# comp WORD...: complete the last word (COMPREPLY, one a line, in $out)
comp()
{
	COMP_WORDS=("$CTL" "$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_cryptoctl
	: >"$out"
	[ ${#COMPREPLY[@]} -eq 0 ] || printf '%s\n' "${COMPREPLY[@]}" >"$out"
}
has() { grep -qx -- "$1" "$out"; }
hasnt() { ! grep -qx -- "$1" "$out"; }

section "listings the completion reads"
ctl engines --names
check "engines --names: exit 0, 'ALGORITHM KIND ENGINE' lines" \
	eval '[ "$rc" -eq 0 ] && [ -s "$out" ] && awk "NF != 3 { exit 1 }" "$out"'
check "engines --names: aes-gcm is an aead" grep -Eq '^aes-gcm aead [a-z-]+$' "$out"
ctl key create ck1 --alg aes-gcm
ctl key create ck2 --alg hmac-sha256 --bits 256
ctl key list --names
check "key list --names: the names, one a line" \
	eval '[ "$rc" -eq 0 ] && [ "$(sort "$out" | tr "\n" " ")" = "ck1 ck2 " ]'

section "commands and subcommands"
comp ""
check "commands: encrypt, key, stats, engines, help" \
	eval 'has encrypt && has key && has stats && has engines && has help'
check "commands: no words of the help text" eval 'hasnt Commands: && hasnt Options:'
comp en
check "'en': encrypt and engines only" test "$(sort "$out" | tr '\n' ' ')" = "encrypt engines "
comp key ""
check "key: its subcommands" \
	eval 'has create && has import && has list && has show && has rotate && has wrap && has delete'
comp help st
check "help st: stats" test "$(cat "$out")" = stats

section "options"
comp encrypt --key
check "encrypt --key<TAB>: --key, --key-file, --key-name" \
	eval 'has --key && has --key-file && has --key-name'
comp stats --w
check "stats --w<TAB>: --watch, --wide" eval 'has --watch && has --wide'
comp --so
check "--so<TAB> (global): --socket" has --socket
comp key list --n
check "key list --n<TAB>: --names" has --names

section "names from the daemon"
comp encrypt -a ""
check "encrypt -a: aes-gcm and aes-cbc, no digest" \
	eval 'has aes-gcm && has aes-cbc && hasnt sha256'
comp digest -a sha
check "digest -a sha<TAB>: the digests, no HMAC" \
	eval 'has sha256 && has sha1 && hasnt hmac-sha256'
comp mac --alg ""
check "mac --alg: hmac-sha256, no cipher" eval 'has hmac-sha256 && hasnt aes-gcm'
comp key create x --alg aes-g
check "key create --alg aes-g<TAB>: aes-gcm" has aes-gcm
comp encrypt --engine ""
check "encrypt --engine: openssl and null among the engines" eval 'has openssl && has null'
comp key show ""
check "key show: the key names" eval 'has ck1 && has ck2'
comp encrypt -a aes-gcm --key-name ck
check "encrypt --key-name ck<TAB>: the key names" eval 'has ck1 && has ck2'
comp key delete ck1 ""
check "key delete ck1 <TAB>: no second name" hasnt ck2
comp key create x --uid roo
check "--uid roo<TAB>: root" has root
comp --socket "$tmp/none.sock" encrypt -a ""
check "--socket of no daemon: no algorithm names" test ! -s "$out"
comp --socket "$sock" key show ""
check "--socket given on the line: used" has ck1

finish completion
