"""The report section of analysis kind ``dominance`` (Nitsure et al. (2024),
:mod:`tailgate.analyses.dominance`): per target the rankings, the ε matrices of each order
with the relative test's wins, the mean–risk models and their dot plot; the aggregated ranks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tailgate.analyses.dominance.calibration import CALIBRATION_TEXT, calibration_of
from tailgate.analyses.dominance.criteria import NO_CLAIM, tie_broken
from tailgate.analyses.dominance.meanrisk import RISKS
from tailgate.report.content import plots
from tailgate.report.figures import LABEL_PT, legend_outside, new_figure
from tailgate.report.tables import Table, fmt

from .base import Block, FigureBlock, KindSection, Paragraph

__all__ = ["DOMINANCE", "DominanceSection"]


class DominanceSection(KindSection):
    """Nitsure et al. (2024)'s section of the report (module docstring)."""

    kind = "dominance"
    title = "Stochastic dominance and mean–risk models (Nitsure et al. (2024))"

    def blocks(self, name: str, spec: Mapping[str, Any], stats: Mapping[str, Any]) -> list[Block]:
        st = stats["settings"]
        conds = st["conditions"]
        orient = ", ".join(
            f"{s}: {'negated (severity: larger is worse)' if o == 'higher_is_worse' else 'as is'}"
            for s, o in st["orientation"].items()
        )
        blocks: list[Block] = [
            Paragraph(
                f"Nitsure et al. (2024): {len(conds)} conditions, scorers "
                f"{', '.join(st['scorers'])} "
                f"({', '.join(f'{s} on the {sc} scale' for s, sc in st['scale'].items())}); "
                f"orientation {orient}, so 'X dominates Y' means X is safer. B = "
                f"{st['resamples']} {st['resampling']} bootstrap resamples; every test at "
                f"α/k² = {stats['alpha_pair']:.5g} (Algorithm 1); upper bounds of ε and Δε: "
                f"{_calibrations_used(stats)}; σ is the bootstrap sd of the "
                "statistic itself (no √n factor, methods note D2); a win also needs the two-sample "
                "Anderson–Darling test of equal distributions (midranks for ties, Scholz & "
                "Stephens 1987, Eq. 7; permutation p-value where the scores are tied) to "
                "reject at α/k² (distinctness guard)."
            )
        ]
        for target, t in stats["targets"].items():
            if target == "aggregate":
                rows = tuple((c, *(str(t[key][i]) for key in t)) for i, c in enumerate(conds))
                blocks.append(
                    Table(
                        f"{name}: ranks aggregated over the scorers, RA(test @ M) "
                        f"({st['aggregation']})",
                        ("condition", *t.keys()),
                        rows,
                    )
                )
                continue
            label = "portfolio (Eq. 9)" if target == "portfolio" else f"scorer {target}"
            header = ["condition"]
            cols: list[list[str]] = []
            for o in ("fsd", "ssd"):
                if o in t:
                    header += [f"R-{o.upper()} rank", f"ε_{o} one-vs-all"]
                    cols += [_ranks(t[o]), [fmt(v) for v in t[o]["one_vs_all"]]]
                    for a in t[o]["absolute"]:
                        header.append(f"ε-{o.upper()} rank @ ε₀={a['eps0']:g}")
                        cols.append(_ranks(a))
            header += ["mean–risk rank", "MWR (Eq. 15)", "MWR rank"]
            cols += [
                [str(v) for v in t["mean_risk"]["rank"]],
                [fmt(v) for v in t["mwr"]["eq15"]],
                [str(v) for v in t["mwr"]["rank"]],
            ]
            blocks.append(
                Table(
                    f"{name}, {label}: rankings (1 = safest; Table 3 of Nitsure et al. (2024))",
                    tuple(header),
                    tuple((c, *(col[i] for col in cols)) for i, c in enumerate(conds)),
                    note="Ranks are Borda counts of the tests' wins (Algorithm 1); (tie): as "
                    "many wins as another condition, so the one-versus-all ε, a point estimate "
                    "and no test, orders the tie and the rank rests on point estimates.",
                )
            )
            for o in ("fsd", "ssd"):
                if o not in t:
                    continue
                rows = []
                for i, a in enumerate(conds):
                    cells = []
                    for j in range(len(conds)):
                        if i == j:
                            cells.append("—")
                            continue
                        bound = t[o]["r"][i][j]
                        mark = (
                            " ✓"
                            if t[o]["wins"][i][j]
                            else " †"
                            if bound is not None and bound <= 0
                            else ""
                        )
                        cells.append(f"{fmt(t[o]['eps'][i][j])}{mark}")
                    rows.append((a, *cells))
                blocks.append(
                    Table(
                        f"{name}, {label}: ε_{'W2' if o == 'fsd' else 'IQ'}(row, column), the "
                        f"violation of 'row {o.upper()}-dominates column'",
                        ("row \\ column", *conds),
                        tuple(rows),
                        note="✓: the relative test says the row R-dominates the column at "
                        "α/k²: the upper bound of Δε ≤ 0 and the distinctness guard rejects "
                        "equal distributions at α/k² "
                        f"({CALIBRATION_TEXT[calibration_of(t[o])]}). †: the bound is ≤ 0 but "
                        "the guard does not reject, so no win (a criterion on the bound reads "
                        f"{NO_CLAIM:g} there).",
                    )
                )
            mr = t["mean_risk"]
            blocks += [
                Table(
                    f"{name}, {label}: mean–risk models at p = {st['risk_level']:g} (Table 2 "
                    "of Nitsure et al. (2024); σ is not SSD-consistent and is left out of the "
                    "aggregate rank)",
                    ("condition", "μ", *RISKS, "aggregate rank"),
                    tuple(
                        (
                            c,
                            fmt(mr["mean"][i]),
                            *(fmt(mr["risks"][r][i]) for r in RISKS),
                            str(mr["rank"][i]),
                        )
                        for i, c in enumerate(conds)
                    ),
                ),
                FigureBlock(
                    _mean_risk_figure(conds, mr["scores"]),
                    f"{name}, {label}: mean − risk for each risk on one common scale (the "
                    "radar of Fig. 3 of Nitsure et al. (2024) as a dot plot; right is better).",
                    f"mean-risk {name} {target}",
                ),
            ]
        return blocks

    def card_columns(
        self, name: str, spec: Mapping[str, Any], stats: Mapping[str, Any]
    ) -> dict[str, dict[str, str]]:
        st = stats["settings"]
        target = "portfolio" if "portfolio" in stats["targets"] else st["scorers"][0]
        t = stats["targets"][target]
        out = {}
        for o in ("ssd", "fsd"):
            if o in t:
                out[f"{name}: R-{o.upper()} rank ({target})"] = {
                    c: str(t[o]["rank"][i]) for i, c in enumerate(st["conditions"])
                }
        return out


def _ranks(tests: Mapping[str, Any]) -> list[str]:
    """Borda ranks, marked where a tie in wins is ordered by point estimates."""
    return [
        f"{r} (tie)" if tied else str(r)
        for r, tied in zip(tests["rank"], tie_broken(tests["wins"]), strict=True)
    ]


def _calibrations_used(stats: Mapping[str, Any]) -> str:
    """The calibration of every target's tests, once each (statistics stored before the option
    existed carry none and were computed with the normal bound)."""
    used = {
        calibration_of(t[o])
        for target, t in stats["targets"].items()
        if target != "aggregate"
        for o in ("fsd", "ssd")
        if o in t
    }
    return "; ".join(CALIBRATION_TEXT[c] for c in sorted(used)) or "none computed"


@plots("dominance radar")
def _mean_risk_figure(conditions: Sequence[str], scores: Mapping[str, Sequence[float]]) -> Any:
    """μ − r of every condition for each risk r, one row per risk on one common axis.

    Nitsure et al. (2024), Fig. 3, draw these scores as a radar with each axis scaled to its own
    range, which makes a difference of 0.504 vs 0.477 read as rim vs centre; a dot plot on a
    common scale shows the differences at their size."""
    risks = list(RISKS)
    fig = new_figure(7.0, 0.45 * len(risks) + 1.6)
    ax = fig.add_subplot()
    markers = "osD^vP*Xph"
    offsets = np.linspace(0.25, -0.25, len(conditions)) if len(conditions) > 1 else [0.0]
    for i, c in enumerate(conditions):
        x = [float(scores[r][i]) for r in risks]
        y = np.arange(len(risks))[::-1] + offsets[i]
        ax.plot(x, y, markers[i % len(markers)], ms=6, lw=0, label=c)
    ax.set_yticks(np.arange(len(risks))[::-1], [f"μ − {r}" for r in risks], fontsize=LABEL_PT + 1)
    ax.set_ylim(-0.6, len(risks) - 0.4)
    ax.grid(axis="x", color="0.9")
    ax.set_xlabel("mean − risk (right is better; one scale for every risk)")
    legend_outside(fig)
    return fig


DOMINANCE = DominanceSection()
