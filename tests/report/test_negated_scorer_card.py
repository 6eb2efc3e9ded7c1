"""A scorer registered ``worse: lower`` is shown as the severity its numbers are of: the card and
the fits table name the negation instead of printing a log-likelihood's mean with its sign turned.
"""

from __future__ import annotations

from tailgate.report.tables import cards_table, fits_table


def _record(worse: str | None) -> dict:
    transform = {"scale": "identity", "epsilon": 1e-12, "n": 300}
    if worse is not None:
        transform["worse"] = worse
    fit = {"q": 0.9, "xi": -0.2, "xi_ci": [-0.4, 0.0], "ad_p": 0.5, "n_exc": 30, "status": "ok"}
    return {
        "scorer": "perplexity",
        "scale": "identity",
        "condition": "tiny-a",
        "n": 300,
        "mean": 17.178,  # the severity −loglikelihood of scores in [−26.2, −1.2]
        "tvar": 22.5,
        "tvar_level": 0.9,
        "thresholds": [fit],
        "stability": {},
        "qq": {},
        "transform": transform,
    }


def test_a_worse_lower_scorer_card_names_the_negated_severity():
    records = {"tiny-a": _record("lower")}
    card = cards_table("perplexity", "identity", 0.9, records, {})
    assert "severity = −perplexity" in card.title
    assert "worse: lower" in card.note and "mean perplexity of −m" in card.note
    assert card.rows[0][2] == "17.178" or card.rows[0][2].startswith("17.18")
    md = card.markdown()
    assert "severity = −perplexity" in md and "mean perplexity of −m" in md
    fits = fits_table("perplexity", "identity", records, 0.9)
    assert "severity = −perplexity" in fits.title and "worse: lower" in fits.note


def test_a_worse_higher_scorer_card_is_unchanged():
    records = {"tiny-a": _record(None)}
    card = cards_table("perplexity", "identity", 0.9, records, {})
    assert card.title == "Per-condition cards (perplexity, identity scale, q = 0.9)"
    assert card.note == ""
