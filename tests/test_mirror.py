"""The folders of ``tests/`` mirror the package: every sub-package of ``workflow/tailgate/`` that
holds Python has a folder of tests under its own name (the contributing page, "Tests")."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
PACKAGE = TESTS.parent / "workflow" / "tailgate"


def test_every_sub_package_has_its_folder_of_tests() -> None:
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    assert packages, PACKAGE
    missing = [name for name in packages if not any((TESTS / name).glob("test_*.py"))]
    assert missing == [], f"sub-packages without tests/<name>/test_*.py: {missing}"
