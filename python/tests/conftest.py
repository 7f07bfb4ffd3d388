"""Shared helpers: the command (LEMMA_EVAL_BIN, built by scripts/test), generated workloads, and
readers of qrels and runs into the in-memory shapes."""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("LEMMA_EVAL_BIN", str(ROOT / "target" / "release" / "lemma-eval"))


def cli(*args: str) -> str:
    return subprocess.run([BIN, *map(str, args)], check=True, capture_output=True, text=True).stdout


def cli_json(actual, predicted, *args: str) -> dict:
    return json.loads(cli("eval", actual, predicted, "--format", "json", "--quiet", *args))


def read_qrels(path) -> dict:
    out: dict = {}
    for line in Path(path).read_text().splitlines():
        f = line.split()
        if f:
            out.setdefault(f[0], {})[f[2]] = int(f[3])
    return out


def read_run(path) -> dict:
    out: dict = {}
    for line in Path(path).read_text().splitlines():
        f = line.split()
        if f:
            out.setdefault(f[0], {})[f[2]] = float(f[4])
    return out


def trec_ranked(run: dict) -> dict:
    """Each goal's lemmas in trec_eval's order: score descending, then name descending."""
    return {
        g: [n for n, _ in sorted(s.items(), key=lambda kv: (kv[1], kv[0].encode()), reverse=True)]
        for g, s in run.items()
    }


@pytest.fixture(scope="session")
def workload(tmp_path_factory):
    """300 goals over 3,000 lemmas, ranked 80 deep, with ties, graded truth, goals without
    predictions and judged-but-unretrieved lemmas."""
    d = tmp_path_factory.mktemp("workload")
    q, r = d / "qrels", d / "run"
    cli("gen", "--goals", "300", "--universe", "3000", "--depth", "80", "--ties", "0.4",
        "--graded", "--empty-share", "0.1", "--unretrieved-share", "0.3", "--seed", "5",
        "--qrels", q, "--run", r)
    return q, r


def pytest_configure(config):
    # The generated workloads have goals without an actual set on purpose: the warning each
    # evaluation raises is tested where it is meant (pytest.warns still sees it).
    config.addinivalue_line("filterwarnings", "ignore::lemma_eval.LemmaEvalWarning")
