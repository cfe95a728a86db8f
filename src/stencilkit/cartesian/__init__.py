"""GTScript (gt4py.cartesian) on stencilkit: backend names, storages and the language."""
