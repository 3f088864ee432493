#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# cryptoctl bench on tiny runs against a spawned daemon: the table, CSV and
# JSON are well-formed and name the paths, --queues runs one client per
# queue, --png writes a PNG (when gnuplot is installed), --dmcrypt
# reports five runs per algorithm and path, the worker pool's modes give
# their sheets as CSV and JSON, cryptod-bench and cryptod-poolbench are
# links that run it, bad arguments exit 2. Checks
# shapes and counts only: no figure decides anything.
#
#   test_bench.sh CRYPTOD CRYPTOCTL
set -u

DAEMON=$1
CTL=$2

if ! command -v python3 >/dev/null; then
	echo "skipped: python3 is needed"
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cryptoctl-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check()
{
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else bad "$desc"; fi
}
out=$tmp/out
err=$tmp/err
# bench ARGS...: a private daemon each time; tiny rounds.
bench()
{
	"$CTL" bench --spawn-daemon "$DAEMON" --rounds 1 --time-ms 20 "$@" \
		>"$out" 2>"$err"
	rc=$?
}
py()
{
	python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" "$out"
}

# ---- the table -------------------------------------------------------------
bench --sizes 64,1024
check "bench (table) exits 0" test "$rc" = 0
check "default header: Gbps per path, cryptod against its twin" \
	grep -Eq "^SIZE\(B\) +cryptod +ipsec-mb +(dpdk +)?openssl +cryptod/ipsec-mb$" "$out"
check "the table says its unit" grep -q "^Throughput in Gbps (10^9 bit/s of payload) per buffer size," "$out"
check "a row per size" sh -c "grep -Eq '^ +64 ' '$out' && grep -Eq '^ +1024 ' '$out'"
check "default output within 100 columns" \
	awk 'length > 100 { print "too wide: " $0; bad = 1 } END { exit bad }' "$out"
check "progress on stderr" grep -q "^\[1/2\] aes-128-gcm 64 B" "$err"
check "the kernel path is skipped with a reason when unavailable" \
	sh -c "grep -q 'cryptod-kernel' '$out' || grep -q 'no cryptod-kernel path: ' '$err'"
check "the machine: CPU model, flags, ipsec-mb's code path" \
	sh -c "grep -Eq '^Machine: .+, [0-9]+ CPUs online; intel-ipsec-mb [0-9.]+ picks its [a-z0-9]+ code' '$out' &&
		grep -Eq '^Machine flags: ' '$out'"
check "the daemon's counters for our queue" grep -q "^Daemon, bench queue " "$out"

bench --sizes 64,1024 --wide
check "--wide: seed-format header" \
	grep -Eq "^Buffer Size\(B\) +cryptod OPS\(M\) +cryptod Throughput\(Gbps\)" "$out"
check "--wide: in-process paths side by side" \
	sh -c "grep -q 'ipsec-mb OPS(M)' '$out' && grep -q 'openssl OPS(M)' '$out'"
bench --sizes 64 --no-inproc
check "--no-inproc: no ratio column, no 0.0 ratio" \
	sh -c "test $rc = 0 && grep -Eq '^SIZE\(B\) +cryptod( +cryptod-kernel)?\$' '$out' && ! grep -q '0\.00\$' '$out'"

# ---- CSV ---------------------------------------------------------------------
bench --sizes 64,256 --alg aes-128-cbc,aes-256-xts --csv
check "bench --csv exits 0" test "$rc" = 0
help_cols=$("$CTL" bench --help | sed -n '/--csv columns:/,/(runs separated/p' |
	tr -d ' \n' | sed 's/.*--csvcolumns://; s/(runs.*//')
check "the CSV header is the one --help documents ($help_cols)" \
	test "$(head -n 1 "$out")" = "$help_cols"
python3 - "$out" <<'EOF' >"$tmp/csv.log" 2>&1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
want = ["alg", "dir", "path", "size", "ops_m", "gbps", "ratio", "mean_mbs", "runs_mbs", "ratio_dpdk", "ratio_zc"]
assert list(rows[0].keys()) == want, rows[0].keys()
algs = {(r["alg"], r["path"]) for r in rows}
assert ("aes-128-cbc", "cryptod") in algs and ("aes-128-cbc", "ipsec-mb") in algs, algs
assert ("aes-256-xts", "cryptod") in algs and ("aes-256-xts", "openssl") in algs, algs
# DPDK's PMD is a path where the plugin is built (CBC: crypto_aesni_mb);
# XTS has no DPDK software PMD path.
dpdk = ("aes-128-cbc", "dpdk") in algs
assert ("aes-256-xts", "dpdk") not in algs, algs
for r in rows:
    assert r["size"] in ("64", "256"), r
    float(r["ops_m"]); float(r["gbps"]); float(r["mean_mbs"])
    # a ratio is a number > 0, or empty where none was measured (the
    # twin itself), never 0.0
    assert r["ratio"] == "" or float(r["ratio"]) > 0, r
    assert len(r["runs_mbs"].split(";")) == 1, r
    vs = r["ratio_dpdk"]
    assert (vs != "") == (dpdk and r["alg"] == "aes-128-cbc" and r["path"] == "cryptod"), r
    assert vs == "" or float(vs) > 0, r
    assert r["ratio_zc"] == "", r  # no --submit
assert len(rows) == 2 * (4 if dpdk else 3) + 2 * 2, len(rows)
# per algorithm and size one row has no ratio: the twin itself
for a in ("aes-128-cbc", "aes-256-xts"):
    for z in ("64", "256"):
        assert sum(r["ratio"] == "" for r in rows if r["alg"] == a and r["size"] == z) == 1, (a, z)
EOF
check "CSV is well-formed: columns, paths, one row per path and size" test $? = 0
cat "$tmp/csv.log"

# ---- JSON, several queues and workers ---------------------------------------
bench --sizes 64 --queues 2 --workers 2 --json
check "bench --json --queues 2 exits 0" test "$rc" = 0
check "JSON: config and results" \
	py 'j["config"]["queues"] == 2 and j["config"]["workers"] == 2 and {r["path"] for r in j["results"]} >= {"cryptod", "ipsec-mb", "openssl"} and all(r["size"] == 64 and r["ops_m"] >= 0 and len(r["runs_mbs"]) == 1 for r in j["results"])'
check "JSON: the daemon path says 2 queues" \
	py 'any(p["path"] == "cryptod" and "2 queues" in p["desc"] for p in j["paths"])'
check "JSON: one result per path, verified before timing (none dropped)" \
	py 'sorted(r["path"] for r in j["results"]) == sorted(p["path"] for p in j["paths"]) and not any("dropped" in p["desc"] for p in j["paths"])'

# ---- PNG --------------------------------------------------------------------
if command -v gnuplot >/dev/null; then
	bench --sizes 64,512,4096 --png "$tmp/chart.png"
	check "bench --png exits 0" test "$rc" = 0
	check "the PNG exists, starts with the PNG signature, is not tiny" \
		python3 -c "import sys; b=open(sys.argv[1],'rb').read(); sys.exit(0 if b[:8] == b'\x89PNG\r\n\x1a\n' and len(b) > 5000 else 1)" "$tmp/chart.png"
	check "PNG width x height from its IHDR" \
		python3 -c "import struct,sys; b=open(sys.argv[1],'rb').read(); w,h=struct.unpack('>II', b[16:24]); sys.exit(0 if (w, h) == (1100, 650) else 1)" "$tmp/chart.png"
else
	echo "skipped: PNG checks (no gnuplot; scripts/deps.sh installs gnuplot-nox)"
fi
PATH=/nonexistent "$CTL" bench --spawn-daemon "$DAEMON" --rounds 1 \
	--time-ms 10 --sizes 64 --png "$tmp/none.png" >"$out" 2>"$err"
check "--png without gnuplot fails (exit 1) and says why" \
	sh -c "test $? = 1 && grep -q gnuplot '$err' && test ! -e '$tmp/none.png'"

# ---- dm-crypt ---------------------------------------------------------------
"$CTL" bench --spawn-daemon "$DAEMON" --dmcrypt --time-ms 10 \
	>"$out" 2>"$err"
rc=$?
check "bench --dmcrypt exits 0" test "$rc" = 0
check "dm-crypt table: five runs and the mean" \
	grep -Eq "^Algorithm +Path +Run 1 +Run 2 +Run 3 +Run 4 +Run 5 +Mean" "$out"
for a in aes-256-ecb aes-256-cbc aes-256-xts; do
	check "dm-crypt: $a through the daemon and in-process" \
		sh -c "grep -Eq '^$a +cryptod ' '$out' && grep -Eq '^$a +(ipsec-mb|openssl) ' '$out'"
done
check "dm-crypt: 1 MiB chunks" grep -q "1024 KiB chunks" "$out"
check "dm-crypt: LRW is accounted for" grep -q "aes-lrw" "$out"
"$CTL" bench --spawn-daemon "$DAEMON" --dmcrypt --time-ms 10 --json \
	>"$out" 2>"$err"
check "dm-crypt --json: 5 runs per result, 1 MiB" \
	py 'j["config"]["dmcrypt"] and len(j["results"]) >= 6 and all(r["size"] == 1048576 and len(r["runs_mbs"]) == 5 for r in j["results"])'

# --submit: the same ops one at a time through cc_submit/cc_poll.
bench --sizes 64,1024 --submit --no-dpdk --json
check "bench --submit exits 0" test "$rc" = 0
check "--submit: a cryptod-submit path with its ratio to cryptod" \
	py '[r for r in j["results"] if r["path"] == "cryptod-submit" and (r["ratio_zc"] or 0) > 0 and r["ops_m"] > 0] and len([r for r in j["results"] if r["path"] == "cryptod-submit"]) == 2'

# --no-dpdk leaves the DPDK path out; --poll-mode reaches the daemon.
bench --sizes 64 --alg aes-128-cbc --no-dpdk --poll-mode busy --csv
check "bench --no-dpdk --poll-mode busy exits 0" test "$rc" = 0
check "--no-dpdk: no dpdk rows" sh -c "grep -q '^aes-128-cbc,enc,cryptod,' '$out' && ! grep -q ',dpdk,' '$out'"

# Without the DPDK plugin the path is missing with a reason, the rest runs.
# --alg takes the names every command takes: the kernel's gcm(aes) is the
# list's first aes-gcm row.
CRYPTOD_BENCH_DPDK=$tmp/none.so bench --sizes 64 --alg 'gcm(aes)' --csv
check "bench without the DPDK plugin exits 0" test "$rc" = 0
check "--alg gcm(aes): the aes-128-gcm row" grep -q '^aes-128-gcm,enc,cryptod,' "$out"
check "without the plugin: no dpdk rows, and a note says why" \
	sh -c "! grep -q ',dpdk,' '$out' && grep -q 'no DPDK path: .*none.so not found' '$err'"

# ---- the worker pool's modes ---------------------------------------------
# The sheets through the same report writer: CSV and JSON shapes.
"$CTL" bench scale --spawn-daemon "$DAEMON" --smoke --max-workers 2 --csv \
	>"$out" 2>"$err"
check "bench scale --csv exits 0" test $? = 0
check "scale CSV: header, 2 GCM rows and the null engine's" \
	sh -c "head -1 '$out' | grep -q '^section,alg,workers,cpus,oversubscribed,gbps,mops,ratio_vs_1,' &&
	       test \$(grep -c '^scale,aes-128-gcm,' '$out') = 2 && grep -q '^scale,null,1,' '$out'"
check "scale CSV: the histogram view is text only" sh -c "! grep -q '^scale_runs' '$out'"
check "scale: notes on stderr, the order checked" \
	grep -q "^Checked: .* all in submission order with status OK" "$err"
"$CTL" bench latency --spawn-daemon "$DAEMON" --smoke --json >"$out" 2>"$err"
check "bench latency --json exits 0" test $? = 0
check "latency JSON: 8 configurations with numeric percentiles" \
	py 'j["mode"] == "latency" and [s["section"] for s in j["sheets"]] == ["latency"] and len(j["sheets"][0]["rows"]) == 8 and all(isinstance(r["p99_us"], float) and r["p50_us"] <= r["max_us"] for r in j["sheets"][0]["rows"])'
# The text tables of every pool mode within 100 columns; --wide adds the
# columns left out (pcrypt: Seed, enc + dec).
"$CTL" bench pool --spawn-daemon "$DAEMON" --smoke --max-workers 2 \
	--samples 20 --cold-samples 2 >"$out" 2>"$err"
check "bench pool (text): exit 0, every line within 100 columns" \
	sh -c "test $? = 0 && awk 'length > 100 { print \"too wide: \" \$0; b = 1 } END { exit b }' '$out'"
check "bench pool (text): scale, pcrypt and latency tables" \
	sh -c "grep -q '^Algorithm +Workers' '$out' || grep -Eq '^Algorithm +Workers +CPUs' '$out' &&
		grep -Eq '^Algorithm +Dirs +Serial \(1\) Mbit/s +Parallel' '$out' && grep -Eq '^Poll mode +Client wait +Load' '$out'"
"$CTL" bench pcrypt --spawn-daemon "$DAEMON" --smoke --wide >"$out" 2>"$err"
check "bench pcrypt --wide: enc + dec and Seed too" \
	sh -c "test $? = 0 && grep -Eq '^Algorithm +Dirs .*enc \+ dec .*Seed, 4 cores$' '$out'"
# 'cryptoctl bench' runs cryptod-bench, the program beside cryptoctl, so
# that cryptoctl links none of what the bench compares with; the pool's
# old name is a link to it.
ctl_path=$(command -v "$CTL" || echo "$CTL")
bench_bin=$(dirname "$(readlink -f "$ctl_path")")/cryptod-bench
# (libcrypto it links for its own sake: sign, verify and derive read key
# files and hash their input.)
check "cryptoctl links no benchmark peer (ipsec-mb, DPDK)" \
	sh -c "! ldd '$ctl_path' | grep -Eq 'IPSec_MB|librte_'"
alias_dir=$tmp/alias
mkdir -p "$alias_dir"
ln -s "$bench_bin" "$alias_dir/cryptod-bench"
ln -s "$bench_bin" "$alias_dir/cryptod-poolbench"
"$alias_dir/cryptod-bench" --spawn-daemon "$DAEMON" --rounds 1 --time-ms 10 \
	--sizes 64 --csv >"$out" 2>"$err"
check "cryptod-bench runs cryptoctl bench" \
	sh -c "test $? = 0 && head -1 '$out' | grep -q '^alg,dir,path,size,'"
"$alias_dir/cryptod-poolbench" --spawn-daemon "$DAEMON" --smoke \
	--max-workers 1 --samples 20 --cold-samples 2 --csv >"$out" 2>"$err"
check "cryptod-poolbench runs cryptoctl bench pool" \
	sh -c "test $? = 0 && grep -q '^scale,' '$out' && grep -q '^pcrypt,' '$out' && grep -q '^latency,' '$out'"

# ---- bad arguments ----------------------------------------------------------
for args in "--queues 0" "--queues 17" "--csv --json" "--dmcrypt --sizes 64" \
	"--poll-mode fast" \
	"--alg nope" "--sizes 0" "--burst 0" "unexpected"; do
	# shellcheck disable=SC2086
	"$CTL" bench $args >"$out" 2>"$err"
	check "bench $args exits 2" test $? = 2
done
for args in "scale" "latency --csv --json --spawn-daemon $DAEMON" \
	"pcrypt --spawn-daemon $DAEMON --pause-us 100 --spin-us 200" \
	"pool --spawn-daemon $DAEMON --max-workers 0" "scale --alg aes-128-gcm"; do
	# shellcheck disable=SC2086
	"$CTL" bench $args >"$out" 2>"$err"
	check "bench $args exits 2" sh -c "test $? = 2 && test -s '$err'"
done
"$CTL" bench --help >"$out" 2>"$err"
check "bench --help" sh -c "test $? = 0 && grep -q '^Usage: cryptoctl bench' '$out'"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
