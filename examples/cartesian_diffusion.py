# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Heat diffusion on a Cartesian grid
#
# A percent-format script (open it as a notebook with jupytext, or run it with
# `python examples/cartesian_diffusion.py`). It needs the `plot` and `xarray` extras:
# `pip install 'stencilkit[plot,xarray]'`.
#
# We diffuse a warm bubble on an `I x J x K` grid with the explicit scheme
# `u_new = u + alpha * lap(u)`, writing the interior and keeping a one-point halo at 0
# (a cold wall). The backend comes from `STENCILKIT_EXAMPLE_BACKEND` (`embedded`, `cpu`,
# `gpu`), the plot goes to `STENCILKIT_EXAMPLE_OUT` (default: the current directory).

# %%
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import stencilkit as gtx

_BACKENDS = {"embedded": None, "cpu": gtx.cpu, "gpu": gtx.gpu}
_NAME = os.environ.get("STENCILKIT_EXAMPLE_BACKEND", "embedded")
if _NAME not in _BACKENDS:
    raise SystemExit(f"STENCILKIT_EXAMPLE_BACKEND={_NAME!r}: use one of {', '.join(_BACKENDS)}")
BACKEND = _BACKENDS[_NAME]
OUT = Path(os.environ.get("STENCILKIT_EXAMPLE_OUT", "."))

I = gtx.Dimension("I")
J = gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
IJK = gtx.Field[gtx.Dims[I, J, K], gtx.float64]

# %% [markdown]
# ## The stencil
#
# A field operator is plain Python on whole fields; `u(I + 1)` is `u` shifted by one point
# along `I`. The program writes the interior `0..n` of the fields, whose domain starts at -1
# (the halo), so indices mean the same in every field and in the plot.


# %%
@gtx.field_operator
def laplacian(u: IJK) -> IJK:
    return -4.0 * u + u(I + 1) + u(I - 1) + u(J + 1) + u(J - 1)


@gtx.field_operator
def diffusion_step(u: IJK, alpha: gtx.float64) -> IJK:
    return u + alpha * laplacian(u)


@gtx.program(backend=BACKEND)
def diffuse(u: IJK, alpha: gtx.float64, out: IJK, ni: gtx.int32, nj: gtx.int32, nk: gtx.int32):
    diffusion_step(u, alpha, out=out, domain={I: (0, ni), J: (0, nj), K: (0, nk)})


# %% [markdown]
# ## Initial state: a warm bubble
#
# `gtx.domain` gives the fields an origin: index 0 of `I` is the first interior point.

# %%
NI, NJ, NK, STEPS, ALPHA = 48, 40, 3, 60, 0.2
dom = gtx.domain({I: (-1, NI + 1), J: (-1, NJ + 1), K: (0, NK)})
x = np.arange(-1, NI + 1)[:, None, None] / NI
y = np.arange(-1, NJ + 1)[None, :, None] / NJ
level = 1.0 + np.arange(NK)[None, None, :]
u0 = level * np.exp(-((x - 0.4) ** 2 + (y - 0.55) ** 2) / 0.02)
u0[[0, -1], :, :] = 0.0
u0[:, [0, -1], :] = 0.0

allocator = gtx.gpu if BACKEND is gtx.gpu else None
u = gtx.as_field(dom, u0, allocator=allocator)
v = gtx.as_field(dom, u0, allocator=allocator)
print("initial heat per level:", [round(float(u[K(k)].sum()), 4) for k in range(NK)])

# %% [markdown]
# ## Time stepping
#
# Two fields swap roles every step; the halo of both stays 0.

# %%
for _ in range(STEPS):
    diffuse(u, ALPHA, v, NI, NJ, NK, offset_provider={})
    u, v = v, u
print("final heat per level:  ", [round(float(u[K(k)].sum()), 4) for k in range(NK)])

# %% [markdown]
# ## Check against NumPy

# %%
ref = u0.copy()
for _ in range(STEPS):
    lap = -4.0 * ref[1:-1, 1:-1] + ref[2:, 1:-1] + ref[:-2, 1:-1] + ref[1:-1, 2:] + ref[1:-1, :-2]
    new = ref.copy()
    new[1:-1, 1:-1] = ref[1:-1, 1:-1] + ALPHA * lap
    ref = new
np.testing.assert_allclose(u.asnumpy(), ref, rtol=1e-12, atol=1e-14)
print("matches NumPy; max |u| =", float(np.max(u)))

# %% [markdown]
# ## Plot through xarray
#
# `Field.to_xarray()` names the axes after the dimensions and keeps the domain's index ranges
# as coordinates (the halo is at `I = -1` and `I = 48`).

# %%
da = u.to_xarray("temperature", host=True)
fig, axes = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
gtx.as_field(dom, u0).to_xarray("temperature").isel(K=NK - 1).plot(ax=axes[0], x="I")
axes[0].set_title("initial, top level")
da.isel(K=NK - 1).plot(ax=axes[1], x="I")
axes[1].set_title(f"after {STEPS} steps")
OUT.mkdir(parents=True, exist_ok=True)
fig.savefig(OUT / "cartesian_diffusion.png", dpi=80)
print("wrote", OUT / "cartesian_diffusion.png")
