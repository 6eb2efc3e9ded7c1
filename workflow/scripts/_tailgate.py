"""Put this repository's ``tailgate`` package first on ``sys.path``.

Every rule script imports this module first. Snakemake puts this folder on the path of a
script job; in a job's own conda environment (``envs/*.yaml``: tailgate's dependencies, see
``--software-deployment-method conda``) the package then comes from the repository the
Snakefile belongs to — the same code, and code digest, as the host's editable install.
"""

import signal
import sys
from pathlib import Path


def _stopped_at_start_up(_signum: int, _frame: object) -> None:
    """Ctrl-C while the job starts (imports, reading its rule's parameters): nothing is
    written yet, so the job ends at once with the interrupt's status and without a traceback
    (the run prints its one line). The stage's own handling takes over when it begins
    (tailgate.stages.rule.run)."""
    raise SystemExit(130)


signal.signal(signal.SIGINT, _stopped_at_start_up)

_WORKFLOW = str(Path(__file__).resolve().parents[1])
if _WORKFLOW not in sys.path:
    sys.path.insert(0, _WORKFLOW)

# A local run's jobs are forked from the run's warm server (tailgate/runtime/forkserver.py): this
# call does not return there; elsewhere it returns at once and the job runs in this process.
from tailgate.runtime.forkserver import hand_over  # noqa: E402

hand_over()
