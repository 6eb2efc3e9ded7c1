"""The report renders every table and figure from synthetic stage outputs, self-contained."""

from __future__ import annotations

import base64
import copy
import re
from html.parser import HTMLParser

import numpy as np
import pytest
from scipy import stats
from tailgate.data.diagnostics import qq_data
from tailgate.protocol.documents import GATE_ORDER, qkey
from tailgate.report import ReportInputError, render
from tailgate.report.figures import CAPTIONS, write_forest, write_power, write_qq, write_stability
from tailgate.report.sections.protocol import fishing_points, forest_rows

BAND = [0.95, 0.96, 0.97, 0.98, 0.99]
CONDITIONS = ["clean", "noisy", "nemo"]
PNG = b"\x89PNG\r\n\x1a\n"


def condition_fits(scale: str, condition: str, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    x = rng.logistic(-6, 1, 3000)
    sev = 1 / (1 + np.exp(-x)) if scale == "probability" else x
    thresholds, qq = [], {}
    for q in BAND:
        u = float(np.quantile(sev, q))
        exc = sev[sev > u] - u
        xi, _, sigma = stats.genpareto.fit(exc, floc=0)
        thresholds.append(
            {
                "q": q,
                "u": u,
                "n": sev.size,
                "n_exc": int(exc.size),
                "xi": float(xi),
                "sigma": float(sigma),
                "xi_ci": [float(xi) - 0.1, float(xi) + 0.1],
                "ad_stat": 0.5,
                "ad_p": 0.3 if scale == "logit" else 0.002,
                "status": "ok",
                "boundary_share": {"0.9": 0.14, "0.95": 0.09} if scale == "probability" else None,
            }
        )
        qq[qkey(q)] = qq_data(sev, q, float(xi), float(sigma), max_points=50).to_dict()
    scan_q = [0.90, 0.92, 0.94, *BAND]
    xis = [float(t["xi"]) for t in thresholds]
    xi_scan = [xis[0]] * 3 + xis
    return {
        "scorer": "toxicity",
        "scale": scale,
        "condition": condition,
        "n": sev.size,
        "mean": float(sev.mean()),
        "tvar": float(np.sort(sev)[int(0.9 * sev.size) :].mean()),
        "tvar_level": 0.9,
        "thresholds": thresholds,
        "stability": {
            "q": scan_q,
            "xi": xi_scan,
            "ci_low": [v - 0.1 for v in xi_scan],
            "ci_high": [v + 0.1 for v in xi_scan],
            "n_exc": [int((1 - q) * 3000) for q in scan_q],
            "median": float(np.median(xi_scan)),
            "std": float(np.std(xi_scan)),
        },
        "qq": qq,
        "transform": None,
    }


def gate(passed, value=None):
    return {"passed": passed, "value": value, "detail": ""}


def pair_at(q, failing):
    gates = {}
    for g in GATE_ORDER:
        gates[g] = gate(g != failing if failing else True, 0.01)
    return {
        "q": q,
        "gates": gates,
        "first_failing": failing,
        "passed": failing is None,
        "delta_xi": 0.12,
        "delta_xi_ci": [0.02, 0.22],
    }


def gates_file(scale):
    pairs = [
        {
            "a": "clean",
            "b": "noisy",
            "thresholds": [pair_at(q, "G5" if q == 0.97 else "P2") for q in BAND],
            "verdict": "KILL",
        },
        {
            "a": "clean",
            "b": "nemo",
            "thresholds": [pair_at(q, "G4") for q in BAND],
            "verdict": "KILL",
        },
        {
            "a": "noisy",
            "b": "nemo",
            "thresholds": [pair_at(q, None) for q in BAND],
            "verdict": "PASS",
        },
    ]
    return {
        "scorer": "toxicity",
        "scale": scale,
        "headline_q": 0.95,
        "band": BAND,
        "floor": 0.1,
        "pairs": pairs,
        "h1": {"verdict": "PASS", "passing_pairs": ["noisy vs nemo"], "reason": "one pair"},
    }


@pytest.fixture
def inputs():
    fits = {
        "toxicity": {
            scale: {c: condition_fits(scale, c, i) for i, c in enumerate(CONDITIONS)}
            for scale in ("probability", "logit")
        }
    }
    verdict = {
        "study": "demo",
        "prereg_hash": "ab" * 32,
        "headline": {"scorer": "toxicity", "scale": "logit", "q": 0.95},
        "h1": {"verdict": "PASS", "passing_pairs": ["noisy vs nemo"], "reason": "one pair"},
        "gates": [gates_file("logit"), gates_file("probability")],
        "sensitivity": [
            {
                "scorer": "toxicity",
                "scale": "logit",
                "rows": [
                    {
                        "label": lab,
                        "delta_mu": m,
                        "delta_tvar": 2 * m,
                        "q": 0.95,
                        "n_pairs": 3,
                        "admissible_pairs": ["noisy vs nemo"],
                        "passing_pairs": [],
                    }
                    for lab, m in (("tight", 0.05), ("pre-registered", 0.1), ("loose", 0.2))
                ],
            }
        ],
        "amendments": [
            {
                "seq": 1,
                "time": "2026-06-20T10:00:00Z",
                "reason": "move to logit scale",
                "classes": ["decision_rule"],
                "fields": [{"path": "transform.scales", "old": ["probability"], "new": ["logit"]}],
                "data_existed": True,
                "entry_hash": "cd" * 32,
            }
        ],
        "deviations": [{"what": "headline scale changed to logit after data", "amendment": 1}],
    }
    dxi = [0.0, 0.1, 0.2]
    n_exc = [200, 500, 1000]
    power = {
        "delta_xi": dxi,
        "n_exc": n_exc,
        "pass_rate": [[0.02, 0.03, 0.02], [0.2, 0.35, 0.45], [0.3, 0.6, 0.94]],
        "trials": 80,
        "bootstrap": 80,
        "p1_interval": "percentile bootstrap, 80 resamples per fit",
        "alpha": 0.05,
        "power": 0.8,
        "xi_bar": 0.0,
        "floor": 0.1,
        "frontier": [
            {"delta_xi": d, "n_exc_star": 2 * (1.959964 + 0.841621) ** 2 / d**2}
            for d in dxi
            if d > 0
        ],
        "design_n_exc": 1500,
    }
    return verdict, fits, power


class Refs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs, self.tags, self.anchors = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href", "srcset", "action", "data") and value is not None:
                (self.anchors if value.startswith("#") else self.refs).append(value)


def test_report_is_complete_and_self_contained(inputs, tmp_path):
    verdict, fits, power = inputs
    out_html, out_md = tmp_path / "report.html", tmp_path / "report.md"
    result = render(verdict, fits, power, out_html, out_md)
    text = out_html.read_text()
    parser = Refs()
    parser.feed(text)
    # 3 QQ (one per condition) + 2 stability + 2 forest + 1 power + 2 threshold diagnostics
    assert result.n_figures == 10 == parser.tags.count("img")
    assert all(r.startswith("data:image/png;base64,") for r in parser.refs)
    for ref in parser.refs:
        assert base64.b64decode(ref.split(",", 1)[1]).startswith(PNG)
    assert not {"link", "script", "iframe"} & set(parser.tags)
    assert not re.search(r"https?://|url\(", text)
    # every internal link leads to a section of the page
    assert parser.anchors and all(f"id='{a[1:]}'" in text for a in parser.anchors)
    md = out_md.read_text()
    # the answer first: verdict, the registered-plan verdict (an amendment exists), deviations;
    # then the matrix; the amendments after it
    for doc in (text, md):
        assert doc.index("Answer") < doc.index("H1 per scorer and scale")
        assert doc.index("H1 per scorer and scale") < doc.index("H1 under the registered plan")
        assert doc.index("H1 under the registered plan") < doc.index("Deviations from the")
        assert doc.index("Deviations from the") < doc.index("Pairwise H1 matrix")
        assert doc.index("Pairwise H1 matrix") < doc.index("Amendments to the pre-registration")
        assert "changed decision rules after the registration" in doc
        for needle in (
            "Sensitivity of the H1 verdict",
            "Synthetic recovery",
            "Bounded-support diagnosis",
            "POT-GPD fits",
            "Glossary",
        ):
            assert needle in doc
    # per scale: the matrix row, one gate-values row per band threshold; one likelihood-ratio row
    assert md.count("| clean vs noisy |") == 2 * (1 + len(BAND)) + 2
    assert "| clean vs noisy | P2 | P2 | G5 | P2 | P2 | KILL |" in md
    # H1, registered plan, deviations, 2 x (matrix + a gate-values table per threshold),
    # amendments, 2 scales x 2 thresholds of fits, 2 probability-vs-logit, sensitivity, power,
    # per-condition cards, 2 x (inference for ξ + likelihood-ratio tests)
    n_tables = 3 + 2 * (1 + len(BAND)) + 1 + 4 + 2 + 1 + 1 + 1 + 4
    assert result.n_tables == n_tables == text.count("<caption>")


def test_fishing_points_and_forest_rows(inputs):
    verdict, fits, _ = inputs
    gates = verdict["gates"][0]
    points = fishing_points(gates, fits)
    assert {(p["condition"], p["q"]) for p in points} == {("clean", 0.97), ("noisy", 0.97)}
    expected = next(
        t["xi"] for t in fits["toxicity"]["logit"]["clean"]["thresholds"] if t["q"] == 0.97
    )
    assert next(p["xi"] for p in points if p["condition"] == "clean") == expected
    rows = forest_rows(gates, 0.95)
    assert [(r["admissible"], r["passed"]) for r in rows] == [
        (True, False),
        (False, False),
        (True, True),
    ]


def test_missing_field_fails_before_writing(inputs, tmp_path):
    verdict, fits, power = inputs
    broken = copy.deepcopy(fits)
    del broken["toxicity"]["logit"]["nemo"]["stability"]["std"]
    with pytest.raises(ReportInputError, match=r"fits/toxicity/logit/nemo\.json: stability.*std"):
        render(verdict, broken, power, tmp_path / "r.html", tmp_path / "r.md")
    bad_power = {**power, "pass_rate": power["pass_rate"][:2]}
    with pytest.raises(ReportInputError, match="pass_rate"):
        render(verdict, fits, bad_power, tmp_path / "r.html", tmp_path / "r.md")
    assert list(tmp_path.iterdir()) == []


def test_standalone_figures_are_reproducible_pngs(inputs, tmp_path):
    verdict, fits, power = inputs
    prob = fits["toxicity"]["probability"]["nemo"]["qq"]["0.99"]
    logit = fits["toxicity"]["logit"]["nemo"]["qq"]["0.99"]
    scans = {c: r["stability"] for c, r in fits["toxicity"]["logit"].items()}
    written = {
        "qq": lambda p: write_qq(p, prob, logit, condition="nemo", ad_p_prob=0.002),
        "stability": lambda p: write_stability(p, scans, band=BAND),
        "forest": lambda p: write_forest(
            p, forest_rows(verdict["gates"][0], 0.95), floor=0.1, q=0.95
        ),
        "power": lambda p: write_power(p, power),
    }
    assert set(written) == set(CAPTIONS)
    for name, write in written.items():
        a, b = tmp_path / f"{name}-a.png", tmp_path / f"{name}-b.png"
        write(a)
        write(b)
        assert a.read_bytes().startswith(PNG)
        assert a.read_bytes() == b.read_bytes()


def test_protocol_verdict_adapts_to_the_report_shape(inputs, tmp_path):
    from tailgate.protocol.gates import GateResult, GateSettings, PairVerdict
    from tailgate.protocol.gates_file import gates_file_from_protocol
    from tailgate.protocol.verdict import ProtocolVerdict

    verdict, fits, power = inputs

    def pv(a, b, q, failing):
        gates = tuple(
            GateResult(g, g != failing, 0.2 if g == "P2" else 0.01, "crit") for g in GATE_ORDER
        )
        return PairVerdict(a, b, q, gates)

    pairs = tuple(pv("clean", "noisy", q, "G5" if q == 0.97 else "P2") for q in BAND)
    pairs += tuple(pv("noisy", "nemo", q, None) for q in BAND)
    engine = ProtocolVerdict(
        "PASS", "all", 0.95, tuple(BAND), pairs, (("noisy", "nemo"),), GateSettings()
    ).to_dict()
    gates = gates_file_from_protocol(engine, scorer="toxicity", scale="logit", fits=fits)
    assert [p["verdict"] for p in gates["pairs"]] == ["KILL", "PASS"]
    at = gates["pairs"][0]["thresholds"][2]
    assert (at["q"], at["first_failing"], at["passed"]) == (0.97, "G5", False)
    fa = fits["toxicity"]["logit"]["clean"]["thresholds"][2]
    fb = fits["toxicity"]["logit"]["noisy"]["thresholds"][2]
    assert at["delta_xi"] == pytest.approx(fa["xi"] - fb["xi"])
    half = (0.1**2 + 0.1**2) ** 0.5  # the synthetic CIs are ξ̂ ± 0.1: quadrature
    assert at["delta_xi_ci"] == pytest.approx([at["delta_xi"] - half, at["delta_xi"] + half])
    assert gates["floor"] == 0.1 and gates["h1"]["passing_pairs"] == ["noisy vs nemo"]
    verdict = {**verdict, "gates": [gates]}
    result = render(verdict, fits, power, tmp_path / "r.html", tmp_path / "r.md")
    assert result.n_figures == 3 + 1 + 1 + 1 + 1  # QQ, stability, forest, power, diagnostics


def test_matrix_comes_before_the_first_figure(inputs, tmp_path):
    verdict, fits, power = inputs
    render(verdict, fits, power, tmp_path / "r.html", tmp_path / "r.md")
    text, md = (tmp_path / "r.html").read_text(), (tmp_path / "r.md").read_text()
    assert text.index("Pairwise H1 matrix") < text.index("<img")
    assert text.index("Gate values at q = 0.99") < text.index("<img")
    assert md.index("Pairwise H1 matrix") < md.index("*Figure (")


# --- a pair that passes at q = 0.96 only, evaluated by the protocol engine -------------------


def _summary(name, q, **kw):
    from tailgate.protocol.gates import ConditionSummary

    base = dict(
        condition=name,
        q=q,
        u=1.0,
        n_exc=1600,
        xi=0.0,
        sigma=1.0,
        fit_status="ok",
        xi_ci_low=-0.05,
        xi_ci_high=0.05,
        ci_level=0.95,
        ad_pvalue=0.3,
        xi_minus=0.01,
        xi_plus=-0.02,
    )
    base.update(kw)
    return ConditionSummary(**base)


def _bulk(mean=(-0.04, 0.06), tv=(-0.1, 0.1), level=0.95):
    from tailgate.stats.equivalence import BulkEquivalence, EquivalenceResult

    m = EquivalenceResult("mean", sum(mean) / 2, *mean, 0.10, level, 10_000, False)
    t = EquivalenceResult("tvar_0.9", sum(tv) / 2, *tv, 0.20, level, 10_000, False)
    return BulkEquivalence(m, t, 0.9)


def _stored(band=(0.95, 0.96, 0.97)):
    """A (ξ = 0) and B (ξ = 0.25) are bulk-equivalent; A has 1600 exceedances at q = 0.96 and
    100 elsewhere, so the pair passes every gate at q = 0.96 only (G3 fails elsewhere)."""
    summaries = {
        q: {
            "A": _summary("A", q, n_exc=1600 if q == 0.96 else 100),
            "B": _summary(
                "B", q, xi=0.25, xi_ci_low=0.18, xi_ci_high=0.32, xi_minus=0.24, xi_plus=0.27
            ),
        }
        for q in band
    }
    return summaries, {("A", "B"): _bulk()}


def _sections(text):
    """Each <details> block of the HTML: (open, summary, body)."""
    return [
        (bool(m.group(1)), m.group(2), m.group(3))
        for m in re.finditer(
            r"<details( open)?><summary>(.*?)</summary>(.*?)</details>", text, re.S
        )
    ]


def test_every_band_threshold_has_its_gate_values(inputs, tmp_path):
    from tailgate.protocol.gates import GateSettings
    from tailgate.protocol.gates_file import gates_file_from_protocol
    from tailgate.protocol.verdict import h1_verdict, pairwise_matrix

    verdict, fits, power = inputs
    band = (0.95, 0.96, 0.97)
    summaries, bulk = _stored(band)
    settings = GateSettings()
    engine = h1_verdict(
        pairwise_matrix(summaries, bulk, settings, [("A", "B")]),
        headline_q=0.95,
        band=band,
        settings=settings,
        band_rule="any",
    )
    assert engine.h1 == "PASS"
    gates = gates_file_from_protocol(engine.to_dict(), scorer="toxicity", scale="logit")
    verdict = {**verdict, "gates": [gates], "h1": gates["h1"], "band_rule": "any"}
    render(verdict, fits, power, tmp_path / "r.html", tmp_path / "r.md")
    text = (tmp_path / "r.html").read_text()
    blocks = {s: (o, b) for o, s, b in _sections(text) if s.startswith("Gate values")}
    assert [s.split(":")[0] for s in blocks] == [
        "Gate values at q = 0.95 (headline)",
        "Gate values at q = 0.96",
        "Gate values at q = 0.97",
    ]
    # the headline threshold is open, the others collapsed
    assert [o for o, _ in blocks.values()] == [True, False, False]
    at = {s.split(":")[0].split("= ")[1].split(" ")[0]: b for s, (_, b) in blocks.items()}
    row96 = re.search(r"<tr><td>A vs B</td>(.*?)</tr>", at["0.96"]).group(1)
    # the PASS at q = 0.96 is checkable: every gate passes, with its statistic, by hand:
    # G1 the mean-difference estimate (-0.04 + 0.06) / 2, G3 min(1600, 1600), G4 min AD p 0.3,
    # G5 the largest side deviation (|0.27 − 0.25| = |−0.02 − 0| = 0.02), P1 the gap
    # 0.18 − 0.05 between the CIs, P2 |0 − 0.25|
    cells = re.findall(r"<td class='(pass|fail)'>([^<]*)", row96)
    assert cells[0] == ("pass", "PASS")  # the result column
    gates = dict(zip(GATE_ORDER, cells[1:], strict=True))
    assert all(css == "pass" and cell.startswith("pass ") for css, cell in gates.values())
    values = {g: float(cell.split()[1]) for g, (_, cell) in gates.items()}
    assert values["G1"] == pytest.approx(0.01)
    assert values["G3"] == 1600
    assert values["G4"] == pytest.approx(0.3)
    assert values["G5"] == pytest.approx(0.02)
    assert values["P1"] == pytest.approx(0.13)
    assert values["P2"] == pytest.approx(0.25)
    assert ">PASS</td>" in row96
    # at q = 0.95 G3 fails with min(100, 1600) = 100, and the cell says so
    row95 = re.search(r"<tr><td>A vs B</td>(.*?)</tr>", at["0.95"]).group(1)
    assert "KILL at G3" in row95 and "FAIL 100<br><span class='sub'>n_exc 100, 1600" in row95
    # the criterion of each gate is stated under its table
    assert "G3: min n_exc &gt;= 500." in at["0.96"]


# --- the verdict under the registered plan after an amendment --------------------------------


def _study(path="preregistrations/unit.yaml", **protocol):
    from pathlib import Path

    from tailgate.prereg.canonical import canonical_hash
    from tailgate.prereg.study import Study

    data = {
        "study": "unit",
        "seed": 7,
        "sample_cap": 4000,
        "conditions": [{"name": "A", "prompts": 4000}, {"name": "B", "prompts": 4000}],
        "data": {"backend": "simulate"},
        "scorers": [{"name": "toxicity", "kind": "column", "column": "s", "bounded": True}],
        "transform": {"scales": ["logit"], "epsilon": 1.0e-6},
        "protocol": {
            "headline_scale": "logit",
            "alpha": 0.05,
            "multiplicity": "none",
            "delta_floor": 0.1,
            "power": 0.8,
            "xi_bar": 0.0,
            "tolerances": {"mean": 0.1, "tvar": 0.2},
            "tvar_level": 0.9,
            "min_exceedances": 500,
            "thresholds": {"headline": 0.96, "band": [0.95, 0.96, 0.97]},
            "band_rule": "any",
            "stability": {
                "delta": 0.02,
                "tolerance": 0.05,
                "min_exceedances": 200,
                "resamples": 200,
                "scan": {"start": 0.9, "stop": 0.98, "step": 0.01},
            },
            "gof": {"alpha": 0.05},
            "bootstrap": {"resamples": 1000, "level": 0.95, "resampling": "independent"},
            "pairs": [["A", "B"]],
        },
    }
    for path, value in protocol.items():
        node = data["protocol"]
        *head, last = path.split(".")
        for key in head:
            node = node[key]
        node[last] = value
    return Study(Path(path), data, canonical_hash(data), "")


def _gates_doc(summaries, bulk):
    from tailgate.protocol.documents import qkey as key

    return {
        "scorer": "toxicity",
        "scale": "logit",
        "summaries": {
            key(q): {c: s.to_dict() for c, s in by.items()} for q, by in summaries.items()
        },
        "bulk": [{"a": a, "b": b, **e.to_dict()} for (a, b), e in bulk.items()],
    }


def _amended_case(registered, path="preregistrations/unit.yaml"):
    """Stored statistics of the amended study (mean tolerance 0.10) and a lock chain whose entry
    0 is ``registered``; the mean-difference CI is [-0.08, 0.08]."""
    from tailgate.protocol.gates_file import gates_file_from_protocol
    from tailgate.protocol.registered import registered_settings
    from tailgate.stages.gates import evaluate

    amended = _study(path)
    summaries, _ = _stored()
    bulk = {("A", "B"): _bulk(mean=(-0.08, 0.08))}
    engine = evaluate(amended, summaries, bulk, registered_settings(amended))
    chain = [{"prereg": registered.data, "canonical_hash": registered.canonical_hash}]
    chain.append({"prereg": amended.data, "canonical_hash": amended.canonical_hash})
    view = gates_file_from_protocol(engine.to_dict(), scorer="toxicity", scale="logit")
    return amended, chain, _gates_doc(summaries, bulk), view


def test_registered_plan_verdict_beside_the_amended_one(inputs, tmp_path):
    from tailgate.stages.registered_plan import registered_plan_verdicts

    verdict, fits, power = inputs
    # registered: mean tolerance 0.05, so the CI [-0.08, 0.08] is not inside ±0.05 (G1 fails);
    # amended after data: 0.10, and the pair passes at q = 0.96
    amended, chain, doc, view = _amended_case(_study(**{"tolerances.mean": 0.05}))
    assert view["h1"]["verdict"] == "PASS"
    reg = registered_plan_verdicts(amended, chain, [doc])
    assert [(r["h1"], r["headline"]) for r in reg] == [("KILL", True)]
    firsts = {t["q"]: t["first_failing"] for t in reg[0]["gates"]["pairs"][0]["thresholds"]}
    assert firsts == {0.95: "G1", 0.96: "G1", 0.97: "G1"}
    amendment = {
        "seq": 1,
        "time": "2026-06-20T10:00:00Z",
        "reason": "wider mean tolerance",
        "classes": ["decision_rule"],
        "fields": [{"path": "protocol.tolerances.mean", "old": 0.05, "new": 0.1}],
        "data_existed": True,
        "entry_hash": "ef" * 32,
    }
    verdict = {
        **verdict,
        "headline": {"scorer": "toxicity", "scale": "logit", "q": 0.96},
        "gates": [view],
        "h1": view["h1"],
        "amendments": [amendment],
        "deviations": [{"what": "protocol.tolerances.mean changed after data", "amendment": 1}],
    }
    render(verdict, fits, power, tmp_path / "r.html", tmp_path / "r.md", registered_plan=reg)
    text, md = (tmp_path / "r.html").read_text(), (tmp_path / "r.md").read_text()
    for doc_text in (text, md):
        assert "Under the registered plan (entry 0 of the lock) H1 is KILL." in doc_text
        assert doc_text.index("H1 under the registered plan") < doc_text.index(
            "<img" if doc_text is text else "*Figure ("
        )
    assert "| toxicity | logit | KILL | — | PASS | A vs B |" in md
    # the registered plan's matrix is in the report too (collapsed)
    (block,) = [b for o, s, b in _sections(text) if s.startswith("Under the registered plan")]
    assert "Pairwise H1 matrix under the registered plan (entry 0)" in block
    assert block.count("<td class='fail'>G1</td>") == 3


def test_registered_plan_read_from_its_branch_when_the_statistics_differ():
    from tailgate.stages.registered_plan import registered_plan_verdicts

    # a stability window of 0.03 would have stored other ξ(q ± δ): the stored statistics cannot
    # serve entry 0, so its verdict is read from the registered-plan branch's gates document
    registered = _study(**{"stability.delta": 0.03})
    amended, chain, doc, _ = _amended_case(registered)
    (r,) = registered_plan_verdicts(amended, chain, [doc])
    assert r["h1"] is None and r["gates"] is None and "not computed" in r["reason"]
    assert "protocol.stability.delta" in r["reason"]
    ours = {"scorer": "toxicity", "scale": "logit", "report": _branch_view(registered)}
    (r,) = registered_plan_verdicts(amended, chain, [doc], [ours])
    assert (r["h1"], r["headline"]) == (ours["report"]["h1"]["verdict"], True)
    assert r["gates"] == ours["report"] and "computed under entry 0" in r["reason"]
    assert "protocol.stability.delta" in r["reason"]
    # a registered band with a threshold that was never fitted
    amended, chain, doc, _ = _amended_case(_study(**{"thresholds.band": [0.95, 0.96, 0.97, 0.99]}))
    (r,) = registered_plan_verdicts(amended, chain, [doc])
    assert r["h1"] is None and "q = 0.99" in r["reason"]
    # a narrower registered band is re-derived from the thresholds it shares
    amended, chain, doc, _ = _amended_case(
        _study(**{"thresholds.band": [0.95, 0.97], "thresholds.headline": 0.95})
    )
    (r,) = registered_plan_verdicts(amended, chain, [doc])
    assert r["h1"] == "KILL" and [t["q"] for t in r["gates"]["pairs"][0]["thresholds"]] == [
        0.95,
        0.97,
    ]
    # a registered α of 0.10 puts every CI at level 0.90: the stored 0.95 CIs cannot serve
    amended, chain, doc, _ = _amended_case(_study(alpha=0.10))
    (r,) = registered_plan_verdicts(amended, chain, [doc])
    assert r["h1"] is None and "gate_ci_level" in r["reason"]
    # no amendment: nothing to show
    assert registered_plan_verdicts(amended, chain[:1], [doc]) == []


def _branch_view(registered):
    """The report view of a gates document computed under ``registered`` (a branch's)."""
    from tailgate.protocol.gates_file import gates_file_from_protocol
    from tailgate.protocol.registered import registered_settings
    from tailgate.stages.gates import evaluate

    summaries, _ = _stored()
    bulk = {("A", "B"): _bulk(mean=(-0.08, 0.08))}
    engine = evaluate(registered, summaries, bulk, registered_settings(registered))
    return gates_file_from_protocol(engine.to_dict(), scorer="toxicity", scale="logit")


class Figures(HTMLParser):
    """Each <img> with the text of the <figcaption> of its <figure>."""

    def __init__(self):
        super().__init__()
        self.stack, self.images, self.in_caption = [], [], False

    def handle_starttag(self, tag, attrs):
        if tag == "figure":
            self.stack.append({"imgs": 0, "caption": ""})
        elif tag == "img":
            self.images.append(self.stack[-1] if self.stack else None)
            if self.stack:
                self.stack[-1]["imgs"] += 1
        elif tag == "figcaption":
            self.in_caption = True

    def handle_endtag(self, tag):
        if tag == "figcaption":
            self.in_caption = False
        elif tag == "figure":
            self.stack.pop()

    def handle_data(self, data):
        if self.in_caption and self.stack:
            self.stack[-1]["caption"] += data


def test_every_figure_has_a_caption(inputs, tmp_path):
    verdict, fits, power = inputs
    render(verdict, fits, power, tmp_path / "r.html", tmp_path / "r.md")
    parser = Figures()
    parser.feed((tmp_path / "r.html").read_text())
    assert len(parser.images) == 10
    for fig in parser.images:
        assert fig is not None and fig["imgs"] == 1 and len(fig["caption"].strip()) > 20
    # the QQ plots sit in a collapsible grid, each with its own caption
    qq = [b for o, s, b in _sections((tmp_path / "r.html").read_text()) if s.startswith("QQ plots")]
    assert len(qq) == 1 and qq[0].count("<img") == 3 and "class='grid'" in qq[0]


def test_glossary_names_the_papers_and_defines_the_references(inputs, tmp_path):
    verdict, fits, power = inputs
    render(verdict, fits, power, tmp_path / "r.html", tmp_path / "r.md")
    text = (tmp_path / "r.html").read_text()
    body = re.sub(r"src='data:[^']*'", "", text)
    glossary = body[body.index("id='glossary'") :]
    terms = re.findall(r"<dt>(.*?)</dt>", glossary)
    for paper in (
        "Zhou 2026",
        "Nitsure et al. 2024",
        "ERRORQUAKE 2026",
        "Guo et al. 2025",
        "Acharyya et al. 2025",
        "methods note",
    ):
        assert paper in terms
    assert "Tail-Shape Estimation in LLM Evaluation Is Fragile" in glossary
    # no paper is named by its number, and each numbered reference the report uses is a term
    assert not re.search(r"\bseeds? 00\d\b|\bSPECS\b", body, re.IGNORECASE)
    before = body[: body.index("id='glossary'")]
    for ref in ("Eq. 2", "Proposition 1", "App. B", "App. E", "H1", "G5", "P2", "TVaR"):
        if ref in before:
            assert any(ref in t for t in terms), ref
    md = (tmp_path / "r.md").read_text()
    assert "## Glossary" in md and "- **Zhou 2026**: L. Zhou, Tail-Shape" in md


@pytest.mark.slow  # the whole report rendered twice: the whole suite runs it
def test_report_renders_byte_identically_twice(inputs, tmp_path, monkeypatch):
    """Twice the same bytes, and again with its figures drawn two at a time (a report holds
    at most ``FIGURE_BATCH`` undrawn)."""
    from tailgate.report import document
    from tailgate.stages.registered_plan import registered_plan_verdicts

    verdict, fits, power = inputs
    amended, chain, doc, _ = _amended_case(_study(**{"tolerances.mean": 0.05}))
    reg = registered_plan_verdicts(amended, chain, [doc])
    out = []
    for name in ("a", "b", "batches of 2"):
        if name == "batches of 2":
            monkeypatch.setattr(document, "FIGURE_BATCH", 2)
        d = tmp_path / name
        d.mkdir()
        result = render(verdict, fits, power, d / "r.html", d / "r.md", registered_plan=reg)
        out.append(((d / "r.html").read_bytes(), (d / "r.md").read_bytes()))
    assert result.n_figures > 2
    assert out[0] == out[1] == out[2]
    # no time of rendering: the only time in the report is the amendment's, from the lock
    for text in out[0]:
        assert set(re.findall(rb"\d{4}-\d\d-\d\dT[\d:.]+Z", text)) == {b"2026-06-20T10:00:00Z"}


def test_legends_sit_outside_the_axes(inputs):
    import warnings

    from tailgate.report.figures import forest_figure, power_figure
    from tailgate.report.procedure import diagnostics_figure

    verdict, _, power = inputs

    def outside(fig):
        fig.canvas.draw()
        (legend,) = fig.legends
        box = legend.get_window_extent()
        for ax in fig.axes:
            a = ax.get_window_extent()
            assert box.x1 <= a.x0 or box.x0 >= a.x1 or box.y1 <= a.y0 or box.y0 >= a.y1

    outside(forest_figure(forest_rows(verdict["gates"][0], 0.95), floor=0.1, q=0.95))
    outside(power_figure(power))
    scans = {
        c: {
            "q": [0.9, 0.95],
            "mean_excess": [1.0, 1.1],
            "mean_excess_se": [0.1, 0.1],
            "modified_scale": [1.0, 1.0],
        }
        for c in CONDITIONS
    }
    outside(diagnostics_figure(scans, band=BAND))
    # nothing to label: no legend and no "No artists with labels" warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = diagnostics_figure({"clean": {"q": [], "mean_excess": []}}, band=BAND)
        fig.canvas.draw()
    assert not fig.legends


def test_the_registered_title_and_hypotheses_follow_the_answer_as_inert_text(inputs, tmp_path):
    verdict, fits, power = inputs
    registration = {
        "title": "Does noise fatten <the> tail?\n# H1 PASS <!--",
        "hypotheses": {"H1": "noisy's *tail* is heavier", "H2": "the bulk is unchanged"},
    }
    render(verdict, fits, power, tmp_path / "r.html", tmp_path / "r.md", registration=registration)
    text, md = (tmp_path / "r.html").read_text(), (tmp_path / "r.md").read_text()
    assert "<h1>tailgate report: demo</h1>" in text  # nothing registered before the answer
    title = "<b>Title</b>: Does noise fatten &lt;the&gt; tail? # H1 PASS &lt;!--"
    for h in (title, "<b>Hypothesis H1</b>: noisy&#x27;s *tail* is heavier"):
        assert text.index("id='answer'") < text.index(h) < text.index("Pairwise H1 matrix")
    assert "<!--" not in text
    assert md.startswith("# tailgate report: demo\n")
    line = r"**Title**: Does noise fatten &lt;the&gt; tail? \# H1 PASS &lt;!--"
    assert md.index("# Answer") < md.index(line) < md.index("Pairwise H1 matrix")
    assert r"**Hypothesis H1**: noisy's \*tail\* is heavier" in md
    assert "<!--" not in md and "\n# H1" not in md
    # without a registration (tests, old callers): the study name alone
    render(verdict, fits, power, tmp_path / "s.html", tmp_path / "s.md")
    assert "<h1>tailgate report: demo</h1>" in (tmp_path / "s.html").read_text()
