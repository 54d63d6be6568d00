"""Long campaign runs: ``python -m tests.campaign [--seeds N] [--ops N] ...``.

Prints, per backend, the operations, seeds, operations per second, the
violations by class and every failing seed (rerun one with ``--seed S``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

from ._engine import BACKENDS, FEATURES, RunResult, run_seed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.campaign")
    parser.add_argument("--backend", action="append", choices=sorted(BACKENDS))
    parser.add_argument("--seeds", type=int, default=100, help="seeds per backend")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--seed", type=int, help="run this one seed only")
    parser.add_argument("--ops", type=int, default=2000, help="operations per seed")
    parser.add_argument(
        "--off",
        action="append",
        default=[],
        choices=sorted(FEATURES),
        help="switch a feature off (repeatable)",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per seed")
    parser.add_argument("--verbose", "-v", action="store_true")
    args = parser.parse_args(argv)
    features = {name: False for name in args.off}
    seeds = (
        [args.seed]
        if args.seed is not None
        else range(args.first_seed, args.first_seed + args.seeds)
    )
    failed = 0
    for backend in args.backend or list(BACKENDS):
        ops = 0
        busy = 0.0
        classes: Counter[str] = Counter()
        figures: Counter[str] = Counter()
        failures: list[RunResult] = []
        started = time.perf_counter()
        for seed in seeds:
            result = run_seed(seed, backend, args.ops, features, args.timeout)
            ops += result.ops
            busy += result.seconds
            for key, value in result.totals.items():
                if key.startswith("violation "):
                    classes[key[len("violation ") :]] += value
                elif key != "violations":
                    figures[key] += value
            if result.hang:
                classes["hang"] += 1
            if result.error:
                classes["error"] += 1
            if not result.ok:
                failures.append(result)
                if args.verbose:
                    print(result.describe(), flush=True)
        wall = time.perf_counter() - started
        print(
            f"{backend}: {len(seeds)} seeds, {ops:,} ops in {wall:.1f} s "
            f"({ops / busy if busy else 0:,.0f} ops/s), "
            f"{len(failures)} failing seeds",
            flush=True,
        )
        print(
            "  "
            + ", ".join(f"{name} {count:,}" for name, count in sorted(figures.items())),
            flush=True,
        )
        for name, count in sorted(classes.items()):
            print(f"  {name}: {count}")
        if failures:
            shown = ", ".join(str(r.seed) for r in failures[:40])
            print(f"  failing seeds: {shown}{' ...' if len(failures) > 40 else ''}")
            print("  first: " + failures[0].describe().replace("\n", "\n  ")[:4000])
        failed += len(failures)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
