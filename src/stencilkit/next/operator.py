"""``FieldOperator``: a gt4py.next field operator (``@field_operator``, ``@scan_operator``),
parsed on first use; called from a program, from another operator, or directly with ``out=``
(``direct.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..backends import Backend
from ..core.errors import DSLError, MissingOutError, StencilTypeError
from ..core.tracebacks import api_boundary, shorten
from ..ir import nodes as ir
from .direct import aliases, allocate_result, direct_program, domain_args, domain_key, type_of_value
from .parse import parse_field_operator
from .program import IRText, Program, param_names
from .source import SourceFunction


class FieldOperator:
    """A field operator: call it from a program or field operator, or directly with ``out=``.
    It is parsed on first use (a call, ``.compile()``, ``.ir_text()``, or when another operator
    or a program uses it), so a module with one unsupported operator still imports."""

    def __init__(
        self,
        fn: Callable[..., Any],
        backend: Backend | None,
        scan: tuple[Any, ...] | None = None,
        parsed: tuple[ir.FieldOperator, SourceFunction] | None = None,
        grid_type: Any = None,
    ) -> None:
        self._parsed = parsed
        self.__stencilkit_scan__ = scan
        self.__wrapped__ = fn
        self.__name__ = getattr(fn, "__name__", "field_operator")
        self.__doc__ = fn.__doc__
        self.backend = backend
        self.grid_type = grid_type
        self._programs: dict[Any, Program] = {}
        self._result_programs: dict[Any, ir.Program] = {}  # behind calls without out=

    def _parse(self) -> tuple[ir.FieldOperator, SourceFunction]:
        if self._parsed is None:
            self._parsed = parse_field_operator(self.__wrapped__)
        return self._parsed

    @property
    def definition(self) -> ir.FieldOperator:
        """The operator's IR (parsed on first access)."""
        return self._parse()[0]

    @property
    def _src(self) -> SourceFunction:
        return self._parse()[1]

    @property
    def __stencilkit_operator__(self) -> ir.FieldOperator:
        return self._parse()[0]

    @property
    def ir_text(self) -> IRText:
        """The operator's IR as text (``op.ir_text`` or ``op.ir_text()``); parses the operator,
        raising its DSL error if it has one."""
        return IRText(str(self.definition))

    @api_boundary
    def compile(self, *args: Any, **kwargs: Any) -> FieldOperator:
        """Parse now (reporting DSL errors); returns ``self``."""
        self._parse()
        return self

    def __repr__(self) -> str:
        return f"<stencilkit field_operator {self.__name__}>"

    def with_backend(self, backend: Backend | None) -> FieldOperator:
        """This operator run by ``backend`` (``None``: embedded) instead; the original is unchanged."""
        return type(self)(
            self.__wrapped__, backend, self.__stencilkit_scan__, self._parsed, self.grid_type
        )

    def with_grid_type(self, grid_type: Any) -> FieldOperator:
        """This operator with gt4py.next's ``grid_type`` recorded (``.grid_type``)."""
        return type(self)(
            self.__wrapped__, self.backend, self.__stencilkit_scan__, self._parsed, grid_type
        )

    def __deepcopy__(self, memo: dict[int, Any]) -> FieldOperator:
        """``copy.deepcopy(op)`` (gt4py copies operators): the same operator, its IR shared
        (frozen), without the programs compiled for direct calls (they hold loaded libraries,
        which cannot be copied); the copy builds or loads them again on its first call."""
        return self.with_grid_type(self.grid_type)

    def _positional(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """Keyword arguments placed after the positional ones, in parameter order (the carry of a
        scan is not a parameter of the call)."""
        if not kwargs:
            return args
        names = param_names(self.__wrapped__)[1 if self.__stencilkit_scan__ else 0 :]
        if len(args) > len(names):
            raise TypeError(
                f"{self.__name__}() takes {len(names)} arguments but {len(args)} were given"
            )
        for k in kwargs:
            if k not in names:
                raise TypeError(f"{self.__name__}() got an unexpected keyword argument '{k}'")
            if names.index(k) < len(args):
                raise TypeError(f"{self.__name__}() got multiple values for argument '{k}'")
        missing = [n for n in names[len(args) :] if n not in kwargs]
        if missing:
            raise TypeError(
                f"{self.__name__}() missing {len(missing)} required argument(s): "
                + ", ".join(f"'{m}'" for m in missing)
            )
        return (*args, *(kwargs[n] for n in names[len(args) :]))

    def __call__(
        self,
        *args: Any,
        out: Any = None,
        domain: Any = None,
        offset_provider: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        try:
            if out is None:
                raise MissingOutError(
                    "Expected keyword-argument 'out'.",
                    hint=f"call {self.__name__}(..., out=result_field); or use"
                    f" {self.__name__}.returning(...) to get new fields over the domain where the"
                    " result is defined",
                )
            args = self._positional(args, kwargs)
            _check_out_fields(self.__name__, out)
            prog = self._program_for(args, out, domain)
            dom_args = domain_args(domain)
            prog(*args, out, *dom_args, offset_provider=offset_provider)
        except DSLError as err:  # the API boundary: the user's frames only (core/tracebacks.py)
            shorten(err)
            raise
        return None

    @api_boundary
    def returning(
        self,
        *args: Any,
        domain: Any = None,
        offset_provider: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Call without ``out=`` (a stencilkit extension): the result in new fields over ``domain``
        if given, else over the largest domain where every read stays inside the arguments, on
        the arguments' device.

        >>> r = lap.returning(a, offset_provider={})
        """
        args = self._positional(args, kwargs)
        out = allocate_result(self, args, domain, offset_provider)
        self(*args, out=out, domain=domain, offset_provider=offset_provider)
        return out

    def _program_for(self, args: tuple[Any, ...], out: Any, domain: Any) -> Program:
        out_type = type_of_value(out)
        arg_types = tuple(type_of_value(a) for a in args)
        alias = aliases(args, out)
        key = (out_type, domain_key(domain), arg_types, alias)
        prog = self._programs.get(key)
        if prog is None:
            prog = Program(
                direct_program(self, arg_types, out_type, key[1], alias),
                self.backend,
                self.__wrapped__,
            )
            self._programs[key] = prog
        return prog


def _check_out_fields(name: str, out: Any) -> None:
    """``out=`` of a direct call holds fields only (gt4py raises for a scalar there too)."""
    from ..core.named_collections import collection_values
    from ..fields import Field

    value = collection_values(out)
    if isinstance(value, tuple | list):
        for v in value:
            _check_out_fields(name, v)
        return
    if not isinstance(value, Field):
        raise StencilTypeError(
            f"{name}(..., out=...) must be a field or a tuple of fields, got a"
            f" {type(value).__name__} ({value!r:.40})",
            hint=f"allocate the result, e.g. out = gtx.zeros(domain); {name}(..., out=out);"
            " a scalar result comes from a program whose statement writes a field",
        )
