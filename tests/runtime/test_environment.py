"""The CPU in the recorded environment (tailgate.runtime.environment.cpu): the same versions
give other last bits on a CPU with other vector instructions, so a re-run there is compared by
value, not byte for byte."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from tailgate.runtime.environment import (
    cpu,
    current,
    numeric_differences,
    same_numerics,
    vector_instructions,
)

pytestmark = pytest.mark.fast

_CPU = "from tailgate.runtime.environment import cpu; print(cpu())"


def test_a_run_on_another_cpu_is_compared_by_value() -> None:
    mine = current(installed=True)
    assert mine["cpu"] == cpu()
    other = {**mine, "cpu": "another processor; X86_V3"}
    assert numeric_differences(other, mine) == [("cpu", other["cpu"], mine["cpu"])]
    assert not same_numerics(other, mine) and same_numerics(mine, mine)
    # a record made before the CPU was recorded cannot promise the same bytes
    assert not same_numerics({k: v for k, v in mine.items() if k != "cpu"}, mine)


def test_the_vector_instructions_numpy_may_use_are_part_of_the_cpu() -> None:
    """numpy with its vector kernels switched off is, to the audit, another CPU: its log and
    exp round otherwise (an AVX-512 machine's 1-ULP differences, measured)."""
    found = vector_instructions()
    if not found:
        pytest.skip("numpy dispatches to no vector kernel beyond its baseline on this CPU")
    off = {**os.environ, "NPY_DISABLE_CPU_FEATURES": " ".join(found)}
    run = [sys.executable, "-c", _CPU]
    here = subprocess.run(run, capture_output=True, text=True, check=True).stdout.strip()
    there = subprocess.run(run, capture_output=True, text=True, check=True, env=off).stdout
    assert here == cpu() and here.endswith(f"; {found[-1]}")
    assert there.strip() == here.rsplit("; ", 1)[0] + "; baseline"
