#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Known-answer vectors for the daemon's key pairs (docs/asymmetric.md).

Reads python3-cryptography-vectors' files, builds each vector's key as
DER with python3-cryptography, writes one case a line (pk_run.c's format)
and runs pk_run over them against a fresh daemon:

  RSA PKCS#1 v1.5 SigGen (FIPS 186-2, 2048/3072/4096 bits): deterministic,
    so the daemon's signature must be the vector's bytes;
  RSA PSS SigVer (FIPS 186-3): true and false cases;
  RSA-OAEP decryption (pyca's SHA-2 OAEP vectors, 2048 bits);
  ECDSA SigVer P-256/384/521 (FIPS 186-3): true and false cases;
  Ed25519 (RFC 8032's and the SUPERCOP file's first lines) and Ed448
    (RFC 8032, pure): signature bytes equal, then verified;
  X25519 and X448 (RFC 7748 section 5.2; X25519's section 6.1 typed in);
  ECDH P-256/P-384/P-521 (CAVP KAS ZZOnly): the shared secret, and the
    false cases never give the vector's.

Usage: pk_vectors.py PK_RUN. Exit 0 passed, 1 failed, 77 skipped (no
vectors installed).
"""
import hashlib
import os
import re
import subprocess
import sys
import tempfile

VEC = "/usr/lib/python3/dist-packages/cryptography_vectors/asymmetric"
try:
    from cryptography.hazmat.primitives import serialization as ser
    from cryptography.hazmat.primitives.asymmetric import (
        ec, ed448, ed25519, rsa, utils, x448, x25519)
except ImportError:
    print("python3-cryptography missing: skipped")
    sys.exit(77)
if not os.path.isdir(VEC):
    print("python3-cryptography-vectors missing: skipped")
    sys.exit(77)

MD = {"SHA1": 1, "SHA224": 2, "SHA256": 3, "SHA384": 4, "SHA512": 5}
RSA_ROW = {2048: "rsa-2048", 3072: "rsa-3072", 4096: "rsa-4096"}
EC_ROW = {"P-256": ("ec-p256", ec.SECP256R1()),
          "P-384": ("ec-p384", ec.SECP384R1()),
          "P-521": ("ec-p521", ec.SECP521R1())}
cases = []


def priv_der(k):
    return k.private_bytes(ser.Encoding.DER, ser.PrivateFormat.PKCS8,
                           ser.NoEncryption()).hex()


def pub_der(k):
    return k.public_bytes(ser.Encoding.DER,
                          ser.PublicFormat.SubjectPublicKeyInfo).hex()


def case(alg, op, key, inp, expect, out="-", pad=0, md=0, mgf1=0, salt=0,
         aad="-"):
    cases.append("\t".join(str(x) for x in (
        alg, op, key, pad, md, mgf1, salt, inp or "-", aad or "-", expect,
        out or "-")))


def digest(name, msg_hex):
    return hashlib.new(name.lower().replace("-", ""),
                       bytes.fromhex(msg_hex)).hexdigest()


def rsa_private(n, e, d):
    p, q = rsa.rsa_recover_prime_factors(n, e, d)
    return rsa.RSAPrivateNumbers(
        p, q, d, rsa.rsa_crt_dmp1(d, p), rsa.rsa_crt_dmq1(d, q),
        rsa.rsa_crt_iqmp(p, q), rsa.RSAPublicNumbers(e, n)).private_key()


def blocks(path):
    """NIST-style KEY = value blocks with their [section]."""
    section, cur = None, {}
    for line in open(path):
        line = line.strip()
        if line.startswith("["):
            if cur:
                yield section, cur
                cur = {}
            section = line.strip("[]")
            continue
        m = re.match(r"(\w+) = ?(.*)", line)
        if m:
            cur[m.group(1)] = m.group(2)
        elif not line and cur:
            yield section, cur
            cur = {}
    if cur:
        yield section, cur


def rsa_siggen():
    path = f"{VEC}/RSA/FIPS_186-2/SigGen15_186-2.txt"
    mod, nums, key = None, {}, None
    for section, b in blocks(path):
        if section and section.startswith("mod"):
            mod = int(section.split("=")[1])
        for x in ("n", "e", "d"):  # a key's numbers, in blocks of their own
            if x in b:
                nums[x], key = int(b[x], 16), None
        if mod in RSA_ROW and "S" in b:
            if not key:
                key = priv_der(rsa_private(nums["n"], nums["e"], nums["d"]))
            case(RSA_ROW[mod], "sign", key, digest(b["SHAAlg"], b["Msg"]),
                 "ok", b["S"].lower(), pad=1, md=MD[b["SHAAlg"]])


def rsa_pss_sigver():
    path = f"{VEC}/RSA/FIPS_186-2/SigVerPSS_186-3.rsp"
    mod = n = None
    for section, b in blocks(path):
        if section and section.startswith("mod"):
            mod = int(section.split("=")[1])
        if "n" in b:
            n = int(b["n"], 16)
        if mod not in RSA_ROW or "S" not in b:
            continue
        try:
            key = pub_der(rsa.RSAPublicNumbers(int(b["e"], 16), n)
                          .public_key())
        except ValueError:
            continue  # an e no key may have: nothing to verify with
        salt = len(bytes.fromhex(b["SaltVal"])) if b["SaltVal"] != "00" \
            else 0
        case(RSA_ROW[mod], "verify", key, digest(b["SHAAlg"], b["Msg"]),
             "ok" if b["Result"].startswith("P") else "badsig", pad=2,
             md=MD[b["SHAAlg"]], salt=salt, aad=b["S"])


def rsa_oaep():
    for f in sorted(os.listdir(f"{VEC}/RSA/oaep-custom")):
        m = re.match(r"oaep-(sha\d+)-(sha\d+)\.txt", f)
        if not m:
            continue
        # oaep-<MGF1's digest>-<OAEP's digest>.txt
        mgf1, md = MD[m.group(1).upper()], MD[m.group(2).upper()]
        lines = [x.strip() for x in open(f"{VEC}/RSA/oaep-custom/{f}")]
        key, i, nkeys = None, 0, 0
        while i < len(lines):
            t = lines[i]
            if t == "# Private key" and nkeys == 2:
                break  # two keys a file: the CI host is slow
            if t == "# Private key":
                nkeys += 1
                nums = {}
                for j in range(i + 1, i + 17, 2):
                    nums[lines[j]] = int(lines[j + 1], 16)
                n, d = nums["# Modulus:"], nums["# Exponent:"]
                e = nums["# Public exponent:"]
                key = priv_der(rsa_private(n, e, d)) \
                    if n.bit_length() == 2048 else None
            if t == "# Message:" and key:
                case("rsa-2048", "decrypt", key, lines[i + 3], "ok",
                     lines[i + 1], pad=3, md=md, mgf1=mgf1)
                bad = bytearray.fromhex(lines[i + 3])
                bad[-1] ^= 1
                case("rsa-2048", "decrypt", key, bad.hex(), "authfail",
                     pad=3, md=md, mgf1=mgf1)
            i += 1


def ecdsa_sigver():
    for section, b in blocks(f"{VEC}/ECDSA/FIPS_186-3/SigVer.rsp"):
        curve, _, sha = (section or "").partition(",")
        if curve not in EC_ROW or "Msg" not in b:
            continue
        row, c = EC_ROW[curve]
        try:
            key = pub_der(ec.EllipticCurvePublicNumbers(
                int(b["Qx"], 16), int(b["Qy"], 16), c).public_key())
        except ValueError:
            continue  # a point off the curve: no key to verify with
        sig = utils.encode_dss_signature(int(b["R"], 16), int(b["S"], 16))
        case(row, "verify", key, digest(sha, b["Msg"]),
             "ok" if b["Result"].startswith("P") else "badsig",
             md=MD[sha.replace("-", "")], aad=sig.hex())


def eddsa():
    for line in open(f"{VEC}/Ed25519/sign.input").readlines()[:64]:
        sk, pk, msg, sm, _ = line.split(":")
        k = ed25519.Ed25519PrivateKey.from_private_bytes(
            bytes.fromhex(sk[:64]))
        case("ed25519", "sign", priv_der(k), msg, "ok", sm[:128])
        case("ed25519", "verify", pub_der(k.public_key()), msg, "ok",
             aad=sm[:128])
        bad = bytearray.fromhex(sm[:128])
        bad[0] ^= 1
        case("ed25519", "verify", pub_der(k.public_key()), msg, "badsig",
             aad=bad.hex())
    for _, b in blocks(f"{VEC}/Ed448/rfc8032.txt"):
        if "SECRET" not in b or b.get("CONTEXT"):
            continue  # pure EdDSA only: no context
        k = ed448.Ed448PrivateKey.from_private_bytes(
            bytes.fromhex(b["SECRET"]))
        case("ed448", "sign", priv_der(k), b["MESSAGE"], "ok",
             b["SIGNATURE"])
        case("ed448", "verify", pub_der(k.public_key()), b["MESSAGE"], "ok",
             aad=b["SIGNATURE"])


def xdh():
    for name, mod in (("X25519", x25519.X25519PrivateKey),
                      ("X448", x448.X448PrivateKey)):
        for _, b in blocks(f"{VEC}/{name}/rfc7748.txt"):
            if "INPUT_SCALAR" not in b:
                continue
            k = mod.from_private_bytes(bytes.fromhex(b["INPUT_SCALAR"]))
            case(name.lower(), "derive", priv_der(k), b["INPUT_U"], "ok",
                 b["OUTPUT_U"])
    # RFC 7748 section 6.1: Alice's and Bob's keys agree
    alice = "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"
    bob = "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"
    alice_pub = \
        "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"
    bob_pub = "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"
    shared = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"
    for priv, peer in ((alice, bob_pub), (bob, alice_pub)):
        k = x25519.X25519PrivateKey.from_private_bytes(bytes.fromhex(priv))
        case("x25519", "derive", priv_der(k), peer, "ok", shared)


def ecdh():
    path = f"{VEC}/ECDH/KASValidityTest_ECCStaticUnified_NOKC_ZZOnly_init.fax"
    rows = {"EC": EC_ROW["P-256"], "ED": EC_ROW["P-384"],
            "EE": EC_ROW["P-521"]}
    for section, b in blocks(path):
        sect = (section or "").split(" ")[0]
        if sect not in rows or "dsIUT" not in b:
            continue
        row, c = rows[sect]
        try:
            k = ec.derive_private_key(int(b["dsIUT"], 16), c)
        except ValueError:
            continue
        nb = (c.key_size + 7) // 8
        def fixed(h):  # the vectors' numbers, as nb bytes
            return format(int(h, 16), f"0{2 * nb}x")
        peer = "04" + fixed(b["QsCAVSx"]) + fixed(b["QsCAVSy"])
        case(row, "derive", priv_der(k), peer,
             "ok" if b["Result"].startswith("P") else "notz", fixed(b["Z"]))


def main():
    for f in (rsa_siggen, rsa_pss_sigver, rsa_oaep, ecdsa_sigver, eddsa,
              xdh, ecdh):
        before = len(cases)
        f()
        print(f"{f.__name__}: {len(cases) - before} cases")
        if len(cases) == before:
            print(f"{f.__name__}: no vectors found")
            return 1
    with tempfile.NamedTemporaryFile("w", suffix=".cases") as t:
        t.write("\n".join(cases) + "\n")
        t.flush()
        return subprocess.call([sys.argv[1], t.name])


if __name__ == "__main__":
    sys.exit(main())
