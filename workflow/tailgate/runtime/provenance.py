"""One provenance record per artifact (DESIGN: "Provenance").

Every rule writes its output atomically (:mod:`tailgate.files.atomic`), then calls :func:`record`,
which writes ``results/<study>/provenance/<path relative to results/<study>, "/" → "__">.json``
(the registered plan's files', ``provenance/registered/<path inside registered/>``) holding
the artifact's path, size and SHA-256, the pre-registration's canonical hash and the lock entry
that was the chain head (re-derived from the study object in use, :func:`verify_study`), the
hashes of its inputs, the seed, the environment (Python, platform and package versions,
:mod:`tailgate.runtime.environment`), the digest of the code that made it
(:func:`tailgate.code.code_digest`) with the project's git commit and dirty state, and the UTC time.
One file per artifact means parallel cluster jobs never write the same file. For tables (Parquet,
CSV) the record adds a digest over rows in blocks, so that ``tailgate audit`` can say which rows
changed. Whether a study *has data* is not read from these records (they are the researcher's
files): see :mod:`tailgate.prereg.evidence`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from tailgate.code import code_digest
from tailgate.errors import RefusalError
from tailgate.files.atomic import write_json
from tailgate.files.safe_read import load_json, require_regular
from tailgate.prereg.canonical import sha256_file
from tailgate.prereg.committed import run_mode
from tailgate.prereg.gitinfo import head_state
from tailgate.prereg.guard import verify_study
from tailgate.prereg.lock import utc_now
from tailgate.runtime.environment import current as current_environment

__all__ = [
    "BRANCH_DIR",
    "PROVENANCE_DIR",
    "ROW_BLOCK",
    "ProvenanceRecord",
    "RowsDigest",
    "iter_records",
    "record",
    "record_files",
    "record_path",
    "rows_digest",
]

PROVENANCE_DIR = "provenance"
#: the folder of the registered plan's own artifacts under a results folder; their records are
#: kept apart, in ``provenance/registered/`` (:func:`record_path`)
BRANCH_DIR = "registered"
#: the largest provenance record read (bytes; a record of a large table is about 1 MB)
RECORD_LIMIT = 64 * 1024 * 1024
ROW_BLOCK = 64
Kind = Literal["data", "derived", "report"]
_TABULAR = {".parquet", ".csv"}


@dataclass(frozen=True)
class RowsDigest:
    """Per-block SHA-256 of row hashes: ``blocks[i]`` covers rows ``i*block .. (i+1)*block-1``."""

    rows: int
    columns: list[str]
    block: int
    blocks: list[str]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def changed_rows(self, other: RowsDigest) -> str:
        """Where ``other`` (the file now) differs from this recorded digest, in words."""
        if self.columns != other.columns:
            return f"columns changed: {self.columns} → {other.columns}"
        if self.rows != other.rows:
            return f"row count changed: {self.rows} → {other.rows}"
        bad = [i for i, (a, b) in enumerate(zip(self.blocks, other.blocks, strict=True)) if a != b]
        if not bad:
            return "same rows, different bytes (file rewritten without changing its rows)"
        spans = ", ".join(
            f"{i * self.block}–{min((i + 1) * self.block, self.rows) - 1}" for i in bad[:5]
        )
        more = f" and {len(bad) - 5} more blocks" if len(bad) > 5 else ""
        return f"changed rows within {spans}{more} (0-based row numbers)"


@dataclass(frozen=True)
class ProvenanceRecord:
    """A record as written (see module docstring for the fields)."""

    record_file: Path
    content: dict[str, Any]

    @property
    def path(self) -> str:
        return str(self.content["path"])

    @property
    def kind(self) -> str:
        return str(self.content["kind"])

    @property
    def sha256(self) -> str:
        return str(self.content["sha256"])


def record_path(artifact_path: str | Path, results_dir: str | Path) -> Path:
    """Where the record of ``artifact_path`` lives: ``provenance/`` and the file's path relative
    to ``results_dir`` with ``/`` as ``__``; a file of the registered plan's folder, the same in
    ``provenance/registered/`` (one path pattern with a plan prefix spells both:
    ``provenance/{plan}<path>``)."""
    rel = _relative(artifact_path, results_dir)
    head, _, rest = rel.partition("/")
    plan = f"{BRANCH_DIR}/" if head == BRANCH_DIR and rest else ""
    name = (rest if plan else rel).replace("/", "__") + ".json"
    return Path(results_dir) / PROVENANCE_DIR / (plan + name)


def _relative(artifact_path: str | Path, results_dir: str | Path) -> str:
    a = Path(os.path.abspath(artifact_path))
    r = Path(os.path.abspath(results_dir))
    try:
        return a.relative_to(r).as_posix()
    except ValueError:
        raise ValueError(
            f"artifact {artifact_path} is not inside results directory {results_dir}"
        ) from None


def record_files(base: Path) -> list[Path]:
    """The record files of the provenance folder ``base``: the main tree's, then the registered
    plan's (none where the folder is absent)."""
    return [
        f
        for folder in (base, base / BRANCH_DIR)
        if folder.is_dir()
        for f in sorted(folder.glob("*.json"))
    ]


def rows_digest(path: str | Path, block: int = ROW_BLOCK) -> RowsDigest:
    """Row-block digest of a Parquet or CSV table (CSV cells are read as text).

    Rows are hashed with ``pandas.util.hash_pandas_object`` (vectorised, 64-bit per row, index
    excluded); each block of ``block`` row hashes is SHA-256'd.
    """
    import pandas as pd

    from tailgate.files.parquet import read_parquet  # pyarrow: start-up only where a table is read

    p = Path(path)
    require_regular(p)
    if p.suffix == ".parquet":
        df = read_parquet(p).to_pandas()  # its footer checked first (tailgate.files.parquet)
    elif p.suffix == ".csv":
        df = pd.read_csv(p, dtype=str, keep_default_na=False)
    else:
        raise ValueError(f"rows_digest reads .parquet or .csv, not {p.name}")
    hashes = pd.util.hash_pandas_object(df, index=False).to_numpy(dtype="<u8")
    blocks = [
        hashlib.sha256(hashes[i : i + block].tobytes()).hexdigest()
        for i in range(0, len(hashes), block)
    ]
    return RowsDigest(
        rows=len(df), columns=[str(c) for c in df.columns], block=block, blocks=blocks
    )


def _input(path: str | Path, results_dir: str | Path) -> dict[str, Any]:
    try:
        artifact: str | None = _relative(path, results_dir)
    except ValueError:
        artifact = None
    return {"path": Path(path).as_posix(), "artifact": artifact, "sha256": sha256_file(path)}


_PROJECT_GIT: dict[str, Any] = {}


def _project_git(results_dir: str | Path) -> dict[str, Any] | None:
    """Commit and dirty state of the project holding ``results_dir`` (once a process)."""
    key = os.path.abspath(results_dir)
    if key not in _PROJECT_GIT:
        _PROJECT_GIT[key] = head_state(Path(key).parent)
    return _PROJECT_GIT[key]


def _refuse_link(artifact: Path, results_dir: str | Path) -> None:
    rd = Path(os.path.abspath(results_dir))
    p = Path(os.path.abspath(artifact))
    while p != rd and rd in p.parents:
        if p.is_symlink():
            raise RefusalError(
                f"{artifact}: refusing to record an artifact reached through the link {p}. "
                "Fix: replace the link by real files inside the results folder."
            )
        p = p.parent
    if rd.is_symlink():
        raise RefusalError(
            f"{rd}: refusing to record into a results folder that is a link. Fix: make "
            f"{rd} a real folder."
        )


def record(
    artifact_path: str | Path,
    *,
    results_dir: str | Path,
    study: Any,
    inputs: Iterable[str | Path] = (),
    seed: int | None = None,
    kind: Kind = "derived",
    extra: dict[str, Any] | None = None,
    plan: dict[str, Any] | None = None,
) -> ProvenanceRecord:
    """Write the provenance record of an artifact that was just written; return it.

    ``study`` is the loaded, frozen :class:`tailgate.prereg.Study`; ``inputs`` are the files the
    artifact was computed from (their SHA-256 is recorded now). ``kind`` is ``"data"`` for
    generated or imported data (generations, scores), ``"derived"`` for statistics, ``"report"``
    for tables and figures meant for readers. ``plan``: which plan the artifact was computed
    under (:func:`tailgate.plans.entries.plan_of`: the chain head, or the registered plan of
    entry 0 beside an amendment); absent, the chain head's.
    """
    if kind not in ("data", "derived", "report"):
        raise ValueError(f"kind must be 'data', 'derived' or 'report', got {kind!r}")
    from tailgate.runtime.fingerprint import fingerprint

    artifact = Path(artifact_path)
    rel = _relative(artifact, results_dir)
    _refuse_link(artifact, results_dir)
    lock_head = verify_study(study)
    content: dict[str, Any] = {
        "record_version": 2,
        "path": rel,
        "kind": kind,
        "bytes": artifact.stat().st_size,
        "sha256": sha256_file(artifact),
        "study": study.name,
        "prereg": {
            "path": Path(study.path).as_posix(),
            "canonical_hash": study.canonical_hash,
            "lock_head": lock_head,
        },
        # the plan the artifact was computed under: the study above (the chain head), or,
        # beside an amendment, the plan entry 0 registered (tailgate.plans.entries)
        "plan": dict(plan)
        if plan is not None
        else {"name": "head", **lock_head, "canonical_hash": study.canonical_hash},
        # confirmatory (the registration was committed) or exploratory (tailgate.prereg.committed)
        "mode": run_mode(),
        "inputs": [_input(i, results_dir) for i in inputs],
        "seed": seed,
        "versions": current_environment(),
        "code": {"digest": code_digest(), "git": _project_git(results_dir)},
        "runtime": fingerprint(),
        "created": utc_now(),
        "extra": extra or {},
    }
    if artifact.suffix in _TABULAR:
        content["rows_digest"] = rows_digest(artifact).to_json()
    out = record_path(artifact, results_dir)
    write_json(out, content)
    return ProvenanceRecord(out, content)


def iter_records(results_dir: str | Path) -> list[ProvenanceRecord]:
    """All records under ``results_dir/provenance`` and its ``registered/`` folder (unreadable
    ones raise ``ValueError``; a damaged one, a pipe or one nested too deep,
    :class:`~tailgate.errors.DamagedFileError`: :mod:`tailgate.files.safe_read`)."""
    base = Path(results_dir) / PROVENANCE_DIR
    out: list[ProvenanceRecord] = []
    for f in record_files(base):
        try:
            content = load_json(f, limit=RECORD_LIMIT)
        except OSError as exc:
            raise ValueError(f"{f}: unreadable provenance record ({exc})") from None
        if not isinstance(content, dict):
            raise ValueError(
                f"{f}: damaged provenance record (a JSON {type(content).__name__}, not an object)"
            )
        out.append(ProvenanceRecord(f, content))
    return out
