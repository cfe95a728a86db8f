import gt4py.next as gtx
import gt4py.next.no_such_module  # noqa: F401

from .dims import CellKField


@gtx.field_operator
def _never(a: CellKField) -> CellKField:
    return a
