"""``tailgate audit``: re-verify a results folder, and with ``--reproduce`` re-run it
(:mod:`tailgate.audit`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tailgate.cli.base import Verbs, verb
from tailgate.errors import EXIT_AUDIT_FAILED, EXIT_INVALID, EXIT_OK
from tailgate.files.safe_read import is_regular
from tailgate.plans.layout import Layout

if TYPE_CHECKING:
    from tailgate.audit.findings import AuditReport


def add_audit(sub: Verbs) -> None:
    """``tailgate audit RESULTS_DIR``."""
    p = verb(
        sub,
        "audit",
        "re-verify a results directory (exit 4 if anything fails)",
        "Check RESULTS_DIR (no links; every file has a record and every record a file, with "
        "its hash), the lock's chain, that every committed version of the lock on any branch "
        "extends the one before and that entry 0 was committed before the first artifact (git; "
        "--tsa-cert: its trusted timestamp), the pins of the "
        "registration's input files, that one code made every artifact, the realised design and "
        "its deviations, every recorded verdict (re-derived from stored statistics) and the "
        "report (re-rendered). --reproduce also re-runs every derived stage from the data with "
        "your code, up to the verdict, and compares every file (the report's are the report "
        "check's). Exit 0 if all checks pass, 4 otherwise.\n\n"
        "example: tailgate audit results/mystudy --expected-hash <published entry hash>",
        _cmd_audit,
    )
    p.add_argument(
        "results_dir",
        metavar="RESULTS_DIR",
        help="results/<study>, or a review bundle (tailgate bundle): unpacked, its history "
        "cloned and its results placed in a scratch folder of its own, then audited there; the "
        "output ends with the bundle's SHA-256 to quote",
    )
    p.add_argument(
        "--expected-hash",
        metavar="H",
        default=None,
        help="a receipt's hash published elsewhere (entry_hash or canonical_hash of any chain "
        "entry): that entry and every one before it must be in the chain",
    )
    p.add_argument(
        "--expected-run",
        metavar="RECEIPT",
        action="append",
        default=None,
        help="a run receipt published with the results (printed when the run ended: the SHA-256 "
        "of its ledger line): the ledger must still hold that run; repeat for several runs",
    )
    p.add_argument(
        "--tsa-cert",
        metavar="FILE",
        default=None,
        help="the time-stamping authority's root certificate (PEM or DER; intermediates may "
        "follow in the same file): verify the lock's timestamp tokens offline and report the "
        "registration time as proven",
    )
    p.add_argument(
        "--no-git",
        action="store_true",
        help="audit without git (the study is not in a repository): timing is then reported as "
        "unverified",
    )
    p.add_argument(
        "--reproduce",
        action="store_true",
        help="re-run every derived stage from the study's data with this tailgate in a scratch "
        "folder and compare every file: simulated and imported data made again from the "
        "registration; for the transformers backend, scores, per-token losses, judge grades and "
        "embeddings recomputed from the recorded generations with the registered models (one "
        "whose model cannot be loaded here is taken as recorded and listed as unproven)",
    )
    p.add_argument(
        "--generate",
        action="store_true",
        help="with --reproduce, re-generate a transformers study's prompts and generations too "
        "(seeded per row: the same bytes on the same kind of device and versions) instead of "
        "starting from the recorded ones",
    )
    p.add_argument(
        "--cores", type=int, default=2, metavar="N", help="cores for --reproduce (default 2)"
    )
    p.add_argument(
        "--keep", metavar="DIR", default=None, help="keep the --reproduce project in DIR"
    )
    p.add_argument(
        "--report",
        metavar="DIR",
        default=None,
        help="write the report this audit re-makes from the audited statistics (report.html, "
        "report.md, figures/) to DIR, outside the results folder (default: "
        "tailgate-audit-<uid>/<study>-<hash of the results path>/ in the system's temporary "
        "folder, replaced by each audit); the output names the file to read",
    )
    p.add_argument("--json", action="store_true", help="print the audit as JSON")
    p.add_argument(
        "--prereg",
        metavar="PREREG",
        default=None,
        help="the pre-registration (default: preregistrations/<study>.yaml beside results/)",
    )


def _cmd_audit(args: argparse.Namespace) -> int:
    from tailgate.audit.findings import AuditReport

    if args.generate and not args.reproduce:
        print(
            "tailgate audit: --generate re-generates data for --reproduce only; add "
            "--reproduce (or leave --generate out).",
            file=sys.stderr,
        )
        return EXIT_INVALID
    made = _report_folder(args.results_dir, args.report)
    if made is None:
        return EXIT_INVALID
    # the default folder is written whole elsewhere and put in place when the audit ends, so
    # that audits run side by side never write into (or remove) one another's report
    stage = None if args.report is not None else Path(_staged(made))
    report_file = Layout(made).file("report")
    before = _stamp(report_file) if stage is None else None
    options = {
        "report_to": stage or made,
        "prereg": args.prereg,
        "expected_hash": args.expected_hash,
        "expected_runs": args.expected_run or (),
        "no_git": args.no_git,
        "tsa_cert": args.tsa_cert,
    }
    bundle = None
    if is_regular(args.results_dir):  # a review bundle: audited in a scratch folder of its own
        from tailgate.audit.bundle_open import open_bundle  # not for a folder: 0.07 s

        with tempfile.TemporaryDirectory(prefix="tailgate-review-") as scratch:
            bundle = open_bundle(args.results_dir, scratch)
            report = AuditReport(Path(args.results_dir), [bundle.check])
            if bundle.results is not None:
                receipts = [*(args.expected_run or ()), *bundle.expected_runs]
                options.update(
                    expected_runs=receipts, prereg=None, no_git=False,
                    expected_hash=args.expected_hash or bundle.expected_hash,
                )  # fmt: skip
                found = _audited(bundle.results, args, options)
                report = replace(found, checks=[bundle.check, *found.checks])
    else:
        report = _audited(args.results_dir, args, options)
    written = _stamp(Layout(stage or made).file("report")) not in (None, before)  # this audit's
    if stage is not None:
        _publish(stage, made if written else None)
    read = f"read the report this audit made: {report_file}"
    quote = {"bundle_sha256": bundle.sha256} if bundle is not None else {}
    if args.json:
        print(
            json.dumps(
                {
                    **report.to_json(),
                    **quote,
                    "report": str(report_file) if written else None,
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        for line in report.lines():
            print(line)
        print(read if written else "no report re-made (no outcome yet, or it cannot be re-made)")
        if bundle is not None and bundle.sha256:
            print(f"audited bundle sha256:{bundle.sha256}")
    return EXIT_OK if report.ok else EXIT_AUDIT_FAILED


def _audited(results: str | Path, args: argparse.Namespace, options: dict[str, Any]) -> AuditReport:
    """The audit of ``results``, with ``--reproduce`` the re-run's check added."""
    from tailgate.audit import audit

    if not args.reproduce:
        return audit(results, **options)
    from tailgate.audit.reproduce import reproduce, with_reproduction
    from tailgate.forked import Forked

    # the plain audit reads the stored files only: it runs beside the re-run, which writes
    # nothing but its scratch project
    with Forked(lambda: audit(results, **options)) as plain:
        check, unproven = reproduce(
            results, cores=args.cores, keep=args.keep, generate=args.generate
        )
        return with_reproduction(plain.result(), check, unproven)


def _report_folder(results: str, report: str | None) -> Path | None:
    """Where the re-made report goes: ``report``, refused inside the results folder (its files
    would be files without a record), or by default :func:`_default_report_folder`; None, with
    the reason printed, when it cannot be used."""
    real = os.path.realpath(results)
    dest = Path(report) if report is not None else _default_report_folder(real)
    inside = Path(os.path.realpath(dest)).is_relative_to(real)
    if inside or (dest.exists() and not dest.is_dir()):
        why = "is inside the results folder" if inside else "exists and is not a folder"
        print(
            f"tailgate audit: --report {dest} {why}; name a folder outside {results} "
            "(it is made if missing).",
            file=sys.stderr,
        )
        return None
    return dest


def _default_report_folder(results: str) -> Path:
    """``<temporary folder>/tailgate-audit-<user id>/<study>-<digest of the results folder's
    path>``: the auditor's own folder (made private, never a link), outside anything the
    audited repository holds; one per results folder, replaced by each audit, for the
    :data:`_KEPT_REPORTS` results folders audited last."""
    mine = Path(tempfile.gettempdir()) / f"tailgate-audit-{os.getuid()}"
    mine.mkdir(mode=0o700, exist_ok=True)
    st = os.lstat(mine)
    if not mine.is_dir() or mine.is_symlink() or st.st_uid != os.getuid():
        mine = Path(tempfile.mkdtemp(prefix="tailgate-audit-"))  # someone else's: a new one
    key = hashlib.sha256(results.encode()).hexdigest()[:12]
    dest = mine / f"{Path(results).name}-{key}"
    older = sorted(mine.iterdir(), key=_mtime, reverse=True)
    stale = time.time() - _STALE_SECONDS
    for old in older[_KEPT_REPORTS:]:  # the oldest go, never one an audit may still write
        if _mtime(old) < stale:
            _remove(old)
    return dest


#: re-made reports the default folder keeps (those of the most recently audited results)
_KEPT_REPORTS = 16
#: a folder untouched this long is no audit's work in progress
_STALE_SECONDS = 6 * 3600


def _mtime(path: Path) -> float:
    try:
        return path.lstat().st_mtime
    except OSError:  # removed meanwhile by an audit beside this one
        return 0.0


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path, ignore_errors=True)


def _staged(dest: Path) -> str:
    """A new folder beside ``dest`` that this audit alone writes its report into."""
    return tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent)


def _publish(stage: Path, dest: Path | None) -> None:
    """Put the report written in ``stage`` at ``dest`` (replacing what is there, by renames), or
    remove ``stage`` where this audit wrote none (``dest`` None)."""
    if dest is None:
        _remove(stage)
        return
    old = Path(_staged(dest))
    for attempt in range(3):  # an audit of the same folder beside this one may publish too
        try:
            os.replace(dest, old / str(attempt))  # an earlier report, out of the way
        except FileNotFoundError:
            pass
        try:
            os.replace(stage, dest)
            break
        except OSError:
            continue
    _remove(old)
    _remove(stage)


def _stamp(path: Path) -> tuple[int, int] | None:
    """The file's inode and modification time (None where there is none)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns
