"""MS MARCO v2.1: row JSONL, the column-oriented official file, evaluation references."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from collector.exporters import (
    InvalidRecordError,
    MarcoPassage,
    MarcoRecord,
    verify_entry,
    write_msmarco_columnar,
    write_msmarco_jsonl,
    write_msmarco_references,
)
from tests.collector.exporters.samples import (
    MARCO_COLUMNAR,
    MARCO_JSONL,
    MARCO_REFS,
    REPO,
    load_json,
    marco_records,
)


def test_jsonl_round_trip_byte_for_byte(tmp_path):
    out = tmp_path / "dev_v2.1.jsonl"
    entry = write_msmarco_jsonl(out, iter(marco_records()))
    assert out.read_bytes() == MARCO_JSONL.read_bytes()
    assert entry.records == 3
    assert verify_entry(entry)


def test_jsonl_field_by_field(tmp_path):
    out = tmp_path / "dev.jsonl"
    write_msmarco_jsonl(out, marco_records())
    written = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    original = [json.loads(line) for line in MARCO_JSONL.read_text("utf-8").splitlines()]
    assert written == original
    no_answer = written[1]
    assert no_answer["answers"] == ["No Answer Present."]
    assert all(p["is_selected"] == 0 for p in no_answer["passages"])
    assert no_answer["wellFormedAnswers"] == "[]"  # the 4-character string, not a list


def test_columnar_matches_the_official_layout(tmp_path):
    out = tmp_path / "dev_v2.1.json"
    entry = write_msmarco_columnar(out, (r for r in marco_records()))
    assert out.read_bytes() == MARCO_COLUMNAR.read_bytes()
    written = load_json(out)
    assert list(written) == ["answers", "passages", "query", "query_id", "query_type",
                             "wellFormedAnswers"]
    assert written == load_json(MARCO_COLUMNAR)
    assert entry.records == 3
    assert verify_entry(entry)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dev_v2.1.json"]  # spools gone


def test_columnar_equals_rows_pivoted(tmp_path):
    rows = [json.loads(line) for line in MARCO_JSONL.read_text("utf-8").splitlines()]
    out = tmp_path / "c.json"
    write_msmarco_columnar(out, marco_records())
    columns = load_json(out)
    for index, row in enumerate(rows):
        for key, value in row.items():
            assert columns[key][str(index)] == value


def test_evaluation_records_omit_answer_columns(tmp_path):
    records = marco_records()
    for record in records:
        record.answers = None
        record.well_formed_answers = None
    write_msmarco_columnar(tmp_path / "eval.json", records)
    assert list(load_json(tmp_path / "eval.json")) == ["passages", "query", "query_id",
                                                      "query_type"]
    write_msmarco_jsonl(tmp_path / "eval.jsonl", records)
    first = json.loads((tmp_path / "eval.jsonl").read_text("utf-8").splitlines()[0])
    assert "answers" not in first and "wellFormedAnswers" not in first


def test_mixing_answered_and_eval_records_is_refused(tmp_path):
    records = marco_records()
    records[2].answers = None
    records[2].well_formed_answers = None
    for writer in (write_msmarco_jsonl, write_msmarco_columnar):
        with pytest.raises(InvalidRecordError, match="900003"):
            writer(tmp_path / "x.json", records)
    assert list(tmp_path.iterdir()) == []


def _record(**changes) -> MarcoRecord:
    base = dict(query_id=7, query="q", query_type="ENTITY",
                passages=[MarcoPassage("text", "http://example.org", True)],
                answers=["An answer."])
    base.update(changes)
    return MarcoRecord(**base)


@pytest.mark.parametrize(("record", "needle"), [
    (_record(answers=[]), "no answer, yet a passage is selected"),
    (_record(answers=["No Answer Present.", "x"]), "mixed"),
    (_record(query_type="WHO"), "query_type 'WHO'"),
    (_record(answers=[""]), "empty"),
    (_record(query_id="7"), "expected an int"),
])
def test_invalid_records_are_named(tmp_path, record, needle):
    with pytest.raises(InvalidRecordError, match=needle):
        write_msmarco_columnar(tmp_path / "x.json", [_record(query_id=1), record])
    assert list(tmp_path.iterdir()) == []


def test_references_match_the_official_eval_file_and_score_100(tmp_path):
    refs = tmp_path / "refs.jsonl"
    write_msmarco_references(refs, marco_records()[:2])
    assert refs.read_text("utf-8").splitlines() == MARCO_REFS.read_text("utf-8").splitlines()
    proc = subprocess.run(
        [sys.executable, "-m", "collector.metrics", "msmarco", str(refs), str(refs)],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
        text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    scores = json.loads(proc.stdout)
    assert scores["rouge_l"] == pytest.approx(1.0)
