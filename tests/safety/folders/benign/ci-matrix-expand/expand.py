#!/usr/bin/env python3
"""Expand GitHub Actions matrices."""
import argparse
import itertools
import sys

import yaml


def matches(combo: dict, rule: dict) -> bool:
    return all(combo.get(k) == v for k, v in rule.items())


def expand(matrix: dict) -> list[dict]:
    base = {k: v for k, v in matrix.items() if k not in ("include", "exclude")}
    keys = list(base)
    combos = [dict(zip(keys, vals)) for vals in itertools.product(*(base[k] for k in keys))] if keys else []
    for rule in matrix.get("exclude", []) or []:
        before = len(combos)
        combos = [c for c in combos if not matches(c, rule)]
        print(f"# exclude {rule} removed {before - len(combos)}", file=sys.stderr)
    for inc in matrix.get("include", []) or []:
        orig = {k: v for k, v in inc.items() if k in keys}
        hit = [c for c in combos if matches(c, orig)] if orig else []
        if hit and len(orig) == len(keys):
            for c in hit:
                c.update(inc)
        else:
            combos.append(dict(inc))
            print(f"# include {inc} added a job", file=sys.stderr)
    return combos


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("workflow")
    ap.add_argument("--job")
    a = ap.parse_args()
    with open(a.workflow, encoding="utf-8") as fh:
        wf = yaml.safe_load(fh)
    for name, job in (wf.get("jobs") or {}).items():
        if a.job and name != a.job:
            continue
        matrix = ((job.get("strategy") or {}).get("matrix"))
        if not isinstance(matrix, dict):
            continue
        combos = expand(matrix)
        print(f"{name}: {len(combos)} jobs")
        for c in combos:
            print("  " + ", ".join(f"{k}={v}" for k, v in c.items()))


if __name__ == "__main__":
    main()
