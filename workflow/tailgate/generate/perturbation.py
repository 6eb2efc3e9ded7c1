"""Input-embedding noise perturbation (Sec. 5 "Perturbation" of Zhou (2026)).

Gaussian noise is added to the language model's input embeddings by a forward hook on the
embedding layer, scaled per token to ``sigma_rel`` times that token's embedding RMS norm:
``e' = e + sigma_rel * rms(e) * z`` with ``rms(e) = sqrt(mean_d e_d^2)`` and ``z ~ N(0, I)``.
``sigma_rel = 0`` is the clean control and registers no hook at all, so it is bit-identical
to the unperturbed model. The generation backend draws each row's noise from its own
``torch.Generator``, seeded per (study seed, condition, prompt or response index) and
independent of the sampling stream (:func:`row_embedding_noise`); :func:`embedding_noise` draws
one stream for a whole block.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from tailgate.generate.shards import ShardInputError

__all__ = ["EmbeddingNoise", "embedding_noise", "perturbation_spec", "row_embedding_noise"]

KINDS = ("none", "embedding_noise")


@dataclass(frozen=True)
class EmbeddingNoise:
    """A registered perturbation: ``kind`` and the relative noise scale ``sigma_rel``."""

    kind: str
    sigma_rel: float

    @property
    def active(self) -> bool:
        """Whether a hook is registered (``embedding_noise`` with ``sigma_rel > 0``)."""
        return self.kind == "embedding_noise" and self.sigma_rel > 0.0


def perturbation_spec(condition: str, spec: dict | None) -> EmbeddingNoise:
    """Validate a condition's ``perturbation`` block ``{kind: none|embedding_noise, sigma_rel}``."""
    spec = dict(spec or {"kind": "none"})
    kind = spec.get("kind", "none")
    sigma = spec.get("sigma_rel", 0.0)
    sigma = 0.0 if sigma is None else sigma
    if kind not in KINDS:
        raise ShardInputError(
            f"Condition {condition!r} registers perturbation.kind {kind!r}; the known kinds are "
            f"{list(KINDS)}. Fix the condition's perturbation in the pre-registration."
        )
    if (
        isinstance(sigma, bool)
        or not isinstance(sigma, int | float)
        or not sigma >= 0.0
        or sigma == float("inf")
    ):
        raise ShardInputError(
            f"Condition {condition!r} registers perturbation.sigma_rel {sigma!r}; it must be a "
            "finite number >= 0 (0 is the clean control). Fix the condition's perturbation."
        )
    if kind == "none" and sigma != 0.0:
        raise ShardInputError(
            f"Condition {condition!r} registers perturbation.kind 'none' with sigma_rel {sigma}; "
            "set kind to 'embedding_noise' or sigma_rel to 0."
        )
    return EmbeddingNoise(kind=kind, sigma_rel=float(sigma))


def _noise_hook(sigma_rel: float, generator: torch.Generator):
    def hook(_module: torch.nn.Module, _inputs: Any, output: torch.Tensor) -> torch.Tensor:
        x = output.float()
        rms = x.pow(2).mean(dim=-1, keepdim=True).sqrt()
        z = torch.randn(x.shape, generator=generator, device=x.device, dtype=torch.float32)
        return (x + sigma_rel * rms * z).to(output.dtype)

    return hook


@contextlib.contextmanager
def embedding_noise(
    model: torch.nn.Module, noise: EmbeddingNoise, *, seed: int
) -> Iterator[torch.Generator | None]:
    """Within the block, ``model``'s input embeddings carry the registered noise.

    Yields the noise generator (``None`` when no hook was registered). The hook is removed on
    exit, also when the block raises.
    """
    if not noise.active:
        yield None
        return
    layer = model.get_input_embeddings()
    device = next(layer.parameters()).device
    generator = torch.Generator(device=device)
    generator.manual_seed(int(seed))
    handle = layer.register_forward_hook(_noise_hook(noise.sigma_rel, generator))
    try:
        yield generator
    finally:
        handle.remove()


def _row_noise_hook(sigma_rel: float, generators: list[torch.Generator], lengths: list[int]):
    """Noise drawn row by row from each row's own generator: at the first call (the prompt) a
    row draws for its ``lengths[i]`` real tokens only (left padding gets none), at each later
    call for the new positions, so a row's noise does not depend on the rows batched with it."""
    state = {"first": True}

    def hook(_module: torch.nn.Module, _inputs: Any, output: torch.Tensor) -> torch.Tensor:
        x = output.float()
        rows, width, dim = x.shape
        z = torch.zeros((rows, width, dim), dtype=torch.float32)
        for i in range(rows):
            n = min(lengths[i], width) if state["first"] else width
            z[i, width - n :] = torch.randn((n, dim), generator=generators[i], dtype=torch.float32)
        state["first"] = False
        rms = x.pow(2).mean(dim=-1, keepdim=True).sqrt()
        return (x + sigma_rel * rms * z.to(x.device)).to(output.dtype)

    return hook


@contextlib.contextmanager
def row_embedding_noise(
    model: torch.nn.Module, noise: EmbeddingNoise, *, seeds: list[int], lengths: list[int]
) -> Iterator[None]:
    """Within the block (one ``generate`` call), row ``i`` of the batch carries noise from a
    generator seeded with ``seeds[i]``; ``lengths[i]`` is its prompt's token count."""
    if not noise.active:
        yield None
        return
    generators = [torch.Generator().manual_seed(int(s)) for s in seeds]
    layer = model.get_input_embeddings()
    handle = layer.register_forward_hook(_row_noise_hook(noise.sigma_rel, generators, lengths))
    try:
        yield None
    finally:
        handle.remove()
