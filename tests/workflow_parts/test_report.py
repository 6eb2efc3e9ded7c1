"""The report renders every table and figure from synthetic stage outputs, self-contained."""

from __future__ import annotations

import base64
import copy
import re
from html.parser import HTMLParser

import numpy as np
import pytest
from scipy import stats
from tailgate.diagnostics import qq_data
from tailgate.report import ReportInputError, render
from tailgate.report.figures import CAPTIONS, write_forest, write_power, write_qq, write_stability
from tailgate.report.model import GATE_ORDER, qkey
from tailgate.report.render import fishing_points, forest_rows

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
        self.refs, self.tags = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href", "srcset", "action", "data") and value is not None:
                self.refs.append(value)


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
    md = out_md.read_text()
    # deviations and amendments come first, then the verdict
    for doc in (text, md):
        assert doc.index("Deviations and amendments") < doc.index("Verdict")
        assert "changed decision rules after data" in doc
        for needle in (
            "Pairwise H1 matrix",
            "Sensitivity of the H1 verdict",
            "Synthetic recovery",
            "Bounded-support diagnosis",
            "POT-GPD fits",
        ):
            assert needle in doc
    # matrix + gate-detail + likelihood-ratio row per gates file
    assert md.count("| clean vs noisy |") == 6
    assert "| clean vs noisy | P2 | P2 | G5 | P2 | P2 | KILL |" in md
    # deviations, amendments, H1, 2 scales x 2 thresholds of fits, 2 probability-vs-logit,
    # 2 x (matrix + gate detail), sensitivity, power, per-condition cards,
    # 2 x (inference for ξ + likelihood-ratio tests)
    assert result.n_tables == 20 == text.count("<caption>")


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
    from tailgate.protocol.verdict import ProtocolVerdict
    from tailgate.report.adapt import gates_file_from_protocol

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
