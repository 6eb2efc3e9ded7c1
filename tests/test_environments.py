"""The conda environments of the rules hold tailgate's dependencies, and every rule script puts
the repository's tailgate package first (``--software-deployment-method conda``)."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _name(req: str) -> str:
    return re.split(r"[<>=!~\[ ;]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _env_packages(name: str) -> set[str]:
    env = yaml.safe_load((ROOT / "envs" / name).read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    return {_name(r) for r in pip}


def test_each_environment_holds_the_dependencies_of_the_package():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {_name(r) for r in project["dependencies"]}
    llm = {_name(r) for r in project["optional-dependencies"]["llm"]}
    assert "pygments" in runtime  # snakemake --report needs it
    assert runtime <= _env_packages("stats.yaml")
    assert runtime | llm <= _env_packages("llm.yaml")


def test_every_rule_script_imports_the_repository_package_first():
    scripts = sorted((ROOT / "workflow" / "scripts").glob("*.py"))
    for script in scripts:
        if script.name == "_tailgate.py":
            continue
        imports = [
            line
            for line in script.read_text().splitlines()
            if line.startswith(("import ", "from "))
        ]
        assert imports and imports[0].startswith("import _tailgate"), script.name
