"""The mesh section (tables and shared fields) and the E2C / C2E / V2E neighbour-sum sections."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .cuda_sources import MESH_SRC
from .devices import Dev, elem_strides, finite, maxdiff
from .meshes import build_mesh, mesh_problems
from .options import Options
from .report import DESIGN, Runner
from .timing import adaptive_reps, gb, time_variants

NB_BYTES_RULE = (
    "output written once + each input field element read once + the int32 table "
    "and the fp64 sparse weights read once (logical sizes, padding not counted)"
)

NB_OPS: dict[str, dict[str, Any]] = {
    "e2c": {
        "prog": "e2c_prog",
        "out": "Edge",
        "src": "c",
        "table": "E2C",
        "weights": None,
        "nb": 2,
        "kernel": "e2c_diff",
        "what": "c(E2C[1]) - c(E2C[0])",
    },
    "c2e": {
        "prog": "c2e_prog",
        "out": "Cell",
        "src": "e",
        "table": "C2E",
        "weights": "w_c2e",
        "nb": 3,
        "kernel": "c2e_sum",
        "what": "neighbor_sum(e(C2E) * w, axis=C2EDim)",
    },
    "v2e": {
        "prog": "v2e_prog",
        "out": "Vertex",
        "src": "e",
        "table": "V2E",
        "weights": "w_v2e",
        "nb": 6,
        "kernel": "v2e_sum",
        "what": "neighbor_sum(e(V2E) * w, axis=V2EDim)",
    },
}


def mesh_section(
    R: Runner, dev: Dev, P: Any, opts: Options, state: dict[str, Any]
) -> dict[str, Any]:
    """Mesh tables and the input fields shared by the e2c, c2e and v2e sections."""
    import numpy as np

    gtx, xp = dev.gtx, dev.xp
    nx, ny, nk = opts.mesh
    t0 = time.perf_counter()
    mesh, why = build_mesh(nx, ny, locality=True)
    family, _ = build_mesh(nx, ny)
    res: dict[str, Any] = {
        "nx": nx,
        "ny": ny,
        "levels": nk,
        "tables_from": mesh.source,
        "library_mesh": why,
        "build_s": time.perf_counter() - t0,
        "second_numbering_from": family.source,
    }
    problems = mesh_problems(mesh)
    R.check(f"mesh tables consistent ({mesh.source})", not problems, "; ".join(problems))
    nc, ne, nv = mesh.n_cells, mesh.n_edges, mesh.n_vertices
    res.update(cells=nc, edges=ne, vertices=nv)
    R.say(
        f"  mesh: {nc} cells, {ne} edges, {nv} vertices x {nk} levels; tables from {mesh.source}"
        + ("" if why == "ok" else f" ({why})")
    )
    second = family.source != mesh.source and (family.n_cells, family.n_edges) == (nc, ne)
    if second:
        R.say(
            f"  and, as a second row per section: the same mesh numbered as {family.source} makes it"
            " (edges in three families: horizontal, vertical, diagonal)"
        )
    conn = {
        "E2C": gtx.as_connectivity([P.Edge, P.E2CDim], P.Cell, mesh.e2c, allocator=dev.alloc),
        "C2E": gtx.as_connectivity([P.Cell, P.C2EDim], P.Edge, mesh.c2e, allocator=dev.alloc),
        "V2E": gtx.as_connectivity([P.Vertex, P.V2EDim], P.Edge, mesh.v2e, allocator=dev.alloc),
    }
    rs = xp.random.RandomState(13)

    def field(dim: Any, n: int) -> Any:
        f = gtx.empty({dim: n, P.K: nk}, dtype=gtx.float64, allocator=dev.alloc)
        f.ndarray[...] = rs.standard_normal((n, nk))
        return f

    rng = np.random.default_rng(17)
    w_host = {"w_c2e": rng.standard_normal((nc, 3)), "w_v2e": rng.standard_normal((nv, 6))}
    st: dict[str, Any] = {
        "mesh": mesh,
        "conn": conn,
        "nk": nk,
        "w_host": w_host,
        "c": field(P.Cell, nc),
        "e": field(P.Edge, ne),
        "w_c2e": gtx.as_field([P.Cell, P.C2EDim], w_host["w_c2e"], allocator=dev.alloc),
        "w_v2e": gtx.as_field([P.Vertex, P.V2EDim], w_host["w_v2e"], allocator=dev.alloc),
        "host_tables": {"E2C": mesh.e2c, "C2E": mesh.c2e, "V2E": mesh.v2e},
        "family": None
        if not second
        else {
            "host_tables": {"E2C": family.e2c, "C2E": family.c2e, "V2E": family.v2e},
            "conn": {
                "E2C": gtx.as_connectivity(
                    [P.Edge, P.E2CDim], P.Cell, family.e2c, allocator=dev.alloc
                ),
                "C2E": gtx.as_connectivity(
                    [P.Cell, P.C2EDim], P.Edge, family.c2e, allocator=dev.alloc
                ),
                "V2E": gtx.as_connectivity(
                    [P.Vertex, P.V2EDim], P.Edge, family.v2e, allocator=dev.alloc
                ),
            },
        },
    }
    res["strides_bytes"] = {k: list(v.ndarray.strides) for k, v in conn.items()}
    res["strides_bytes"].update(
        {k: list(st[k].ndarray.strides) for k in ("c", "e", "w_c2e", "w_v2e")}
    )
    res["dtypes"] = {k: str(v.ndarray.dtype) for k, v in conn.items()}
    R.say(f"  strides (bytes): {res['strides_bytes']}")
    state["mesh"] = st
    return res


def nb_section(
    op: str, R: Runner, dev: Dev, P: Any, opts: Options, state: dict[str, Any]
) -> dict[str, Any]:
    import numpy as np

    if "mesh" not in state:
        raise RuntimeError("the mesh section did not run or failed: no tables")
    gtx, xp = dev.gtx, dev.xp
    spec = NB_OPS[op]
    st = state["mesh"]
    mesh, nk = st["mesh"], st["nk"]
    out_dim = getattr(P, spec["out"])
    n_out = {"Edge": mesh.n_edges, "Cell": mesh.n_cells, "Vertex": mesh.n_vertices}[spec["out"]]
    src = st[spec["src"]]
    w = st[spec["weights"]] if spec["weights"] else None
    tab_host = st["host_tables"][spec["table"]]
    conn = st["conn"][spec["table"]]
    nbn = int(spec["nb"])
    src_a = src.ndarray
    n_src = int(src_a.shape[0])
    nbytes = (
        8 * n_out * nk
        + 8 * n_src * nk
        + 4 * n_out * nbn
        + (8 * n_out * nbn if w is not None else 0)
    )
    res: dict[str, Any] = {
        "what": spec["what"],
        "n_out": n_out,
        "levels": nk,
        "bytes": nbytes,
        "bytes_rule": NB_BYTES_RULE,
    }
    R.say(f"  {op}: out[{spec['out']}, K] = {spec['what']}; bytes counted: {NB_BYTES_RULE}")

    def new_out() -> Any:
        f = gtx.empty({out_dim: n_out, P.K: nk}, dtype=gtx.float64, allocator=dev.alloc)
        f.ndarray.fill(float("nan"))
        return f

    ins = [src] + ([w] if w is not None else [])
    outs: dict[str, Any] = {}
    calls: dict[str, Callable[[], Any]] = {}
    firsts: dict[str, float] = {}
    provider = {spec["table"]: conn}

    def add(name: str, fn: Callable[[], Any], out: Any) -> None:
        t0 = time.perf_counter()
        fn()
        dev.sync()
        firsts[name] = time.perf_counter() - t0
        outs[name] = out
        calls[name] = fn

    for name, backend in ((dev.compiled_name, dev.compiled), (dev.embedded_name, None)):
        o = new_out()
        prog = getattr(P, spec["prog"]).with_backend(backend)

        def call(prog: Any = prog, o: Any = o) -> None:
            prog(*ins, o, offset_provider=provider)

        add(name, call, o.ndarray)

    if dev.has_cuda_kernels:
        tab = conn.ndarray
        if str(tab.dtype) != "int32":
            res["table_converted_from"] = str(tab.dtype)
            tab = tab.astype(xp.int32)
        s_src, s_tab = elem_strides(src_a), elem_strides(tab)
        res["hand_strides_elems"] = {"src": list(s_src), "table": list(s_tab)}
        blk = (128, 1, 1)
        for variant in ("ek", "kloop"):
            o = new_out().ndarray
            s_o = elem_strides(o)
            kern = dev.kernel(MESH_SRC, f"{spec['kernel']}_{variant}")
            grid = (-(-n_out // blk[0]), nk if variant == "ek" else 1, 1)
            head: tuple[Any, ...]
            if w is None:
                head = (src_a, tab, o)
                wst: tuple[Any, ...] = ()
            else:
                wa = w.ndarray
                head = (src_a, tab, wa, o)
                wst = tuple(np.int64(s) for s in elem_strides(wa))
            kargs = (
                *head,
                np.int32(n_out),
                np.int32(nk),
                np.int64(s_src[0]),
                np.int64(s_src[1]),
                np.int64(s_tab[0]),
                np.int64(s_tab[1]),
                *wst,
                np.int64(s_o[0]),
                np.int64(s_o[1]),
            )
            res[f"hand_{variant}_launch"] = {"grid": grid, "block": blk}
            label = (
                "thread per (point, level)" if variant == "ek" else "thread per point, loop over K"
            )

            def launch(
                kern: Any = kern, grid: tuple[int, int, int] = grid, kargs: tuple[Any, ...] = kargs
            ) -> None:
                kern(grid, blk, kargs)

            add(dev.cuda_label(label), launch, o)
    if not dev.gpu:
        o = new_out().ndarray
        t_idx = xp.asarray(tab_host)
        if w is None:

            def hand() -> None:
                np.subtract(src_a[t_idx[:, 1]], src_a[t_idx[:, 0]], out=o)
        else:
            wa = w.ndarray

            def hand() -> None:
                o[...] = np.einsum("hn,hnk->hk", wa, src_a[t_idx])

        add("hand NumPy (fancy indexing)", hand, o)
    fam = st.get("family")
    fam_name = f"{dev.compiled_name}, family-numbered mesh"
    if (
        fam is not None
    ):  # the same operator over the generator's own numbering: timed, checked apart
        fam_out = new_out()
        fam_prog = getattr(P, spec["prog"]).with_backend(dev.compiled)
        fam_provider = {spec["table"]: fam["conn"][spec["table"]]}

        def fam_call(prog: Any = fam_prog, o: Any = fam_out) -> None:
            prog(*ins, o, offset_provider=fam_provider)

        t0 = time.perf_counter()
        fam_call()
        dev.sync()
        firsts[fam_name] = time.perf_counter() - t0
        calls[fam_name] = fam_call
    res["first_call_s"] = firsts

    # ---- checks: NumPy on a sample of rows, variants against each other
    rng = np.random.default_rng(19)
    sample = np.unique(np.concatenate([[0, n_out - 1], rng.integers(0, n_out, 500)]))

    def sample_reference(table: Any) -> Any:
        """NumPy's result on the sampled rows, through ``table`` (host, [rows, nb])."""
        nbrs = table[sample].astype(np.int64)  # [S, nb]
        rows = dev.to_host(src_a[xp.asarray(nbrs.ravel())]).reshape(len(sample), nbn, nk)
        if w is None:
            return rows[:, 1] - rows[:, 0]
        return np.einsum("hn,hnk->hk", st["w_host"][spec["weights"]][sample], rows)

    ref = sample_reference(tab_host)
    ref_family = None if fam is None else sample_reference(fam["host_tables"][spec["table"]])
    xs = xp.asarray(sample)
    base = next(iter(outs))
    tol = 1e-11

    def check_against_numpy(name: str, o: Any, want: Any, when: str) -> None:
        R.check(f"{op} {name}: every point written [{when}]", finite(xp, o))
        err = float(np.max(np.abs(dev.to_host(o[xs]) - want)))
        R.check(
            f"{op} {name} vs NumPy on {len(sample)} rows [{when}]",
            err <= tol,
            f"max abs err {err:.1e}",
        )

    def check_outputs(when: str) -> None:
        for name, o in outs.items():
            check_against_numpy(name, o, ref, when)
            if name != base:
                dd = maxdiff(xp, o, outs[base])
                R.check(f"{op} {name} vs {base} [{when}]", dd <= tol, f"max abs diff {dd:.1e}")

    def check_family(when: str) -> None:
        if ref_family is not None:
            check_against_numpy(fam_name, fam_out.ndarray, ref_family, when)

    check_outputs("first run")
    check_family("first run")
    scratch = xp.empty_like(src_a)
    cname = "copy of the input field (same section)"
    variants: dict[str, tuple[Callable[[], Any], int]] = {
        cname: (dev.copier(scratch, src_a), opts.reps)
    }
    nb = {cname: 2 * int(src_a.nbytes)}
    for name, fn in calls.items():
        slow = name.startswith(("embedded", "hand NumPy")) or "emulation" in name
        variants[name] = (fn, adaptive_reps(firsts[name], opts.emb_reps) if slow else opts.reps)
        nb[name] = nbytes
    notes = {
        dev.compiled_name: f"locality-numbered mesh; first call {firsts[dev.compiled_name] * 1e3:.0f} ms",
        fam_name: "same tables, numbered by edge family",
    }
    # DESIGN.md's bandwidth targets are the GPU's (H200): a cpu run shows the fraction, no target
    targets = {dev.compiled_name: DESIGN["neighbour_sum_fraction_of_copy"]} if dev.gpu else {}
    R.row(
        f"{op}: {spec['what']}, {n_out} x {nk}",
        "",
        gb(nbytes),
        "",
        "bytes: out once + input field once + int32 table"
        + (" + fp64 weights" if w is not None else "")
        + " once",
    )
    time_variants(R, dev, op, variants, nb, state.get("copy_gbs"), notes, res, targets)
    check_outputs("after timing")
    check_family("after timing")
    return res
