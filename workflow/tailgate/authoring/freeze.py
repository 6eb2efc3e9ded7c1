"""``freeze`` writes a study's lock; ``amend`` appends to its chain (DESIGN: "Lock", "Amendments").

Freeze refuses a design whose planned prompts fall below the Eq. 2 prompt count of Zhou (2026),
or at which H1 cannot PASS (G3 fails at every threshold), unless the pre-registration records an
``accepted_power`` that the simulated power of the registered procedure supports (the rate at
1.5 × Δfloor less two Monte Carlo s.e.; :func:`tailgate.protocol.design.with_procedure_power`,
deterministic from the study seed); and what would fail after the freeze
(:mod:`tailgate.authoring.runnable`).

A lock is append-only. ``freeze`` never replaces a lock that was ever committed (the way forward
is ``amend``), never registers a study once data exists for it, and replaces an uncommitted lock
only while no data exists. Whether data exists is read from evidence the caller cannot steer
(:mod:`tailgate.prereg.evidence`): there is no option that names another results folder. Both
verbs record the pins of the files the registration names (:mod:`tailgate.prereg.pins`) and
return a one-line receipt to publish; ``tag=True`` commits the pre-registration and its lock and
creates the annotated git tag ``prereg/<study>/<seq>`` holding the receipt.

A published tag is what a reviewer clones, so it also holds the pinned input files (the imported
data, a local prompt set, checkpoints) up to ``data_limit`` bytes each (default
:data:`DATA_LIMIT`); a larger one, or one outside the repository, is named instead in a data
manifest ``<stem>.data.json`` committed beside the lock (path, SHA-256, size, rows per condition),
and ``tailgate verify`` in the clone says which file to obtain and where to place it.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tailgate.authoring.importcheck import ceiling_refusal, import_rows, lattice_refusal
from tailgate.authoring.runnable import runnable_problems
from tailgate.errors import InputError, PreregError, RefusalError
from tailgate.files.atomic import write_text
from tailgate.plans.registration import load
from tailgate.prereg.diff import Change, format_changes
from tailgate.prereg.evidence import data_evidence
from tailgate.prereg.gitinfo import head_state, repo_root
from tailgate.prereg.guard import check_frozen, refusal_message
from tailgate.prereg.history import lock_history
from tailgate.prereg.lock import (
    Lock,
    LockIntegrityError,
    amendment_changes,
    make_entry,
    new_lock,
    write_lock,
)
from tailgate.prereg.pins import manifest_path, pin_changes, pins_of, project_root
from tailgate.prereg.study import Study, lock_path_for, results_dir_for
from tailgate.protocol.design import (
    WHAT_A_SMALL_STUDY_LEARNS,
    Z_TEST,
    Design,
    cannot_pass,
    check_false_pass,
    derived_design,
    operating_characteristics,
    power_line,
    with_procedure_power,
)
from tailgate.runs.ledger import ledger_head

__all__ = [
    "DATA_LIMIT",
    "AmendResult",
    "FreezeResult",
    "TagResult",
    "amend",
    "check_design",
    "freeze",
]

#: the largest pinned file a tag commits (bytes); larger ones go to the data manifest
DATA_LIMIT = 50 * 1000 * 1000


@dataclass(frozen=True)
class TagResult:
    """The tag made, the pinned inputs it holds, and the data manifest naming the others."""

    name: str
    included: tuple[str, ...] = ()
    manifest: Path | None = None
    left_out: tuple[str, ...] = ()


@dataclass(frozen=True)
class FreezeResult:
    """What ``freeze`` did: ``action`` is ``"frozen"``, ``"unchanged"`` or ``"refrozen"``."""

    study: Study
    lock: Lock
    design: Design | None  # None: the study registers no protocol (no Eq. 2 bound)
    action: str
    tagged: TagResult | None = None


@dataclass(frozen=True)
class AmendResult:
    """The appended amendment entry and its changes."""

    study: Study
    lock: Lock
    entry: dict
    changes: list[Change]
    data_existed: bool
    tagged: TagResult | None = None


def check_design(
    study: Study, *, runnable: bool = True, oc: Any = None, simulate: bool = True
) -> Design | None:
    """The derived design; :class:`PreregError` for what would fail after the freeze
    (:func:`tailgate.authoring.runnable.runnable_problems`, unless ``runnable`` is false), for
    imported lattice scores that leave fewer distinct exceedance values at the headline threshold
    than ``protocol.thresholds.min_levels``
    (:func:`tailgate.authoring.importcheck.lattice_refusal`), for a size at which H1 cannot PASS
    (:func:`tailgate.protocol.design.cannot_pass`) and for a cap below Eq. 2, each of the last
    two unless ``accepted_power`` explicitly records a lower power, and for an ``accepted_power``
    above what the simulated power of the registered procedure supports
    (:attr:`tailgate.protocol.design.Design.supported_power`; ``oc``: its
    :func:`~tailgate.protocol.design.operating_characteristics` when already simulated, else
    simulated here, seconds, unless ``simulate`` is false or anything else is refused: the
    check then waits, as for a study that cannot run); several problems are named together
    (:class:`InputError`, one per line). None when the study registers no protocol (the Eq. 2
    bound is the protocol's)."""
    problems = runnable_problems(study) if runnable else []
    design = _design_problems(study, problems, oc, simulate) if study.has_protocol else None
    if len(problems) == 1:
        raise problems[0]
    if problems:
        raise InputError(
            "\n".join(
                [f"{len(problems)} problems, each to fix before the freeze:"]
                + [f"  {i}. {p}" for i, p in enumerate(problems, 1)]
            )
        )
    return design


def _design_problems(
    study: Study, problems: list[PreregError], oc: Any = None, simulate: bool = True
) -> Design | None:
    """The derived design of a study with the protocol, appending to ``problems`` what
    :func:`check_design` refuses in it; None when the design cannot be derived."""
    for why, field, fix in (
        (
            ceiling_refusal(study),
            "protocol.thresholds.ceiling",
            "register the scale's true cap (the grade no score passes), or remove the ceiling",
        ),
        (
            lattice_refusal(study),
            "protocol.thresholds.min_levels",
            "register a lower headline quantile (protocol.thresholds.headline), import "
            "scores on a finer scale, or record a smaller min_levels (at least 4) that you "
            "accept",
        ),
    ):
        if why is not None:
            problems.append(PreregError(why, file=str(study.path), field=field, fix=fix))
    design = derived_design(study)
    hopeless = cannot_pass(study)
    if hopeless:  # G3 fails at every threshold: so does every simulated trial (power 0)
        design = dataclasses.replace(design, procedure_power=0.0, procedure_power_mc_se=0.0)
        if not design.power_accepted:
            problems.append(
                PreregError(
                    hopeless,
                    file=str(study.path),
                    field="accepted_power",
                    fix="import or generate more rows per condition, lower "
                    "protocol.min_exceedances only if the methods allow it, or accept explicitly "
                    f"that the study cannot PASS (accepted_power: 0). {WHAT_A_SMALL_STUDY_LEARNS}",
                )
            )
        return design
    if design.accepted_power == 0 or (design.accepted_power is None and design.cap_meets_bound):
        return design
    if design.accepted_rule == Z_TEST and design.power_accepted:  # as its lock was frozen
        return design
    if problems or not simulate:  # a registration refused anyway: its power is not simulated
        if not design.power_accepted and design.accepted_power is None:
            problems.append(_power_problem(study, design))
        return design
    if oc is None:
        oc = operating_characteristics(study, design)
    design = with_procedure_power(design, oc)
    if not design.power_accepted:
        problems.append(_power_problem(study, design))
    return design


def _power_problem(study: Study, design: Design) -> PreregError:
    """Why ``accepted_power`` (absent, or above what the simulation supports) is refused."""
    supported = design.supported_power
    accept = (
        "tailgate design prints the power to accept"
        if supported is None
        else f"accepted_power: {supported:g}"
        + (" accepts that H1 cannot PASS at this size" if supported == 0 else "")
    )
    if design.accepted_power is None:
        problem = (
            f"the planned {design.min_prompts} prompts per condition give {design.n_exc_planned} "
            f"exceedances at q={design.q_headline:g}, below the {design.n_exc_required} that Eq. 2 "
            f"of Zhou (2026) requires for power {design.power:g} at Δfloor={design.delta_floor:g} "
            f"({design.prompts_required} prompts)"
        )
        fix = (
            f"raise sample_cap (and condition prompts) to at least {design.prompts_required}, or "
            f"record the lower power you accept: the simulated power of the registered procedure "
            f"({accept})"
        )
    else:
        problem = (
            f"accepted_power is {design.accepted_power:g}, above what the registered procedure "
            f"achieves: {power_line(design)}"
        )
        fix = (
            f"record what the simulation supports ({accept}), raise the prompts per condition, "
            "or raise protocol.operating_characteristics.trials to narrow the Monte Carlo error"
        )
    return PreregError(problem, file=str(study.path), field="accepted_power", fix=fix)


def derived_of(study: Study, design: Design | None) -> dict[str, Any]:
    """The lock entry's ``derived`` values: the Eq. 2 design and, when the study registers
    ``protocol.operating_characteristics.max_false_pass``, the simulated operating
    characteristics of the whole registered procedure, which must respect it (else
    :class:`PreregError`, exit 2). The simulation takes seconds to a minute, so it runs at freeze
    only when a registered bound needs it; ``tailgate design`` and the power stage always run it.
    """
    if design is None:
        return {}
    derived = design.to_json()
    if study.operating_characteristics.max_false_pass is None:
        return derived
    oc = operating_characteristics(study, design)
    problem = check_false_pass(study, oc)
    if problem is not None:
        raise PreregError(
            problem,
            file=str(study.path),
            field="protocol.operating_characteristics.max_false_pass",
            fix="raise the sample size, tighten the rule (band rule, tolerances, floor), or "
            "register the false-PASS rate you accept",
        )
    derived["operating_characteristics"] = oc.to_dict()
    return derived


def _committed_lock_refusal(
    study: Study, lock_path: Path, what: str, changes: list[Change]
) -> RefusalError | None:
    """A refusal when the lock was ever committed (a committed registration is never replaced)."""
    history = lock_history(lock_path)
    if not history.committed:
        return None
    first = history.versions[0]
    listed = f"Changed fields (registered → now):\n{format_changes(changes)}\n" if changes else ""
    return RefusalError(
        listed + f"{study.path}: refusing to {what}: {lock_path.name} was committed (first in "
        f"{first[0][:12]} at {first[1].isoformat()}), and a committed registration is never "
        "replaced — not even after the lock or the results are deleted. Ways forward: restore "
        f"the lock ('git checkout HEAD -- {lock_path}'), then either restore the registered "
        f"file or record the change with 'tailgate amend {study.path} --reason \"…\"'.",
        changes=changes,
    )


def _stamped(lock: Lock, timestamp: str | None, seqs: list[int] | None = None) -> Lock:
    """``lock`` with a trusted timestamp token from the TSA at ``timestamp`` for each entry of
    ``seqs`` (absent: every entry without one); asked before anything is written
    (:mod:`tailgate.prereg.timestamp`)."""
    if timestamp is None:
        return lock
    from tailgate.prereg.timestamp import request_token

    stamps = {h: list(v) for h, v in lock.timestamps.items()}
    for e in lock.chain:
        h = str(e["entry_hash"])
        if (seqs is None and not stamps.get(h)) or (seqs is not None and e["seq"] in seqs):
            stamps.setdefault(h, []).append(request_token(timestamp, e))
    return new_lock(lock.path, lock.study, lock.chain, stamps)


def freeze(
    prereg_path: str | Path,
    *,
    tag: bool = False,
    timestamp: str | None = None,
    data_limit: int = DATA_LIMIT,
) -> FreezeResult:
    """Validate ``prereg_path`` and write ``<stem>.lock.json`` beside it (module docstring);
    ``timestamp``: the URL of a time-stamping authority that signs the entry's hash (an
    unchanged, frozen file: every entry without a token)."""
    study = load(prereg_path)
    lock_path = lock_path_for(study.path)
    state = check_frozen(study.path, pins=False)
    if state.lock is not None and state.ok:
        design = check_design(study)
        registered = state.lock.head_entry.get("pins", {})
        changed = pin_changes(registered, pins_of(study))
        if changed:
            raise RefusalError(
                f"{study.path}: the file matches its lock, but registered input(s) "
                f"{', '.join(changed)} differ from their pins. Restore them, or record the new "
                f"files with 'tailgate amend {study.path} --reason \"…\"'."
            )
        lock = _stamped(state.lock, timestamp)  # the lock as it is without a timestamp
        if timestamp is not None:
            write_lock(lock)
        return FreezeResult(study, lock, design, "unchanged")
    refusal = _committed_lock_refusal(
        study, lock_path, "re-freeze" if state.lock is not None else "freeze", state.changes
    )
    if refusal is not None:
        raise refusal
    evidence = data_evidence(study.path, state.lock)
    if evidence.exists:
        if state.lock is not None:
            raise RefusalError(
                refusal_message(state)
                + f"\nRe-freezing is refused because data exists ({evidence.describe()}).",
                changes=state.changes,
            )
        raise RefusalError(
            f"{study.path}: refusing to freeze: data already exists for study '{study.name}' "
            f"({evidence.describe()}), so this would not be a registration made before the data. "
            f"Ways forward: if these results belong to an earlier registration, restore its lock "
            f"and record changes with 'tailgate amend'; otherwise register the study under a new "
            "name (a new file preregistrations/<new name>.yaml)."
        )
    design = check_design(study)
    entry = make_entry(
        seq=0,
        kind="freeze",
        previous_entry_hash=None,
        snapshot=study.data,
        raw_hash=study.raw_hash,
        derived=derived_of(study, design),
        data_existed=False,
        git=head_state(study.path),
        pins=pins_of(study, import_rows=import_rows),
    )
    lock = _stamped(new_lock(lock_path, study.name, [entry]), timestamp)
    write_lock(lock)
    tagged = tag_entry(study, lock, data_limit=data_limit) if tag else None
    return FreezeResult(study, lock, design, "frozen" if state.lock is None else "refrozen", tagged)


def amend(
    prereg_path: str | Path,
    reason: str,
    *,
    tag: bool = False,
    timestamp: str | None = None,
    data_limit: int = DATA_LIMIT,
) -> AmendResult:
    """Append an amendment registering the current file (and input files) as the new head;
    ``timestamp``: a time-stamping authority's URL that signs the new entry's hash."""
    if not reason or not reason.strip():
        raise InputError(
            "tailgate amend: --reason is empty. Fix: say why the registered plan changes, "
            'e.g. --reason "scorer checkpoint unavailable; switched to ...".'
        )
    study = load(prereg_path)
    design = check_design(study)
    state = check_frozen(study.path, pins=False)
    if state.lock is None:
        raise RefusalError(
            f"{study.path}: cannot amend a study that was never frozen "
            f"({lock_path_for(study.path).name} does not exist). "
            f"Run 'tailgate freeze {study.path}'."
        )
    try:
        state.lock.verify()
    except LockIntegrityError as exc:
        raise RefusalError(
            f"{study.path}: refusing to amend: the lock does not verify ({exc}). Restore the "
            "lock file from version control."
        ) from None
    rewritten = lock_history(
        state.lock.path, [e["entry_hash"] for e in state.lock.chain]
    ).violations
    if rewritten:
        raise RefusalError(
            f"{study.path}: refusing to amend: {rewritten[-1]}. Restore the committed lock "
            f"('git checkout HEAD -- {state.lock.path}') and amend again."
        )
    head = state.lock.head_entry
    now_pins = pins_of(study, import_rows=import_rows)
    changes = amendment_changes(head, {"prereg": study.data, "pins": now_pins})
    if not changes:
        raise InputError(
            f"{study.path}: nothing to amend — the file and the input files it names match the "
            f"chain head of {state.lock.path.name} (entry {state.lock.head['seq']})."
        )
    data_existed = data_evidence(study.path, state.lock).exists
    entry = make_entry(
        seq=head["seq"] + 1,
        kind="amendment",
        previous_entry_hash=head["entry_hash"],
        snapshot=study.data,
        raw_hash=study.raw_hash,
        derived=derived_of(study, design),
        data_existed=data_existed,
        git=head_state(study.path),
        reason=reason.strip(),
        changes=[c.to_json() for c in changes],
        pins=now_pins,
        ledger=ledger_head(results_dir_for(study.path)),
    )
    lock = new_lock(state.lock.path, study.name, [*state.lock.chain, entry], state.lock.timestamps)
    lock = _stamped(lock, timestamp, [int(entry["seq"])])
    write_lock(lock)
    tagged = tag_entry(study, lock, data_limit=data_limit) if tag else None
    return AmendResult(study, lock, entry, changes, data_existed, tagged)


_MANIFEST_NOTE = (
    "Pinned input files of the registration. Those with in_tag false are not in the tagged "
    "commit: obtain each, check its SHA-256, place it at place_at (relative to the project "
    "folder), then run 'tailgate verify'."
)


def _published_inputs(
    study: Study, lock: Lock, root: Path, data_limit: int
) -> tuple[list[str], list[dict[str, Any]]]:
    """(paths to commit, manifest rows) of the head entry's pins: a pinned file or folder inside
    the repository and no larger than ``data_limit`` bytes is committed; any other is listed."""
    base = project_root(study.path)
    commit, rows = [], []
    for field, p in sorted(lock.head_entry.get("pins", {}).items()):
        path = Path(p["path"]).expanduser()
        path = path if path.is_absolute() else base / path
        try:
            inside = path.resolve().is_relative_to(root.resolve())
        except OSError:
            inside = False
        row = {k: p[k] for k in ("path", "type", "sha256", "bytes", "files", "rows") if k in p}
        row["field"] = field
        if inside and p["bytes"] <= data_limit:
            commit.append(str(path.resolve()))
            row["in_tag"] = True
        else:
            row["in_tag"] = False
            row["why"] = (
                f"larger than the {data_limit:,}-byte limit of the tag"
                if inside
                else "outside the repository"
            )
            row["place_at"] = p["path"]
        rows.append(row)
    return commit, rows


def tag_entry(study: Study, lock: Lock, *, data_limit: int = DATA_LIMIT) -> TagResult:
    """Commit the pre-registration, its lock and its pinned input files (module docstring), and
    tag the commit ``prereg/<study>/<seq>`` with the head entry's receipt as the annotated tag's
    message."""
    root = repo_root(study.path)
    if root is None:
        raise InputError(
            f"{study.path}: --tag needs a git work tree, and none holds this file. Fix: run "
            "'git init' and commit, or publish the receipt elsewhere (preprint, OSF)."
        )
    name = f"prereg/{study.name}/{lock.head['seq']}"
    receipt = lock.receipt()
    data, rows = _published_inputs(study, lock, root, data_limit)
    paths = [str(Path(study.path).resolve()), str(lock.path.resolve())]
    manifest = None
    left_out = [r for r in rows if not r["in_tag"]]
    if left_out:
        manifest = manifest_path(study.path)
        write_text(
            manifest,
            json.dumps(
                {
                    "format": "tailgate.data-manifest/1",
                    "study": study.name,
                    "entry": lock.head["seq"],
                    "entry_hash": lock.head["entry_hash"],
                    "note": _MANIFEST_NOTE,
                    "files": rows,
                },
                indent=2,
                ensure_ascii=False,
            )
            + "\n",
        )
        paths.append(str(manifest.resolve()))
    steps = [
        ["git", "add", "--", *paths],
        *([["git", "add", "--force", "--", *data]] if data else []),
        [
            "git",
            "commit",
            "-m",
            f"Register {study.name}, entry {lock.head['seq']}",
            "--",
            *paths,
            *data,
        ],
        ["git", "tag", "-a", name, "-m", receipt],
    ]
    for cmd in steps:
        res = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
        if res.returncode != 0:
            raise InputError(
                f"{study.path}: '{' '.join(cmd[:3])}' failed: {res.stderr.strip() or res.stdout}. "
                "The lock is written; commit it and tag by hand: "
                f"git tag -a {name} -m '{receipt}'."
            )
    return TagResult(
        name,
        tuple(r["path"] for r in rows if r["in_tag"]),
        manifest,
        tuple(r["path"] for r in left_out),
    )
