#!/usr/bin/env bash
# Python's hashlib and hmac through cryptod's provider, with nothing but
# OPENSSL_CONF set (the shipped cryptod-provider.cnf): the same digests and
# MACs as in-process, the bytes counted by the daemon; and a daemon killed
# under a digest in progress costs the program a ValueError at digest(),
# not its life. CPython 3.11's hashlib calls EVP_DigestUpdate for 2 KiB and
# more with the GIL released, and raises the update's failure there
# without it: a SIGSEGV, unless the provider's updates never fail (they
# keep a failure for final: provider/prov_hash.h).
#   test_prov_python.sh CRYPTOD_BIN PROVIDER_DIR CRYPTOCTL SRC_DIR [SANITIZE]
set -uo pipefail
daemon=$1 provdir=$(realpath "$2") ctl=$3 src=$4 sanitize=${5:-}
. "$(dirname "$0")/prov_lib.sh"
prov_need_unsanitized "$sanitize"
py=/usr/bin/python3
[ -x "$py" ] || { echo "SKIP: no $py"; exit 77; }
prov_tmp py
export CRYPTOD_SOCKET=$tmp/s.sock OPENSSL_MODULES=$provdir
start() {
	"$daemon" --no-config --socket "$tmp/s.sock" --log-level warn 2>>"$tmp/d.log" &
	dpid=$!
	for _ in $(seq 100); do "$ctl" ping >/dev/null 2>&1 && return; sleep 0.05; done
	bad "the daemon did not start: $(tail -3 "$tmp/d.log")"
}
bytes() {
	"$ctl" stats --json | $py -c 'import json, sys
print(sum(e["bytes"] for e in json.load(sys.stdin)["engines"]))'
}
cat >"$tmp/same.py" <<'PY'
import hashlib, hmac, sys
data = bytes(range(256)) * 4096          # 1 MiB
h = hashlib.sha256()
for i in range(0, len(data), 3000):      # updates of 3000 bytes: GIL released
    h.update(data[i:i + 3000])
m = hmac.new(b"k" * 32, data, "sha512")
print(h.hexdigest(), m.hexdigest(), hashlib.sha1(data[:100]).hexdigest())
PY
cat >"$tmp/gone.py" <<'PY'
import hashlib, os, signal, sys, time
h = hashlib.sha256()
h.update(b"a" * 100000)     # past the provider's buffer: a daemon stream
os.kill(int(sys.argv[1]), signal.SIGKILL)
time.sleep(0.3)
try:
    for _ in range(3):
        h.update(b"b" * 4096)
    print("digest", h.hexdigest())
except ValueError as e:
    print("ValueError", "cryptod" in str(e))
PY

start
gen=$src/provider/cryptod-provider.cnf
b0=$(bytes)
on=$(OPENSSL_CONF=$gen timeout 30 $py "$tmp/same.py" 2>"$tmp/py.err") || bad "python: $(tail -3 "$tmp/py.err")"
b1=$(bytes)
off=$(OPENSSL_CONF=/dev/null $py "$tmp/same.py")
[ -n "$on" ] && [ "$on" = "$off" ] || bad "digests differ: '$on' vs in-process '$off'"
[ $((b1 - b0)) -ge $((2 << 20)) ] || bad "not offloaded: $((b1 - b0)) bytes reached the daemon"

out=$(OPENSSL_CONF=$gen timeout 30 $py "$tmp/gone.py" "$dpid" 2>"$tmp/gone.err")
rc=$?
wait "$dpid" 2>/dev/null
dpid=
[ $rc = 0 ] || bad "python died (exit $rc) when the daemon went away under a digest: $(tail -2 "$tmp/gone.err")"
[ "$out" = "ValueError True" ] || bad "the digest after the daemon went away: '$out' (want a ValueError naming cryptod)"

prov_end
