"""Deterministic prompt selection from RealToxicityPrompts (Sec. 5 "Data" of Zhou (2026)).

The registered selection ``data.prompts = {source, split, order, filters}`` is applied to a
dataset with the RealToxicityPrompts schema (``{"filename", "begin", "end", "challenging",
"prompt": {"text", "toxicity", ...}, "continuation": {...}}``), read through Hugging Face
``datasets`` from a hub id or a local ``.jsonl``/``.json``/``.parquet`` file or a saved
``datasets`` directory. The seed paper used 30,000 prompts of the training split in dataset
order; ``order: shuffled`` permutes with the study's ``"prompts"`` random stream instead.

``prompt_id`` is the row's index in the registered split (before filtering), so ids are
stable across filters and orders; ``position`` is the rank in the selection order, which
shards use (``position % shards == k``). The digest (SHA-256 over the selected ids and texts
in selection order) identifies the prompt set: a registered ``digest`` that differs is
refused, so a different prompt set can only enter as a registered change.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from tailgate.files.atomic import write_json, write_parquet
from tailgate.generate.shards import ShardInputError
from tailgate.seeds import rng

__all__ = ["load_prompt_dataset", "prompt_count", "prompt_digest", "select_prompts"]

_LOCAL_FORMATS = {".jsonl": "json", ".json": "json", ".parquet": "parquet"}


def prompt_digest(prompt_ids: Any, texts: Any) -> str:
    """SHA-256 over ``[prompt_id, text]`` JSON lines in selection order: the set's identity."""
    h = hashlib.sha256()
    for pid, text in zip(prompt_ids, texts, strict=True):
        h.update(json.dumps([int(pid), str(text)], ensure_ascii=False).encode("utf-8") + b"\n")
    return h.hexdigest()


def prompt_count(study: Any) -> int:
    """Prompts to select: the largest ``prompts`` of a condition without a ``query``, checked
    against ``sample_cap``."""
    conditions = study.conditions()
    if not conditions:
        raise ShardInputError(
            f"Study {getattr(study, 'name', '?')!r} registers no conditions, so there is no prompt "
            "count to select. Add at least one condition with a 'prompts' count."
        )
    # a query condition (Acharyya et al. (2025)) answers its own registered query: it selects no
    # prompts
    chosen = [c for c in conditions if c.get("query") is None] or conditions
    counts = {c["name"]: c.get("prompts") for c in chosen}
    bad = {
        n: c for n, c in counts.items() if not isinstance(c, int) or isinstance(c, bool) or c < 1
    }
    if bad:
        raise ShardInputError(
            f"Conditions {sorted(bad)} of study {getattr(study, 'name', '?')!r} have no positive "
            f"integer 'prompts' count ({bad}). Register how many prompts each condition uses."
        )
    count = max(counts.values())
    cap = study.sample_cap
    if count > cap:
        raise ShardInputError(
            f"Study {getattr(study, 'name', '?')!r} asks for {count} prompts per condition but its "
            f"sample_cap is {cap}. Lower the conditions' 'prompts' or raise sample_cap (both are "
            "registered fields)."
        )
    return int(count)


def load_prompt_dataset(source: str, split: str, *, revision: str | None = None) -> Any:
    """Load ``split`` of a RealToxicityPrompts-schema dataset from a hub id or a local path."""
    import datasets

    path = Path(source).expanduser()
    try:
        if path.is_dir() and any(
            (path / marker).is_file() for marker in ("dataset_dict.json", "state.json")
        ):
            loaded = datasets.load_from_disk(str(path))
            if isinstance(loaded, datasets.DatasetDict):
                if split not in loaded:
                    raise ShardInputError(
                        f"The saved dataset {source!r} (data.prompts.source) has splits "
                        f"{sorted(loaded)}, not {split!r} (data.prompts.split). Register one "
                        "of them."
                    )
                return loaded[split]
            return loaded
        if path.is_file():
            fmt = _LOCAL_FORMATS.get(path.suffix.lower())
            if fmt is None:
                raise ShardInputError(
                    f"data.prompts.source {source!r} is a file of unsupported type "
                    f"{path.suffix!r}. Use a .jsonl, .json or .parquet file with the "
                    "RealToxicityPrompts schema, a saved datasets directory, or a hub id."
                )
            return datasets.load_dataset(fmt, data_files={split: str(path)}, split=split)
        if path.is_dir():
            return datasets.load_dataset(str(path), split=split)
        return datasets.load_dataset(source, split=split, revision=revision)
    except ShardInputError:
        raise
    except Exception as exc:  # datasets raises many types for unreachable or malformed data
        raise ShardInputError(
            f"Could not load the prompt dataset {source!r}, split {split!r} "
            f"(data.prompts.source / data.prompts.split): {type(exc).__name__}: {exc}. Give an "
            "existing local .jsonl/.json/.parquet file or saved datasets directory, or a hub id "
            "that is reachable (or already cached when offline)."
        ) from exc


def _column(table: pa.Table, name: str, source: str) -> np.ndarray:
    if name not in table.column_names:
        raise ShardInputError(
            f"The prompt dataset {source!r} (data.prompts.source) has no field {name!r}; "
            f"RealToxicityPrompts rows need 'challenging' and 'prompt': {{'text', 'toxicity'}}. "
            f"Found {table.column_names}. Convert the file to that schema."
        )
    return table.column(name).to_numpy(zero_copy_only=False)


def select_prompts(study: Any, out_path: str | os.PathLike[str], *, options: dict) -> str:
    """Write the registered prompt selection to ``out_path`` (Parquet) and return its digest.

    Columns: ``prompt_id`` (int64, index in the split), ``position`` (int64, selection rank),
    ``prompt`` (string), ``prompt_toxicity`` (float64, null where unknown), ``challenging``
    (bool). A sidecar ``<stem>.digest.json`` records the digest, source, split and counts.
    """
    spec = dict(study.source().get("prompts") or {})
    source = spec.get("source")
    if not source:
        raise ShardInputError(
            f"Study {getattr(study, 'name', '?')!r} has no data.prompts.source. Register a hub id "
            "or a local path of a RealToxicityPrompts-schema dataset."
        )
    split = spec.get("split") or "train"
    order = spec.get("order") or "dataset"
    if order not in ("dataset", "shuffled"):
        raise ShardInputError(
            f"data.prompts.order is {order!r}; it must be 'dataset' or 'shuffled'. Fix the "
            "pre-registration (an amendment if it is frozen)."
        )
    filters = dict(spec.get("filters") or {})
    count = prompt_count(study)

    dataset = load_prompt_dataset(str(source), split, revision=spec.get("revision"))
    table = dataset.flatten().with_format("arrow")[:]
    texts = _column(table, "prompt.text", str(source))
    toxicity = (
        table.column("prompt.toxicity").cast(pa.float64()).fill_null(np.nan).to_numpy()
        if "prompt.toxicity" in table.column_names
        else np.full(len(texts), np.nan)
    )
    challenging = (
        table.column("challenging").cast(pa.bool_()).fill_null(False).to_numpy(zero_copy_only=False)
        if "challenging" in table.column_names
        else np.zeros(len(texts), dtype=bool)
    )
    ids = np.arange(len(texts), dtype=np.int64)

    keep = np.ones(len(texts), dtype=bool)
    if filters.get("challenging") is not None:
        if "challenging" not in table.column_names:
            _column(table, "challenging", str(source))
        keep &= challenging == bool(filters["challenging"])
    if filters.get("min_toxicity") is not None:
        keep &= np.nan_to_num(toxicity, nan=-np.inf) >= float(filters["min_toxicity"])
    if filters.get("max_toxicity") is not None:
        keep &= np.nan_to_num(toxicity, nan=np.inf) <= float(filters["max_toxicity"])
    candidates = ids[keep]
    if order == "shuffled":
        candidates = candidates[rng(study.seed, "prompts").permutation(len(candidates))]
    if len(candidates) < count:
        raise ShardInputError(
            f"The prompt dataset {source!r} (split {split!r}) has {len(candidates)} rows after "
            f"the registered filters {filters}, fewer than the {count} prompts the conditions "
            "register. "
            "Loosen data.prompts.filters or lower the conditions' 'prompts' counts."
        )
    chosen = candidates[:count]
    chosen_texts = texts[chosen]
    for pos, (pid, text) in enumerate(zip(chosen, chosen_texts, strict=True)):
        if not isinstance(text, str) or not text.strip():
            raise ShardInputError(
                f"Row {int(pid)} of the prompt dataset {source!r} (split {split!r}, selection "
                f"position {pos}) has an empty prompt.text. Fix or remove that row, or register a "
                "filter that excludes it."
            )
    digest = prompt_digest(chosen, chosen_texts)
    registered = spec.get("digest")
    if registered and registered != digest:
        raise ShardInputError(
            f"The selected prompt set has digest {digest}, but data.prompts.digest registers "
            f"{registered}: the dataset at {source!r} changed since registration. Restore the "
            "registered data, or record the new prompt set as an amendment."
        )
    out = pa.table(
        {
            "prompt_id": pa.array(chosen, pa.int64()),
            "position": pa.array(np.arange(count, dtype=np.int64)),
            "prompt": pa.array(list(chosen_texts), pa.string()),
            "prompt_toxicity": pa.array(
                toxicity[chosen], pa.float64(), mask=np.isnan(toxicity[chosen])
            ),
            "challenging": pa.array(challenging[chosen], pa.bool_()),
        }
    )
    out_path = Path(out_path)
    write_parquet(out_path, out)
    write_json(
        out_path.with_name(out_path.name.removesuffix(".parquet") + ".digest.json"),
        {
            "digest": digest,
            "source": str(source),
            "split": split,
            "order": order,
            "filters": filters,
            "count": int(count),
            "rows_in_split": len(texts),
            "rows_after_filters": len(candidates),
        },
    )
    return digest
