#!/usr/bin/env python3
"""Writes qrels and a run whose summary means sit on a printed digit's boundary: 4, 8 or 16 goals,
each ranking 1 to 12 lemmas of which a few are relevant, so that P at large cutoffs (P_200 is
k/200), recall and the like have exact means ending in 5 at the fifth decimal, where trec_eval's
running double sum and the exact mean print different digits. Goal ids are shuffled and of mixed
widths (q7, q10, Q3), so that file order, numeric order and byte order all differ.

Usage: boundary_runs.py SEED QRELS RUN
"""
import random
import sys


def main():
    seed, qrels_path, run_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    rng = random.Random(seed)
    n = rng.choice([4, 8, 16])
    ids = rng.sample([f"{p}{i}" for p in ("q", "Q", "goal") for i in range(40)], n)
    with open(qrels_path, "w") as q, open(run_path, "w") as r:
        for g in ids:
            depth = rng.randint(1, 12)
            names = [f"L{rng.randint(1, 500)}" for _ in range(depth)]
            names = list(dict.fromkeys(names))
            relevant = set(rng.sample(names, rng.randint(0, min(3, len(names)))))
            unretrieved = [f"U{g}_{k}" for k in range(rng.randint(0 if relevant else 1, 2))]
            for name in sorted(relevant) + unretrieved:
                q.write(f"{g} 0 {name} 1\n")
            for rank, name in enumerate(names, 1):
                r.write(f"{g} Q0 {name} {rank} {100 - rank} run\n")


if __name__ == "__main__":
    main()
