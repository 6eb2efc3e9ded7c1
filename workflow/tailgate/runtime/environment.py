"""The software environment a result was made in, on record.

Every provenance record (:mod:`tailgate.runtime.provenance`) carries ``versions``: the Python
version, the platform, the CPU (:func:`cpu`) and the version of every installed package that can
change a number or a byte of a result — the numerical stack (numpy, scipy, numba), the table and
figure writers (pandas, pyarrow, matplotlib, Pillow), the workflow engine (snakemake), tailgate
itself and, when the process used it, the model stack (torch, transformers, …). ``tailgate
audit`` prints how the auditor's environment differs from the recorded one before any check
(:func:`environment_notes`); a difference alone is not a failure. ``tailgate env RESULTS`` turns
the record back into a pinned requirements file (:func:`requirements`), so that a reviewer can
recreate the run's environment and make ``tailgate audit --reproduce`` byte-exact.

**Caches hold code.** numba's cache index files are pickles, unpickled when a kernel loads (a
planted one runs its payload), and matplotlib's settings and the model libraries' module
caches are read from folders a researcher can write. So every run of the workflow compiles and
loads tailgate's kernels only in the user's own kernel cache (:mod:`tailgate.user_cache`),
never beside the sources nor where ``NUMBA_CACHE_DIR`` pointed; and ``audit --reproduce`` runs
with every cache in its own scratch folder (:func:`fresh_caches`).
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import platform
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tailgate import __version__
from tailgate.user_cache import user_cache_home

__all__ = [
    "MODEL_PACKAGES",
    "NUMERIC_PACKAGES",
    "PACKAGES",
    "cpu",
    "current",
    "describe",
    "differences",
    "environment_notes",
    "fresh_caches",
    "numeric_differences",
    "recorded",
    "requirements",
    "same_numerics",
    "vector_instructions",
]

#: always recorded when installed (import name → distribution)
PACKAGES: dict[str, str] = {
    "numpy": "numpy",
    "scipy": "scipy",
    "numba": "numba",
    "pandas": "pandas",
    "pyarrow": "pyarrow",
    "matplotlib": "matplotlib",
    "pillow": "pillow",
    "snakemake": "snakemake",
    "pyyaml": "PyYAML",
}
#: the model stack, recorded when the process that made the artifact imported it
MODEL_PACKAGES: dict[str, str] = {
    "torch": "torch",
    "transformers": "transformers",
    "tokenizers": "tokenizers",
    "safetensors": "safetensors",
    "detoxify": "detoxify",
    "profanity_check": "alt-profanity-check",
    "datasets": "datasets",
}

#: entries that can change a computed number, a table's bytes or a figure's pixels
NUMERIC_PACKAGES = (
    "python",
    "platform",
    "cpu",
    "numpy",
    "scipy",
    "numba",
    "pandas",
    "pyarrow",
    "matplotlib",
    "pillow",
    "torch",
    "transformers",
    "tokenizers",
)


@functools.cache
def _version(dist: str) -> str | None:
    """The installed version of ``dist``, looked up once a process (the audit compares every
    record's versions with this process's)."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def vector_instructions() -> list[str]:
    """The vector instruction sets beyond its baseline that numpy dispatches to on this CPU, in
    numpy's order (the last the highest)."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:  # numpy < 2
        from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    return [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]


@functools.cache
def cpu() -> str:
    """The processor as far as it decides a float's last bits: its model (where the system
    names it) and the highest vector instruction set numpy dispatches to here. numpy's kernels
    of log, exp and the like, OpenBLAS's and PyTorch's are chosen by the CPU, and round in their
    own ways: the same versions give other last bits on a CPU with AVX-512 than on one without
    (``audit --reproduce`` of one study, 1 ULP in 1,500 of 2,000 simulated scores)."""
    simd = vector_instructions()
    model = platform.processor()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            model = next((line.split(":", 1)[1].strip() for line in f
                          if line.startswith("model name")), model)  # fmt: skip
    except OSError:
        pass
    return f"{model or 'unnamed'}; {simd[-1] if simd else 'baseline'}"


def current(*, installed: bool = False) -> dict[str, str]:
    """This process's environment: ``tailgate``, ``python``, ``platform``, ``cpu``, each
    installed package of :data:`PACKAGES` and each of :data:`MODEL_PACKAGES` this process
    imported (with ``installed``: each one installed, what an auditor compares a record with)."""
    out = {
        "tailgate": __version__,
        "python": sys.version.split()[0],
        "platform": f"{sys.platform}-{platform.machine()}",
        "cpu": cpu(),
    }
    for name, dist in PACKAGES.items():
        if (version := _version(dist)) is not None:
            out[name] = version
    for name, dist in MODEL_PACKAGES.items():
        if (installed or name in sys.modules) and (version := _version(dist)) is not None:
            out[name] = version
    return out


def recorded(records: Iterable[Any]) -> dict[str, str]:
    """The run's environment from its provenance records: per entry, the version most records
    name (a study made in one environment has one)."""
    counts: dict[str, Counter[str]] = {}
    for rec in records:
        versions = rec.content.get("versions") if hasattr(rec, "content") else rec
        if not isinstance(versions, Mapping):
            continue
        for name, version in versions.items():
            counts.setdefault(str(name), Counter())[str(version)] += 1
    return {name: c.most_common(1)[0][0] for name, c in sorted(counts.items())}


def differences(
    recorded_env: Mapping[str, str], mine: Mapping[str, str] | None = None
) -> list[tuple[str, str | None, str | None]]:
    """``(entry, recorded, here)`` for every entry that differs (``None``: not recorded or not
    installed here); packages the record does not name (older records) are not compared."""
    mine = current(installed=True) if mine is None else mine
    return [
        (name, recorded_env.get(name), mine.get(name))
        for name in sorted(recorded_env)
        if recorded_env.get(name) != mine.get(name)
    ]


def numeric_differences(
    recorded_env: Mapping[str, str], mine: Mapping[str, str] | None = None
) -> list[tuple[str, str | None, str | None]]:
    """The entries of :data:`NUMERIC_PACKAGES` that differ: a model package only when the record
    names it (the process used it), any other also when the record lacks it (an older record
    cannot promise the same bytes)."""
    mine = current(installed=True) if mine is None else mine
    return [
        (n, recorded_env.get(n), mine.get(n))
        for n in NUMERIC_PACKAGES
        if recorded_env.get(n) != mine.get(n) and (n in recorded_env or n not in MODEL_PACKAGES)
    ]


def same_numerics(recorded_env: Mapping[str, str], mine: Mapping[str, str] | None = None) -> bool:
    """Whether every entry of :data:`NUMERIC_PACKAGES` is the same here as recorded (then a
    re-run is expected to give the same bytes: the exact mode of the audit)."""
    return not numeric_differences(recorded_env, mine)


def describe(diffs: Iterable[tuple[str, str | None, str | None]]) -> str:
    """``numpy 2.4.6 → 1.26.0, …`` (recorded → here)."""
    return ", ".join(f"{n} {r or 'absent'} → {m or 'absent'}" for n, r, m in diffs)


def environment_notes(recorded_env: Mapping[str, str]) -> list[str]:
    """The audit's first lines: how the auditor's environment differs from the recorded one."""
    diffs = differences(recorded_env)
    if not recorded_env:
        return ["the records name no environment (made by an older tailgate)"]
    if not diffs:
        return ["the auditor's environment is the recorded one (every package version the same)"]
    notes = [f"recorded → here: {describe(diffs)}"]
    if numeric_differences(recorded_env):
        notes.append(
            "a version difference is not a failure; a value that differs beyond the tolerance "
            "is, and names the versions. Recreate the recorded environment ('tailgate env "
            "RESULTS') for a byte-exact audit"
        )
    return notes


def requirements(recorded_env: Mapping[str, str]) -> str:
    """A pinned requirements file recreating ``recorded_env`` (``pip install -r``)."""
    lines = [
        "# The environment recorded with this study's results (tailgate env).",
        f"# Python {recorded_env.get('python', 'unknown')} on "
        f"{recorded_env.get('platform', 'an unrecorded platform')}; install tailgate itself from "
        f"its repository at the recorded commit (version {recorded_env.get('tailgate', '?')}).",
        "# pip install -r this-file   (a CPU-only torch: --index-url "
        "https://download.pytorch.org/whl/cpu)",
    ]
    for name, dist in {**PACKAGES, **MODEL_PACKAGES}.items():
        version = recorded_env.get(name)
        if version is not None:
            lines.append(f"{dist}=={version.split('+')[0]}")
    return "\n".join(lines) + "\n"


def _user_cache(variable: str, *default: str) -> str:
    return os.environ.get(variable) or str(user_cache_home().joinpath(*default))


def fresh_caches(folder: Path) -> dict[str, str]:
    """This process's environment for a re-run whose caches all start empty in ``folder``:
    numba's kernels, matplotlib's configuration folder (so its default settings: no user
    ``matplotlibrc``, ``MATPLOTLIBRC`` unset), the XDG cache and the Hugging Face home (dynamic
    modules, datasets). Python's bytecode is not among them: a fresh ``PYTHONPYCACHEPREFIX``
    makes the re-run compile numpy, scipy, pandas, matplotlib and Snakemake from source (21
    CPU-seconds more for a re-run of 26), so the caller checks the compiled files of its own
    code against their sources instead (:func:`tailgate.runtime.fingerprint.stale_bytecode`). Only
    the downloaded model weights stay where this process finds them (the Hugging Face hub cache
    and torch's hub), so that a registered model loadable here is loadable in the re-run; a
    relative ``PYTHONPATH`` entry is made absolute (it would otherwise name a folder of the
    re-run's project)."""
    hf_home = _user_cache("HF_HOME", "huggingface")
    env = {k: v for k, v in os.environ.items() if k not in ("MATPLOTLIBRC", "MPLBACKEND")}
    env.update(
        HF_HUB_CACHE=os.environ.get("HF_HUB_CACHE")
        or os.environ.get("HUGGINGFACE_HUB_CACHE")
        or os.path.join(hf_home, "hub"),
        TORCH_HOME=_user_cache("TORCH_HOME", "torch"),
    )
    for name, sub in (
        ("NUMBA_CACHE_DIR", "numba"),
        ("MPLCONFIGDIR", "matplotlib"),
        ("XDG_CACHE_HOME", "xdg"),
        ("HF_HOME", "huggingface"),
    ):
        (folder / sub).mkdir(parents=True, exist_ok=True)
        env[name] = str(folder / sub)
    if env.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.pathsep.join(
            os.path.abspath(p) for p in env["PYTHONPATH"].split(os.pathsep) if p
        )
    return env
