#!/usr/bin/env bash
# Install everything cryptod needs to build and test, from Debian packages.
# Safe to run again; needs root (or sudo) and apt.
set -euo pipefail

PKGS=(
	build-essential cmake pkg-config git
	libipsec-mb-dev libssl-dev openssl libevent-dev
	libprotobuf-c-dev protobuf-c-compiler
	libcmocka-dev libkcapi-dev
	clang libclang-rt-14-dev clang-format
	python3 python3-cryptography python3-cryptography-vectors
	systemd groff-base xxd strace
	# tests/cli/cryptoctl_lib.sh: hexdump turns bytes into hex in one start
	bsdextrautils
	# tests/cli/test_cryptoctl_stream.sh: openssl enc/mac to compare with,
	# GNU time for the peak RSS of a 1 GiB pipe
	openssl time
	# the kernel VM suite (tests/vm/): Debian's kernel, its headers for
	# kmod-shim, qemu (TCG), a static busybox for the initramfs
	linux-image-amd64 linux-headers-amd64 qemu-system-x86
	busybox-static kmod cpio
	# cryptoctl bench --png draws its chart with gnuplot
	gnuplot-nox
	# cryptoctl bench's DPDK path: the cryptodev software PMDs in-process
	libdpdk-dev librte-crypto-ipsec-mb23
	# tests/provider/test_prov_nginx.sh and bench/provider-nginx.sh: a real
	# server and client through the provider. Debian 12's nginx (nginx-light
	# is only a metapackage on it, adding the echo module) has the SSL
	# module and links libssl 3; curl links OpenSSL 3 too.
	nginx curl
	# tests/cli/test_metrics.sh: promtool checks what the exporter serves.
	# Its package is the whole Prometheus server (96 MB); its postinst
	# starts the server where nothing refuses (a container's policy-rc.d
	# does): it is stopped again below.
	prometheus
	# the Debian packages (debian/, tests/deb/): debhelper with the dkms
	# add-on (cryptoshim-dkms), lintian to check them
	debhelper dh-dkms dkms lintian
	# the systemd boot test (tests/boot/): a bookworm image from the
	# mirror, made into an ext4 file system without mounting it
	mmdebstrap e2fsprogs
)

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#PKGS[@]} packages present"
	exit 0
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Only promtool was wanted, not a Prometheus server running on :9090.
if [[ " ${missing[*]} " == *" prometheus "* ]]; then
	if [ -d /run/systemd/system ]; then
		$SUDO systemctl disable --now prometheus.service >/dev/null 2>&1 || true
	elif [ -x /etc/init.d/prometheus ]; then
		$SUDO /etc/init.d/prometheus stop >/dev/null 2>&1 || true
	fi
fi
echo "deps: done"
