"""The examples of docs/gpu.md run (each from a real file, as the DSL reads its source)."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "gpu.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


def test_doc_has_gpu_examples() -> None:
    assert len(BLOCKS) >= 4 and all(b.lstrip().startswith("# gpu") for b in BLOCKS)


@pytest.mark.gpu
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_gpu_example(index: int, tmp_path: Path) -> None:
    path = tmp_path / f"gpu_doc_block{index}.py"
    path.write_text(BLOCKS[index])
    runpy.run_path(str(path), run_name="__doc__")
