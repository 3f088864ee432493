#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check docs/grafana-cryptod.json against a real scrape of the exporter,
so that the dashboard cannot drift from the metrics:

    dashboard_check.py DASHBOARD.json SCRAPE.prom [RULES.yml]

Checks: the file is JSON with a Grafana 9+ schemaVersion; a datasource
variable of type prometheus that every panel and query uses; unique panel
ids, each with a gridPos; every PromQL expression (panel targets and
variable queries) names only metrics the scrape declares (# TYPE, with
_sum/_count of summaries) or Prometheus's own per-target 'up'; and the
panels an operator needs are there (ops and bytes per engine and per
program, errors, authentication failures, queue depth, latency). Exit 0
when it passes, 1 with one line per problem.

With RULES.yml it also writes the panels' expressions, Grafana's
variables replaced, as Prometheus recording rules, for
'promtool check rules' to parse as Prometheus itself would.
"""
import json
import re
import sys

# Series Prometheus itself writes for every target: up is 0 when the
# exporter answers 503 (cryptod down) or does not answer.
PROMETHEUS_OWN = {"up"}
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right",
            "bool", "and", "or", "unless", "offset", "inf", "nan"}
# What the dashboard must query, by what an operator watches.
REQUIRED = {
    "ops per engine": "cryptod_engine_ops_total",
    "bytes per engine": "cryptod_engine_bytes_total",
    "ops per program": "cryptod_program_ops_total",
    "bytes per program": "cryptod_program_bytes_total",
    "errors": "cryptod_engine_errors_total",
    "errors per program": "cryptod_program_errors_total",
    "authentication failures": "cryptod_engine_auth_failures_total",
    "queue depth": "cryptod_queue_in_flight",
    "latency": "cryptod_worker_service_seconds",
}


def scraped_names(text):
    names = set()
    for m in re.finditer(r"^# TYPE (\S+) (\S+)$", text, re.M):
        name, kind = m.groups()
        names.add(name)
        if kind in ("summary", "histogram"):
            names |= {name + "_sum", name + "_count"}
        if kind == "histogram":
            names.add(name + "_bucket")
    return names


def metric_names(expr):
    """The metric names a PromQL expression reads."""
    e = re.sub(r"label_values\(([^,)]*)(,\s*\w+)?\)", r"\1", expr)
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', e)
    e = re.sub(r"\{[^}]*\}", " ", e)
    e = re.sub(r"\[[^\]]*\]", " ", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)",
               " ", e)
    e = re.sub(r"\$\{?\w+(:\w+)?\}?", " ", e)
    out = set()
    for m in re.finditer(r"[a-zA-Z_:][a-zA-Z0-9_:]*", e):
        before = e[m.start() - 1] if m.start() else " "
        if before.isdigit() or before == ".":
            continue  # the exponent of 1e3
        if e[m.end():].lstrip().startswith("("):
            continue  # a function or an aggregation
        if m.group(0) in KEYWORDS:
            continue
        out.add(m.group(0))
    return out


def write_rules(path, exprs):
    """Each panel expression as a recording rule (JSON is YAML)."""
    subst = {"$__rate_interval": "5m", "$__interval": "1m",
             "$__range": "1h", "$job": ".*", "$instance": ".*"}
    rules = []
    for i, (_, expr) in enumerate(exprs):
        for k, v in subst.items():
            expr = expr.replace(k, v)
        rules.append({"record": f"dashboard:expr{i}", "expr": expr})
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"groups": [{"name": "grafana-cryptod", "rules": rules}]}, f,
                  indent=1)


def panels_of(d):
    for p in d.get("panels", []):
        yield p
        yield from p.get("panels", [])  # collapsed rows


def main():
    dash = json.load(open(sys.argv[1], encoding="utf-8"))
    scraped = scraped_names(open(sys.argv[2], encoding="utf-8").read())
    errs = []
    if not isinstance(dash.get("schemaVersion"), int) or dash["schemaVersion"] < 36:
        errs.append(f"schemaVersion {dash.get('schemaVersion')}: Grafana 9 has 36 and up")
    tvars = dash.get("templating", {}).get("list", [])
    ds = [v for v in tvars if v.get("type") == "datasource"
          and v.get("query") == "prometheus"]
    if len(ds) != 1:
        errs.append("no single datasource variable of type prometheus")
    dsref = "${%s}" % ds[0]["name"] if ds else None

    exprs = []
    for v in tvars:
        if v.get("type") == "query":
            q = v.get("query")
            exprs.append((f"variable {v.get('name')}",
                          q.get("query", "") if isinstance(q, dict) else q or ""))
            if (v.get("datasource") or {}).get("uid") != dsref:
                errs.append(f"variable {v.get('name')} does not use {dsref}")
    ids = set()
    for p in panels_of(dash):
        title = p.get("title", "?")
        if p.get("id") in ids:
            errs.append(f"panel id {p.get('id')} repeated")
        ids.add(p.get("id"))
        if "gridPos" not in p:
            errs.append(f"panel '{title}' has no gridPos")
        if p.get("type") == "row":
            continue
        if (p.get("datasource") or {}).get("uid") != dsref:
            errs.append(f"panel '{title}' does not use the datasource {dsref}")
        if not p.get("targets"):
            errs.append(f"panel '{title}' has no query")
        for t in p.get("targets", []):
            if not t.get("expr"):
                errs.append(f"panel '{title}' has a target without expr")
            exprs.append((f"panel '{title}'", t.get("expr", "")))

    used = set()
    for where, expr in exprs:
        for name in metric_names(expr):
            used.add(name)
            if name not in scraped and name not in PROMETHEUS_OWN:
                errs.append(f"{where}: {name} is not in the scrape ({expr})")
    if len(sys.argv) > 3:
        write_rules(sys.argv[3], [x for x in exprs if x[0].startswith("panel")])
    for what, name in REQUIRED.items():
        if name not in used:
            errs.append(f"no panel for {what} ({name})")
    for e in errs:
        print("dashboard_check: " + e)
    print(f"dashboard_check: {len(exprs)} queries, {len(used)} metrics, "
          f"{len(errs)} problems")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
