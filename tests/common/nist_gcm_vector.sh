#!/bin/sh
# SPDX-License-Identifier: MIT
# Print one NIST CAVP AES-128-GCM encryption vector as
#   KEY IV PT AAD CT TAG   (hex)
# the first of [Keylen = 128] [IVlen = 96] [PTlen = 128] [AADlen = 128]
# [Taglen = 128] in Debian's python3-cryptography-vectors. Exit 77 when
# the file is missing, 1 when no such vector is in it.
VEC=/usr/lib/python3/dist-packages/cryptography_vectors/ciphers/AES/GCM/gcmEncryptExtIV128.rsp
[ -r "$VEC" ] || { echo "$VEC missing (python3-cryptography-vectors)" >&2; exit 77; }
tr -d '\r' <"$VEC" | awk '
	/^\[/ {
		sec = sec $0
		if ($0 ~ /Taglen/) {
			want = sec ~ /IVlen = 96\]/ && sec ~ /PTlen = 128\]/ &&
			       sec ~ /AADlen = 128\]/ && sec ~ /Taglen = 128\]/
			sec = ""
		}
		next
	}
	want && /^Count = 0$/ { grab = 1; next }
	grab && /^(Key|IV|PT|AAD|CT|Tag) = / { v[$1] = $3 }
	grab && /^Tag = / {
		print v["Key"], v["IV"], v["PT"], v["AAD"], v["CT"], v["Tag"]
		found = 1
		exit
	}
	END { exit !found }'
