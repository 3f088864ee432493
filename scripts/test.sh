#!/usr/bin/env bash
# The whole test suite: install, build, test. What CI runs (.ci/run).
#  1. formatting check (clang-format, .clang-format)
#  2. gcc build with -Werror, every ctest test
#  3. the kernel VM suite (tests/vm/run-vm.sh): Debian's stock kernel under
#     qemu with the gcc build, AF_ALG, pcrypt and kmod-shim/cryptoshim.ko
#  3b. the Debian packages (tests/deb/test_deb.sh: dpkg-buildpackage,
#     lintian, contents) into build-deb/
#  3c. a real systemd boot (tests/boot/run-boot.sh): a bookworm image made
#     with mmdebstrap, the packages installed, booted under qemu with
#     systemd as PID 1; socket activation, notify, group access, reload,
#     broken configuration, watchdog, crashes, stop, journal, sandbox
#  4. clang build with ASan+UBSan, every ctest test
#  5. clang build with ThreadSanitizer, every ctest test (the daemon the
#     tests start is the TSan build too, and halts on any report)
#  6. libFuzzer (ASan+UBSan) on every parser of client bytes: replay the
#     saved crashers, then FUZZ_SECONDS (default 30) of fuzzing each
# Set QUICK=1 to skip the sanitizer and fuzzing passes while developing,
# VM=0 to skip the VM suite, DEB=0 to skip the packages (and the boot),
# BOOT=0 to skip the boot.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
start=$(date +%s)

scripts/deps.sh

# Debian's python3, whose packages deps.sh installs (cryptography and its
# vectors), not a shim that may come first in PATH (a pyenv shim takes
# about a second a start, and the cli tests start python hundreds of
# times).
pybin=$(mktemp -d)
trap 'rm -rf "$pybin"' EXIT
ln -s /usr/bin/python3 "$pybin/python3"
export PATH="$pybin:$PATH"

echo "== format check =="
mapfile -t SRC < <(git ls-files '*.c' '*.h' | grep -v '^kmod-shim/')
if ! clang-format --dry-run --Werror "${SRC[@]}" 2>/tmp/cryptod-format.log; then
	head -40 /tmp/cryptod-format.log
	echo "format check failed: run clang-format -i on the files above" >&2
	exit 1
fi
echo "format: ${#SRC[@]} files clean"

echo "== stray files check =="
# Outputs of commands run at the root (cli.out and cli.err, an openssl
# s_client session, were once committed): .gitignore keeps them out, and
# this catches one added anyway (git add -f).
stray=$(git ls-files | grep -E '^[^/]+\.(out|err|log)$' || true)
if [ -n "$stray" ]; then
	echo "$stray"
	echo "stray files tracked at the repository's root: git rm --cached them" >&2
	exit 1
fi
echo "stray files: none tracked"

run_suite() { # name build-dir cmake-args...
	local name=$1 dir=$2
	shift 2
	echo
	echo "== $name: build ($dir) =="
	BUILD_DIR=$dir scripts/build.sh -DCRYPTOD_WERROR=ON "$@"
	echo "== $name: ctest =="
	(cd "$dir" && ctest --output-on-failure --timeout 600 -j2)
}

run_suite "gcc" build-test-gcc -DCMAKE_C_COMPILER=gcc
if [ "${VM:-1}" != 0 ]; then
	echo
	KVER=$(tests/vm/run-vm.sh --print-kver)
	[ -n "$KVER" ] || { echo "no Debian kernel with headers for the VM suite" >&2; exit 1; }
	echo "== kmod-shim: build against $KVER =="
	make -s -C kmod-shim KDIR="/lib/modules/$KVER/build"
	echo "== kernel VM suite ($KVER, build-test-gcc) =="
	tests/vm/run-vm.sh --kver "$KVER" --kmod kmod-shim/cryptoshim.ko build-test-gcc
fi
if [ "${DEB:-1}" != 0 ]; then
	echo
	echo "== Debian packages (build-deb) =="
	t=$(date +%s)
	tests/deb/test_deb.sh build-deb
	echo "packages: $(( $(date +%s) - t )) s"
	if [ "${BOOT:-1}" != 0 ]; then
		echo
		echo "== systemd boot of the packages (tests/boot) =="
		rc=0
		tests/boot/run-boot.sh build-deb || rc=$?
		if [ $rc = 77 ]; then
			echo "systemd boot: skipped (see above)"
		elif [ $rc != 0 ]; then
			exit $rc
		fi
	fi
fi
if [ "${QUICK:-0}" != 1 ]; then
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		run_suite "clang asan+ubsan" build-test-asan -DCMAKE_C_COMPILER=clang \
		-DCMAKE_BUILD_TYPE=Debug -DCRYPTOD_SANITIZE=address,undefined
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		run_suite "clang tsan" build-test-tsan -DCMAKE_C_COMPILER=clang \
		-DCMAKE_BUILD_TYPE=Debug -DCRYPTOD_SANITIZE=thread
fi
if [ "${QUICK:-0}" != 1 ]; then
	echo
	echo "== libFuzzer: build (build-test-fuzz) =="
	BUILD_DIR=build-test-fuzz scripts/build.sh -DCMAKE_C_COMPILER=clang \
		-DCRYPTOD_TESTS=OFF -DCRYPTOD_FUZZ=ON -DCRYPTOD_SANITIZE=address,undefined
	# One target per core at a time, each on its own core for its 30 s
	# (five one after another left one core idle for 150 s).
	fuzz_one() { # target: replay its saved crashers, then fuzz
		local t=$1 bin=build-test-fuzz/tests/fuzz/$1 seeds=tests/fuzz/corpus/${1#fuzz_} work
		local crashers
		mapfile -t crashers < <(find "tests/fuzz/crashers/${t#fuzz_}" -type f 2>/dev/null)
		if [ ${#crashers[@]} -gt 0 ]; then
			echo "== $t: replaying ${#crashers[@]} saved crasher(s) =="
			"$bin" "${crashers[@]}" >/dev/null 2>&1 || {
				echo "$t: a saved crasher crashes again"
				return 1
			}
		fi
		work=$(mktemp -d)
		echo "== $t: ${FUZZ_SECONDS:-30} s from $(ls "$seeds" | wc -l) seeds =="
		UBSAN_OPTIONS=halt_on_error=1 "$bin" -max_total_time="${FUZZ_SECONDS:-30}" \
			-artifact_prefix="$work/" "$work" "$seeds" 2>"$work.log" || {
			tail -30 "$work.log"
			echo "$t found a crash: the input is in $work (save it in tests/fuzz/crashers/${t#fuzz_}/)"
			return 1
		}
		grep -E "^Done [0-9]+ runs" "$work.log" || tail -2 "$work.log"
		rm -rf "$work" "$work.log"
	}
	flogs=$(mktemp -d)
	running=0 ffail=0
	targets=(fuzz_desc fuzz_ctl fuzz_config fuzz_keyfile fuzz_pkimport)
	for t in "${targets[@]}"; do
		if [ "$running" -ge "$(nproc)" ]; then
			wait -n || ffail=1
			running=$((running - 1))
		fi
		fuzz_one "$t" >"$flogs/$t" 2>&1 &
		running=$((running + 1))
	done
	while [ "$running" -gt 0 ]; do
		wait -n || ffail=1
		running=$((running - 1))
	done
	for t in "${targets[@]}"; do cat "$flogs/$t"; done
	rm -rf "$flogs"
	[ "$ffail" = 0 ] || { echo "libFuzzer: a target failed (above)" >&2; exit 1; }
fi
echo
echo "all suites passed in $(( $(date +%s) - start )) s"
