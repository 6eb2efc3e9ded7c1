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

from .statistics import *  # noqa: F403 (the statistics are the package's public face)
from .statistics import __all__  # noqa: F401
