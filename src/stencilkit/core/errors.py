"""Error classes: user errors carry the DSL source location, internal bugs do not."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """Where in the user's source a construct was written."""

    filename: str
    line: int
    column: int
    source_line: str = ""

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column}"


class StencilError(Exception):
    """Base of every error a user can cause; says what is wrong, where, and how to fix it."""

    def __init__(self, message: str, location: SourceLocation | None = None, hint: str = "") -> None:
        self.message = message
        self.location = location
        self.hint = hint
        super().__init__(self._render())

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


class BuildError(StencilError, RuntimeError):
    """A C++/CUDA build failed; carries the exact command, the stderr and the kept source."""

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
        super().__init__(full)


class BackendUnavailableError(StencilError, RuntimeError):
    """The requested backend cannot run here (no GPU, no driver, no compiler)."""


class InternalError(RuntimeError):
    """A bug in stencilkit itself, never caused by user input; please report it."""
