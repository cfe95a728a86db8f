"""What the gt4py alias serves: gt4py.next's module layout over stencilkit.

``import gt4py.next as gtx`` (through ``install_gt4py_alias``) is ``stencilkit``; its submodules
that only mirror gt4py's layout live here and are served as ``gt4py.next.<name>``
(``common``, ``constructors``, ``typing``, ``utils``, ``backend``, ``errors``, ``experimental``,
``custom_layout_allocators``, ``ffront/``, ``program_processors/``), as are ``gt4py.eve`` (``eve/``)
and ``gt4py._core.definitions`` (``core_definitions``). Nothing in the engine imports them.

They are user-facing names of stencilkit too (``gtx.common.Dimension``, ``from stencilkit import
errors``, ``from stencilkit.experimental import as_offset``, ``stencilkit.ffront.decorator
.DEFAULT_BACKEND``): :data:`MIRRORS` lists them and ``stencilkit/__init__.py`` registers each
one as ``stencilkit.<name>`` too (the same module object).
"""

#: The modules served as ``gt4py.next.<name>`` and ``stencilkit.<name>``, packages before their
#: submodules (each imported when stencilkit is: they are small and GPU-free).
MIRRORS = (
    "backend",
    "common",
    "constructors",
    "custom_layout_allocators",
    "errors",
    "eve",
    "experimental",
    "ffront",
    "ffront.decorator",
    "ffront.experimental",
    "ffront.fbuiltins",
    "program_processors",
    "program_processors.runners",
    "program_processors.runners.dace",
    "program_processors.runners.dace.transformations",
    "program_processors.runners.gtfn",
    "typing",
    "utils",
)
