"""The icon4py acceptance tool on a small gt4py-style package (no icon4py needed)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from stencilkit.compat import uninstall_gt4py_alias
from stencilkit.compat.icon4py import main, run_all, stencil_sources
from stencilkit.compat.icon4py.discover import find_stencils
from stencilkit.compat.icon4py.mesh import icon_mesh
from stencilkit.compat.icon4py.report import MARKER, counts, markdown, splice
from stencilkit.compat.icon4py.run import compare, describe

HERE = Path(__file__).parent


@pytest.fixture
def fake_package(monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.syspath_prepend(str(HERE))
    yield
    uninstall_gt4py_alias()
    for name in [m for m in sys.modules if m.startswith("skfakeicon")]:
        del sys.modules[name]


def test_discovery_finds_every_decorated_function() -> None:
    found = find_stencils(HERE / "skfakeicon", HERE)
    assert [(s.module, s.name, s.kind) for s in found] == [
        ("skfakeicon.broken", "_never", "field_operator"),
        ("skfakeicon.stencils", "_grad", "field_operator"),
        ("skfakeicon.stencils", "grad", "program"),
        ("skfakeicon.stencils", "_avg", "field_operator"),
        ("skfakeicon.stencils", "_dz_below", "field_operator"),
        ("skfakeicon.stencils", "dz_below", "program"),
        ("skfakeicon.stencils", "_cumsum", "scan_operator"),
        ("skfakeicon.stencils", "_sat_pres", "field_operator"),
    ]


def test_acceptance_records(fake_package: object) -> None:
    records = run_all(stencil_sources("skfakeicon"), ["cpu"])
    by_name = {r["name"]: r for r in records}
    broken = by_name["_never"]
    assert broken["status"] == {"import": "fail"}
    assert "gt4py.next.no_such_module" in broken["reasons"]["import"]
    assert "(at skfakeicon/broken.py:2)" in broken["reasons"]["import"]
    # _sat_pres (scalars in, scalars out) runs inside a generated scan over K
    for name in ("_grad", "grad", "_avg", "_dz_below", "dz_below", "_cumsum", "_sat_pres"):
        st = by_name[name]["status"]
        assert st == {
            s: "ok" for s in ("import", "parse", "feed", "embedded", "cpu", "agree_cpu")
        }, by_name[name]
    # a[K] - a[K-1] needs the vertical range to start at 1: the second attempt
    assert by_name["dz_below"]["attempt"] == 1 and by_name["grad"]["attempt"] == 0
    summary = counts(records, ["cpu"])
    assert summary["total"] == 8 and summary["import"] == 7 and summary["all_ok"] == 7


def test_cli_writes_json_and_markdown(
    fake_package: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import stencilkit.compat.icon4py.acceptance as tool

    real = tool.stencil_sources
    monkeypatch.setattr(tool, "stencil_sources", lambda only="": real("skfakeicon", only))
    assert (
        main(
            [
                "--only",
                "stencils",
                "--json",
                str(tmp_path / "r.json"),
                "--markdown",
                str(tmp_path / "r.md"),
            ]
        )
        == 0
    )
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["counts"]["total"] == 7 and data["counts"]["agree_cpu"] == 7
    text = (tmp_path / "r.md").read_text()
    assert "| **all stages pass** | **7** |" in text


def test_report_lists_every_failure() -> None:
    records = [
        {
            "module": "icon4py.model.a",
            "name": "f",
            "kind": "program",
            "line": 1,
            "status": {"import": "ok", "parse": "fail"},
            "reasons": {"parse": "DSLError: 'x' bad at /p/a.py:3"},
        },
        {
            "module": "icon4py.model.a",
            "name": "g",
            "kind": "program",
            "line": 9,
            "status": {"import": "ok", "parse": "fail"},
            "reasons": {"parse": "DSLError: 'y' bad at /p/a.py:7"},
        },
        {
            "module": "icon4py.model.b",
            "name": "h",
            "kind": "field_operator",
            "line": 1,
            "status": {
                s: "ok" for s in ("import", "parse", "feed", "embedded", "cpu", "agree_cpu")
            },
            "reasons": {},
        },
    ]
    text = markdown({"stencils": records, "backends": ["cpu"]})
    assert "| 2 | parse | DSLError: '…' bad at <file> |" in text
    assert "| `a.f` | program | parse | DSLError: 'x' bad at /p/a.py:3 |" in text
    assert "`b.h`" not in text
    doc = splice("# Title\n\nintro\n\n" + MARKER + "\n\nold results\n", text)
    assert doc.startswith("# Title\n\nintro\n\n" + MARKER) and "old results" not in doc


def test_mesh_tables_follow_icon_conventions() -> None:
    m = icon_mesh(4, 4, nlev=5)
    t = m.tables
    n_c, n_e = m.mesh.n_cells, m.mesh.n_edges
    assert (t["C2E2CO"][:, 0] == np.arange(n_c)).all() and (t["C2E2CO"][:, 1:] == t["C2E2C"]).all()
    assert (t["E2C2EO"][:, 0] == np.arange(n_e)).all() and (t["E2C2EO"][:, 1:] == t["E2C2E"]).all()
    for c in range(n_c):
        for k in range(3):  # the neighbour across edge k shares that edge
            assert t["C2E"][c, k] in t["C2E"][t["C2E2C"][c, k]] and t["C2E2C"][c, k] != c
    for e in range(n_e):
        c0, c1 = t["E2C"][e]
        assert list(t["E2C2V"][e, :2]) == list(t["E2V"][e])
        assert set(t["E2C2V"][e]) == set(t["C2V"][c0]) | set(t["C2V"][c1])
        assert set(t["E2C2E"][e]) == (set(t["C2E"][c0]) | set(t["C2E"][c1])) - {e}
    assert (t["V2E2V"] != np.arange(m.mesh.n_vertices)[:, None]).all()
    assert m.size(m.mesh.Cell) == n_c and m.local_size(m.mesh.E2CDim) == 2
    assert set(m.offset_provider()) >= {"E2C2V", "C2E2CO", "Koff"}


def test_compare_is_nan_aware_and_relative() -> None:
    a = np.array([1.0, np.nan, 1e6])
    assert compare([a], [a + np.array([1e-13, 0.0, 1e-7])], 1e-12)[0]
    assert not compare([a], [a + np.array([1e-5, 0.0, 0.0])], 1e-12)[0]  # atol = rtol * max|a|
    assert not compare([a], [np.array([1.0, 2.0, 1e6])], 1e-12)[0]
    assert not compare([np.array([1, 2])], [np.array([1, 3])], 1e-12)[0]
    assert not compare([np.zeros(3)], [np.zeros(4)], 1e-12)[0]


def test_describe_is_one_line_and_short() -> None:
    err = ValueError("first line\nsecond   line " + "x" * 500)
    text = describe(err, limit=60)
    assert "\n" not in text and len(text) <= 60 + len("ValueError: ")
    assert text.startswith("ValueError: first line second line")


def test_a_stage_that_hangs_times_out() -> None:
    import time

    from stencilkit.compat.icon4py.run import run_stencil

    class Slow:
        def ir_text(self) -> str:
            time.sleep(5)
            return ""

    t0 = time.perf_counter()
    out = run_stencil(Slow(), icon_mesh(2, 2, nlev=3), {}, timeout=0.2)
    assert time.perf_counter() - t0 < 2
    assert out.status == {"parse": "fail"} and "timed out after 0.2 s" in out.reasons["parse"]
