"""The ``token_nll`` scorer: a judge model's mean negative log-likelihood of the completion.

App. C of Zhou (2026): the severity of a completion is the mean NLL (nats per token) of its
tokens under a judge LM, conditioned on the prompt. The prompt is encoded as the judge's
registered prompt format implies (``plain``: the text with the tokenizer's special tokens;
``chat``: the judge's chat template with the generation prompt) and the completion's tokens
follow it unchanged (no special tokens). The per-token losses are kept for the standardised
percentile analyses (Guo et al. (2025)) in float32, the precision the cross-entropy is computed in
(the
logits are cast to float32), so storing them compactly loses nothing; the mean per row is
accumulated in float64.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from tailgate.models import LoadedModel, encode_prompts
from tailgate.score.common import ScoringError

__all__ = ["TokenLosses", "token_nll"]


@dataclass(frozen=True)
class TokenLosses:
    """Mean NLL per row (float64) and the per-token losses behind it (long format, float32)."""

    mean_nll: np.ndarray
    token_prompt_id: np.ndarray
    token_position: np.ndarray
    token_loss: np.ndarray


def _context_limit(lm: LoadedModel) -> int | None:
    limit = getattr(lm.model.config, "max_position_embeddings", None) or getattr(
        lm.model.config, "n_positions", None
    )
    return int(limit) if limit else None


def token_nll(
    lm: LoadedModel,
    prompts: list[str],
    completions: list[str],
    prompt_ids: np.ndarray,
    *,
    scorer: str,
    condition: str,
    batch_size: int = 8,
    progress: bool = False,
) -> TokenLosses:
    """Mean NLL of each completion's tokens given its prompt under the judge ``lm``."""
    from tqdm import tqdm

    context = encode_prompts(lm, prompts)
    targets = [list(x) for x in lm.tokenizer(completions, add_special_tokens=False)["input_ids"]]
    limit = _context_limit(lm)
    for row, (c, t) in enumerate(zip(context, targets, strict=True)):
        if not t:
            raise ScoringError(
                f"Scorer {scorer!r}: the completion of row {row} (prompt_id {prompt_ids[row]}) "
                f"of condition {condition!r} has no tokens under the judge "
                f"{lm.spec.key!r}, so its mean NLL is undefined. Empty completions follow the "
                "scorer's on_empty (register `on_empty: drop`); for a non-empty one, use a judge "
                "whose tokenizer encodes its text, or re-generate the shard."
            )
        if not c:
            raise ScoringError(
                f"Scorer {scorer!r}: the prompt of row {row} (prompt_id {prompt_ids[row]}) of "
                f"condition {condition!r} has no tokens under the judge {lm.spec.key!r}; the "
                "first completion token would have no context. Use a judge whose tokenizer adds "
                "a beginning-of-sequence token, or its chat format."
            )
        if limit is not None and len(c) + len(t) > limit:
            raise ScoringError(
                f"Scorer {scorer!r}: row {row} (prompt_id {prompt_ids[row]}) of condition "
                f"{condition!r} has {len(c) + len(t)} tokens, beyond the judge "
                f"{lm.spec.key!r}'s context of {limit}. Register a judge with a longer context "
                "or a smaller generation.max_new_tokens."
            )
    lengths = np.array([len(c) + len(t) for c, t in zip(context, targets, strict=True)])
    order = np.lexsort((np.arange(len(lengths)), -lengths))
    pad = lm.tokenizer.pad_token_id
    means = np.empty(len(prompts), dtype=np.float64)
    losses: list[np.ndarray] = [np.empty(0, dtype=np.float32)] * len(prompts)
    with torch.inference_mode():
        for start in tqdm(
            range(0, len(order), batch_size), desc=f"score {scorer}", disable=not progress
        ):
            idx = order[start : start + batch_size]
            width = int(lengths[idx].max())
            ids = torch.full((len(idx), width), pad, dtype=torch.long)
            mask = torch.zeros((len(idx), width), dtype=torch.long)
            for j, i in enumerate(idx):  # right padding: positions start at 0 for every row
                seq = context[i] + targets[i]
                ids[j, : len(seq)] = torch.tensor(seq)
                mask[j, : len(seq)] = 1
            logits = lm.model(input_ids=ids.to(lm.device), attention_mask=mask.to(lm.device)).logits
            for j, i in enumerate(idx):
                s, e = len(context[i]), int(lengths[i])
                loss = torch.nn.functional.cross_entropy(
                    logits[j, s - 1 : e - 1].float(), ids[j, s:e].to(lm.device), reduction="none"
                )
                losses[i] = loss.cpu().numpy().astype(np.float32, copy=False)
                means[i] = float(losses[i].mean(dtype=np.float64))
    counts = np.array([len(x) for x in losses])
    return TokenLosses(
        mean_nll=means,
        token_prompt_id=np.repeat(np.asarray(prompt_ids, dtype=np.int64), counts),
        token_position=np.concatenate([np.arange(n, dtype=np.int64) for n in counts]),
        token_loss=np.concatenate(losses),
    )
