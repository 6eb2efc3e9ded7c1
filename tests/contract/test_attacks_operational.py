"""Operational settings and provenance (contract issue, classes 4, 5 and 7): a key of
``config/config.yaml`` that the workflow does not list is refused before any job, so that an
operational setting can never change which data a study reads."""

from __future__ import annotations

import pytest
from attack_project import Project
from tailgate.errors import InputError
from tailgate.operational import check_operational

INVALID = 2


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
