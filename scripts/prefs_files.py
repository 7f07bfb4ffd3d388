#!/usr/bin/env python3
"""Writes preference judgments for trec_eval's -R prefs, the same judgments as qrels for
-R qrels_prefs, a run and a z-score file: 1 to 6 goals of mixed id shapes (byte, numeric and
file order all differ), each with 1 to 3 judgment groups of one subgroup (classes by level) or
of several (a relation: each subgroup's levels a monotone map of one hidden value per lemma, 0
kept 0, so the group is consistent), ties in the levels and in the run's scores, lines repeated,
judged lemmas never ranked, ranked lemmas never judged, a run goal without judgments, every line
shuffled. With --negative some lemmas get level -1, and each group a class of -1 at least as
large as its relevant lemmas (trec_eval's prefs_avgjg_Rnonrel reads past a smaller lowest class:
docs/METRICS.md §8.3). With --missing some goals have no ranking.

Usage: prefs_files.py SEED DIR [--negative] [--missing]
Writes DIR/prefs, DIR/qrels, DIR/run, DIR/z.
"""
import random
import sys

MEASURES = [
    "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp",
    "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
    "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp",
    "prefs_avgjg_imp", "num_q",
]


def main():
    seed, out = int(sys.argv[1]), sys.argv[2]
    negative, missing = "--negative" in sys.argv, "--missing" in sys.argv
    rng = random.Random(seed)
    goals = list(dict.fromkeys(
        rng.choice(["q", "g", "10", "2", "1x", "Q"]) + str(rng.randint(0, 30))
        for _ in range(rng.randint(1, 6))))
    lemmas = [f"d{i}" for i in range(rng.randint(2, rng.choice([25, 120])))] + ["D1", "a-b", "zz"]
    prefs, qrels, run = [], [], []
    for k, g in enumerate(goals):
        pool = rng.sample(lemmas, rng.randint(1, len(lemmas)))
        value = {d: rng.choice([0, 0, 1, 2, 3, 5, 0.5]) for d in pool}
        low = [f"n{i}" for i in range(len(pool) + 3)] if negative else []
        value.update({d: -1 for d in low})
        for u in range(rng.randint(1, 3)):
            group = rng.choice(["u", "v", "w1", "0", "A"]) + str(u)
            for s in range(rng.choice([1, 1, 2, 3])):
                scale, cap = rng.choice([1, 2, 0.5]), rng.choice([None, 1, 2, 3])
                for d in rng.sample(pool, rng.randint(1, len(pool))) + low:
                    v = value[d]
                    level = v if v <= 0 else (min(v, cap) if cap else v) * scale
                    text = f"{level:g}" if rng.random() < 0.7 else f"{level:.3f}"
                    for _ in range(1 + (rng.random() < 0.05)):
                        prefs.append(f"{g} {group} s{s} {d} {text}")
        for d in pool + low:
            grade = int(value[d]) if value[d] == int(value[d]) else 1
            qrels.append(f"{g} 0 {d} {grade}")
        if missing and k > 0 and rng.random() < 0.3:
            continue
        for rank, d in enumerate(rng.sample(lemmas, rng.randint(1, len(lemmas)))):
            score = rng.choice([1.0, 2.0, 0.5]) if rng.random() < 0.5 else round(
                rng.uniform(0, 10), rng.choice([1, 3, 6]))
            run.append(f"{g} Q0 {d} {rank} {score} run{seed % 3}")
    if rng.random() < 0.3:
        run.append("zzgoal Q0 d1 1 1.0 run")
    # z-scores: some goals and names left out; each goal ends with a name after every other, and
    # the file with a goal after every other (trec_eval's search looks one entry further).
    z = []
    for g in sorted(goals):
        if rng.random() < 0.2:
            continue
        z += [f"{g} {m} {rng.choice(['0', '0.5', '1', '3.25'])} {rng.choice(['0', '0.1', '1', '2'])}"
              for m in MEASURES if rng.random() < 0.9]
        z.append(f"{g} zzz 0 1")
    z.append("~~~ zzz 0 1")
    for lines in (prefs, qrels, run):
        rng.shuffle(lines)
    for name, lines in (("prefs", prefs), ("qrels", qrels), ("run", run), ("z", z)):
        with open(f"{out}/{name}", "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
