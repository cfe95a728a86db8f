"""Passes and the verifier on IR built without a frontend (``helpers/irbuild.py``): IR in, IR
out, as xDSL tests its passes."""

from __future__ import annotations

import pytest

import stencilkit as gtx
from helpers.irbuild import ProgramBuilder
from stencilkit.core.errors import InternalError
from stencilkit.ir import nodes as ir
from stencilkit.ir.fuse import fuse_kernels
from stencilkit.ir.lower import lower_program
from stencilkit.ir.verify import verify_program

I = gtx.Dimension("I")


def _two_statements(shifted: bool) -> ir.Program:
    """tmp <- 2a; out <- tmp (read at the point, or one point to the right) + a"""
    b = ProgramBuilder("two")
    a, tmp, out = b.field("a", I), b.field("tmp", I), b.field("out", I)
    b.apply(a * 2.0, tmp, {I: (0, 8)})
    read = tmp.shift(I, 1) if shifted else tmp
    b.apply(read + a, out, {I: (0, 8)})
    return b.build()


def test_centered_reads_fuse_into_one_kernel() -> None:
    sprog = lower_program(_two_statements(shifted=False), {})
    assert [k.outs for k in sprog.kernels] == [("tmp",), ("out",)]
    fused = fuse_kernels(sprog)
    assert [k.outs for k in fused.kernels] == [("tmp", "out")]
    # the second value reads the first one's expression, not the field it writes
    second = str(fused.kernels[0].values[1])
    assert "tmp" not in second and "a[I]" in second


def test_a_shifted_read_of_a_produced_field_is_not_fused() -> None:
    fused = fuse_kernels(lower_program(_two_statements(shifted=True), {}))
    assert [k.outs for k in fused.kernels] == [("tmp",), ("out",)]


def test_the_verifier_refuses_a_temporary_read_before_it_is_written() -> None:
    b = ProgramBuilder("early")
    a, out = b.field("a", I), b.field("out", I)
    tmp = b.field("tmp", I, temp=True)
    b.apply(tmp + a, out)
    b.apply(a, tmp)
    with pytest.raises(InternalError, match="temporary 'tmp' is read before any statement"):
        verify_program(b.build(), after="test")


def test_the_verifier_refuses_a_dangling_temporary() -> None:
    b = ProgramBuilder("dangling")
    a = b.field("a", I)
    tmp = b.field("tmp", I, temp=True)
    b.apply(a, tmp)
    with pytest.raises(InternalError, match="written but never read"):
        verify_program(b.build(), after="test")


def test_the_verifier_accepts_what_the_builder_makes() -> None:
    verify_program(_two_statements(shifted=True), after="test")
