"""``gt4py.cartesian.testing``: numerical validation suites for GTScript stencils.

A suite is a class deriving from :class:`StencilTestSuite` with a stencil ``definition``, a
NumPy ``validation`` of the same signature, the ``symbols`` it takes (``field``,
``parameter``, ``global_name``, ``none``), their ``dtypes``, a ``domain_range`` and the
``backends``. pytest collects two parametrized tests per class: ``test_generation`` builds the
stencil for each backend, dtype and externals combination, and ``test_implementation`` runs it
on random data (drawn with Hypothesis) and compares every field, halo and untouched points
included, against the validation's result::

    class TestCopy(StencilTestSuite):
        dtypes = (np.float64,)
        domain_range = [(1, 15), (1, 15), (1, 15)]
        backends = ["numpy", "gt:cpu_ifirst"]
        symbols = dict(a=field(in_range=(-10, 10), boundary=[(0, 0)] * 3),
                       b=field(in_range=(-10, 10), boundary=[(0, 0)] * 3))

        def definition(a, b):
            with computation(PARALLEL), interval(...):
                b = a

        def validation(a, b, domain=None, origin=None):
            b[...] = a

Needs ``pytest`` and ``hypothesis`` (stencilkit's ``test`` extra).
"""

from __future__ import annotations

try:
    from .suites import StencilTestSuite
    from .symbols import SymbolKind, field, global_name, none, parameter
except ModuleNotFoundError as err:  # pragma: no cover - depends on the installed extras
    if err.name in ("pytest", "hypothesis"):
        raise ModuleNotFoundError(
            f"gt4py.cartesian.testing needs {err.name}: pip install 'stencilkit[test]'",
            name=err.name,
        ) from err
    raise

__all__ = ["StencilTestSuite", "SymbolKind", "field", "global_name", "none", "parameter"]
