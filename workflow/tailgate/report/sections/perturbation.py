"""The report section of analysis kind ``perturbation`` (Acharyya et al. (2025),
:mod:`tailgate.analyses.perturbation`): the derived design, the decision per test query beside
the naive two-proportion test, the p̂ figure and, where registered, the energy test."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tailgate.analyses.perturbation import statistics as P
from tailgate.report.content import plots
from tailgate.report.figures import LABEL_PT, legend_outside, new_figure
from tailgate.report.tables import Table, fmt

from .base import Block, FigureBlock, KindSection, Paragraph

__all__ = ["PERTURBATION", "PerturbationSection"]


class PerturbationSection(KindSection):
    """Acharyya et al. (2025)'s section of the report (module docstring)."""

    kind = "perturbation"
    title = "Composite-null test under irrelevant query perturbations (Acharyya et al. (2025))"

    def blocks(self, name: str, spec: Mapping[str, Any], stats: Mapping[str, Any]) -> list[Block]:
        st = stats["settings"]
        d = stats["design"]
        iv = stats["pilot"]["interval"]
        blocks: list[Block] = [
            Paragraph(
                f"Acharyya et al. (2025): {len(st['pilot'])} pilot queries × "
                f"{stats['pilot']['responses']} "
                f"responses give [â, b̂] = [{iv['low']:.4f}, {iv['high']:.4f}] ({iv['method']}); "
                f"Algorithm C at budget B = {st['budget']} and α = {st['alpha']:g} derives the "
                f"design below. {_assumption_text(st)} "
                "The design is a derived value of the registration, not a change of it: the "
                "rule was frozen before the pilot, and the design is stored with the pilot "
                "counts it came from and re-derived from them by every criterion and the audit. "
                "The classical two-proportion test against the base query is shown beside the "
                "composite test: it calls semantically irrelevant differences significant."
            ),
            Table(
                f"{name}: design (Algorithm C)",
                (
                    "m",
                    "n",
                    "τ",
                    "exact size (at â / b̂)",
                    "average power",
                    "ideal size",
                    "ideal average power",
                    "Hoeffding size bound",
                    "met by the data",
                ),
                (
                    (
                        str(d["m"]),
                        str(d["n"]),
                        fmt(d["tau"], 4),
                        f"{fmt(d['size'], 4)} "
                        f"({fmt(d['size_at_a'], 4)} / {fmt(d['size_at_b'], 4)})",
                        fmt(d["average_power"]),
                        fmt(d["ideal_size"], 4),
                        fmt(d["ideal_average_power"]),
                        fmt(d["hoeffding_size_bound"]),
                        fmt(d["met"]),
                    ),
                ),
            ),
            Table(
                f"{name}: decisions per test query",
                (
                    "test query",
                    "p̂ (first n)",
                    "T̂",
                    "composite: reject?",
                    "composite p",
                    "nearest null",
                    "naive z",
                    "naive p",
                ),
                tuple(
                    (
                        t,
                        fmt(v.get("p_test")),
                        fmt(v.get("statistic")),
                        fmt(v.get("reject")),
                        fmt(v.get("pvalue")),
                        str(v.get("nearest", "—")),
                        fmt(v["naive"]["statistic"]),
                        fmt(v["naive"]["pvalue"]),
                    )
                    for t, v in stats["tests"].items()
                ),
            ),
            FigureBlock(
                _phat_figure(stats),
                f"{name}: p̂ of the null queries (dots), the estimated [â, b̂] (shaded) and each "
                "test query's p̂ with its ±τ band.",
                f"p-hat {name}",
            ),
        ]
        if "energy" in stats:
            blocks += _energy_blocks(name, stats["energy"])
        return blocks

    def card_columns(
        self, name: str, spec: Mapping[str, Any], stats: Mapping[str, Any]
    ) -> dict[str, dict[str, str]]:
        return {
            f"{name}: composite test": {
                t: ("reject" if v["reject"] else "keep") if "reject" in v else "not tested"
                for t, v in stats["tests"].items()
            },
            f"{name}: p̂": {t: fmt(v["p_all"]) for t, v in stats["tests"].items()},
        }


def _energy_blocks(name: str, energy: Mapping[str, Any]) -> list[Block]:
    head = Paragraph(
        f"Energy-distance test (methods note A8) on responses embedded by '{energy['model']}' "
        f"(mean-pooled last hidden state): each test query's first {energy['responses']} "
        f"responses against the null queries' pooled and against each one alone, "
        f"{energy['resamples']} label permutations."
        + ("" if energy["status"] == "ok" else f" Status: {energy['status']}.")
    )
    rows = []
    for t, v in energy["tests"].items():
        rows.append((t, "pooled null queries", fmt(v["pooled"]["statistic"]),
                     fmt(v["pooled"]["pvalue"])))  # fmt: skip
        for q, r in v["pairwise"].items():
            rows.append((t, q, fmt(r["statistic"]), fmt(r["pvalue"])))
    table = Table(
        f"{name}: energy test of embedded responses",
        ("test query", "against", "E", "permutation p"),
        tuple(rows),
    )
    return [head, table]


def _assumption_text(st: Mapping[str, Any]) -> str:
    """What the size guarantee assumes about the null queries (the registered null model)."""
    m_min = int(st.get("min_null_queries", P.MIN_NULL_QUERIES))
    fewest = f"at least {m_min} null queries" if m_min > 1 else "one null query allowed"
    if st.get("null_model", "uniform") == "heterogeneous":
        return (
            "Assumption (registered null_model: heterogeneous): the null queries' rates may be "
            "any rates in [â, b̂]; the exact size is the worst case over that class (methods "
            "note A9), the average power is computed with the rates uniform on [â, b̂]; "
            f"{fewest}."
        )
    return (
        "Assumption (registered null_model: uniform, Assumption 2 of Acharyya et al. (2025)): "
        "the null queries' rates are spread uniformly over [â, b̂]; the exact size and average "
        "power hold under that model (methods note A5) and not for rates bunched at one end "
        f"(null_model: heterogeneous covers those); {fewest}."
    )


@plots("perturbation p-hat")
def _phat_figure(stats: Mapping[str, Any]) -> Any:
    """p̂ of the null queries (row 0) and of each test query (one row each, named on the y axis)
    with its ±τ band, over the estimated null interval [â, b̂]; the legend sits outside."""
    d = stats["design"]
    iv = stats["pilot"]["interval"]
    tests = list(stats["tests"].items())
    fig = new_figure(7.0, 0.4 * len(tests) + 2.2)
    ax = fig.add_subplot()
    ax.axvspan(iv["low"], iv["high"], color="0.85", label="[â, b̂]")
    null = np.asarray(stats["null"]["counts"], dtype=float) / max(d["n"] or 1, 1)
    tau = d["tau"] or 0.0
    ax.plot(null, np.zeros_like(null), "o", ms=4, color="0.3", label="null queries")
    for y, (_, v) in enumerate(tests, start=1):
        p = v.get("p_test", v["p_all"])
        label = "test query: p̂ ± τ" if y == 1 else "_nolegend_"
        ax.errorbar([p], [y], xerr=[[tau], [tau]], fmt="s", capsize=3, color="C0", label=label)
    ax.set_yticks(range(len(tests) + 1), ["null", *(t for t, _ in tests)], fontsize=LABEL_PT)
    ax.set_ylim(-0.7, len(tests) + 0.7)
    ax.set_xlabel("p̂ (share of 'yes' responses)")
    legend_outside(fig)
    return fig


PERTURBATION = PerturbationSection()
