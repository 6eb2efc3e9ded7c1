"""Report sections on the registered procedure itself (Sections 3, 4, 6.3 and App. B of Zhou
(2026)).

* **Operating characteristics**: how often the registered rule passes a null pair, a pair
  below the floor and pairs at the floor and 1.5 × the floor (``power.json``,
  :mod:`tailgate.protocol.operating`), shown next to the verdict.
* **Inference beside the registered CI**: observed-information s.e., the registered percentile
  CI and the profile-likelihood CI of every condition at the headline threshold, and the
  two-sample likelihood-ratio test of every registered pair (:mod:`tailgate.stats.inference`),
  plus the tie diagnostic (lattice data).
* **Threshold diagnostics**: the mean-residual-life plot with 95 % CIs and the modified-scale
  σ* = σ̂ − ξ̂u plot beside the ξ̂(u) scan (Coles 2001 §4.3; Fig. 3 of Zhou (2026)).
* **Multiverse**: the verdict under every registered alternative analysis
  (:mod:`tailgate.protocol.multiverse`), registered cell in brackets.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tailgate.protocol.documents import fit_at
from tailgate.protocol.multiverse import grid
from tailgate.protocol.operating import row_kind
from tailgate.stats.inference import ProfileGrid
from tailgate.stats.likelihood_ratio import bartlett_corrected, lr_test_grids

from . import figures
from .content import plots
from .tables import Table, _ci, fmt

__all__ = [
    "CAPTION_DIAGNOSTICS",
    "diagnostics_figure",
    "inference_table",
    "lr_table",
    "multiplicity_note",
    "multiverse_figure",
    "multiverse_table",
    "oc_table",
    "procedure_sections",
    "ties_table",
    "verdict_companion",
]

CAPTION_DIAGNOSTICS = (
    "Threshold diagnostics beside the ξ̂(u) scan: mean residual life e(u) = mean(x − u | x > u) "
    "with 95% normal CIs (left; linear in u where the GPD holds) and the modified scale "
    "σ* = σ̂(u) − ξ̂(u)·u (right; constant in u where the GPD holds). Dashed lines: the band."
)


def oc_table(oc: Mapping[str, Any]) -> Table:
    """False-PASS rate and power of the registered procedure, per true Δξ and band rule."""
    rule = oc["band_rule"]
    rules = [rule] + [r for r in ("any", "all", "headline") if r != rule]
    rows = []
    for s in oc["scenarios"]:
        kind = row_kind(s["delta_xi"], oc["delta_floor"])
        rows.append(
            (
                fmt(s["delta_xi"], 3),
                kind,
                *(f"{fmt(s['rate'][r], 3)} ± {fmt(s['mc_se'][r], 3)}" for r in rules),
            )
        )
    null = next(s for s in oc["scenarios"] if s["delta_xi"] == 0)
    return Table(
        "Operating characteristics of the registered procedure",
        (
            "true Δξ",
            "rate measured",
            *(f"band rule {r}{' (registered)' if r == rule else ''}" for r in rules),
        ),
        tuple(rows),
        f"This rule passes a null pair (equal tails, matched bulk) "
        f"{100 * null['rate'][rule]:.1f}% of the time; a family of {oc['family_size']} pairs "
        f"at most {100 * oc['family_false_pass_bound']:.1f}% (union bound). Every gate at its "
        f"registered level (P1 at {fmt(oc['p1_level'], 4)}), G5 as implemented, "
        f"{oc['n_prompts']} prompts per condition, {oc['trials']} trials, "
        f"P1's intervals: {_p1_interval(oc)}; " + "; ".join(oc.get("notes", [])) + ".",
    )


def _p1_interval(oc: Mapping[str, Any]) -> str:
    """How the simulation made P1's intervals (older records name only the resamples)."""
    return oc.get("p1_interval") or f"percentile bootstrap, {oc['resamples']} resamples per fit"


def inference_table(scorer: str, scale: str, records: Mapping[str, Any], q: float) -> Table:
    """ξ̂ with observed-information s.e., percentile and profile CIs, and the tie diagnostic."""
    rows = []
    level = None
    for name, rec in records.items():
        f = fit_at(rec, q)
        if f is None:
            continue
        level = f.get("ci_level", level)
        pci = f.get("xi_profile_ci")
        ci = f.get("xi_ci")
        ties = f.get("ties") or {}
        rows.append(
            (
                name,
                str(f["n_exc"]),
                fmt(f["xi"]),
                fmt(f.get("xi_se")),
                _ci(ci),
                _ci(pci),
                "yes" if ties.get("fires") else "no",
            )
        )
    return Table(
        f"Inference for ξ, {scorer}, {scale} scale, q = {q:g}",
        ("condition", "n_exc", "ξ̂", "s.e. (obs. info)", "percentile CI", "profile CI", "ties"),
        tuple(rows),
        f"CIs at the registered bootstrap level {fmt(level, 3)}; the percentile CI is the "
        "registered one, the profile-likelihood CI is reported beside it (it under-covers less "
        "at small n_exc). ties: values tied at the threshold or among the exceedances "
        "(lattice data: protocol.thresholds.ties: lattice fits them by the discretised "
        "likelihood, methods note P10)."
        + (
            " On a lattice P1's percentile method reads the profile-likelihood CI, which holds "
            "its coverage there where the percentile bootstrap falls short (methods note P10)."
            if any(rec.get("lattice") for rec in records.values())
            else ""
        )
        + _censored_note(records),
    )


def _censored_note(records: Mapping[str, Any]) -> str:
    """The sentence that says the top grade was censored (a registered ceiling), or ''."""
    if not any("censored_ceiling" in (rec.get("lattice") or {}) for rec in records.values()):
        return ""
    return (
        " The capped top grade (protocol.thresholds.ceiling) was treated as right-censored: a "
        "score at the ceiling enters the likelihood, G4 and G4's simulated samples as "
        "'at least its cell's lower bound'."
    )


def lr_table(gates: Mapping[str, Any], records: Mapping[str, Any], q: float) -> Table:
    """Two-sample LR test of ξ_A = ξ_B for every pair of a gates view at q (stored profiles)."""

    def fit(name: str) -> Mapping[str, Any] | None:
        rec = records.get(name)
        return None if rec is None else fit_at(rec, q)

    def profile(name: str) -> ProfileGrid | None:
        f = fit(name)
        p = None if f is None else f.get("profile")
        return None if p is None else ProfileGrid.from_dict(p)

    rows = []
    for pair in gates["pairs"]:
        t = lr_test_grids(profile(pair["a"]), profile(pair["b"]))
        fa, fb = fit(pair["a"]), fit(pair["b"])
        corrected = (
            bartlett_corrected(t, int(fa["n_exc"]), int(fb["n_exc"]))
            if fa is not None and fb is not None and fa.get("n_exc") and fb.get("n_exc")
            else None
        )
        rows.append(
            (
                f"{pair['a']} vs {pair['b']}",
                fmt(t.statistic),
                fmt(t.pvalue, 4),
                "—" if corrected is None else fmt(corrected.pvalue, 4),
                fmt(t.xi_common),
            )
        )
    return Table(
        f"Likelihood-ratio test of ξ_A = ξ_B, {gates['scorer']}, {gates['scale']} scale, q = {q:g}",
        ("pair", "Λ", "p (χ²₁)", "p (Bartlett)", "common ξ̂"),
        tuple(rows),
        "The direct test of Δξ with free scales, beside P1; two non-overlapping 95% CIs "
        "correspond to a test at α ≈ 0.006. Bartlett: Λ over its null mean at the common ξ̂ and "
        "the two exceedance counts (methods note P7), the calibration P1's lr_test uses unless "
        "protocol.lr_calibration is chi2.",
    )


def ties_table(fits: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> Table | None:
    """Fits whose tie diagnostic fires (None when none does)."""
    rows = []
    for scorer, scales in fits.items():
        for scale, records in scales.items():
            for name, rec in records.items():
                for f in rec["thresholds"]:
                    t = f.get("ties") or {}
                    if t.get("fires"):
                        rows.append(
                            (
                                f"{scorer}/{scale}/{name}",
                                fmt(f["q"], 3),
                                str(t["at_threshold"]),
                                str(t["tied_exceedances"]),
                                t["rule"],
                            )
                        )
    if not rows:
        return None
    return Table(
        "Ties at the threshold (lattice scores)",
        ("fit", "q", "values tied at the quantile", "tied exceedances", "threshold rule"),
        tuple(rows),
        "With the strict rule, values tied at the threshold are dropped and ξ̂ is biased; "
        "half_step keeps them but the continuous density still biases ξ̂ on a lattice; the "
        "rule lattice fits lattice scores by the discretised likelihood (methods note P10).",
    )


@plots("diagnostics")
def diagnostics_figure(
    scans: Mapping[str, Mapping[str, Any]], *, band: Sequence[float], title: str = ""
) -> Any:
    """Mean-residual-life and modified-scale plots of every condition (quantile on the x axis)."""
    fig = figures.new_figure(figures.REPORT_WIDTH_PX / figures.DPI, 3.6)
    ax_me, ax_mod = fig.subplots(1, 2)
    plotted = False
    for name, scan in scans.items():
        q = np.asarray(scan.get("q", []), dtype=float)
        me, se, mod = (
            figures._floats(scan.get(k, []))
            for k in ("mean_excess", "mean_excess_se", "modified_scale")
        )
        if me.size != q.size or q.size == 0:
            continue
        plotted = True
        (line,) = ax_me.plot(q, me, label=name, lw=1.2)
        ax_me.fill_between(q, me - 1.96 * se, me + 1.96 * se, color=line.get_color(), alpha=0.15)
        ax_mod.plot(q, mod, label=name, lw=1.2, color=line.get_color())
    for ax in (ax_me, ax_mod):
        for q in band:
            ax.axvline(q, color="#999", lw=0.6, ls="--")
        ax.set_xlabel("threshold quantile q")
    if not plotted:
        for ax in (ax_me, ax_mod):
            figures.empty_note(ax, "no threshold of the scan has enough exceedances")
    ax_me.set_ylabel("mean excess e(u)")
    ax_mod.set_ylabel("modified scale σ* = σ̂ − ξ̂u")
    ax_me.set_title(f"mean residual life {title}".strip(), fontsize=9)
    ax_mod.set_title(f"modified scale {title}".strip(), fontsize=9)
    # outside the axes: a legend never covers a curve
    figures.legend_outside(fig, ax_me.get_legend_handles_labels()[0])
    return fig


@plots("multiverse")
def multiverse_figure(docs: Sequence[Mapping[str, Any]]) -> Any:
    """Heat map of the multiverse, one panel per scorer and scale (green PASS, grey KILL),
    the registered analysis outlined; a panel where no analysis passes says so in words
    instead of an all-grey map."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Rectangle

    header, rows = grid(docs[0])
    cols = min(len(docs), 2)  # at most two panels a row: the labels stay at full size
    n_rows = math.ceil(len(docs) / cols)
    fig = figures.new_figure(4.2 + 3.2 * cols, n_rows * (2.4 + 0.26 * len(rows)))
    axes = np.atleast_1d(fig.subplots(n_rows, cols, squeeze=False)).ravel()
    for ax in axes[len(docs) :]:
        ax.set_visible(False)
    cmap = ListedColormap(["#d9d9d9", "#2ca02c"])
    # row labels on the first map of each row of panels (a panel in words has none)
    mapped = [any(c["h1"] == "PASS" for c in d["cells"]) for d in docs]
    for k, (ax, d) in enumerate(zip(axes, docs, strict=False)):
        header, rows = grid(d)
        cells = [r[2:] for r in rows]
        z = np.array([[c.strip("[]") == "PASS" for c in r] for r in cells], dtype=float)
        ax.set_title(
            f"{d['scorer']}, {d['scale']}: PASS {100 * d['pass_share']:.0f}%",
            fontsize=figures.LABEL_PT + 1,
        )
        if not z.any():  # one grey screen says nothing: say it in words
            figures.empty_note(
                ax,
                f"H1 {d['registered']['h1']} as registered, and no PASS in any of the "
                f"{z.size} analyses: no threshold rule, G5 rule, P1 method or tolerance "
                "multiplier gives one",
            )
            continue
        ax.imshow(z, cmap=cmap, vmin=0, vmax=1, aspect="auto")
        for i, r in enumerate(cells):
            for j, c in enumerate(r):
                if c.startswith("["):
                    ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, lw=2, ec="k"))
        ax.set_xticks(
            range(len(header) - 2),
            header[2:],
            rotation=60,
            rotation_mode="anchor",
            ha="right",
            fontsize=figures.LABEL_PT,
        )
        ax.set_yticks(
            range(len(rows)), [f"{r[0]} | {r[1]}" for r in rows], fontsize=figures.LABEL_PT
        )
        ax.tick_params(axis="y", labelleft=k % cols == 0 or not mapped[k - 1])
    return fig


CAPTION_MULTIVERSE = (
    "The H1 verdict under every analysis another analyst could have run from the stored "
    "statistics: threshold rule and G5 rule (rows) × P1 method and tolerance multiplier "
    "(columns), one panel per scale; green PASS, grey KILL, the registered analysis outlined; "
    "a panel where no analysis passes says so in words."
)


def multiverse_table(doc: Mapping[str, Any]) -> Table:
    """The multiverse of one scorer and scale (:func:`tailgate.protocol.multiverse.grid`)."""
    header, rows = grid(doc)
    reg = doc["registered"]
    return Table(
        f"Multiverse: {doc['scorer']}, {doc['scale']} scale",
        tuple(header),
        tuple(tuple(r) for r in rows),
        f"H1 PASS in {100 * doc['pass_share']:.0f}% of {len(doc['cells'])} analyses another "
        f"analyst could have run from these statistics (threshold rule × tolerance multiplier "
        f"× G5 rule × P1 method); registered analysis in brackets: {reg['h1']}.",
    )


def multiplicity_note(power: Mapping[str, Any]) -> str:
    """One sentence: the registered multiplicity rule as the gates applied it."""
    if power.get("multiplicity", "none") != "bonferroni":
        return "Multiplicity: none; every gate at its registered α."
    adjusted = power.get("adjusted_gates", ["G1", "G2", "P1"])
    others = [g for g in ("G1", "G2", "G4", "P1") if g not in adjusted]
    return (
        f"Multiplicity: Bonferroni over the m = {power.get('family_size')} pairs of the family "
        f"({power.get('family', 'registered')} pairs); {', '.join(adjusted) or 'no gate'} at "
        f"α/m = {fmt(power['alpha'], 4)} (two-sided CI level {fmt(power['level'], 4)}); "
        f"{', '.join(others) + ' unadjusted; ' if others else ''}G3, G5 and P2 are not tests; "
        "the thresholds of the band are not adjusted."
    )


def verdict_companion(doc: Any, power: Mapping[str, Any]) -> None:
    """The multiplicity rule and the operating characteristics, placed next to the verdict."""
    if "family_size" in power:
        doc.para(multiplicity_note(power))
    oc = power.get("operating_characteristics")
    if oc:
        doc.table(oc_table(oc))


def procedure_sections(doc: Any, verdict: Mapping[str, Any], fits: Mapping[str, Any]) -> None:
    """Inference, ties, threshold diagnostics and the multiverse (module docstring)."""
    doc.heading("Inference beside the registered percentile CIs")
    for gates in verdict["gates"]:
        records = fits.get(gates["scorer"], {}).get(gates["scale"], {})
        doc.table(inference_table(gates["scorer"], gates["scale"], records, gates["headline_q"]))
        doc.table(lr_table(gates, records, gates["headline_q"]))
    ties = ties_table(fits)
    if ties is not None:
        doc.table(ties)
    doc.heading("Threshold diagnostics: mean residual life and modified scale")
    for gates in verdict["gates"]:
        records = fits.get(gates["scorer"], {}).get(gates["scale"], {})
        scans = {c: r["stability"] for c, r in records.items()}
        if scans:
            title = f"({gates['scorer']}, {gates['scale']})"
            doc.figure(
                diagnostics_figure(scans, band=gates["band"], title=title),
                CAPTION_DIAGNOSTICS,
                f"threshold diagnostics {gates['scorer']} {gates['scale']}",
            )
    docs = [s["multiverse"] for s in verdict.get("sensitivity", []) if s.get("multiverse")]
    if docs:
        doc.heading("Multiverse: would another reasonable analyst have published?")
        doc.figure(multiverse_figure(docs), CAPTION_MULTIVERSE, "multiverse")
        for m in docs:
            doc.open_details(
                f"Multiverse table, {m['scorer']}, {m['scale']} scale: H1 PASS in "
                f"{100 * m['pass_share']:.0f}% of {len(m['cells'])} analyses"
            )
            doc.table(multiverse_table(m))
            doc.close_details()
