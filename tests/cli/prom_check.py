#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A strict checker of the Prometheus text exposition format (0.0.4), for
'cryptoctl stats --prometheus' (promtool is not a test dependency).

    prom_check.py FILE [REQUIRED_FAMILY...]

Checks: every line is a comment, blank, or a sample with a valid metric
name, well-formed labels (valid names, quoted and correctly escaped
values, no duplicates) and a float value; each family has exactly one HELP
and one TYPE, both before its samples; a family's samples are contiguous;
no series appears twice; counters end in _total and are never negative;
a summary's samples are NAME{..., quantile="q"}, NAME_sum and NAME_count
with q in [0, 1] and the quantiles of one series ordered. Exit 0 when the
file passes, 1 with one line per problem otherwise.
"""
import math
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*$")
TYPES = {"counter", "gauge", "summary", "histogram", "untyped"}


def parse_labels(s, errs, ln):
    """s: text between the braces. Returns a list of (name, value)."""
    out, i = [], 0
    while i < len(s):
        m = re.match(r"([a-zA-Z_][a-zA-Z0-9_]*)=\"", s[i:])
        if not m:
            errs.append(f"{ln}: bad label at '{s[i:]}'")
            return out
        name = m.group(1)
        i += m.end()
        val = []
        while True:
            if i >= len(s):
                errs.append(f"{ln}: unterminated label value")
                return out
            c = s[i]
            if c == "\\":
                if i + 1 >= len(s) or s[i + 1] not in '\\"n':
                    errs.append(f"{ln}: bad escape in label {name}")
                    return out
                val.append({"n": "\n"}.get(s[i + 1], s[i + 1]))
                i += 2
            elif c == '"':
                i += 1
                break
            elif c == "\n":
                errs.append(f"{ln}: newline in label value")
                return out
            else:
                val.append(c)
                i += 1
        out.append((name, "".join(val)))
        if i < len(s):
            if s[i] != ",":
                errs.append(f"{ln}: expected ',' after label {name}")
                return out
            i += 1
    return out


def parse_value(v):
    if v in ("+Inf", "-Inf", "NaN"):
        return float(v.replace("Inf", "inf").replace("NaN", "nan"))
    if not re.match(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$", v):
        raise ValueError(v)
    return float(v)


def family_of(name, types):
    for suffix in ("_sum", "_count", "_bucket"):
        base = name[: -len(suffix)] if name.endswith(suffix) else None
        if base and types.get(base) in ("summary", "histogram"):
            return base
    return name


def check(text):
    errs = []
    helps, types, seen_samples, done = {}, {}, set(), set()
    current = None
    quantiles = {}
    if text and not text.endswith("\n"):
        errs.append("last line does not end in a newline")
    for ln, line in enumerate(text.split("\n")[:-1], 1):
        if not line.strip():
            continue
        if line.startswith("#"):
            m = re.match(r"# (HELP|TYPE) (\S+) ?(.*)$", line)
            if not m:
                continue  # a plain comment
            kind, name, rest = m.groups()
            if not NAME.match(name):
                errs.append(f"{ln}: bad metric name {name}")
            if name in done:
                errs.append(f"{ln}: {kind} for {name} after its samples")
            d = helps if kind == "HELP" else types
            if name in d:
                errs.append(f"{ln}: second {kind} for {name}")
            if kind == "TYPE" and rest not in TYPES:
                errs.append(f"{ln}: unknown type '{rest}'")
            if kind == "HELP" and not rest:
                errs.append(f"{ln}: empty HELP for {name}")
            d[name] = rest
            continue
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$", line)
        if not m:
            errs.append(f"{ln}: not a sample: {line!r}")
            continue
        name, _, lab, val = m.group(1), m.group(2), m.group(3), m.group(4)
        labels = parse_labels(lab, errs, ln) if lab else []
        names = [k for k, _ in labels]
        if len(set(names)) != len(names):
            errs.append(f"{ln}: duplicate label in {line!r}")
        try:
            v = parse_value(val)
        except ValueError:
            errs.append(f"{ln}: bad value {val!r}")
            continue
        fam = family_of(name, types)
        if fam not in types or fam not in helps:
            errs.append(f"{ln}: sample of {fam} before its HELP and TYPE")
        if fam != current:
            if fam in done:
                errs.append(f"{ln}: samples of {fam} are not contiguous")
            if current:
                done.add(current)
            current = fam
        key = (name, tuple(sorted(labels)))
        if key in seen_samples:
            errs.append(f"{ln}: series repeated: {line!r}")
        seen_samples.add(key)
        t = types.get(fam)
        if t == "counter":
            if not fam.endswith("_total"):
                errs.append(f"{ln}: counter {fam} does not end in _total")
            if v < 0 or math.isnan(v):
                errs.append(f"{ln}: counter {fam} is {v}")
        if t == "summary" and name == fam:
            q = dict(labels).get("quantile")
            if q is None:
                errs.append(f"{ln}: summary sample without quantile")
            else:
                try:
                    qf = parse_value(q)
                except ValueError:
                    qf = -1
                if not 0 <= qf <= 1:
                    errs.append(f"{ln}: quantile {q} out of [0, 1]")
                series = tuple(sorted((k, x) for k, x in labels if k != "quantile"))
                quantiles.setdefault((fam, series), []).append((qf, v))
        if t == "summary" and name.endswith("_count") and v != int(v):
            errs.append(f"{ln}: {name} is not an integer")
    for (fam, series), qs in quantiles.items():
        vals = [v for _, v in sorted(qs)]
        if vals != sorted(vals):
            errs.append(f"{fam}{dict(series)}: quantiles not ordered: {qs}")
    for name in set(helps) | set(types):
        if name not in helps or name not in types:
            errs.append(f"{name}: HELP and TYPE must both be given")
    return errs, set(types)


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    errs, fams = check(text)
    for want in sys.argv[2:]:
        if want not in fams:
            errs.append(f"family {want} missing")
    for e in errs:
        print("prom_check: " + e)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
