"""The code examples of docs/storage.md run and their assertions hold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "storage.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


def is_gpu(block: str) -> bool:
    return block.lstrip().startswith("# gpu")


def test_doc_has_examples() -> None:
    assert len(BLOCKS) >= 5
    assert any(is_gpu(b) for b in BLOCKS)


@pytest.mark.parametrize("index", [i for i, b in enumerate(BLOCKS) if not is_gpu(b)])
def test_cpu_example(index: int) -> None:
    exec(compile(BLOCKS[index], f"{DOC}:block{index}", "exec"), {})


@pytest.mark.gpu
@pytest.mark.parametrize("index", [i for i, b in enumerate(BLOCKS) if is_gpu(b)])
def test_gpu_example(index: int) -> None:
    exec(compile(BLOCKS[index], f"{DOC}:block{index}", "exec"), {})
