"""The Makefile's choice of interpreter for .venv: the distribution's python3.11 when it can
make a virtual environment, python3.11 on the PATH when it cannot, and PYTHON when given."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(settings.BASE_DIR)

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")


def _python_of_make(*args: str, env: dict[str, str] | None = None) -> str:
    """The PYTHON that ``make install`` would use, from make's database (nothing runs)."""
    environ = {key: value for key, value in os.environ.items() if key != "PYTHON"}
    done = subprocess.run(["make", "--no-print-directory", "-p", "-n", "-q", "install", *args],
                          cwd=ROOT, env={**environ, **(env or {})}, capture_output=True,
                          text=True, timeout=60, check=False)
    values = [line.split("=", 1)[1].strip() for line in done.stdout.splitlines()
              if line.startswith(("PYTHON :=", "PYTHON ="))]
    assert values, done.stdout[-2000:] + done.stderr[-2000:]
    return values[-1]


def test_an_interpreter_that_can_make_a_venv_is_chosen():
    # The suite's own interpreter, if it can make virtual environments (ensurepip is what
    # Debian moves into python3.11-venv).
    pytest.importorskip("ensurepip")
    assert _python_of_make(f"SYSTEM_PYTHON={sys.executable}") == sys.executable


def test_python_on_the_path_when_the_system_one_cannot_make_a_venv(tmp_path):
    # Debian's python3.11 without python3.11-venv has no ensurepip: import fails.
    no_venv = tmp_path / "python3.11"
    no_venv.write_text("#!/bin/sh\nexit 1\n")
    no_venv.chmod(0o755)
    assert _python_of_make(f"SYSTEM_PYTHON={no_venv}") == "python3.11"
    assert _python_of_make(f"SYSTEM_PYTHON={tmp_path / 'missing'}") == "python3.11"


def test_python_given_on_the_command_line_or_in_the_environment_wins():
    assert _python_of_make("PYTHON=/opt/py/bin/python3.11") == "/opt/py/bin/python3.11"
    assert _python_of_make(env={"PYTHON": "/opt/py/bin/python3.11"}) == "/opt/py/bin/python3.11"
