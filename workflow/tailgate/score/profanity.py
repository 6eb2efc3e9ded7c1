"""The ``profanity`` scorer: alt-profanity-check probabilities of the completion.

A linear SVM over TF-IDF features calibrated to a probability in [0, 1], whose weights ship
inside the package, so it is the offline bounded-probability scorer (the bounded-support
case of App. A of Zhou (2026) applies to it as it does to Detoxify).
"""

from __future__ import annotations

import numpy as np

__all__ = ["profanity_scores"]


def profanity_scores(texts: list[str], *, batch_size: int = 4096) -> np.ndarray:
    """Probability that each text is profane, in input order."""
    from profanity_check import predict_prob

    out = [
        np.asarray(predict_prob(texts[i : i + batch_size]), dtype=np.float64)
        for i in range(0, len(texts), batch_size)
    ]
    return np.concatenate(out) if out else np.empty(0, dtype=np.float64)
