"""The audit: ``tailgate audit`` re-verifies a study's results folder (DESIGN: "Provenance").

The audit is the top layer of the package below the command line: it reads the
pre-registration contract (:mod:`tailgate.prereg`) and re-runs the statistics
(:mod:`tailgate.protocol`, :mod:`tailgate.analyses`), the stages (:mod:`tailgate.stages`) and
the report (:mod:`tailgate.report`); nothing below imports it. Its modules, one job each:
:mod:`~tailgate.audit.plain` (the plain audit, its checks as one list),
:mod:`~tailgate.audit.findings`, :mod:`~tailgate.audit.registration`,
:mod:`~tailgate.audit.artifacts`, :mod:`~tailgate.audit.runs`,
:mod:`~tailgate.audit.realised`, :mod:`~tailgate.audit.verdicts` (with
:mod:`~tailgate.audit.gates` and :mod:`~tailgate.audit.criteria`),
:mod:`~tailgate.audit.outcome` and :mod:`~tailgate.audit.report` (the outcome re-made),
:mod:`~tailgate.audit.compare` and :mod:`~tailgate.audit.pictures` (how files are compared),
:mod:`~tailgate.audit.environment` (the mode each file is compared in),
:mod:`~tailgate.audit.reproduce`, and :mod:`~tailgate.audit.bundle_write` and
:mod:`~tailgate.audit.bundle_open` (the review bundle: one archive a reviewer audits).

**The audit executes nothing the audited repository names.** The repository is hostile input:
git reads it through a private git folder of the auditor's, with none of its configuration,
attributes, hooks, replace refs or grafts (:mod:`tailgate.prereg.gitinfo`; replace refs and
grafts fail the git check, named), and whether a file is as committed is decided from its bytes;
every reader bounds the work and memory a file can cost (:mod:`tailgate.files.safe_read`); the
registered free text is shown escaped; ``--reproduce`` runs the auditor's own code in an isolated
interpreter (no folder of the project on the import path) with fresh caches and matplotlib's
defaults; and the report the reviewer should read is the one the audit re-made and wrote
(``--report``), not the stored one.

**The rule of the plain audit**: what is downstream of the stored statistics is re-made, never
read. The stored statistics — the fits, the bulk bootstrap replicates, the analyses'
statistics, the registered-plan branch's documents — are taken as recorded (checked against
their records, their realised design and, for gates and criteria, by re-deriving each outcome);
everything made from them is made again from them and the lock with the rules' own stage code
and compared *whole* with the stored file:

=====================================  =========================================================
re-made                                from
=====================================  =========================================================
``gates/<scorer>/<scale>.json``        the fits and bulk replicates
                                       (:func:`tailgate.stages.gates.gates_document`)
``sensitivity/<scorer>/<scale>.json``  the re-made gates
``verdict.json``, every value          the re-made gates and sensitivity, the fits, the analyses'
                                       statistics, the generation shards' row counts, the lock
                                       and the registered-plan branch
                                       (:func:`tailgate.stages.verdict.verdict_document`)
the run summary                        the re-made verdict: the answer and H1 verdicts of the
                                       ledger's last successful run
``report.html``, ``report.md``,        the re-made verdict and the stored statistics
``figures/*.png`` and sidecars         (:func:`tailgate.report.stage.render_report`)
=====================================  =========================================================

A file one of these rules makes that is missing fails, naming the rule, once the study has an
outcome (a verdict, a report or a successful run). Re-fitting, re-scoring and re-generating the
stored statistics is ``--reproduce``'s job, and the audit's output says so once.

**How files are compared** (:mod:`tailgate.audit.compare`). The mode is decided once per run,
from the run ledger (:mod:`tailgate.audit.environment`): each run's line (hash-chained) records
the environments its jobs ran in, a record whose versions are not its run's fails, and a file is
compared in the **exact** mode — the same bytes, pictures included — when the run that made it
ran in the auditor's versions of every package that can change a number or a pixel; else in the
**tolerant** mode: JSON documents and tables as values (floats within
:data:`~tailgate.audit.compare.ULP_TOLERANCE` units in the last place), the report by its text
and the digests of what its figures plot, and every picture by its pixels: no pixel beyond the
drift measured between the allowed matplotlib releases (:mod:`tailgate.audit.pictures`). The
environment line says "tolerant" whenever any file was compared tolerantly.

The audit checks, and reports each check by name (any failure: exit 4):

1. **results folder** — it is ``<project>/results/<study>``, a real folder, with no link inside;
2. **lock chain** — entry hashes, links, recorded length and head;
3. **pre-registration** — the file and the input files it pins against the chain head, and
   optionally one published hash (``expected_hash``: any entry's ``entry_hash`` or
   ``canonical_hash``; that entry and every one before it are checked);
4. **git** (skipped only with ``no_git``, and then timing is reported as unverified), read as a
   skeptical reviewer (:mod:`tailgate.prereg.gitreview`) — no links at the registration, no
   shallow clone, the pre-registration and lock committed as they are (compared by blob hash);
   every committed version of the lock on any branch extends the one before (append-only);
   every entry is in some commit; the commit that first holds entry 0 predates the first data
   artifact; an amendment committed or made after data says so (``data_existed``). Commit dates
   are the committer's; ``tsa_cert`` verifies trusted timestamps (:mod:`tailgate.prereg.timestamp`);
5. **files and records** — every file has a record and every record a file, with the recorded
   SHA-256 (tables: which rows changed); every other file fails, except the rules' ``*.log``
   files under ``logs/`` (anything else there fails too);
6. **inputs** — inputs recorded inside the folder still have the recorded hashes; pinned input
   files were the pinned ones;
7. **chain head at production** — each record's lock entry existed and was the head at the time;
8. **code** — every record of the study was made by the same code (digest of the tailgate
   package and workflow); a digest other than the auditor's is a note; **runtime** — no record
   was made with an import hook whose content is not what a packaging tool writes
   (:mod:`tailgate.runtime.startup`), compiled code that is not its source, a tailgate module
   from elsewhere (:mod:`tailgate.runtime.fingerprint`), or an interpreter whose start-up state ran
   code: a variable that makes Python import or run code, a warning option that imports a
   module, an import hook or a module that is neither the standard library, the project's nor
   an installed distribution's (:mod:`tailgate.runtime.interpreter`);
9. **realised design** — rows, exceedances and bootstrap sizes behind the statistics, and the
   deviations ``verdict.json`` must list (:mod:`tailgate.prereg.deviations`);
10. **verdicts** — every recorded outcome re-derived by the checks of
    :data:`tailgate.audit.verdicts.VERDICT_CHECKS` (the protocol's gates and H1, the registered
    plan after an amendment, and each analysis);
11. **outcome** — the gates, sensitivity, ``verdict.json`` and the run summary re-made and
    compared whole (above);
12. **report** — ``report.html``, ``report.md``, the figures and their sidecars re-rendered from
    the re-made verdict and compared whole (above).

With ``expected_runs``, **published runs** — each run receipt printed at the end of a run (the
SHA-256 of its ledger line) is still in the ledger (:mod:`tailgate.audit.receipts`).

Every file is read as a possibly hostile one (:mod:`tailgate.files.safe_read`: regular files only,
opened without blocking, bounded in size and JSON nesting); a file that cannot be read is a
failed check naming it, never a wait or an internal error.

Before them, **environment**: the run's environment against the auditor's, the mode the files
were compared in, and each record whose versions are not its run's (a failure); a version
difference alone is a note.

``tailgate audit --reproduce`` (:mod:`tailgate.audit.reproduce`) goes further: it re-runs every
derived stage from the data with the auditor's code and compares every file (a transformers
study's scores, per-token losses, judge grades and embeddings recomputed from its generations
with the registered models); what it could not recompute here is listed in
:attr:`tailgate.audit.findings.AuditReport.cannot_prove`.
"""

from tailgate.audit.findings import CANNOT_PROVE, AuditReport, Check
from tailgate.audit.plain import audit

__all__ = ["CANNOT_PROVE", "AuditReport", "Check", "audit"]
