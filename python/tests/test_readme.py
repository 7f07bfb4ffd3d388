"""README.md's Python quick start runs and prints what its comment says."""

import contextlib
import io
import os
import re

from conftest import ROOT


def test_quick_start():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```python\n(import lemma_eval\n.*?)```", readme, re.S).group(1)
    lines = block.strip().splitlines()
    assert len(lines) == 3
    want = lines[-1].split("# ", 1)[1]
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out):
            exec(block, {})
    finally:
        os.chdir(cwd)
    assert out.getvalue().strip() == want


def test_session_example():
    """The README's validation-loop example prints what its last comment says."""
    import textwrap

    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```python\n( *import numpy as np, lemma_eval\n.*?)```", readme, re.S)
    block = textwrap.dedent(block.group(1))
    assert "lemma_eval.Session(" in block
    want = block.strip().splitlines()[-1].split("# ", 1)[1]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(block, {})
    assert out.getvalue().strip() == want
