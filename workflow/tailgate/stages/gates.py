"""Gates stage: G1–G5, P1, P2 for every registered pair at every band threshold.

``gates[scorer, scale]`` turns the bulk replicates of each registered pair
(``bulk/<scorer>/<condition>.parquet``, written by :mod:`tailgate.stages.bulk`) into the CIs of
the A − B differences at the gates' level, reads every condition's stored fits, evaluates the
pairwise matrix (:func:`tailgate.protocol.verdict.pairwise_matrix`) and the H1 verdict under the
registered band rule, and writes ``gates/<scorer>/<scale>.json``: the inputs of every decision
(``bulk`` CIs, ``summaries``), the engine's verdict (``protocol``) and the report's view
(``report``, :class:`tailgate.protocol.documents.GatesFile`). :func:`evaluate` is also what the
audit calls to re-derive the verdict from stored statistics."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tailgate.errors import InputError
from tailgate.files.atomic import write_json
from tailgate.files.parquet import read_parquet
from tailgate.prereg.study import Study
from tailgate.protocol.documents import qkey
from tailgate.protocol.gates import ConditionSummary, GateSettings
from tailgate.protocol.gates_file import gates_file_from_protocol
from tailgate.protocol.registered import family_pairs, registered_settings
from tailgate.protocol.verdict import ProtocolVerdict, h1_verdict, pairwise_matrix
from tailgate.stats.equivalence import BulkEquivalence, ci_inside_band

from .common import open_stage, read_json

__all__ = [
    "bulk_equivalences",
    "bulk_replicates",
    "evaluate",
    "gates_stage",
    "summaries_from_fits",
]


def summaries_from_fits(
    fits: Mapping[str, Mapping[str, Any]], thresholds: Sequence[float]
) -> dict[float, dict[str, ConditionSummary]]:
    """``summaries[q][condition]`` for the gates from stored ``fits/…json`` documents."""
    out: dict[float, dict[str, ConditionSummary]] = {}
    for q in thresholds:
        out[q] = {}
        for name, doc in fits.items():
            rec = next((t for t in doc["thresholds"] if abs(t["q"] - q) < 1e-9), None)
            if rec is None:
                raise InputError(
                    f"fits of condition '{name}' ({doc.get('scorer')}, {doc.get('scale')}) have no "
                    f"threshold q={q:g}. Fix: re-run the fit stage for this study."
                )
            ci = rec["xi_ci_gate"] or [None, None]
            pci = rec.get("xi_profile_ci_gate") or [None, None]
            out[q][name] = ConditionSummary.from_dict(
                {
                    "condition": name,
                    "q": rec["q"],
                    "u": rec["u"],
                    "n_exc": rec["n_exc"],
                    "xi": rec["xi"],
                    "sigma": rec["sigma"],
                    "fit_status": rec["status"],
                    "xi_ci_low": ci[0],
                    "xi_ci_high": ci[1],
                    "ci_level": rec["gate_ci_level"],
                    "ad_pvalue": rec["ad_p"],
                    "xi_minus": rec["xi_minus"],
                    "xi_plus": rec["xi_plus"],
                    "n_boundary": rec.get("n_boundary", 0),
                    "n_minus": rec.get("n_minus"),
                    "n_plus": rec.get("n_plus"),
                    "se_minus": rec.get("se_minus"),
                    "se_plus": rec.get("se_plus"),
                    "profile_ci_low": pci[0],
                    "profile_ci_high": pci[1],
                    "profile": rec.get("profile"),
                    "lattice": doc.get("lattice") is not None,
                }
            )
    return out


def bulk_equivalences(
    replicates: Mapping[str, tuple[np.ndarray, np.ndarray]],
    estimates: Mapping[str, tuple[float, float]],
    pairs: Sequence[tuple[str, str]],
    settings: GateSettings,
    *,
    paired: bool,
) -> dict[tuple[str, str], BulkEquivalence]:
    """G1/G2 CIs of mean(A) − mean(B) and TVaR(A) − TVaR(B) at each gate's level, per pair.

    ``replicates[c]`` = (mean replicates, TVaR replicates); ``estimates[c]`` = (mean, TVaR).
    """
    out = {}
    for a, b in pairs:
        (ma, ta), (mb, tb) = replicates[a], replicates[b]
        mean = ci_inside_band(
            ma - mb,
            estimates[a][0] - estimates[b][0],
            settings.delta_mu,
            settings.level_of("G1"),
            statistic="mean",
            paired=paired,
        )
        tv = ci_inside_band(
            ta - tb,
            estimates[a][1] - estimates[b][1],
            settings.delta_tvar,
            settings.level_of("G2"),
            statistic=f"tvar_{settings.tvar_level:g}",
            paired=paired,
        )
        out[(a, b)] = BulkEquivalence(mean, tv, settings.tvar_level)
    return out


def evaluate(
    study: Study,
    summaries: Mapping[float, Mapping[str, ConditionSummary]],
    bulk: Mapping[tuple[str, str], BulkEquivalence],
    settings: GateSettings,
) -> ProtocolVerdict:
    """Pairwise matrix over the band for the registered pairs and the H1 verdict (Sec. 3, 6.4);
    only the pairs of the multiplicity family (:func:`family_pairs`) can make H1 pass."""
    pairs = study.pairs()
    matrix = pairwise_matrix(summaries, bulk, settings, pairs)
    return h1_verdict(
        matrix,
        headline_q=study.thresholds.headline,
        band=list(study.thresholds.band),
        settings=settings,
        band_rule=study.rules.band_rule,
        family=family_pairs(study),
    )


def _numbers(column: Any) -> np.ndarray:
    """A float column without nulls as a read-only numpy view of its data buffer (TypeError
    otherwise). pyarrow's own conversion imports pandas (0.4 s of a plain audit), and DLPack is
    missing from the oldest pyarrow the project allows."""
    dtype = {"double": np.float64, "float": np.float32}.get(str(column.type))
    if dtype is None or column.null_count:
        raise TypeError(f"a column of {column.type} with {column.null_count} null(s)")
    width = np.dtype(dtype).itemsize
    return np.frombuffer(column.buffers()[1], dtype, len(column), column.offset * width)


def bulk_replicates(path: str | os.PathLike[str], scale: str) -> tuple[np.ndarray, np.ndarray]:
    """The mean and TVaR bootstrap replicates of one condition on ``scale``."""
    try:
        t = read_parquet(path, columns=[f"mean_{scale}", f"tvar_{scale}"])
        mean, tvar = (_numbers(c.combine_chunks()) for c in t.columns)
    except (OSError, KeyError, ValueError, TypeError) as exc:
        raise InputError(
            f"{path}: cannot read bulk replicates for scale '{scale}' ({exc}). Fix: delete it "
            "and re-run the bulk stage."
        ) from None
    return mean, tvar


def gates_document(
    study: Study,
    scorer: str,
    scale: str,
    fits: Mapping[str, Mapping[str, Any]],
    replicates: Mapping[str, tuple[np.ndarray, np.ndarray]],
) -> dict[str, Any]:
    """The ``gates/<scorer>/<scale>.json`` document (module docstring)."""
    settings = registered_settings(study, scorer=scorer, scale=scale)
    pairs = study.pairs()
    paired = study.bootstrap.paired
    if paired:
        for a, b in pairs:
            if fits[a]["n"] != fits[b]["n"]:
                raise InputError(
                    f"bootstrap.resampling is 'paired', but conditions '{a}' ({fits[a]['n']} "
                    f"prompts) and '{b}' ({fits[b]['n']}) are not aligned by prompt. Fix: register "
                    "equal prompt sets, or 'resampling: independent' (an amendment if frozen)."
                )
    estimates = {c: (float(d["mean"]), float(d["tvar"])) for c, d in fits.items()}
    bulk = bulk_equivalences(replicates, estimates, pairs, settings, paired=paired)
    thresholds = list(study.thresholds.band)
    summaries = summaries_from_fits(fits, thresholds)
    verdict = evaluate(study, summaries, bulk, settings)
    protocol = verdict.to_dict()
    fits_index = {scorer: {scale: dict(fits)}}
    return {
        "scorer": scorer,
        "scale": scale,
        "band_rule": verdict.band_rule,
        "headline_q": verdict.headline_q,
        "band": list(thresholds),
        "settings": settings.to_dict(),
        "pairs": [list(p) for p in pairs],
        "bulk": [{"a": a, "b": b, **bulk[(a, b)].to_dict()} for a, b in pairs],
        "summaries": {
            qkey(q): {c: s.to_dict() for c, s in by_c.items()} for q, by_c in summaries.items()
        },
        "protocol": protocol,
        "report": gates_file_from_protocol(
            protocol, scorer=scorer, scale=scale, fits=fits_index, reason=_reason(verdict)
        ),
    }


def _reason(v: ProtocolVerdict) -> str:
    rule = {
        "any": "some threshold of the band",
        "all": "every threshold of the band",
        "headline": f"the headline threshold q = {v.headline_q:g}",
    }[v.band_rule]
    if v.passing_pairs:
        names = ", ".join(f"{a} vs {b}" for a, b in v.passing_pairs)
        return f"band rule '{v.band_rule}': {names} pass every gate G1–G5, P1, P2 at {rule}"
    return f"band rule '{v.band_rule}': no registered pair passes every gate at {rule}"


def gates_stage(
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    scorer: str,
    scale: str,
    fits: Mapping[str, str | os.PathLike[str]],
    bulk: Mapping[str, str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    plan: str = "head",
) -> dict[str, Any]:
    """Write and record ``gates/<scorer>/<scale>.json``; ``fits``/``bulk`` map condition → path."""
    ctx = open_stage(prereg, results, plan)
    names = ctx.study.protocol_conditions()
    docs = {c: read_json(fits[c], "fits") for c in names}
    reps = {c: bulk_replicates(bulk[c], scale) for c in names}
    doc = gates_document(ctx.study, scorer, scale, docs, reps)
    write_json(out, doc)
    ctx.record(out, inputs=[*(fits[c] for c in names), *(bulk[c] for c in names)])
    return doc
