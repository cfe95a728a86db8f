"""Differential fuzzing of stencilkit: random programs against a NumPy reference (see scripts/fuzz.py)."""
