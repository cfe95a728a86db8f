"""The install: what the ``cuda`` extra brings, what the wheel packages, and one error family at
every GPU edge (no CuPy, CuPy without a usable driver, no NVRTC, no cuda-bindings), simulated
here; the real fresh-venv run on a GPU is ``scripts/fresh_venv_gpu.sh`` (issue 14)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import numpy as np
import pytest

import stencilkit as gtx
from stencilkit import Dims, Field, float64, neighbor_sum
from stencilkit.core import cuda_probe
from stencilkit.core.errors import BackendUnavailableError
from stencilkit.core.install import install_hint
from stencilkit.toolchain import cuda as cuda_toolchain

ROOT = Path(__file__).parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
I = gtx.Dimension("I")


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!\[; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_cuda_extra_brings_nvrtc_and_the_runtime_headers() -> None:
    extra = _names(PYPROJECT["project"]["optional-dependencies"]["cuda"])
    assert {"cupy-cuda13x", "cuda-bindings", "nvidia-cuda-nvrtc", "nvidia-cuda-runtime"} <= extra


def test_the_fresh_venv_script_carries_the_whole_extra() -> None:
    script = (ROOT / "scripts" / "fresh_venv_gpu.sh").read_text()
    subprocess.run(["bash", "-n", str(ROOT / "scripts" / "fresh_venv_gpu.sh")], check=True)
    pinned = {
        m.lower() for m in re.findall(r"([A-Za-z0-9_.-]+)==[0-9]", script.split("download() {")[1])
    }
    needed = _names(PYPROJECT["project"]["optional-dependencies"]["cuda"]) | _names(
        PYPROJECT["project"]["dependencies"]
    )
    assert needed <= pinned, needed - pinned
    assert (
        "--no-index" in script
        and "python3 -m venv" in script
        and "--system-site-packages" not in script
    )


def test_package_data_names_only_files_that_exist() -> None:
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["stencilkit"]
    for pattern in patterns:
        assert list((ROOT / "src" / "stencilkit").glob(pattern)), (
            f"package-data {pattern!r} matches nothing"
        )


@pytest.fixture
def no_cupy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` raises ModuleNotFoundError


def _fake_cupy(monkeypatch: pytest.MonkeyPatch, status: int, text: str) -> None:
    """CuPy that imports but whose runtime fails as CuPy's does without a usable driver."""

    class CUDARuntimeError(RuntimeError):
        def __init__(self) -> None:
            self.status = status
            super().__init__(text)

    def fail(*args: object) -> int:
        raise CUDARuntimeError()

    runtime = types.SimpleNamespace(getDeviceCount=fail, CUDARuntimeError=CUDARuntimeError)
    cuda = types.SimpleNamespace(runtime=runtime, Device=fail)
    module = types.ModuleType("cupy")
    module.cuda = cuda  # type: ignore[attr-defined]
    module.__version__ = "14.2.0"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cupy", module)


ALLOCATIONS = {
    "zeros(allocator=gtx.gpu)": lambda: gtx.zeros({I: 4}, allocator=gtx.gpu),
    "as_field(allocator=gtx.gpu)": lambda: gtx.as_field([I], np.arange(4.0), allocator=gtx.gpu),
    "empty(device=CUDA)": lambda: gtx.empty({I: 4}, device=gtx.Device(gtx.DeviceType.CUDA, 0)),
}


@pytest.mark.parametrize("how", sorted(ALLOCATIONS))
def test_without_cupy_a_gpu_allocation_says_what_to_install(no_cupy, how) -> None:
    with pytest.raises(
        BackendUnavailableError, match=r"needs CuPy, which is not installed"
    ) as info:
        ALLOCATIONS[how]()
    assert install_hint("cuda") in str(info.value) and "'cupy-cuda13x>=" in str(info.value)
    assert not isinstance(info.value, ValueError)  # not a wrong value: the machine lacks something


@pytest.mark.parametrize("how", sorted(ALLOCATIONS))
def test_cupy_without_a_driver_names_the_driver(monkeypatch, how) -> None:
    _fake_cupy(monkeypatch, 35, "cudaErrorInsufficientDriver: CUDA driver version is insufficient")
    monkeypatch.setattr(cuda_probe, "driver_version", lambda: None)
    with pytest.raises(
        BackendUnavailableError, match=r"needs the NVIDIA driver, and none was found"
    ) as info:
        ALLOCATIONS[how]()
    assert "580 or newer" in str(info.value) and "backend=gtx.cpu" in str(info.value)


def test_cupy_with_an_old_driver_says_which_cuda_it_supports(monkeypatch) -> None:
    _fake_cupy(monkeypatch, 35, "cudaErrorInsufficientDriver: CUDA driver version is insufficient")
    monkeypatch.setattr(cuda_probe, "driver_version", lambda: (12, 4))
    with pytest.raises(
        BackendUnavailableError, match=r"driver for CUDA 13; the installed one supports CUDA 12\.4"
    ):
        gtx.zeros({I: 4}, allocator=gtx.gpu)


def test_cupy_with_a_driver_but_no_gpu(monkeypatch) -> None:
    _fake_cupy(monkeypatch, 100, "cudaErrorNoDevice: no CUDA-capable device is detected")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    with pytest.raises(
        BackendUnavailableError,
        match=r"needs an NVIDIA GPU, and the driver sees none "
        r"\(CUDA_VISIBLE_DEVICES=''\)",
    ):
        gtx.zeros({I: 4}, allocator=gtx.gpu)


@pytest.fixture
def fresh_cuda_discovery(monkeypatch):
    """Discovery that asks NVRTC itself: the version remembered by earlier tests is not read."""
    monkeypatch.setattr(cuda_toolchain, "nvrtc_files", lambda: None)
    cuda_toolchain.find_cuda_compiler.cache_clear()
    yield
    cuda_toolchain.find_cuda_compiler.cache_clear()


def test_missing_nvrtc_library_says_to_install_the_wheel(monkeypatch, fresh_cuda_discovery) -> None:
    """Regression: cuda-pathfinder's DynamicLibNotFoundError escaped raw (only ImportError was caught)."""
    nvrtc = pytest.importorskip("cuda.bindings.nvrtc")
    pathfinder = pytest.importorskip("cuda.pathfinder")

    def missing() -> None:
        raise pathfinder.DynamicLibNotFoundError('Failure finding "libnvrtc.so.13": No such file')

    monkeypatch.setattr(nvrtc, "nvrtcVersion", missing)
    with pytest.raises(BackendUnavailableError, match=r"needs NVRTC \(libnvrtc\.so\.13\)") as info:
        cuda_toolchain.find_cuda_compiler("nvrtc")
    assert install_hint("cuda") in str(info.value) and "nvidia-cuda-nvrtc" in str(info.value)
    assert "STENCILKIT_CUDA_COMPILER=nvcc" in str(info.value)


def test_missing_cuda_bindings(monkeypatch, fresh_cuda_discovery) -> None:
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)
    with pytest.raises(
        BackendUnavailableError, match=r"needs cuda-bindings, which is not installed"
    ):
        cuda_toolchain.find_cuda_compiler("nvrtc")


def test_driver_library_missing_from_cuda_pathfinder(monkeypatch) -> None:
    pathfinder = pytest.importorskip("cuda.pathfinder")
    monkeypatch.setattr(cuda_probe, "driver_version", lambda: None)
    err = pathfinder.DynamicLibNotFoundError(
        '"cuda" is an NVIDIA driver library and can only be found via system search'
    )
    assert "needs the NVIDIA driver" in cuda_probe.explain(err, "the gpu backend").message


def test_gpu_report_never_raises(no_cupy) -> None:
    report = cuda_probe.gpu_report()
    assert report["cupy"].startswith("missing") and install_hint("cuda") in report["cupy"]


def test_install_hints_name_packages_a_wheel_user_can_install() -> None:
    """stencilkit is not on PyPI: a hint names the extra's packages themselves, from the
    installed metadata, never ``pip install 'stencilkit[...]'`` or a checkout command."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for extra in ("cuda", "mpi", "xarray", "plot", "icon-grid"):
        hint = install_hint(extra)
        assert "stencilkit[" not in hint and "-e" not in hint, hint
        for requirement in extras[extra]:  # the same packages as pyproject.toml's extra
            name = re.split(r"[<>=\[]", requirement)[0]
            assert f"'{name}" in hint, (extra, hint)


def test_demo_on_ranks_without_mpi_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import os
    import shutil

    from stencilkit import cli

    monkeypatch.setattr(os.path, "exists", lambda path: False)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert cli.main(["demo", "--ranks", "4"]) == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert "--ranks needs mpiexec" in err and "pip install 'mpi4py>=4' 'mpich>=4'" in err
    assert "-e '.[mpi]'" not in err


# ----------------------------------------------------------------------- raw tables as providers
Edge, Vertex = gtx.Dimension("Edge"), gtx.Dimension("Vertex")
E2VDim = gtx.Dimension("E2V", kind=gtx.DimensionKind.LOCAL)
E2V = gtx.FieldOffset("E2V", source=Vertex, target=(Edge, E2VDim))


@gtx.field_operator
def edge_sum(v: Field[Dims[Vertex], float64]) -> Field[Dims[Edge], float64]:
    return neighbor_sum(v(E2V), axis=E2VDim)


@gtx.program
def run_edge_sum(v: Field[Dims[Vertex], float64], out: Field[Dims[Edge], float64]):
    edge_sum(v, out=out)


TABLE = np.array([[0, 1], [1, 2], [2, 0], [0, 2]], dtype=np.int32)


@pytest.mark.parametrize("raw", [TABLE, TABLE.tolist()], ids=["ndarray", "list"])
def test_a_raw_table_is_refused_with_the_wrapping_to_use(case, raw, rng) -> None:
    """Regression: a list gave ``AttributeError: 'list' object has no attribute 'signature'``."""
    v = case.field([Vertex], rng.standard_normal(3))
    before = rng.standard_normal(4)
    out = case.field([Edge], before)
    calls = {
        "program": lambda: run_edge_sum.with_backend(case.backend)(
            v, out, offset_provider={"E2V": raw}
        ),
        "operator": lambda: edge_sum.with_backend(case.backend)(
            v, out=out, offset_provider={"E2V": raw}
        ),
    }
    for name, call in calls.items():
        with pytest.raises(
            gtx.StencilTypeError, match=r"offset_provider\['E2V'\] is a raw"
        ) as info:
            call()
        assert "gtx.as_connectivity([Edge, E2V], Vertex, table)" in str(info.value), name
    np.testing.assert_array_equal(np.asarray(out.asnumpy()), before)  # nothing ran
    conn = case.connectivity([Edge, E2VDim], Vertex, TABLE)
    run_edge_sum.with_backend(case.backend)(
        v, out, offset_provider={"E2V": conn}
    )  # wrapped: accepted
    vn = v.asnumpy()
    np.testing.assert_allclose(out.asnumpy(), vn[TABLE[:, 0]] + vn[TABLE[:, 1]], rtol=1e-14)


def test_the_version_has_one_home() -> None:
    """pyproject reads the version from _version.py; no other file writes it by hand."""
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    dynamic = PYPROJECT["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "stencilkit._version.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|rc\d+)?", gtx.__version__)
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"## {gtx.__version__}" in changelog, "CHANGELOG.md has no section for this version"


def test_the_wheel_metadata_has_classifiers_and_no_invented_urls() -> None:
    """Project URLs come with the public repository's address (none exists yet): none is made up."""
    project = PYPROJECT["project"]
    assert "github.com/stencilkit" not in (ROOT / "pyproject.toml").read_text()
    for url in project.get("urls", {}).values():
        assert url.startswith("https://"), url
    assert any(
        c.startswith("Programming Language :: Python :: 3.11") for c in project["classifiers"]
    )
    assert "Typing :: Typed" in project["classifiers"]


def test_help_lists_and_prints_the_documentation(capsys: pytest.CaptureFixture[str]) -> None:
    """Hints say `stencilkit help TOPIC`: the pages a wheel ships (pyproject's data-files, the
    same docs/*.md) are listed and printed; a misspelt topic suggests the nearest."""
    from stencilkit import cli
    from stencilkit.core import manual

    assert PYPROJECT["tool"]["setuptools"]["data-files"] == {"share/stencilkit/docs": ["docs/*.md"]}
    assert set(manual.pages()) == {p.stem for p in (ROOT / "docs").glob("*.md")}
    assert cli.main(["help"]) == cli.EXIT_OK
    listing = capsys.readouterr().out
    assert "configuration" in listing and "cartesian" in listing
    assert cli.main(["help", "configuration"]) == cli.EXIT_OK
    assert capsys.readouterr().out.startswith("# Configuration")
    assert cli.main(["help", "configuraton"]) == cli.EXIT_ERROR
    assert "did you mean 'configuration'?" in capsys.readouterr().err


def test_configuration_hints_name_the_help_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from stencilkit.core.errors import ConfigurationError

    err = ConfigurationError("STENCILKIT_CUDA_COMPILER", "nvvc", "use one of nvrtc, nvcc")
    assert "`stencilkit help configuration` lists every variable" in str(err)
    assert "docs/" not in str(err)
