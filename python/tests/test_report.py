"""lemma_eval.report: the page `lemma-eval report` writes, made by the command's own code, with
the premise protocol's section and a section per stratum; the fixtures of fixtures/premise."""

import os
import re

import pytest

import lemma_eval
from conftest import ROOT, cli

F = ROOT / "fixtures" / "premise"
CORPUS = F / "corpus.jsonl"
RUNS = [F / "run.txt", F / "predictions.jsonl"]


def _body(html: str) -> str:
    """The page without its first paragraph: the command line that made it."""
    head = re.compile(r"<h1>lemma-eval report</h1>\n<p><code>[^<]*</code></p>\n")
    assert len(head.findall(html)) == 1, html[:400]
    return head.sub("", html)


@pytest.mark.parametrize(
    "flags, options",
    [
        (["--corpus", CORPUS, "--mask", "accessible", "--by", "gold-size"],
         {"corpus": CORPUS, "mask": "accessible", "by": "gold-size"}),
        (["--corpus", CORPUS, "--group-by", "file", "--goals", F / "goals.jsonl"],
         {"corpus": CORPUS, "group_by": "file", "goals": F / "goals.jsonl"}),
        ([], {}),
    ],
)
def test_the_page_is_the_commands(tmp_path, flags, options):
    page = tmp_path / "page.html"
    html = lemma_eval.report(F / "actual.jsonl", RUNS, page, **options)
    assert page.read_text(encoding="utf-8") == html
    want = tmp_path / "cli.html"
    cli("report", F / "actual.jsonl", *RUNS, *flags, "-o", want)
    assert _body(html) == _body(want.read_text(encoding="utf-8"))
    assert "<code>lemma_eval.report(" in html
    if "corpus" in options:
        # The leak rate's section (evaluate's values, as the page prints them) and the counts.
        r = lemma_eval.evaluate(F / "actual.jsonl", RUNS[0], ["Leak@1", "Leak@10"], **options)
        for m in ("Leak@1", "Leak@10"):
            assert f"<tr><td>{m}</td><td>{r.summary[m]:.4f}</td>" in html, m
        assert "<td>relevant premises not accessible</td>" in html
    if "by" in options:
        assert "gold-size=1" in html and "gold-size=2-3" in html
    if not options:
        assert "Leak@10" not in html


def _figures(html: str) -> str:
    """The page without its command line and its table of inputs."""
    inputs = re.compile(r"<h2>Inputs</h2>\n<table>.*?</table>\n", re.S)
    assert len(inputs.findall(html)) == 1
    return inputs.sub("", _body(html))


def test_a_dict_of_actual_sets_and_refused_outputs(tmp_path):
    with open(F / "qrels.txt") as f:
        actual = lemma_eval.parse_qrel(f)
    html = lemma_eval.report(actual, [F / "run.txt"])
    assert "<code>lemma_eval.report({...}, " in html
    # The same sets from their file give the same figures.
    assert _figures(html) == _figures(lemma_eval.report(F / "qrels.txt", [F / "run.txt"]))
    # An output that would replace a file read is refused before any work, the file intact:
    # a run, the actual sets, the corpus, through a symbolic or a hard link.
    for name in ["run.txt", "qrels.txt", "corpus.jsonl"]:
        (tmp_path / name).write_bytes((F / name).read_bytes())
    (tmp_path / "link").symlink_to(tmp_path / "corpus.jsonl")
    os.link(tmp_path / "qrels.txt", tmp_path / "hard")
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    for output in ["run.txt", "qrels.txt", "corpus.jsonl", "link", "hard"]:
        with pytest.raises(ValueError, match="is also an input"):
            lemma_eval.report(qrels, [run], tmp_path / output, corpus=tmp_path / "corpus.jsonl")
    for name in ["run.txt", "qrels.txt", "corpus.jsonl"]:
        assert (tmp_path / name).read_bytes() == (F / name).read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "corpus.jsonl", "hard", "link", "qrels.txt", "run.txt"]
    # Written through a symbolic link: the link's target gets the page, the link stays.
    (tmp_path / "page.html").write_text("old")
    (tmp_path / "to_page").symlink_to(tmp_path / "page.html")
    html = lemma_eval.report(qrels, [run], tmp_path / "to_page")
    assert (tmp_path / "to_page").is_symlink()
    assert (tmp_path / "page.html").read_text(encoding="utf-8") == html
    assert f"lemma_eval.report('{qrels}', ['{run}'], '{tmp_path / 'to_page'}')" in html
    with pytest.raises(TypeError, match="got one path"):
        lemma_eval.report(actual, F / "run.txt")
    with pytest.raises(ValueError, match="at least one run"):
        lemma_eval.report(actual, [])
