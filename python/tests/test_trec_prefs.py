"""lemma_eval.trec_eval: trec_eval's preference measures (-R prefs, -R qrels_prefs) from Python,
compared with what the command prints for the same files and flags."""

import random

import pytest

import lemma_eval
from conftest import cli


def write_files(dir, seed):
    """A preference file, the same judgments as qrels, and a run: several goals, groups of one
    and of several subgroups (levels consistent within a group), ties in the run, judged lemmas
    never ranked, a goal without a ranking, lines shuffled."""
    rnd = random.Random(seed)
    prefs, qrels, run = [], [], []
    for g in ["g1", "g10", "g2", "q7"]:
        pool = [f"d{i}" for i in rnd.sample(range(30), rnd.randint(3, 15))]
        value = {d: rnd.choice([0, 0, 1, 2, 3]) for d in pool}
        for u in range(rnd.randint(1, 3)):
            for s in range(rnd.choice([1, 1, 2])):
                scale = rnd.choice([1, 2])
                for d in rnd.sample(pool, rnd.randint(2, len(pool))):
                    prefs.append(f"{g} u{u} s{s} {d} {value[d] * scale}")
        qrels += [f"{g} {rnd.choice(['0', '1'])} {d} {value[d]}" for d in pool]
        if g == "q7":
            continue
        for i, d in enumerate(rnd.sample([f"d{i}" for i in range(30)], rnd.randint(1, 25))):
            run.append(f"{g} Q0 {d} {i} {rnd.choice([1.0, 2.0, rnd.random()])} run{seed}")
    for lines in (prefs, qrels, run):
        rnd.shuffle(lines)
    files = dir / "prefs", dir / "qrels", dir / "run"
    for f, lines in zip(files, (prefs, qrels, run)):
        f.write_text("\n".join(lines) + "\n")
    return files


def printed(result: lemma_eval.TrecEvalResult, z: bool = False) -> str:
    """The result as the command prints it."""

    def line(name, goal, v):
        if isinstance(v, str):
            return f"{name:<22}\t{goal}\t{v}\n"
        if isinstance(v, int):
            return f"{name:<22}\t{goal}\t{v}\n"
        return f"{'Z' if z else ''}{name:<22}\t{goal}\t{v:.4f}\n"

    out = ""
    for goal, values in (result.per_goal or {}).items():
        out += "".join(line(n, goal, v) for n, v in values.items())
    return out + "".join(line(n, "all", v) for n, v in result.summary.items())


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize(
    "flags",
    [
        dict(per_goal=True),
        dict(per_goal=True, complete=True),
        dict(per_goal=True, max_docs=4),
        dict(complete=True, trec_version=9),
        dict(measures=["prefs", "prefs_pair_ret"]),
    ],
)
@pytest.mark.parametrize("relevance_format", ["prefs", "qrels_prefs"])
def test_values_are_the_commands(tmp_path, seed, flags, relevance_format):
    prefs, qrels, run = write_files(tmp_path, seed)
    judgments = prefs if relevance_format == "prefs" else qrels
    flags = dict(flags)
    measures = flags.pop("measures", ["all_prefs"])
    r = lemma_eval.trec_eval(judgments, run, measures, relevance_format=relevance_format, **flags)
    args = ["trec_eval", "-R", relevance_format]
    args += [a for m in measures for a in ("-m", m)]
    args += ["-q"] * flags.get("per_goal", False) + ["-c"] * flags.get("complete", False)
    if "max_docs" in flags:
        args += ["-M", str(flags["max_docs"])]
    args += ["--trec-version", str(flags.get("trec_version", 10)), judgments, run]
    assert printed(r) == cli(*args)
    # Goals in byte order; q7 has no ranking: evaluated (empty) under 10.0's -c only.
    if r.per_goal is not None:
        goals = list(r.per_goal)
        assert goals == sorted(goals)
        assert ("q7" in goals) == flags.get("complete", False)


def test_summary_and_goals_by_hand(tmp_path):
    # One group: a (2) > b (1) > c (0); the run ranks b a, c unranked (places b 0, a 1, c 2).
    # a>b: both ranked, a below b: not fulfilled. a>c, b>c: implied, fulfilled. 2 of 3.
    (tmp_path / "p").write_text("g u s a 2\ng u s b 1\ng u s c 0\n")
    (tmp_path / "r").write_text("g Q0 b 1 2 t\ng Q0 a 2 1 t\n")
    r = lemma_eval.trec_eval(tmp_path / "p", tmp_path / "r", per_goal=True)
    assert r.per_goal["g"]["prefs_num_prefs_poss"] == 3
    assert r.per_goal["g"]["prefs_simp"] == 2 / 3
    assert r.per_goal["g"]["prefs_simp_ret"] == 0.0
    assert r.summary["runid"] == "t" and r.summary["num_q"] == 1
    assert r.counts["evaluated"] == 1
    z = tmp_path / "z"
    z.write_text("g prefs_simp 0.5 0.5\n")
    rz = lemma_eval.trec_eval(tmp_path / "p", tmp_path / "r", "prefs_simp", zscores=z)
    assert rz.summary == {"prefs_simp": (2 / 3 - 0.5) / 0.5}
    assert printed(rz, z=True) == cli(
        "trec_eval", "-R", "prefs", "-m", "prefs_simp", "-Z", z, tmp_path / "p", tmp_path / "r"
    )


def test_errors(tmp_path):
    prefs, qrels, run = write_files(tmp_path, 1)
    with pytest.raises(FileNotFoundError):
        lemma_eval.trec_eval(tmp_path / "nope", run)
    with pytest.raises(ValueError, match="expected 5 fields"):
        lemma_eval.trec_eval(qrels, run)
    with pytest.raises(ValueError, match="`num_ret` reads qrels"):
        lemma_eval.trec_eval(prefs, run, "official")
    with pytest.raises(ValueError, match="relevance_format"):
        lemma_eval.trec_eval(qrels, run, relevance_format="qrels")
    with pytest.raises(ValueError, match="takes no parameters"):
        lemma_eval.trec_eval(prefs, run, "prefs_simp.5")
