"""Run by test_cache.py in several processes at once: compile one program, check its result."""

import json
import sys

import numpy as np

import stencilkit as gtx
from stencilkit import Dims, Field, float64

I = gtx.Dimension("I")


@gtx.field_operator
def smooth(a: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
    return 0.25 * a(I - 1) + 0.5 * a + 0.25 * a(I + 1)


@gtx.program(backend=gtx.cpu)
def run(a: Field[Dims[I], float64], out: Field[Dims[I], float64]):
    smooth(a, out=out, domain={I: (1, 99)})


seed = int(sys.argv[1])
data = np.random.default_rng(seed).standard_normal(100)
out = gtx.as_field([I], np.full(100, np.nan))
run(gtx.as_field([I], data), out, offset_provider={})
plan = next(iter(run._runner.plans.values()))
ok = np.allclose(out.asnumpy()[1:99], 0.25 * data[:98] + 0.5 * data[1:99] + 0.25 * data[2:])
print(
    json.dumps(
        {
            "built": plan.stages.built.built,
            "ok": bool(ok and np.isnan(out.asnumpy()[[0, 99]]).all()),
        }
    )
)
