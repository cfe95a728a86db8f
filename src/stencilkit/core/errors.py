"""Error classes: user errors carry the DSL source location, internal bugs do not.

gt4py.next's exception hierarchy (``GT4PyError`` > ``DSLError`` > ...; ``CompilationError``) is
defined here too, and stencilkit's own ``StencilError`` family derives from ``DSLError``, so
``except gtx.errors.DSLError`` catches every stencilkit user error while ``except TypeError``
keeps working. The conditions gt4py names specifically raise classes that are both, e.g.
:class:`UndefinedNameError` is a ``StencilTypeError`` and an ``UndefinedSymbolError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .records import record


@record
class SourceLocation:
    """Where in the user's source a construct was written."""

    filename: str
    line: int
    column: int
    source_line: str = ""

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column}"


class GT4PyError(Exception):
    """gt4py.next's base exception; ``.message`` is the bare message."""

    message: str

    def __init__(self, message: str, *args: Any) -> None:
        self.message = message
        super().__init__(message, *args)


class DSLError(GT4PyError):
    """An error in user code written in the DSL, with its source location (gt4py.next signature)."""

    location: Any

    def __init__(
        self,
        location: Any,
        message: str,
        *,
        label: str | None = None,
        related: Sequence[Any] = (),
        notes: Sequence[str] = (),
        hints: Sequence[str] = (),
    ) -> None:
        self.location = location
        self.label = label
        self.related = tuple(related)
        self.notes = tuple(notes)
        self.hints = tuple(hints)
        super().__init__(message)

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location is not None else ""
        return where + self.message + "".join(f"\nhint: {h}" for h in self.hints)


class UnsupportedPythonFeatureError(DSLError):
    def __init__(self, location: Any, feature: str) -> None:
        self.feature = feature
        super().__init__(location, f"Unsupported Python syntax: {feature}.")


class UndefinedSymbolError(DSLError):
    def __init__(self, location: Any, name: str) -> None:
        self.sym_name = name
        super().__init__(location, f"Undeclared symbol '{name}'.")


class MissingAttributeError(DSLError):
    def __init__(self, location: Any, attr_name: str) -> None:
        self.attr_name = attr_name
        super().__init__(location, f"Object does not have attribute '{attr_name}'.")


class MissingArgumentError(DSLError):
    def __init__(self, location: Any, arg_name: str, is_kwarg: bool) -> None:
        self.arg_name = arg_name
        self.is_kwarg = is_kwarg
        kind = "keyword-argument" if is_kwarg else "argument"
        super().__init__(location, f"Expected {kind} '{arg_name}'.")


class DSLTypeError(DSLError):
    pass


class MissingParameterAnnotationError(DSLTypeError):
    def __init__(self, location: Any, param_name: str) -> None:
        self.param_name = param_name
        super().__init__(location, f"Parameter '{param_name}' is missing type annotations.")


class InvalidAnnotationError(DSLTypeError):
    def __init__(self, location: Any, annotation: Any) -> None:
        self.annotation = annotation
        super().__init__(location, f"Invalid type annotation: '{annotation}'.")


class InvalidParameterAnnotationError(DSLTypeError):
    def __init__(self, location: Any, param_name: str, type_: Any) -> None:
        self.param_name = param_name
        self.type_ = type_
        super().__init__(location, f"Invalid annotation for parameter '{param_name}': '{type_}'.")


class CompilationError(GT4PyError):
    """A generated C++/CUDA program failed to build (gt4py.next signature)."""

    def __init__(self, compilation_log: Any) -> None:
        self.compilation_log = compilation_log
        super().__init__(f"See attached compilation log.\n{compilation_log}")


class StencilError(DSLError):
    """Base of every error a user can cause; says what is wrong, where, and how to fix it.

    A gt4py ``DSLError``: ``.message`` is the bare message, ``str()`` adds the location (with
    the source line) and the hint."""

    def __init__(
        self, message: str, location: SourceLocation | None = None, hint: str = ""
    ) -> None:
        self.message = message
        self.location = location
        self.hint = hint
        self.label = None
        self.related = ()
        self.notes = ()
        self.hints = (hint,) if hint else ()
        Exception.__init__(self, self._render())

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else self.message

    def _render(self) -> str:
        parts = []
        if self.location is not None:
            parts.append(f"{self.location}: {self.message}")
            if self.location.source_line:
                line = self.location.source_line
                stripped = line.lstrip()
                caret = " " * max(0, self.location.column - 1 - (len(line) - len(stripped)))
                parts.append(f"    {stripped}\n    {caret}^")
        else:
            parts.append(self.message)
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


class StencilTypeError(StencilError, TypeError):
    """Wrong dimensions, dtypes, argument kinds or annotations."""


class StencilValueError(StencilError, ValueError):
    """Wrong values: domains out of bounds, bad shapes, unknown names."""


class BuildError(StencilError, CompilationError, RuntimeError):
    """A C++/CUDA build failed; carries the exact command, the stderr and the kept source.

    Also gt4py's ``CompilationError`` (``.compilation_log`` is the compiler's output)."""

    def __init__(self, message: str, command: list[str], stderr: str, source_path: str) -> None:
        self.command = command
        self.stderr = stderr
        self.source_path = source_path
        shown = stderr.strip()
        if len(shown) > 6000:  # the first errors are the useful ones; the full text is kept
            shown = shown[:6000] + f"\n... ({len(stderr) - 6000} more characters in .stderr)"
        full = (
            f"{message}\ncommand: {' '.join(command)}\nsource: {source_path}\n"
            f"compiler output:\n{shown}"
        )
        self.compilation_log = stderr
        super().__init__(full)


class BackendUnavailableError(StencilError, RuntimeError):
    """The requested backend cannot run here (no GPU, no driver, no compiler)."""


class ConfigurationError(StencilValueError):
    """An environment variable (or a ``stencilkit.config`` setting) holds a value stencilkit
    cannot use; ``.variable`` names it.

    Raised by the code that needs the variable (a bad ``STENCILKIT_CUDA_COMPILER`` stops GPU
    builds, not the cpu backend); ``stencilkit info`` lists every such variable."""

    def __init__(self, variable: str, value: str, problem: str) -> None:
        self.variable = variable
        self.value = value
        self.problem = problem
        what = "the setting" if "." in variable else "the environment variable"
        super().__init__(
            f"{what} {variable}={value!r} is not valid: {problem}",
            hint=f"fix or unset {variable} (`stencilkit help configuration` lists every variable)",
        )

    def __reduce__(
        self,
    ) -> tuple[Any, ...]:  # picklable (multiprocessing, MPI): rebuilt from its parts
        return (type(self), (self.variable, self.value, self.problem))


class ConfigurationWarning(UserWarning):
    """A variable read when stencilkit is imported (``STENCILKIT_LOG``, the ``GT4PY_*`` flags of
    ``stencilkit.config``) holds a value stencilkit cannot use: importing never fails, so this
    warning names the variable and the default used instead (``stencilkit info`` lists it too)."""


def warn_configuration(variable: str, value: str, problem: str, instead: str) -> None:
    """Warn, naming ``variable``, that its ``value`` is not valid and ``instead`` is used."""
    import warnings

    warnings.warn(
        ConfigurationWarning(
            f"the environment variable {variable}={value!r} is not valid: {problem}; using "
            f"{instead} (fix or unset {variable}; `stencilkit help configuration` lists every variable)"
        ),
        stacklevel=3,
    )


class InternalError(RuntimeError):
    """A bug in stencilkit itself, never caused by user input; please report it."""


# -- stencilkit errors for the conditions gt4py.next names with its own classes ---------------
class UndefinedNameError(StencilTypeError, UndefinedSymbolError):
    """A name used in an operator or program is not defined."""


class MissingAnnotationError(StencilTypeError, MissingParameterAnnotationError):
    """A parameter of an operator or program has no type annotation."""


class BadAnnotationError(StencilTypeError, InvalidAnnotationError):
    """An annotation is not a DSL type."""


class UnsupportedSyntaxError(StencilTypeError, UnsupportedPythonFeatureError):
    """Python syntax that is not part of the DSL."""


class MissingOutError(StencilTypeError, MissingArgumentError):
    """An operator called from Python without ``out=``."""


class ArgumentTypeError(StencilTypeError):
    """Arguments of a program call with the wrong types; raised from a ``ValueError`` listing them
    (gt4py.next: ``Invalid argument types in call to '<prog>'.``)."""
