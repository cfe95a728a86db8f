"""A process that ends while a GPU variant build runs on its background thread waits for the
build at exit (on the H200 such a process crashed after its last line, exit 139, while NVRTC
was still compiling). No GPU needed: the build is a stand-in that writes a file when done."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def test_exit_waits_for_a_build_in_flight(tmp_path: Path) -> None:
    done = tmp_path / "done"
    script = textwrap.dedent(
        f"""
        import time
        from stencilkit.backends.cuda import backend

        def build():
            time.sleep(1.0)
            open({str(done)!r}, "w").write("built")
            return None

        backend._PENDING.append(backend._in_background(build))
        print("last line")
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "last line"
    assert done.read_text() == "built"  # the build finished before the process ended


def test_a_forked_child_does_not_wait_for_the_parents_build(tmp_path: Path) -> None:
    """The build's thread is the parent's: a child forked meanwhile exits at once."""
    script = textwrap.dedent(
        """
        import os, sys, time
        from stencilkit.backends.cuda import backend

        backend._PENDING.append(backend._in_background(lambda: time.sleep(3.0)))
        pid = os.fork()
        if pid == 0:
            t0 = time.perf_counter()
            sys.exit(0)  # atexit handlers run; the parent's build is not waited for
        t0 = time.perf_counter()
        _, status = os.waitpid(pid, 0)
        print(f"child {os.waitstatus_to_exitcode(status)} {time.perf_counter() - t0:.1f}")
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr
    code, seconds = run.stdout.split()[1:]
    assert code == "0" and float(seconds) < 2.0
