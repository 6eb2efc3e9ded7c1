"""The report section of analysis kind ``severity`` (ERRORQUAKE (2026),
:mod:`tailgate.analyses.severity`): b and the error rate per condition, the matched-accuracy
pairs, the deployment table, the families and the judge-aggregation robustness, and four figures
(magnitude–frequency curves, b forest, ΔBIC, events per million)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tailgate.analyses.severity import statistics as S
from tailgate.report.content import plots
from tailgate.report.figures import LABEL_PT, legend_outside, new_figure
from tailgate.report.tables import Table, fmt

from .base import Block, FigureBlock, KindSection, Paragraph, ci_text

__all__ = ["SEVERITY", "SeveritySection"]


class SeveritySection(KindSection):
    """ERRORQUAKE (2026)'s section of the report (module docstring)."""

    kind = "severity"
    title = "Severity index b and error-severity families (ERRORQUAKE (2026))"

    def blocks(self, name: str, spec: Mapping[str, Any], stats: Mapping[str, Any]) -> list[Block]:
        st = stats["settings"]
        conds = stats["conditions"]
        h = stats["headline"]
        mc = (
            "re-selected by KS in every resample"
            if st["mc"] == "reselect"
            else f"fixed at {st['mc']:g}"
        )
        return [
            Paragraph(
                f"ERRORQUAKE (2026) on scorer {st['scorer']} ({st['scale']} scale), grid 0, "
                f"{st['grid']['step']:g}, …, {st['grid']['top']:g}. b is the finite-grid MLE "
                f"(methods note B1; Aki–Utsu, biased about −9 % at δ = 0.5, is shown for "
                f"comparability); "
                f"m_c {mc} (≥ {st['min_events']} events and ≥ 3 levels); B = {st['resamples']} "
                f"multinomial resamples; {st['level']:.0%} CIs. Matched accuracy: |Δε| < "
                f"{st['tolerance']:g}. Headline: {h['disjoint_pairs']} of {h['matched_pairs']} "
                f"matched pairs have disjoint b CIs, resampling CI "
                f"{ci_text(*h['ci'], digits=0)}."
            ),
            Table(
                f"{name}: b and error rate per condition",
                (
                    "condition",
                    "N",
                    "ε [CI]",
                    "m_c",
                    "n tail",
                    "b (finite grid) [CI]",
                    "Aki–Utsu",
                    "unbounded",
                    "s.e. Aki / Shi–Bolt",
                    "best family",
                    "decisive",
                ),
                tuple(
                    (
                        c,
                        str(v["n"]),
                        f"{fmt(v['error_rate'])} {ci_text(*v['error_ci'])}",
                        fmt(v["m_c"]),
                        fmt(v["n_tail"]),
                        f"{fmt(v['b'])} {ci_text(*v['b_ci'])}",
                        fmt(v["b_aki_utsu"]),
                        fmt(v["b_unbounded"]),
                        f"{fmt(v['se_aki'])} / {fmt(v['se_shi_bolt'])}",
                        v["families"]["best"],
                        fmt(v["families"]["decisive"]),
                    )
                    for c, v in conds.items()
                ),
                note="status other than ok: "
                + (", ".join(c for c, v in conds.items() if v["status"] != "ok") or "none"),
            ),
            Table(
                f"{name}: matched-accuracy pairs (|Δε| < {st['tolerance']:g})",
                (
                    "pair",
                    "|Δε|",
                    "Δb",
                    "disjoint CIs",
                    f"|Δb| ≥ {st['delta_b_floor']:g}",
                    "Δb test: shared m_c, CI, p",
                ),
                tuple(
                    (
                        f"{p['first']} – {p['second']}",
                        fmt(p["delta_error_rate"]),
                        fmt(p["delta_b"]),
                        fmt(p["disjoint"]),
                        fmt(p["above_floor"]),
                        _test_text(p["test"]),
                    )
                    for p in stats["pairs"]
                    if p["matched"]
                ),
            ),
            Table(
                f"{name}: events per million queries (no fit, no extrapolation; Wilson CIs)",
                ("condition", *(f"≥ {t:g}" for t in st["thresholds"]), "P(M≥3)/P(M≥1)"),
                tuple(
                    (
                        c,
                        *(
                            f"{r['per_million']:.0f} {ci_text(*r['ci'], digits=0)}"
                            for r in v["deployment"]
                        ),
                        fmt(v["tail_ratio"]),
                    )
                    for c, v in conds.items()
                ),
            ),
            _family_table(name, st, conds),
            *_robustness_table(name, st, stats),
            FigureBlock(
                _mfd_figure(st, conds),
                f"{name}: magnitude–frequency curves, log₁₀ N(M ≥ m) "
                "with the fitted finite-grid Gutenberg–Richter line from m_c.",
                f"magnitude frequency {name}",
            ),
            FigureBlock(
                _forest_figure(conds),
                f"{name}: b with its bootstrap CI per condition.",
                f"b forest {name}",
            ),
            FigureBlock(
                _bic_figure(conds),
                f"{name}: ΔBIC to the best family per condition (0 = best).",
                f"delta BIC {name}",
            ),
            FigureBlock(
                _per_million_figure(st, conds),
                f"{name}: events per million queries at the registered thresholds.",
                f"per million {name}",
            ),
        ]

    def card_columns(
        self, name: str, spec: Mapping[str, Any], stats: Mapping[str, Any]
    ) -> dict[str, dict[str, str]]:
        conds = stats["conditions"]
        return {
            f"{name}: b [CI]": {
                c: f"{fmt(v['b'])} {ci_text(*v['b_ci'])}" for c, v in conds.items()
            },
            f"{name}: ε": {c: fmt(v["error_rate"]) for c, v in conds.items()},
        }


def _family_table(name: str, st: Mapping[str, Any], conds: Mapping[str, Any]) -> Block:
    """Per condition the BIC-best family's test against every other family: the likelihood-ratio
    test (boundary χ² mixture where the restriction is on the boundary) for a nested pair,
    Vuong's test otherwise; the one against the runner-up decides ``decisive``."""
    rule = st["decisive"]["rule"]

    def tests(fam: Mapping[str, Any]) -> str:
        parts = []
        for t in fam["tests"]:
            if fam["best"] not in (t["first"], t["second"]):
                continue
            other = t["second"] if t["first"] == fam["best"] else t["first"]
            kind = "LR Λ" if t["nested"] else "Vuong Z"
            parts.append(f"{other}: {kind} {fmt(t['statistic'])}, p {fmt(t['pvalue'])}")
        return "; ".join(parts)

    why = (
        f"the test against the runner-up rejects in the best family's favour at p < "
        f"{st['decisive']['pvalue']:g} (a nested smaller family is never affirmed by a test that "
        "fails to reject; ΔBIC between nested families is about ln N whatever the data say)"
        if rule == "test"
        else f"p < {st['decisive']['pvalue']:g} or ΔBIC > {st['decisive']['delta_bic']:g} "
        "(ERRORQUAKE (2026), Section 2)"
    )
    return Table(
        f"{name}: error-severity families (BIC-best against each other family)",
        ("condition", "best", "runner-up", "ΔBIC", "tests of the best family", "decisive"),
        tuple(
            (
                c,
                v["families"]["best"],
                v["families"]["runner_up"],
                fmt(v["families"]["delta_bic"][v["families"]["runner_up"]]),
                tests(v["families"]),
                fmt(v["families"]["decisive"]),
            )
            for c, v in conds.items()
        ),
        note=f"Decisive (rule '{rule}'): {why}.",
    )


def _robustness_table(name: str, st: Mapping[str, Any], stats: Mapping[str, Any]) -> list[Block]:
    if st.get("secondary") is None:
        return []
    return [
        Table(
            f"{name}: judge-aggregation robustness (primary {st['scorer']}, secondary "
            f"{st['secondary']}; registered: {st['aggregation']})",
            ("aggregation", "disjoint-CI matched pairs", "resampling CI"),
            tuple(
                (rule, str(v["disjoint_pairs"]), ci_text(*v["ci"], digits=0))
                for rule, v in stats["robustness"].items()
            ),
        )
    ]


def _test_text(test: Mapping[str, Any] | None) -> str:
    if test is None:
        return "—"
    return f"{test['m_c']:g}, {ci_text(*test['ci'])}, p = {fmt(test['pvalue'])}"


@plots("severity mfd")
def _mfd_figure(st: Mapping[str, Any], conds: Mapping[str, Any]) -> Any:
    grid = S.make_grid(st["grid"]["top"], st["grid"]["step"])
    fig = new_figure(7.0, 4.0)
    ax = fig.add_subplot()
    for c, v in conds.items():
        counts = np.asarray(v["counts"], dtype=float)
        n_ge = np.cumsum(counts[::-1])[::-1][1:]
        keep = n_ge > 0
        (line,) = ax.plot(grid[1:][keep], np.log10(n_ge[keep]), "o", ms=3, label=c)
        if v["b"] is not None and v["m_c"] is not None:
            i = round(v["m_c"] / st["grid"]["step"])
            K = grid.size - 1 - i
            q = 10.0 ** (-v["b"] * st["grid"]["step"])
            k = np.arange(K + 1)
            surv = (q**k - q ** (K + 1)) / (1 - q ** (K + 1))
            ax.plot(grid[i:], np.log10(v["n_tail"] * surv), "-", color=line.get_color(), lw=1)
    ax.set_xlabel("severity m")
    ax.set_ylabel("log₁₀ N(M ≥ m)")
    legend_outside(fig)
    return fig


@plots("severity forest")
def _forest_figure(conds: Mapping[str, Any]) -> Any:
    fig = new_figure(6.0, 0.4 * len(conds) + 1.4)
    ax = fig.add_subplot()
    for y, v in enumerate(conds.values()):
        if v["b"] is None:
            continue
        lo, hi = v["b_ci"]
        if lo is not None and hi is not None:
            ax.plot([lo, hi], [y, y], "-", color="0.3")
        ax.plot([v["b"]], [y], "o", color="C0")
    ax.set_yticks(range(len(conds)))
    ax.set_yticklabels(list(conds), fontsize=LABEL_PT)
    ax.invert_yaxis()  # the conditions top to bottom, in the order of the tables
    ax.set_xlabel("b (finite-grid MLE)")
    return fig


@plots("severity bic")
def _bic_figure(conds: Mapping[str, Any]) -> Any:
    fams = list(S.FAMILIES)
    mat = np.array(
        [
            [
                np.nan if v["families"]["delta_bic"][f] is None else v["families"]["delta_bic"][f]
                for f in fams
            ]
            for v in conds.values()
        ]
    )
    fig = new_figure(7.0, 0.4 * len(conds) + 2.0)
    ax = fig.add_subplot()
    im = ax.imshow(np.log10(1.0 + mat), aspect="auto", cmap="viridis")
    ax.set_xticks(
        range(len(fams)),
        [f.replace("_", " ") for f in fams],
        fontsize=LABEL_PT,
        rotation=20,
        rotation_mode="anchor",
        ha="right",
    )
    ax.set_yticks(range(len(conds)), list(conds), fontsize=LABEL_PT)
    fig.colorbar(im, ax=ax, label="log₁₀(1 + ΔBIC)")
    return fig


@plots("severity per million")
def _per_million_figure(st: Mapping[str, Any], conds: Mapping[str, Any]) -> Any:
    fig = new_figure(7.0, 4.0)
    ax = fig.add_subplot()
    width = 0.8 / max(len(st["thresholds"]), 1)
    for j, t in enumerate(st["thresholds"]):
        vals = [v["deployment"][j]["per_million"] for v in conds.values()]
        ax.bar(np.arange(len(conds)) + j * width, vals, width, label=f"≥ {t:g}")
    ax.set_xticks(np.arange(len(conds)) + 0.4 - width / 2)
    ax.set_xticklabels(
        list(conds), fontsize=LABEL_PT, rotation=30, rotation_mode="anchor", ha="right"
    )
    ax.set_yscale("symlog", linthresh=10)
    ax.set_ylabel("events per 10⁶ queries")
    legend_outside(fig)
    return fig


SEVERITY = SeveritySection()
