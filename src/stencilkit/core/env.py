"""The yes/no spelling of stencilkit's environment variables, shared by every layer that reads
one (``toolchain.config``, ``stencilkit.config``, ``ir.verify``, ``distributed.comm``)."""

from __future__ import annotations

YES = ("1", "true", "yes", "on")
NO = ("0", "false", "no", "off", "")


def yes_no(value: str) -> bool:
    """``value`` as a yes/no setting (``1``/``true``/``yes``/``on`` or ``0``/``false``/``no``/``off``,
    any case, or empty); anything else is a ``ValueError`` listing the spellings."""
    v = value.strip().lower()
    if v in YES or v in NO:
        return v in YES
    raise ValueError(f"use one of {', '.join(YES)} or {', '.join(n for n in NO if n)}")
