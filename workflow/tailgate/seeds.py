"""Deterministic random streams derived from the study seed.

Every random stream in tailgate is a :class:`numpy.random.Generator` built from
``SeedSequence(study_seed, spawn_key=...)`` where the spawn key is derived from a tuple of
human-readable keys such as ``("generate", condition, shard)``. The key derivation uses
SHA-256 of the keys' canonical text, so it does not depend on Python's hash randomisation,
on the order in which jobs run, or on ``--cores`` (DESIGN: "Determinism").
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["child_sequence", "derive_seed", "rng", "seed_sequence"]


def _key_words(keys: tuple[object, ...]) -> tuple[int, ...]:
    text = "\x1f".join(repr(k) if not isinstance(k, str) else k for k in keys)
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    # four 32-bit words are plenty to keep streams apart
    return tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))


def seed_sequence(study_seed: int, *keys: object) -> np.random.SeedSequence:
    """The SeedSequence for the stream named by ``keys`` under ``study_seed``."""
    if int(study_seed) < 0:
        raise ValueError(f"study seed must be a non-negative integer, got {study_seed!r}")
    return np.random.SeedSequence(int(study_seed), spawn_key=_key_words(keys))


def child_sequence(ss: np.random.SeedSequence, *keys: int) -> np.random.SeedSequence:
    """The fixed child ``keys`` of ``ss``: its entropy with spawn key ``(*ss.spawn_key, *keys)``
    (not :meth:`numpy.random.SeedSequence.spawn`, whose children depend on the spawns before)."""
    return np.random.SeedSequence(ss.entropy, spawn_key=(*ss.spawn_key, *keys))


def rng(study_seed: int, *keys: object) -> np.random.Generator:
    """A PCG64 generator for the stream named by ``keys`` (e.g. ``("bootstrap", "qwen", 0.95)``)."""
    return np.random.Generator(np.random.PCG64(seed_sequence(study_seed, *keys)))


def derive_seed(study_seed: int, *keys: object) -> int:
    """A 32-bit integer seed for libraries that take one (torch, transformers)."""
    return int(seed_sequence(study_seed, *keys).generate_state(1, dtype=np.uint32)[0])
