"""Compare a result with its re-derivation by content, not by rendering.

The same statistics written by two environments need not give the same bytes: pyarrow writes its
own version into every Parquet file, two matplotlib or FreeType builds rasterise a figure
differently, and two numpy or scipy builds may round the last bit of a float differently. The
audit therefore compares what a file *says*:

* **tables** (Parquet, CSV) as decoded values: the schema (column names and types; the 32- and
  64-bit offset variants of strings, binaries and lists are one type), the nulls, integers,
  booleans and strings exactly, floats within :data:`ULP_TOLERANCE` units in the last place
  (or :data:`ABS_TOLERANCE` absolutely);
* **JSON documents** (statistics, verdicts, figure content) as decoded values, by the same rules;
* **the report** (``.html``, ``.md``) as text, with every embedded image replaced by the digest of
  what it plots (:func:`report_text`; :mod:`tailgate.report.content`), and each embedded picture
  by its pixels like a figure;
* **pictures** (``.png``, and those embedded in the report) by their pixels: no difference beyond
  the drift measured between matplotlib releases (:mod:`tailgate.audit.pictures`);
* any other file byte for byte.

In the **exact** mode — the environment of the run that made the result is the auditor's
(:mod:`tailgate.audit.environment`) — every file must be the same bytes and every float
the same float; a difference is then decoded to name the value. In the **tolerant** mode (other
versions) a float may differ by at most :data:`ULP_TOLERANCE` ULP, and the largest difference seen
is reported; a picture may differ by no more than that drift, and the largest difference is
reported. Each difference names the file, the value (column and row, or the
path inside a JSON document) and both numbers; the caller adds the versions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tailgate.errors import DamagedFileError
from tailgate.files.safe_read import load_json, read_bytes, read_text, same_bytes
from tailgate.prereg.diff import is_number
from tailgate.runtime.environment import describe, numeric_differences
from tailgate.runtime.provenance import record_path

from .pictures import DRIFT_LEVELS, embedded_pictures, pixel_difference

__all__ = [
    "ABS_TOLERANCE",
    "MODEL_ATOL",
    "MODEL_RTOL",
    "ULP_TOLERANCE",
    "Comparison",
    "compare_files",
    "compare_model_output",
    "compare_tables",
    "compare_values",
    "report_text",
    "ulps",
]

#: Floats made by other library versions may differ by this many units in the last place
#: (relative 2.3e-10 for float64). Measured between numpy 2.4/scipy 1.17/pandas 3.1/pyarrow 26
#: and the lowest versions pyproject.toml allows (numpy 1.26, scipy 1.11, pandas 2.1, pyarrow
#: 14) on a simulated study: generated and scored tables differ by at most 32 ULP, transformed
#: severities by 174, statistics of iterative fits (GPD maximum likelihood, Anderson–Darling
#: p-values, the gates built on them) by up to 114,278 ULP (relative 2.5e-11); every count,
#: string, boolean and verdict the same. A changed value is many orders beyond the tolerance.
ULP_TOLERANCE = 1 << 20
#: below this absolute difference two floats agree whatever their ULP distance: a value that
#: cancels to near zero has few significant bits left, so its ULPs measure nothing
ABS_TOLERANCE = 1e-12
#: Scores and embeddings that a registered model recomputes may differ from the recorded ones by
#: this much relatively (or :data:`MODEL_ATOL` absolutely): float32 model arithmetic rounds in
#: another order with other batch shapes or on another device. Measured on a tiny causal LM on
#: CPU, batch size 4 against the default: per-token losses 1 float32 ULP apart (relative 2e-7);
#: a forged value moves a score by far more.
MODEL_RTOL = 1e-4
MODEL_ATOL = 1e-6
#: how many differing values one comparison names before it stops listing them
_SHOWN = 3
_IMAGE = re.compile(r"(<img [^>]*?)src='data:image/[a-z]+;base64,[A-Za-z0-9+/=]*'")
_DIGEST = re.compile(r"data-content='[0-9a-f]{64}'")


@dataclass
class Comparison:
    """The differences found (each naming a value) and the largest tolerated float difference."""

    differences: list[str] = field(default_factory=list)
    largest_ulps: int = 0
    largest_where: str = ""
    #: the largest smoothed difference (levels of 255) of a picture within the drift
    largest_levels: float = 0.0
    largest_levels_where: str = ""

    @property
    def same(self) -> bool:
        return not self.differences

    def tolerated(self, n: int, where: str) -> None:
        if n > self.largest_ulps:
            self.largest_ulps, self.largest_where = n, where


def _ordered(x: np.ndarray) -> np.ndarray:
    """Unsigned integers in the order of the floats ``x`` (adjacent floats differ by 1)."""
    if x.dtype == np.float32:
        bits, sign = x.view(np.uint32).astype(np.uint64), np.uint64(1 << 31)
    else:
        bits, sign = x.astype(np.float64).view(np.uint64), np.uint64(1 << 63)
    return np.where(bits & sign, ~bits & (sign | (sign - np.uint64(1))), bits | sign)


def ulps(a: Any, b: Any) -> np.ndarray:
    """Units in the last place between ``a`` and ``b`` elementwise (float32 arrays counted in
    float32 units): 0 where equal (``-0.0`` and ``0.0``, two NaNs), the largest uint64 where one
    is NaN or the signs are infinities of different sign."""
    x, y = np.asarray(a), np.asarray(b)
    if not (x.dtype == np.float32 and y.dtype == np.float32):
        x, y = x.astype(np.float64), y.astype(np.float64)
    ox, oy = _ordered(x), _ordered(y)
    out = np.where(ox >= oy, ox - oy, oy - ox)
    nan_x, nan_y = np.isnan(x), np.isnan(y)
    out = np.where(nan_x & nan_y, np.uint64(0), out)
    out = np.where(nan_x ^ nan_y, np.iinfo(np.uint64).max, out)
    return np.where(x == y, np.uint64(0), out)


def _fmt(v: Any) -> str:
    return repr(v) if not isinstance(v, float) else repr(float(v))


def _close(a: float, b: float, exact: bool, where: str, cmp: Comparison) -> bool:
    n = int(ulps(a, b))
    if n == 0:
        return True
    if not exact and (n <= ULP_TOLERANCE or abs(a - b) <= ABS_TOLERANCE):
        cmp.tolerated(n, where)
        return True
    beyond = "" if exact else f", beyond the tolerance of {ULP_TOLERANCE} ULP"
    cmp.differences.append(f"{where}: {_fmt(a)} recorded, {_fmt(b)} reproduced ({n} ULP{beyond})")
    return False


def compare_values(recorded: Any, reproduced: Any, *, exact: bool, where: str = "") -> Comparison:
    """Compare two decoded JSON documents (module docstring); ``where`` prefixes value paths."""
    cmp = Comparison()
    for path, a, b in _walk(recorded, reproduced, where or "$"):
        if len(cmp.differences) >= _SHOWN:
            cmp.differences.append(f"{where or '$'}: further values differ")
            break
        if is_number(a) and is_number(b) and (isinstance(a, float) or isinstance(b, float)):
            _close(float(a), float(b), exact, path, cmp)
        elif a != b or type(a) is not type(b):
            cmp.differences.append(f"{path}: {_fmt(a)} recorded, {_fmt(b)} reproduced")
    return cmp


def _walk(a: Any, b: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    """Pairs of leaves (or of mismatched nodes) of two JSON trees, with their paths."""
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b) and set(a) != set(b):
            only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
            yield path, f"keys {only_a} only here", f"keys {only_b} only there"
            return
        for k in a:
            yield from _walk(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield f"{path} (length)", len(a), len(b)
            return
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _walk(x, y, f"{path}[{i}]")
    else:
        yield path, a, b


_WIDE = {"large_string": "string", "large_binary": "binary", "large_utf8": "string"}


def _type_name(t: Any) -> str:
    name = str(t)
    for wide, narrow in _WIDE.items():
        name = name.replace(wide, narrow)
    return name.replace("large_list", "list")


def _read_table(path: Path) -> Any:
    import pyarrow as pa

    if path.suffix == ".csv":
        import pandas as pd

        return pa.Table.from_pandas(
            pd.read_csv(path, dtype=str, keep_default_na=False), preserve_index=False
        )
    from tailgate.files.parquet import read_parquet

    return read_parquet(path)


def _columns(recorded: Path, reproduced: Path, cmp: Comparison) -> Iterator[tuple[str, Any, Any]]:
    """Each column's name and its two versions, when both tables have one schema and row
    count (else the difference is noted in ``cmp`` and nothing is yielded)."""
    a, b = _read_table(recorded), _read_table(reproduced)
    sa = [(f.name, _type_name(f.type)) for f in a.schema]
    sb = [(f.name, _type_name(f.type)) for f in b.schema]
    if sa != sb:
        cmp.differences.append(f"schema: {sa} recorded, {sb} reproduced")
    elif a.num_rows != b.num_rows:
        cmp.differences.append(f"rows: {a.num_rows} recorded, {b.num_rows} reproduced")
    else:
        for name in a.column_names:
            yield name, a.column(name).combine_chunks(), b.column(name).combine_chunks()


def _other_values(name: str, ca: Any, cb: Any, cmp: Comparison, verb: str) -> None:
    """Compare a column that is not compared as floats value by value, naming the first row."""
    if ca.equals(cb):
        return
    va, vb = ca.to_pylist(), cb.to_pylist()
    bad = [i for i, (x, y) in enumerate(zip(va, vb, strict=True)) if x != y]
    if bad:  # else the same values in another representation (e.g. 64-bit offsets)
        row = bad[0]
        cmp.differences.append(
            f"column '{name}', row {row}: {_fmt(va[row])} recorded, {_fmt(vb[row])} "
            f"{verb}; {len(bad)} row(s) differ"
        )


def _model_values(column: Any) -> np.ndarray:
    """A float column as float64, or a binary column of float32 vectors (embeddings) as a
    matrix of float64."""
    import pyarrow as pa

    if pa.types.is_floating(column.type):
        return column.to_numpy(zero_copy_only=False).astype(np.float64)
    rows = [np.frombuffer(v, dtype="<f4") for v in column.to_pylist()]
    return np.stack(rows).astype(np.float64) if rows else np.zeros((0, 0))


def compare_model_output(recorded: Path, reproduced: Path) -> Comparison:
    """Compare what a registered model computed (scores, per-token losses, judge grades,
    embeddings) with its recomputation: integers, strings and the JSON sidecars exactly, floats
    (and float32 vectors) within :data:`MODEL_RTOL` relatively or :data:`MODEL_ATOL`
    absolutely, since a model's float32 arithmetic rounds differently with the batch shapes
    and the device (operational settings, which the registration leaves free)."""
    import pyarrow as pa

    if recorded.suffix != ".parquet":
        return compare_files(recorded, reproduced, exact=True)
    cmp = Comparison()
    for name, ca, cb in _columns(recorded, reproduced, cmp):
        if not (pa.types.is_floating(ca.type) or name == "embedding"):
            _other_values(name, ca, cb, cmp, "recomputed")
            continue
        try:
            xa, xb = _model_values(ca), _model_values(cb)
        except (ValueError, TypeError) as exc:
            cmp.differences.append(f"column '{name}': cannot be decoded ({exc})")
            continue
        if xa.shape == xb.shape:
            far = ~np.isclose(xa, xb, rtol=MODEL_RTOL, atol=MODEL_ATOL, equal_nan=True)
            bad = np.flatnonzero(far.reshape(len(far), -1).any(axis=1))
        else:  # embeddings of another width
            bad = np.arange(len(xa))
        if bad.size:
            row = int(bad[0])
            cmp.differences.append(
                f"column '{name}', row {row}: {_fmt(xa[row].tolist())} recorded, "
                f"{_fmt(xb[row].tolist())} recomputed, beyond the model tolerance (relative "
                f"{MODEL_RTOL:g}, absolute {MODEL_ATOL:g}); {bad.size} row(s) differ"
            )
    return cmp


def compare_tables(recorded: Path, reproduced: Path, *, exact: bool) -> Comparison:
    """Compare two tables as decoded values (module docstring)."""
    import pyarrow as pa

    cmp = Comparison()
    for name, ca, cb in _columns(recorded, reproduced, cmp):
        na = np.asarray(ca.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        nb = np.asarray(cb.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        if not np.array_equal(na, nb):
            row = int(np.flatnonzero(na != nb)[0])
            cmp.differences.append(f"column '{name}', row {row}: null in one table only")
            continue
        if pa.types.is_floating(ca.type):
            xa = ca.to_numpy(zero_copy_only=False)
            xb = cb.to_numpy(zero_copy_only=False)
            d = np.where(na, np.uint64(0), ulps(xa, xb))
            far = d > 0
            if not exact:
                with np.errstate(invalid="ignore"):
                    gap = np.abs(xa.astype(np.float64) - xb.astype(np.float64))
                far &= (d > ULP_TOLERANCE) & ~(gap <= ABS_TOLERANCE)
            where = f"column '{name}', row "
            if far.any():
                row = int(np.flatnonzero(far)[0])
                _close(float(xa[row]), float(xb[row]), exact, f"{where}{row}", cmp)
                cmp.differences[-1] += f"; {int(far.sum())} row(s) differ"
            elif d.size and d.max() > 0:
                in_ulps = np.where(d <= ULP_TOLERANCE, d, np.uint64(0))
                row = int(np.argmax(in_ulps if in_ulps.max() > 0 else d))
                cmp.tolerated(int(d[row]), f"{where}{row}")
        else:
            _other_values(name, ca, cb, cmp, "reproduced")
    return cmp


def report_text(text: str, *, digests: bool = True) -> str:
    """The report with every embedded image's bytes removed: what stays is its text, its tables
    and, per image, the ``data-content`` digest of what the image plots (without ``digests``
    that too: a re-run under other versions plots floats that differ within the tolerance)."""
    text = _IMAGE.sub(r"\1src='…'", text)
    return text if digests else _DIGEST.sub("data-content='…'", text)


def _first_difference(a: str, b: str) -> str:
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb, strict=False)):
        if x != y:
            n = min(len(x), len(y))
            j = next((k for k in range(n) if x[k] != y[k]), n)
            lo = max(j - 40, 0)
            return f"line {i + 1}: '…{x[lo : j + 40]}…' recorded, '…{y[lo : j + 40]}…' re-derived"
    return f"{len(la)} line(s) recorded, {len(lb)} re-derived"


def compare_report(recorded: Path, rerendered: Path, *, digests: bool = True) -> Comparison:
    """Compare two renderings of the report by text (images by content digest, or not at all
    without ``digests``)."""
    a = report_text(read_text(recorded), digests=digests)
    b = report_text(read_text(rerendered), digests=digests)
    cmp = Comparison()
    if a != b:
        cmp.differences.append(f"text {_first_difference(a, b)}")
    return cmp


def compare_pictures(recorded: bytes, reproduced: bytes, where: str) -> Comparison:
    """Compare two pictures by their pixels, within the drift between matplotlib releases
    (:mod:`tailgate.audit.pictures`); ``where`` names the picture inside its file (empty for a
    PNG file)."""
    cmp = Comparison()
    try:
        diff = pixel_difference(recorded, reproduced)
    except ValueError as exc:
        cmp.differences.append(f"{where}{exc}")
        return cmp
    cmp.largest_levels, cmp.largest_levels_where = diff.largest, where.rstrip(": ")
    if not diff.within:
        cmp.differences.append(f"{where}{diff.describe()}")
    return cmp


def _compare_embedded(recorded: Path, reproduced: Path, cmp: Comparison) -> None:
    """The report's embedded pictures, one by one, by their pixels (tolerant mode)."""
    a = embedded_pictures(read_text(recorded))
    b = embedded_pictures(read_text(reproduced))
    if len(a) != len(b):
        cmp.differences.append(f"{len(a)} embedded picture(s) recorded, {len(b)} re-made")
        return
    for i, (x, y) in enumerate(zip(a, b, strict=True), start=1):
        found = compare_pictures(x, y, f"embedded picture {i}: ")
        cmp.differences += found.differences
        if found.largest_levels > cmp.largest_levels:
            cmp.largest_levels = found.largest_levels
            cmp.largest_levels_where = found.largest_levels_where


def compare_files(
    recorded: Path, reproduced: Path, *, exact: bool, rerun: bool = False
) -> Comparison:
    """Compare a recorded file with its re-derivation by content (module docstring). In the
    exact mode files must also be the same bytes; a PNG is compared only there (what it plots is
    compared through its sidecar). ``rerun``: ``reproduced`` was re-computed from the data, not
    re-rendered from the stored statistics, so in the tolerant mode the digests of plotted floats
    are left out (the floats themselves are compared, in the statistics and the sidecars; the
    report's digests against the stored statistics are the plain audit's)."""
    if same_bytes(recorded, reproduced):
        return Comparison()
    suffix = recorded.suffix
    loose = rerun and not exact
    try:
        if suffix in (".parquet", ".csv"):
            cmp = compare_tables(recorded, reproduced, exact=exact)
        elif suffix == ".json":
            a, b = load_json(recorded), load_json(reproduced)
            if loose and isinstance(a, dict) and isinstance(b, dict):
                a, b = ({k: v for k, v in d.items() if k != "content_sha256"} for d in (a, b))
            cmp = compare_values(a, b, exact=exact)
        elif suffix in (".html", ".md"):
            cmp = compare_report(recorded, reproduced, digests=not loose)
            if suffix == ".html" and not exact:
                _compare_embedded(recorded, reproduced, cmp)
        elif suffix == ".png" and not exact:
            return compare_pictures(read_bytes(recorded), read_bytes(reproduced), "")
        else:
            return Comparison(["the bytes differ"])
    except (OSError, ValueError, TypeError, DamagedFileError) as exc:
        return Comparison([f"cannot be decoded ({type(exc).__name__}: {exc})"])
    if exact and cmp.same:
        what = "embedded images" if suffix == ".html" else "bytes"
        cmp.differences.append(f"same values, different {what} under the same versions")
    return cmp


@dataclass
class Outcome:
    """What :func:`compare_made` found: failures, whether every file was compared in the exact
    mode, and the largest tolerated float and picture differences (and where)."""

    failures: list[str]
    exact: bool
    largest_ulps: int = 0
    largest_where: str = ""
    largest_levels: float = 0.0
    largest_levels_where: str = ""

    @property
    def mode(self) -> str:
        """The comparison made, in words, for the check's detail line."""
        if self.exact:
            return "byte for byte (exact mode: the run's versions are the auditor's)"

        largest = (
            f"; largest float difference {self.largest_ulps} ULP at {self.largest_where}"
            if self.largest_ulps
            else "; every float the same"
        )
        if self.largest_levels_where:
            largest += (
                f"; largest picture difference {self.largest_levels:.0f} levels at "
                f"{self.largest_levels_where}"
            )
        return (
            "by content (tolerant mode: other versions than the run's; tables and statistics as "
            f"values, floats within {ULP_TOLERANCE} ULP, the report by its text and what its "
            f"figures plot, pictures by their pixels, none beyond the {DRIFT_LEVELS:.0f} levels "
            f"of 255 other matplotlib releases make differ after smoothing{largest})"
        )


def _recorded_versions(rd: Path, rel: str) -> dict[str, str]:
    try:
        versions = load_json(record_path(rd / rel, rd)).get("versions")
    except (OSError, ValueError, AttributeError):
        return {}
    return {str(k): str(v) for k, v in versions.items()} if isinstance(versions, dict) else {}


def compare_made(
    rd: Path,
    made: list[tuple[str, Path]],
    verb: str,
    *,
    rerun: bool = False,
    exact: Callable[[str], bool] | None = None,
    missing: Callable[[str], str] | None = None,
) -> Outcome:
    """Compare each recorded ``rd / rel`` with its re-derivation ``path``; each failure is
    ``"<file>: <verb>: <what differs> (<versions>)"``. ``exact(rel)`` says whether a file is
    compared in the exact mode (the plain audit: the mode of the run that made it,
    :mod:`tailgate.audit.environment`); without it, whether its own record names the auditor's
    versions. ``missing(rel)``: why a missing file fails (default: the workflow writes it)."""
    out = Outcome([], exact=True)
    for rel, path in made:
        mine = rd / rel
        if not mine.is_file():
            why = missing(rel) if missing is not None else "the workflow writes it"
            out.failures.append(f"{mine}: missing ({why})")
            continue
        diffs = numeric_differences(_recorded_versions(rd, rel))
        same = exact(rel) if exact is not None else not diffs
        out.exact = out.exact and same
        cmp = compare_files(mine, path, exact=same, rerun=rerun)
        if cmp.largest_ulps > out.largest_ulps:
            out.largest_ulps, out.largest_where = cmp.largest_ulps, f"{rel} {cmp.largest_where}"
        if cmp.largest_levels >= out.largest_levels:
            if not same and rel.endswith((".png", ".html")):
                out.largest_levels = cmp.largest_levels
                out.largest_levels_where = f"{rel} {cmp.largest_levels_where}".rstrip()
        if not cmp.same:
            said = f"recorded → here: {describe(diffs)}" if diffs else "the same versions"
            if not same and not diffs:
                said = "other versions than here in the run that made it"
            out.failures.append(f"{mine}: {verb}: {'; '.join(cmp.differences)} ({said})")
    return out
