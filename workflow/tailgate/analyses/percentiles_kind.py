"""Analysis kind ``percentiles``: percentile CE, concordance and selection (Guo et al. (2025)).

Data: the per-token losses that a ``token_nll`` scorer writes beside each score shard
(``<shard>.tokens.parquet``: prompt_id, position, loss), for each of the analysis's
``conditions`` in their registered order (checkpoints by training step, or models). A sequence
is a prompt's completion; the bootstrap resamples sequences, not tokens (methods note C; Guo et al.
(2025)). With
``sequence_length`` registered, the scorer's rows are the tokens instead (imported per-token
losses, or the simulate backend's ``token_ce`` model) and sequence = prompt_id // length.

Parameters (``$defs/analysis_percentiles``; an absent field means the default in brackets):
``percentiles`` [10, 25, 50, 75, 90, 95, 99]; ``summary_sets`` name → summaries
[{default: [mean, p50, p95]}] whose concordance π(S) is reported (summaries are ``mean`` and
``p<k>`` of registered percentiles); ``resamples`` [1000]; ``level`` [0.95]; ``resampling``
[paired: every condition on the same sequences, resampled jointly; or independent]; ``metric``
[none]: a task metric per condition (higher is better), for rank correlations.

Criteria statistics: ``concordance(set)`` (π of a registered set; no argument with one set) and
``concordance_low(set)``/``concordance_high(set)`` its bootstrap CI; ``same_selection(s1, s2)``
(1 when summaries s1 and s2 select the same condition); ``selected(s)`` (registered position,
1-based, of the condition summary s selects); ``<summary>(c)`` (e.g. ``p50(step3)``, ``mean(a)``)
and ``z_<summary>(c)`` (standardized, App. F of Guo et al. (2025)); ``spearman(s)``, ``kendall(s)``
with the
metric.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tailgate.errors import InputError
from tailgate.prereg.study import Study
from tailgate.seeds import seed_sequence

from . import percentiles as PC
from .base import AnalysisKind, AnalysisResult, Problem
from .criteria import StatisticRef
from .kind_support import (
    condition_problems,
    num,
    scorer_problems,
    seed_key,
    severity_paths,
    sorted_values,
    unknown_args,
)

__all__ = ["PERCENTILES", "PercentilesAnalysis", "settings"]

_SETS = ("concordance", "concordance_low", "concordance_high")
_SUMMARY_ONLY = ("selected", "spearman", "kendall")


def settings(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Every parameter with the documented default applied for absent fields."""
    return {
        "conditions": list(spec["conditions"]),
        "scorer": str(spec["scorer"]),
        "percentiles": [float(p) for p in spec.get("percentiles", PC.DEFAULT_PERCENTILES)],
        "summary_sets": {
            k: list(v)
            for k, v in (
                spec.get("summary_sets") or {"default": list(PC.DEFAULT_SUMMARY_SET)}
            ).items()
        },
        "resamples": int(spec.get("resamples", 1000)),
        "level": float(spec.get("level", 0.95)),
        "resampling": str(spec.get("resampling", "paired")),
        "metric": None
        if spec.get("metric") is None
        else {k: float(v) for k, v in spec["metric"].items()},
        "sequence_length": None
        if spec.get("sequence_length") is None
        else int(spec["sequence_length"]),
    }


def _names(st: Mapping[str, Any]) -> tuple[str, ...]:
    return PC.summary_names(st["percentiles"])


def score_shards(study: Study, layout: Mapping[str, str], scorer: str, condition: str) -> list[str]:
    """The score shards of ``scorer`` for one condition (declared outputs of the score rule);
    the per-token losses lie beside each (:func:`tailgate.score.token_losses_path`)."""
    template = layout.get("scores") or layout["severities"].replace(
        "/severities/{scorer}/{scale}/{condition}.parquet",
        "/scores/{scorer}/{condition}/shard-{shard}.parquet",
    )
    shards = int(study.data["generation"]["shards"])
    return [template.format(scorer=scorer, condition=condition, shard=k) for k in range(shards)]


def _read_tokens(shards: Sequence[str]) -> PC.TokenLosses:
    from tailgate.parquet import read_parquet
    from tailgate.score import token_losses_path

    paths = [str(token_losses_path(s)) for s in shards]
    ids, losses = [], []
    for p in paths:
        try:
            t = read_parquet(p, columns=["prompt_id", "loss"])
        except (OSError, KeyError, ValueError) as exc:
            raise InputError(
                f"{p}: cannot read per-token losses (columns prompt_id, loss): {exc}. Fix: "
                "re-run the token_nll scorer of this condition."
            ) from None
        ids.append(t.column("prompt_id").to_numpy())
        losses.append(t.column("loss").to_numpy())
    seq = np.concatenate(ids) if ids else np.zeros(0, np.int64)
    x = np.concatenate(losses) if losses else np.zeros(0)
    if x.size == 0:
        raise InputError(
            f"{paths[0] if paths else 'no token files'}: no per-token losses. Fix: check that "
            "the condition's completions are not empty (the scorer's on_empty policy)."
        )
    return PC.TokenLosses(x.astype(np.float32), seq)


def _tokens_from_rows(path: str, sequence_length: int) -> PC.TokenLosses:
    """A scorer's rows as tokens: sequence = prompt_id // sequence_length."""
    from tailgate.severities import read_severities  # pyarrow loads with the first read

    ids, x = read_severities(path)
    if x.size == 0:
        raise InputError(f"{path}: no rows. Fix: re-run the scoring of this condition.")
    return PC.TokenLosses(sorted_values(ids, x).astype(np.float32), np.sort(ids) // sequence_length)


class PercentilesAnalysis(AnalysisKind):
    """Guo et al. (2025) as an analysis kind (module docstring)."""

    kind = "percentiles"

    def check_spec(self, spec: Mapping[str, Any], data: Mapping[str, Any]) -> list[Problem]:
        out = condition_problems(spec["conditions"], data)
        scorers = {s["name"]: s for s in data["scorers"]}
        sc = scorers.get(spec["scorer"])
        if spec.get("sequence_length") is not None:
            out += scorer_problems(spec, data)
        elif sc is None or sc.get("kind") != "token_nll":
            have = [n for n, s in scorers.items() if s.get("kind") == "token_nll"]
            out.append(
                Problem(
                    ("scorer",),
                    f"'{spec['scorer']}' is not a registered token_nll scorer",
                    f"use a token_nll scorer ({', '.join(have) or 'none registered'}), or register "
                    "'sequence_length' for a scorer whose rows are tokens",
                )
            )
        st = settings(spec)
        names = _names(st)
        for set_name, members in st["summary_sets"].items():
            for i, s in enumerate(members):
                if s not in names:
                    out.append(
                        Problem(
                            ("summary_sets", set_name, i),
                            f"'{s}' is not a summary of this analysis",
                            f"use {', '.join(names)}",
                        )
                    )
        if st["metric"] is not None and set(st["metric"]) != set(st["conditions"]):
            out.append(
                Problem(
                    ("metric",),
                    "the task metric must give a value for every condition of the analysis",
                    "list each condition once",
                )
            )
        return out

    def check_statistic(
        self, spec: Mapping[str, Any], data: Mapping[str, Any], ref: StatisticRef
    ) -> str | None:
        if ref.target is not None:
            return "takes no target"
        st = settings(spec)
        names = _names(st)
        if ref.name in _SETS:
            sets = list(st["summary_sets"])
            if not ref.args and len(sets) == 1:
                return None
            if len(ref.args) != 1 or ref.args[0] not in sets:
                return f"takes one registered summary set ({', '.join(sets)})"
            return None
        if ref.name == "same_selection":
            if len(ref.args) != 2 or any(a not in names for a in ref.args):
                return f"takes two summaries ({', '.join(names)})"
            return None
        if ref.name in _SUMMARY_ONLY:
            if len(ref.args) != 1 or ref.args[0] not in names:
                return f"takes one summary ({', '.join(names)})"
            if ref.name != "selected" and st["metric"] is None:
                return "needs a registered task 'metric'"
            return None
        base = ref.name.removeprefix("z_")
        if base in names and not (ref.name.startswith("z_") and base == "mean"):
            if len(ref.args) != 1:
                return f"takes 1 condition, got {len(ref.args)}"
            return unknown_args(ref.args, st["conditions"])
        return "is not a statistic of the percentiles kind"

    def statistic_help(self, spec: Mapping[str, Any], data: Mapping[str, Any]) -> str:
        return (
            "write e.g. 'concordance', 'same_selection(mean, p50)', 'p50(step3)', "
            "'z_p95(step3)' (tailgate.analyses.percentiles_kind)"
        )

    def inputs(
        self, spec: Mapping[str, Any], study: Study, layout: Mapping[str, str]
    ) -> dict[str, list[str]]:
        if spec.get("sequence_length") is not None:
            return {"severities": severity_paths(spec, layout, spec["conditions"])}
        return {
            f"shards_{c}": score_shards(study, layout, spec["scorer"], c)
            for c in spec["conditions"]
        }

    def compute(
        self,
        study: Study,
        name: str,
        spec: Mapping[str, Any],
        inputs: Mapping[str, Sequence[str]],
        *,
        threads: int = 1,
    ) -> AnalysisResult:
        st = settings(spec)
        if st["sequence_length"] is None:
            data = {c: _read_tokens(inputs[f"shards_{c}"]) for c in st["conditions"]}
        else:
            data = {
                c: _tokens_from_rows(path, st["sequence_length"])
                for c, path in zip(st["conditions"], inputs["severities"], strict=True)
            }
        summaries = {c: PC.summarise(d, st["percentiles"]) for c, d in data.items()}
        if st["resampling"] == "paired":
            seeds: Any = seed_sequence(study.seed, *seed_key(name, "sequences"))
        else:
            seeds = {c: seed_sequence(study.seed, *seed_key(name, "sequences", c)) for c in data}
        try:
            boot = PC.bootstrap_summaries(data, st["resamples"], seeds, st["percentiles"])
        except ValueError as exc:
            raise InputError(
                f"percentiles analysis '{name}': {exc} (register 'resampling: independent' "
                "if the conditions were evaluated on different sequences)"
            ) from None
        names = _names(st)
        conc = {
            k: PC.concordance(summaries, v, boot, st["level"])
            for k, v in st["summary_sets"].items()
        }
        sel = PC.selection(summaries, names, st["metric"], boot, st["level"])
        return AnalysisResult(
            {
                "settings": st,
                "summaries": {
                    c: {
                        "values": s.values,
                        "ci": {n: list(boot.confidence_interval(c, n, st["level"])) for n in names},
                        "standardized": s.standardized,
                        "tokens": s.tokens,
                        "sequences": s.sequences,
                        "status": s.status,
                    }
                    for c, s in summaries.items()
                },
                "concordance": {
                    k: {
                        "summaries": list(v.summaries),
                        "statistic": v.statistic,
                        "ci": [num(x) for x in v.confidence_interval],
                        "concordant": v.concordant,
                        "pairs": v.pairs,
                        "disagreeing": [list(p) for p in v.disagreeing],
                    }
                    for k, v in conc.items()
                },
                "selection": {
                    "selected": sel.selected,
                    "correlations": {
                        r.summary: {
                            "spearman": num(r.spearman),
                            "spearman_ci": _interval(r.spearman_ci),
                            "kendall": num(r.kendall),
                            "kendall_ci": _interval(r.kendall_ci),
                        }
                        for r in sel.correlations
                    },
                },
                "first_last": _histograms(data[st["conditions"][0]], data[st["conditions"][-1]]),
            }
        )

    def statistic(
        self, spec: Mapping[str, Any], stats: Mapping[str, Any], ref: StatisticRef
    ) -> tuple[float | None, str]:
        st = stats["settings"]
        if ref.name in _SETS:
            key = ref.args[0] if ref.args else next(iter(st["summary_sets"]))
            c = stats["concordance"][key]
            if ref.name == "concordance":
                return float(c["statistic"]), f"π({', '.join(c['summaries'])}), ties count against"
            v = c["ci"][0 if ref.name.endswith("low") else 1]
            return v, "sequence-bootstrap CI of π"
        selected = stats["selection"]["selected"]
        if ref.name == "same_selection":
            a, b = ref.args
            return float(
                selected[a] == selected[b]
            ), f"{a} selects {selected[a]}, {b} selects {selected[b]}"
        if ref.name == "selected":
            return float(st["conditions"].index(selected[ref.args[0]]) + 1), "argmin position"
        if ref.name in ("spearman", "kendall"):
            return stats["selection"]["correlations"][ref.args[0]][ref.name], "with the task metric"
        s = stats["summaries"][ref.args[0]]
        if ref.name.startswith("z_"):
            if s["status"] != "ok":
                return None, f"standardized percentiles undefined ({s['status']})"
            return float(s["standardized"][ref.name[2:]]), "(P_k − P50)/(P75 − P25)"
        return float(s["values"][ref.name]), "per-token CE summary"


def _interval(ci: Any) -> list[float | None] | None:
    return None if ci is None else [num(x) for x in ci]


#: bins of the reshaping histograms (log-spaced per-token CE)
HIST_EDGES = np.logspace(-4, 2, 61)


def _histograms(first: PC.TokenLosses, last: PC.TokenLosses) -> dict[str, Any]:
    def h(x: np.ndarray) -> list[int]:
        return np.histogram(np.clip(x, HIST_EDGES[0], HIST_EDGES[-1]), HIST_EDGES)[0].tolist()

    return {"edges": HIST_EDGES.tolist(), "first": h(first.losses), "last": h(last.losses)}


PERCENTILES = PercentilesAnalysis()
