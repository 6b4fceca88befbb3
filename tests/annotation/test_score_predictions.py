"""``manage.py score_predictions``: its own argument checks, before any release is read."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError


def _score(path, *options):
    call_command("score_predictions", str(path), "--project", "p", "--version", "1.0.0",
                 "--format", "dureader", *options)


@pytest.mark.parametrize(("option", "value"), [
    ("--alpha", "nan"), ("--alpha", "inf"), ("--beta", "-inf"), ("--beta", "-1"),
    ("--alpha", "-0.5"), ("--beta", "abc"),
])
def test_bonus_weights_must_be_finite_numbers_not_below_zero(tmp_path, option, value):
    # Before: accepted, and the scores came out as invalid JSON (NaN) or negative weights.
    pred = tmp_path / "pred.jsonl"
    pred.write_text('{"question_id": 1, "answers": ["x"]}\n', encoding="utf-8")
    expected = "not a number" if value == "abc" else "must be a finite number >= 0"
    with pytest.raises(CommandError, match=f"argument {option}: {expected}, got '{value}'"):
        _score(pred, f"{option}={value}")


def test_a_directory_is_not_a_missing_file(tmp_path):
    with pytest.raises(CommandError, match="is a directory, expected a predictions file"):
        _score(tmp_path)
    with pytest.raises(CommandError, match="no such file"):
        _score(tmp_path / "nope.jsonl")
