#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Wycheproof's key pair vectors as test_pk_wycheproof's cases.

Reads the testvectors_v1 JSON files of C2SP/wycheproof in DIR (not in
Debian, so never a CI dependency) and writes, on stdout, one line a
record, tab-separated:

  F file                       a file begins
  S count reason               count of its tests the daemon does not
                               serve (a key size, curve or digest no row
                               takes; a signature form it does not read)
  T tcId result alg op key keyok pad md mgf1 salt in aad out comment

result is Wycheproof's (valid, invalid, acceptable); alg a row's name;
op verify, decrypt or derive; key the session's DER in hex (the group's
SubjectPublicKeyInfo or PKCS#8, or, for ECDH and XDH, the test's private
key made PKCS#8 here); keyok 1 when the daemon must load the key, 0 when
it refuses that form by design (an RSASSA-PSS key, whose SPKI pins PSS's
parameters: docs/asymmetric.md); pad, md, mgf1, salt struct cc_pk_params' fields;
in, aad and out hex, "-" for none (RSA and ECDSA sign the message's
digest, computed here; EdDSA the message). test_pk_wycheproof.c runs
them.

Usage: wycheproof_cases.py DIR. Exit 0, 77 when python3-cryptography is
missing.
"""
import hashlib
import json
import os
import re
import sys

try:
    from cryptography.hazmat.primitives import serialization as ser
    from cryptography.hazmat.primitives.asymmetric import ec, x448, x25519
except ImportError:
    print("python3-cryptography missing", file=sys.stderr)
    sys.exit(77)

# The files issue 28 is judged on, in this order.
FILES = [
    r"rsa_signature_(2048|3072|4096)_sha(256|384|512)_test\.json",
    r"rsa_pss_.*_test\.json",
    r"rsa_oaep_(2048|3072|4096)_.*_test\.json",
    r"ecdsa_secp(256|384|521)r1_sha(256|384|512)(_p1363)?_test\.json",
    r"ed25519_test\.json", r"ed448_test\.json",
    r"ecdh_secp(256|384)r1_ecpoint_test\.json",
    r"x25519_test\.json", r"x448_test\.json",
]
MD = {"SHA-1": 1, "SHA-224": 2, "SHA-256": 3, "SHA-384": 4, "SHA-512": 5}
RSA_ROW = {2048: "rsa-2048", 3072: "rsa-3072", 4096: "rsa-4096"}
EC_ROW = {"secp256r1": ("ec-p256", ec.SECP256R1()),
          "secp384r1": ("ec-p384", ec.SECP384R1()),
          "secp521r1": ("ec-p521", ec.SECP521R1())}
PAD_PKCS1, PAD_PSS, PAD_OAEP = 1, 2, 3


def digest(name, msg):
    return hashlib.new(name.lower().replace("-", ""),
                       bytes.fromhex(msg)).hexdigest()


def clean(s):
    return re.sub(r"[\t\n]", " ", s) or "-"


class Out:
    def __init__(self):
        self.skips = {}

    def skip(self, n, why):
        self.skips[why] = self.skips.get(why, 0) + n

    def flush(self):
        for why, n in self.skips.items():
            print(f"S\t{n}\t{why}")
        self.skips = {}

    @staticmethod
    def test(t, alg, op, key, inp, pad=0, md=0, mgf1=0, salt=0, aad="-",
             out="-", keyok=1):
        print("\t".join(str(x) for x in (
            "T", t["tcId"], t["result"], alg, op, key, keyok, pad, md, mgf1,
            salt,
            inp or "-", aad or "-", out or "-", clean(t["comment"]))))


def rsa_group(o, g):
    """The row and the group's digests, or None after counting a skip."""
    row = RSA_ROW.get(int(g["keySize"]))
    if not row:
        o.skip(len(g["tests"]), f"RSA-{g['keySize']}: no row")
        return None
    mgf = g.get("mgf", "MGF1")
    mgf1 = g.get("mgfSha", g["sha"])
    if g["sha"] not in MD or mgf != "MGF1" or mgf1 not in MD:
        o.skip(len(g["tests"]), f"{g['sha']}, mask {mgf} {mgf1}: no digest"
               " of the daemon's")
        return None
    return row, MD[g["sha"]], MD[mgf1]


def rsa_sig(o, g):
    r = rsa_group(o, g)
    if not r:
        return
    row, md, mgf1 = r
    pss = g["type"] != "RsassaPkcs1Verify"
    # id-RSASSA-PSS keys: the daemon's RSA rows take rsaEncryption keys
    pss_key = g["type"] == "RsassaPssWithParametersVerify"
    for t in g["tests"]:
        o.test(t, row, "verify", g["publicKeyDer"], digest(g["sha"], t["msg"]),
               pad=PAD_PSS if pss else PAD_PKCS1, md=md,
               mgf1=mgf1 if pss else 0,
               salt=int(g["sLen"]) if pss else 0, aad=t["sig"],
               keyok=0 if pss_key else 1)


def rsa_oaep(o, g):
    r = rsa_group(o, g)
    if not r:
        return
    row, md, mgf1 = r
    for t in g["tests"]:
        o.test(t, row, "decrypt", g["privateKeyPkcs8"], t["ct"], pad=PAD_OAEP,
               md=md, mgf1=mgf1, aad=t["label"], out=t["msg"])


def ecdsa(o, g, p1363):
    curve = g["publicKey"]["curve"]
    if curve not in EC_ROW or g["sha"] not in MD:
        o.skip(len(g["tests"]), f"{curve} {g['sha']}: no row")
        return
    if p1363:
        o.skip(len(g["tests"]),
               "IEEE P1363 signatures (r || s): the daemon reads DER")
        return
    for t in g["tests"]:
        o.test(t, EC_ROW[curve][0], "verify", g["publicKeyDer"],
               digest(g["sha"], t["msg"]), md=MD[g["sha"]], aad=t["sig"])


def eddsa(o, g):
    row = {"edwards25519": "ed25519", "edwards448": "ed448"}.get(
        g["publicKey"]["curve"])
    if not row:
        o.skip(len(g["tests"]), f"{g['publicKey']['curve']}: no row")
        return
    for t in g["tests"]:
        o.test(t, row, "verify", g["publicKeyDer"], t["msg"], aad=t["sig"])


def pkcs8(k):
    return k.private_bytes(ser.Encoding.DER, ser.PrivateFormat.PKCS8,
                           ser.NoEncryption()).hex()


def ecdh(o, g):
    if g["curve"] not in EC_ROW:
        o.skip(len(g["tests"]), f"{g['curve']}: no row")
        return
    row, c = EC_ROW[g["curve"]]
    for t in g["tests"]:
        k = pkcs8(ec.derive_private_key(int(t["private"], 16), c))
        o.test(t, row, "derive", k, t["public"], out=t["shared"])


def xdh(o, g):
    row, cls = {"curve25519": ("x25519", x25519.X25519PrivateKey),
                "curve448": ("x448", x448.X448PrivateKey)}[g["curve"]]
    for t in g["tests"]:
        k = pkcs8(cls.from_private_bytes(bytes.fromhex(t["private"])))
        o.test(t, row, "derive", k, t["public"], out=t["shared"])


def run(path):
    o = Out()
    j = json.load(open(path))
    name = os.path.basename(path)
    print(f"F\t{name}")
    for g in j["testGroups"]:
        typ = g["type"]
        if typ in ("RsassaPkcs1Verify", "RsassaPssVerify",
                   "RsassaPssWithParametersVerify"):
            rsa_sig(o, g)
        elif typ == "RsaesOaepDecrypt":
            rsa_oaep(o, g)
        elif typ in ("EcdsaVerify", "EcdsaP1363Verify"):
            ecdsa(o, g, typ == "EcdsaP1363Verify")
        elif typ == "EddsaVerify":
            eddsa(o, g)
        elif typ == "EcdhEcpointTest":
            ecdh(o, g)
        elif typ == "XdhComp":
            xdh(o, g)
        else:
            o.skip(len(g["tests"]), f"{typ}: not read here")
    o.flush()


def main():
    d = sys.argv[1]
    names = sorted(os.listdir(d))
    n = 0
    for pat in FILES:
        for f in names:
            if re.fullmatch(pat, f):
                run(os.path.join(d, f))
                n += 1
    if not n:
        print(f"{d}: no Wycheproof files", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
