"""The ``transformers`` generation backend (Sec. 5 "Data" and "Perturbation" of Zhou (2026)).

One completion per prompt is sampled from a registered causal LM with the registered
temperature, top-p and max-new-tokens (Zhou (2026): T = 1.0, top-p 0.9). Every other sampling
knob is pinned to "off" so a model's own ``generation_config`` (e.g. a hub default of
``top_k=20`` or ``repetition_penalty=1.05``) cannot leak into a registered condition.

Determinism and resumption. A shard's prompts are tokenised, sorted by length (longest first,
ties by selection position) and cut into batches of ``options["batch_size"]``. Each row is
sampled from its own stream: :class:`RowSampler` draws its tokens from a generator seeded with
``derive_seed(seed, "generate", condition, prompt_id, 0)`` (prompt, sample index), and its
embedding noise from ``derive_seed(seed, "perturb", condition, prompt_id, 0)``, so a completion
depends on the study seed, the condition and the prompt only: the batch size, the batches run
before it and ``--cores`` (operational settings) cannot change it. (Different batch shapes may
round logits differently in the last bit; a token could change only if its uniform fell within
that rounding of a CDF boundary.) Completed batches are checkpointed
atomically (:class:`tailgate.generate.shards.ShardCheckpoint`); a restarted job resumes and
writes the same bytes as an uninterrupted run.

Query conditions (Acharyya et al. (2025): "this condition is one query text, sampled n times"). A
condition
that registers ``query`` is that one text answered ``prompts`` times; each row is one response
and its ``prompt_id`` is the response index 0..n−1 (no prompt selection is read). Responses are
sampled in blocks of ``options["batch_size"]`` (block ``j`` holds responses
[j·size, (j+1)·size), the query repeated once per row); response ``r`` is sampled from
``derive_seed(seed, "respond", condition, r)`` (and ``(seed, "perturb", condition, r)`` for the
embedding noise). Shard ``k`` of ``K`` takes the blocks with ``j % K == k``, so a response
depends on the study seed, the condition and its index only — not on the batch size, the shard
split, the order of the jobs or --cores. Blocks are checkpointed like prompt batches.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Sequence, Sized
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import torch

from tailgate.generate.perturbation import perturbation_spec, row_embedding_noise
from tailgate.generate.shards import (
    ShardCheckpoint,
    ShardInputError,
    fingerprint,
    generation_schema,
    read_table,
    shard_prompts,
)
from tailgate.generate.spec import condition_spec
from tailgate.models import (
    LoadedModel,
    encode_prompts,
    length_sorted_batches,
    load_causal_lm,
    model_spec,
    resolve_device,
)
from tailgate.seeds import derive_seed

__all__ = ["generate_shard", "query_blocks", "sampling_config"]


def _eos_ids(lm: LoadedModel) -> list[int]:
    ids = lm.model.generation_config.eos_token_id
    ids = [ids] if isinstance(ids, int) else list(ids or [])
    if lm.tokenizer.eos_token_id is not None and lm.tokenizer.eos_token_id not in ids:
        ids.append(lm.tokenizer.eos_token_id)
    return ids


def sampling_config(generation: dict, lm: LoadedModel) -> Any:
    """A ``GenerationConfig`` with the registered sampling and every other knob switched off."""
    from transformers import GenerationConfig

    temperature = float(generation.get("temperature", 1.0))
    top_p = float(generation.get("top_p", 1.0))
    sample = temperature > 0.0
    return GenerationConfig(
        do_sample=sample,
        temperature=temperature if sample else 1.0,
        top_p=top_p if sample else 1.0,
        top_k=0,
        min_p=0.0,
        typical_p=1.0,
        epsilon_cutoff=0.0,
        eta_cutoff=0.0,
        repetition_penalty=1.0,
        no_repeat_ngram_size=0,
        num_beams=1,
        num_return_sequences=1,
        max_new_tokens=int(generation.get("max_new_tokens", 32)),
        min_new_tokens=0,
        eos_token_id=_eos_ids(lm),
        pad_token_id=lm.tokenizer.pad_token_id,
        bos_token_id=lm.tokenizer.bos_token_id,
    )


def _left_pad(ids: list[list[int]], pad_id: int, device: torch.device) -> tuple[Any, Any]:
    width = max(len(x) for x in ids)
    input_ids = torch.full((len(ids), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(ids), width), dtype=torch.long)
    for i, row in enumerate(ids):
        if row:
            input_ids[i, width - len(row) :] = torch.tensor(row, dtype=torch.long)
            mask[i, width - len(row) :] = 1
    return input_ids.to(device), mask.to(device)


def _completions(
    lm: LoadedModel, new_tokens: torch.Tensor
) -> tuple[list[str], list[int], list[str]]:
    """Decoded completions, their token counts (EOS excluded) and finish reasons."""
    eos = set(_eos_ids(lm))
    texts, counts, reasons = [], [], []
    for row in new_tokens.tolist():
        stop = next((i for i, t in enumerate(row) if t in eos), None)
        kept = row if stop is None else row[:stop]
        texts.append(lm.tokenizer.decode(kept, skip_special_tokens=True))
        counts.append(len(kept))
        reasons.append("length" if stop is None else "stop")
    return texts, counts, reasons


class RowSampler:
    """Temperature and top-p sampling of one token per row, each row from its own generator.

    A logits processor for a greedy ``generate`` call: it turns each row's scores into the
    registered distribution (softmax of logits / T, restricted to the smallest set of most
    likely tokens whose mass reaches ``top_p``, renormalised; Holtzman et al. 2020, Sec. 3.1),
    draws the token by inverting that row's CDF at one uniform from the row's own
    ``torch.Generator`` (in float64), and leaves only that token finite, so greedy decoding
    picks it. A row's draws therefore depend on its own seed and logits only, never on the
    rows batched with it, the batch size or the order of the batches.
    """

    def __init__(self, seeds: list[int], temperature: float, top_p: float) -> None:
        self.generators = [torch.Generator().manual_seed(int(s)) for s in seeds]
        self.temperature = float(temperature)
        self.top_p = float(top_p)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        # on the logits' own device: sorting a batch of vocabulary-wide rows on the CPU each
        # step made a 3B model's batch of 32 on a GPU 5.7 times slower than the same model's
        # own sampling; only the uniforms come from the rows' CPU generators
        logits = scores.to(torch.float64) / self.temperature
        probs = torch.softmax(logits, dim=-1)
        sorted_p, order = torch.sort(probs, dim=-1, descending=True, stable=True)
        before = torch.cumsum(sorted_p, dim=-1) - sorted_p
        sorted_p = torch.where(before < self.top_p, sorted_p, torch.zeros_like(sorted_p))
        cdf = torch.cumsum(sorted_p, dim=-1)
        u = torch.stack([torch.rand((), generator=g, dtype=torch.float64) for g in self.generators])
        u = u.to(cdf.device)
        pick = torch.searchsorted(cdf, (u * cdf[:, -1]).unsqueeze(1), right=True)
        pick = pick.clamp(max=cdf.shape[1] - 1)
        token = order.gather(1, pick)
        out = torch.full_like(scores, float("-inf"))
        out.scatter_(1, token, 0.0)
        return out


def _sample(
    lm: LoadedModel,
    config: Any,
    input_ids: torch.Tensor,
    mask: torch.Tensor,
    seeds: list[int],
) -> torch.Tensor:
    """``generate`` with the registered sampling done by :class:`RowSampler` (greedy decoding
    when the registered temperature is 0)."""
    from transformers import LogitsProcessorList

    if not config.do_sample:
        return lm.model.generate(input_ids=input_ids, attention_mask=mask, generation_config=config)
    greedy = copy.deepcopy(config)
    greedy.do_sample, greedy.temperature, greedy.top_p = False, 1.0, 1.0
    sampler = RowSampler(seeds, config.temperature, config.top_p)
    return lm.model.generate(
        input_ids=input_ids,
        attention_mask=mask,
        generation_config=greedy,
        logits_processor=LogitsProcessorList([sampler]),
    )


def generate_shard(
    study: Any, condition: str, shard: int, out_path: str | os.PathLike[str], *, options: dict
) -> None:
    """Generate shard ``shard`` of ``condition`` into ``out_path`` (Parquet, resumable).

    ``options``: ``prompts_path`` (required; Parquet from ``select_prompts``), ``batch_size``
    (default 16), ``device`` (``auto``/``cpu``/``cuda[:n]``), ``progress`` (bool) and
    ``after_batch`` (optional callable ``f(batch_index)`` run after each checkpoint). Shard
    ``k`` takes the selected prompts with ``position % generation.shards == k`` among the first
    ``prompts`` of the condition. Output columns: prompt_id, prompt, completion, prompt_tokens,
    completion_tokens (EOS excluded), finish_reason (``stop``: end-of-sequence sampled;
    ``length``: max_new_tokens reached), sorted by prompt_id.
    """
    cond = condition_spec(study, condition)
    if cond.get("query") is not None:
        _generate_query_shard(study, cond, shard, out_path, options=options)
        return
    noise = perturbation_spec(condition, cond.get("perturbation"))
    spec = model_spec(study, str(cond.get("model")), condition=condition)
    seed = study.seed
    prompts_path = options.get("prompts_path")
    if not prompts_path:
        raise ShardInputError(
            f"Generation of condition {condition!r} needs options['prompts_path'], the prompts "
            "table written by select_prompts. Pass the path of prompts.parquet."
        )
    count = cond.get("prompts")
    if not isinstance(count, int) or count < 1:
        raise ShardInputError(
            f"Condition {condition!r} has no positive integer 'prompts' count ({count!r}). "
            "Register how many prompts the condition uses."
        )
    table = read_table(prompts_path, what="prompts", condition=condition)
    rows = shard_prompts(
        table,
        condition=condition,
        shard=shard,
        shards=study.shards,
        count=count,
        path=prompts_path,
        study=str(getattr(study, "name", "?")),
    )
    prompt_ids = rows.column("prompt_id").to_numpy()
    texts = [str(t) for t in rows.column("prompt").to_pylist()]
    batch_size = int(options.get("batch_size", 16))
    device = resolve_device(options.get("device"))

    lm = load_causal_lm(spec, device=device, condition=condition)
    encoded = encode_prompts(lm, texts)
    empty = [i for i, ids in enumerate(encoded) if not ids]
    if empty:
        raise ShardInputError(
            f"Prompt_id {int(prompt_ids[empty[0]])} of condition {condition!r} (and "
            f"{len(empty) - 1} more) encodes to no tokens under model {spec.key!r}'s tokenizer "
            f"with prompt_format {spec.prompt_format!r}, so there is nothing to continue. Use "
            "the 'chat' format or a tokenizer that adds a beginning-of-sequence token."
        )
    batches = length_sorted_batches([len(x) for x in encoded], batch_size)
    config = _pinned_sampling(study, lm)
    key = _shard_key(
        study,
        cond,
        spec,
        config,
        shard,
        device,
        batches=[[int(prompt_ids[i]) for i in b] for b in batches],
        prompts=[texts[i] for b in batches for i in b],
    )

    def batch(b: int) -> _Batch:
        idx = batches[b]
        input_ids, mask = _left_pad([encoded[i] for i in idx], lm.tokenizer.pad_token_id, device)
        pids = [int(prompt_ids[i]) for i in idx]
        return (
            prompt_ids[idx],
            [texts[i] for i in idx],
            input_ids,
            mask,
            [len(encoded[i]) for i in idx],
            [derive_seed(seed, "perturb", condition, p, 0) for p in pids],
            [derive_seed(seed, "generate", condition, p, 0) for p in pids],
        )

    desc = f"generate {condition} shard {shard}"
    _write_batches(lm, config, noise, out_path, key, batches, batch, options, desc, "prompt")


def _pinned_sampling(study: Any, lm: LoadedModel) -> Any:
    """:func:`sampling_config` of the registered generation, with ``lm``'s own
    generation_config reduced to the token ids: unset fields of a passed config fall back to it
    (hub defaults such as suppress_tokens or sequence_bias)."""
    config = sampling_config(study.generation(), lm)
    lm.model.generation_config = type(config)(
        eos_token_id=config.eos_token_id,
        pad_token_id=config.pad_token_id,
        bos_token_id=config.bos_token_id,
    )
    return config


def _shard_key(
    study: Any,
    cond: dict,
    spec: Any,
    config: Any,
    shard: int,
    device: torch.device,
    **layout: Any,
) -> str:
    """The checkpoint key of a shard: the :func:`~tailgate.generate.shards.fingerprint` of what
    its rows depend on, ``layout`` (how its rows are batched) included."""
    return fingerprint(
        {
            "backend": "transformers",
            "condition": cond,
            "model": spec.__dict__,
            "sampling": config.to_dict(),
            "seed": study.seed,
            "shard": shard,
            "shards": study.shards,
            "device": device.type,
            **layout,
        }
    )


def query_blocks(responses: int, block_size: int, *, shard: int, shards: int) -> list[np.ndarray]:
    """Response indices of the blocks of one shard: block j = [j·size, (j+1)·size) ∩ [0, n),
    shard k holding the blocks with j % shards == k (module docstring)."""
    if block_size < 1:
        raise ShardInputError(f"batch_size must be a positive integer, got {block_size!r}.")
    starts = range(0, responses, block_size)
    return [
        np.arange(a, min(a + block_size, responses), dtype=np.int64)
        for j, a in enumerate(starts)
        if j % shards == shard
    ]


def _generate_query_shard(
    study: Any, cond: dict, shard: int, out_path: str | os.PathLike[str], *, options: dict
) -> None:
    """Shard ``shard`` of a query condition: its blocks of responses to the one ``query`` text
    (module docstring); the columns of :func:`generate_shard`, ``prompt_id`` the response index."""
    condition = str(cond["name"])
    query = cond["query"]
    if not isinstance(query, str) or not query.strip():
        raise ShardInputError(
            f"Condition {condition!r} registers query {query!r}; it must be a non-empty text "
            "(the one query whose responses the condition samples). Fix conditions[].query."
        )
    responses = cond.get("prompts")
    if isinstance(responses, bool) or not isinstance(responses, int) or responses < 1:
        raise ShardInputError(
            f"Condition {condition!r} registers no positive integer 'prompts' ({responses!r}): "
            "for a query condition it is the number of responses n. Register it."
        )
    noise = perturbation_spec(condition, cond.get("perturbation"))
    spec = model_spec(study, str(cond.get("model")), condition=condition)
    seed = study.seed
    block_size = int(options.get("batch_size", 16))
    blocks = query_blocks(responses, block_size, shard=shard, shards=study.shards)
    device = resolve_device(options.get("device"))
    lm = load_causal_lm(spec, device=device, condition=condition)
    (encoded,) = encode_prompts(lm, [query])
    if not encoded:
        raise ShardInputError(
            f"The query of condition {condition!r} encodes to no tokens under model "
            f"{spec.key!r}'s tokenizer with prompt_format {spec.prompt_format!r}. Use the 'chat' "
            "format or a tokenizer that adds a beginning-of-sequence token."
        )
    config = _pinned_sampling(study, lm)
    key = _shard_key(study, cond, spec, config, shard, device, mode="query", block_size=block_size)
    ids = torch.tensor([encoded], dtype=torch.long, device=device)
    mask = torch.ones_like(ids)

    def batch(b: int) -> _Batch:
        idx = blocks[b]
        return (
            idx,
            [query] * len(idx),
            ids.expand(len(idx), -1),
            mask.expand(len(idx), -1),
            [len(encoded)] * len(idx),
            [derive_seed(seed, "perturb", condition, int(r)) for r in idx],
            [derive_seed(seed, "respond", condition, int(r)) for r in idx],
        )

    desc = f"generate {condition} shard {shard}"
    _write_batches(lm, config, noise, out_path, key, blocks, batch, options, desc, "response")


#: one batch to sample: prompt ids and texts, input ids, attention mask, prompt lengths in
#: tokens, and the per-row seeds of the embedding noise and of the sampling
_Batch = tuple[Any, list[str], Any, Any, list[int], list[int], list[int]]


def _write_batches(
    lm: LoadedModel,
    config: Any,
    noise: Any,
    out_path: str | os.PathLike[str],
    key: str,
    batches: Sequence[Sized],
    batch: Callable[[int], _Batch],
    options: dict,
    desc: str,
    unit: str,
) -> None:
    """Sample, decode and checkpoint every batch of ``batches`` (its rows, described by
    ``batch``) that the checkpoint of ``out_path`` under ``key`` does not hold yet; ``options``:
    ``progress`` and ``after_batch`` (:func:`generate_shard`)."""
    from tqdm import tqdm

    checkpoint = ShardCheckpoint(Path(out_path), key=key, schema=generation_schema())
    after_batch: Callable[[int], None] | None = options.get("after_batch")
    todo = [b for b in range(len(batches)) if b not in checkpoint.completed]
    total = sum(len(b) for b in batches)
    bar = tqdm(
        total=total,
        initial=total - sum(len(batches[b]) for b in todo),
        desc=desc,
        unit=unit,
        disable=not options.get("progress", True),
    )
    with torch.inference_mode(), bar:
        for b in todo:
            pids, prompts, input_ids, mask, lengths, noise_seeds, seeds = batch(b)
            with row_embedding_noise(lm.model, noise, seeds=noise_seeds, lengths=lengths):
                out = _sample(lm, config, input_ids, mask, seeds)
            completions, counts, reasons = _completions(lm, out[:, input_ids.shape[1] :].cpu())
            checkpoint.append(
                b,
                pa.table(
                    {
                        "prompt_id": pa.array(pids, pa.int64()),
                        "prompt": pa.array(prompts, pa.string()),
                        "completion": pa.array(completions, pa.string()),
                        "prompt_tokens": pa.array(lengths, pa.int64()),
                        "completion_tokens": pa.array(counts, pa.int64()),
                        "finish_reason": pa.array(reasons, pa.string()),
                    }
                ),
            )
            bar.update(len(prompts))
            if after_batch is not None:
                after_batch(b)
    checkpoint.finish()
