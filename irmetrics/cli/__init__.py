"""Minimal `irmetrics eval` (the full trec_eval drop-in lands on the cli branch)."""

from __future__ import annotations

import argparse
import math
import sys

from ..exceptions import IrMetricsError


def _fmt(name, qid, value, printed):
    if printed == "long":
        return f"{name:<22}\t{qid}\t{int(value)}"
    if isinstance(value, str):
        return f"{name:<22}\t{qid}\t{value}"
    if math.isnan(value):
        text = "-nan" if math.copysign(1.0, value) < 0 else "nan"
        return f"{name:<22}\t{qid}\t{text:>6}"
    return f"{name:<22}\t{qid}\t{value:6.4f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="irmetrics")
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("eval", help="evaluate a TREC run against qrels (trec_eval output)")
    ev.add_argument("-q", action="store_true", help="also print per-query values")
    ev.add_argument("-m", action="append", dest="measures", help="measure, e.g. -m P.5,10")
    ev.add_argument("qrels")
    ev.add_argument("run")
    args = parser.parse_args(argv)
    from ..evaluate import evaluate

    try:
        res = evaluate(args.qrels, args.run, args.measures or ["official"])
    except (IrMetricsError, OSError) as exc:
        print(f"irmetrics: {exc}", file=sys.stderr)
        return 2
    out = []
    if args.q:
        for i, qid in enumerate(res.query_ids):
            for name in res.names:
                m = res.measure_of(name)
                if m.printed != "hidden":
                    out.append(_fmt(name, qid, res.values(name)[i], m.printed))
    for name in res.names:
        value = res.summary_value(name)
        if value is not None:
            printed = res.measure_of(name).printed
            out.append(_fmt(name, "all", value, "long" if isinstance(value, int) else printed))
    print("\n".join(out))
    return 0
