"""Operational settings and provenance (contract issue, classes 4, 5 and 7): a key of
``config/config.yaml`` that the workflow does not list is refused before any job, so that an
operational setting can never change which data a study reads."""

from __future__ import annotations

import pytest
from attack_project import Project
from tailgate.errors import InputError
from tailgate.operational import check_operational

REFUSED, INVALID = 3, 2


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"study": "s", "generation": {"base_dir": "elsewhere"}}, "generation.base_dir"),
        ({"study": "s", "scoring": {"root": "x"}}, "scoring.root"),
        ({"study": "s", "data_root": "x"}, "data_root"),
    ],
)
def test_unknown_operational_key_is_refused_naming_file_and_key(config, key):
    with pytest.raises(InputError) as err:
        check_operational(config, "config/config.yaml")
    assert err.value.exit_code == INVALID
    assert "config/config.yaml" in str(err.value) and key in str(err.value)


def test_listed_operational_keys_are_accepted():
    check_operational(
        {
            "study": "s",
            "generation": {"batch_size": 3, "device": "cpu", "gpus": 0, "progress": False},
            "scoring": {"batch_size": 3, "device": "auto", "gpus": 1, "progress": True},
            "threads": 1,
        }
    )


def test_workflow_refuses_an_extra_config_key_before_any_job(tmp_path):
    """Attack 4: ``generation.base_dir`` added to the operational config (to make the import job
    read another file than the pinned one) stops Snakemake at parse time, exit 2, no traceback."""
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text(
        "study: attack\nthreads: 1\ngeneration:\n  base_dir: /elsewhere\n"
    )
    res = Project(tmp_path, "attack").snakemake("-n")
    assert res.returncode == INVALID, res.stderr[-2000:]
    assert "config/config.yaml" in res.stderr and "generation.base_dir" in res.stderr
    assert "Traceback" not in res.stderr


def test_linked_preregistrations_folder_cannot_redirect_the_import(tmp_path):
    """Attack 4: ``preregistrations/`` replaced by a link to a copy of the project elsewhere
    (with the pinned data file there) while the project's own data file is forged. Pins and the
    import job resolve against the same root — the folder holding ``preregistrations/`` as
    named — so the forged file is the one checked against its pin and the run is refused."""
    import shutil

    from attack_project import IMPORT_STUDY, make_project, write_import_csv

    root = tmp_path / "project"
    proj = make_project(root, "imported", IMPORT_STUDY)
    write_import_csv(root / "data" / "scores.csv")
    code, out = proj.cli("freeze", proj.prereg)
    assert code == 0, out
    proj.commit("Pre-register the imported study", "preregistrations", "data")
    assert proj.snakemake("-n").returncode == 0

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.move(root / "preregistrations", elsewhere / "preregistrations")
    shutil.copytree(root / "data", elsewhere / "data")  # the pinned bytes, out of sight
    (root / "preregistrations").symlink_to(elsewhere / "preregistrations")
    write_import_csv(root / "data" / "scores.csv", seed=6)  # forged data read by the job

    res = proj.snakemake("-n")
    assert res.returncode == REFUSED, res.stdout[-2000:] + res.stderr[-2000:]
    assert "data.import.path" in res.stderr
    assert "Traceback" not in res.stderr


def test_swapped_large_file_with_restored_metadata_is_seen_by_a_pin_check(tmp_path, monkeypatch):
    """Attack 7: a large pinned file (model weights) is edited, its modification time set back
    and the pin cache (a folder the researcher controls) told the old hash for the new key. A
    pin check as a job or the audit makes it reads the file itself; only an explicit cache
    look-up (a display) may use the cache."""
    import hashlib
    import os

    from tailgate.prereg import pins

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"\0" * (pins._CACHE_FROM + 10))
    honest = pins.pin(weights, use_cache=True)["sha256"]
    st = weights.stat()
    with weights.open("r+b") as handle:  # same size, same inode, one byte in the middle
        handle.seek(pins._CACHE_FROM // 2)
        handle.write(b"\1")
    os.utime(weights, ns=(st.st_atime_ns, st.st_mtime_ns))
    entry = tmp_path / "cache" / "tailgate" / "pins" / pins._cache_key(weights)
    entry.write_text(honest, encoding="ascii")  # the forged cache entry

    truth = hashlib.sha256(weights.read_bytes()).hexdigest()
    assert truth != honest
    assert pins.pin(weights)["sha256"] == truth
    assert pins.pin(weights.parent)["sha256"] != pins.pin(weights.parent, use_cache=True)["sha256"]
