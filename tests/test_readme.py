"""The README is part of the product: its generated tables match the code and its ```python
examples run (```py blocks are illustrative fragments and are not run)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from uno_mk_env import docs

README = Path(__file__).resolve().parents[1] / "README.md"
TEXT = README.read_text(encoding="utf-8")
EXAMPLES = re.findall(r"^```python\n(.*?)^```", TEXT, re.S | re.M)


def test_generated_blocks_are_current() -> None:
    assert set(docs.block_names(TEXT)) == set(docs.SECTIONS), "README lost a generated block"
    assert docs.render_readme(TEXT) == TEXT, "README is stale: run python -m uno_mk_env.docs"


def test_every_action_and_observation_piece_is_documented() -> None:
    from uno_mk_env.observation import OBS_PIECES

    for piece in OBS_PIECES:
        assert f"`{piece.name}`" in TEXT
    for code in ("`CALL_UNO`", "`CATCH_UNO`", "`CHALLENGE`", "`ACCEPT`", "`KEEP`", "`DRAW`"):
        assert code in TEXT


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_python_examples_run(index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # examples may write result files
    exec(compile(EXAMPLES[index], f"README.md example {index}", "exec"), {"__name__": "readme"})


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 4
