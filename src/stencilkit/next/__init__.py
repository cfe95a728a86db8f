"""The gt4py.next language: ``@field_operator``, ``@scan_operator``, ``@program`` (``decorators.py``),
parsed from Python functions (``parse.py``, ``expressions.py``, ``shifts.py``, ``scans.py``,
``outputs.py``...) into ``ir.Program``, which enters the engine (``stencilkit.stages``) through its
interface (``stages/interface.py``)."""
