"""The bulk replicates the audit re-makes the gates from are read as numpy arrays without
pandas (pyarrow's own conversion imports it: 0.4 s of every plain audit), and a column that is
not a column of numbers is refused, naming the file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tailgate.errors import InputError
from tailgate.stages.gates import bulk_replicates

_READ = """
import sys
from tailgate.stages.gates import bulk_replicates
mean, tvar = bulk_replicates(sys.argv[1], "logit")
print("pandas" in sys.modules, mean.tolist(), tvar.tolist())
"""


def _bulk(path: Path, mean: pa.Array, tvar: pa.Array) -> Path:
    pq.write_table(
        pa.table({"replicate": np.arange(len(mean)), "mean_logit": mean, "tvar_logit": tvar}), path
    )
    return path


def test_bulk_replicates_are_read_without_pandas(tmp_path) -> None:
    mean, tvar = np.arange(4.0) / 3, np.arange(4.0) / 7
    path = _bulk(tmp_path / "pilot.parquet", pa.array(mean), pa.array(tvar))
    done = subprocess.run(
        [sys.executable, "-c", _READ, str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[0] == "False", "pandas was imported"
    read = bulk_replicates(path, "logit")
    assert [a.tobytes() for a in read] == [mean.tobytes(), tvar.tobytes()]


def test_a_bulk_column_with_a_null_is_refused(tmp_path) -> None:
    path = _bulk(tmp_path / "pilot.parquet", pa.array([0.1, None]), pa.array([0.2, 0.3]))
    with pytest.raises(InputError, match=r"pilot\.parquet: cannot read bulk replicates"):
        bulk_replicates(path, "logit")
