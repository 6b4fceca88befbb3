"""Every metric-vectors case through ``python -m collector.metrics``, plus CLI errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.collector.metrics.vectors import (
    REPO,
    VECTORS,
    agrees,
    compared_keys,
    run_id,
    runs,
)


def cli(*args: str, cwd: Path | str = REPO) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "collector.metrics", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
    )


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    assert proc.returncode != 0, proc.stdout
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert lines[0].startswith("error: ")
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("item", runs(), ids=run_id)
def test_official_vector(item):
    folder, exp, run = item
    proc = cli(*run["cli_args"], cwd=folder)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    for key in compared_keys(exp, run):
        assert key in got, f"missing key {key}"
        assert agrees(exp, run["expected"][key], got[key]), (key, run["expected"][key], got[key])


@pytest.mark.parametrize("item", runs(errors=True), ids=run_id)
def test_official_crash_is_refused(item):
    folder, _, run = item
    assert_one_line_error(cli(*run["cli_args"], cwd=folder))


def test_every_case_is_covered():
    manifest = json.loads((VECTORS / "MANIFEST.json").read_text())
    seen: dict[str, set[str]] = {}
    for folder, _, _ in runs() + runs(errors=True):
        seen.setdefault(folder.parent.name, set()).add(folder.name)
    assert {suite: len(names) for suite, names in seen.items()} == manifest["cases"]


def test_msmarco_verbose_totals_match_the_official_scorer():
    folder = VECTORS / "msmarco" / "case05_double_spaces_and_empty"
    exp = json.loads((folder / "expected.json").read_text())
    got = json.loads(cli("msmarco", "ref.jsonl", "cand.jsonl", cwd=folder).stdout)
    totals = got["bleu_totals"]
    verbose = exp["runs"][0]["official_verbose_lines"]
    assert str({k: totals[k] for k in ("testlen", "reflen", "guess", "correct")}) == verbose[0]
    assert verbose[1] == f"ratio: {totals['ratio']}"


# --------------------------------------------------------------------------- errors
def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


REF_LINE = ('{"question_id": 1, "question_type": "DESCRIPTION", "source": "search", '
            '"answers": ["今天天气很好啊"], "yesno_answers": [], "entity_answers": [[]]}\n')


def test_dureader_malformed_prediction_names_file_line_and_field(tmp_path):
    ref = write(tmp_path / "ref.jsonl", REF_LINE)
    pred = write(tmp_path / "pred.jsonl",
                 '{"question_id": 1, "answers": ["今天天气"]}\n{"question_id": 2}\n')
    line = assert_one_line_error(cli("dureader", pred, ref), "pred.jsonl", "line 2", "answers")
    assert "missing field" in line


def test_dureader_invalid_json_line(tmp_path):
    ref = write(tmp_path / "ref.jsonl", REF_LINE)
    pred = write(tmp_path / "pred.jsonl", '{"question_id": 1, "answers": ["x"]\n')
    assert_one_line_error(cli("dureader", pred, ref), "pred.jsonl", "line 1", "invalid JSON")


def test_dureader_wrong_field_type(tmp_path):
    ref = write(tmp_path / "ref.jsonl", REF_LINE)
    pred = write(tmp_path / "pred.jsonl", '{"question_id": 1, "answers": "今天"}\n')
    assert_one_line_error(cli("dureader", pred, ref), "line 1", "'answers'", "list of strings")


def test_dureader_duplicate_id(tmp_path):
    ref = write(tmp_path / "ref.jsonl", REF_LINE + REF_LINE)
    pred = write(tmp_path / "pred.jsonl", '{"question_id": 1, "answers": ["x"]}\n')
    assert_one_line_error(cli("dureader", pred, ref), "ref.jsonl", "line 2", "duplicate")


def test_dureader_unknown_ids_only_with_strict(tmp_path):
    ref = write(tmp_path / "ref.jsonl", REF_LINE)
    pred = write(tmp_path / "pred.jsonl",
                 '{"question_id": 1, "answers": ["今天天气很好"]}\n'
                 '{"question_id": 99, "answers": ["x"]}\n')
    loose = cli("dureader", pred, ref)
    assert loose.returncode == 0, loose.stderr
    assert json.loads(loose.stdout)["unknown_prediction_ids"] == 1
    assert_one_line_error(cli("dureader", pred, ref, "--strict"), "pred.jsonl", "not in the")


def test_empty_inputs(tmp_path):
    empty = write(tmp_path / "empty.jsonl", "")
    ref = write(tmp_path / "ref.jsonl", REF_LINE)
    assert_one_line_error(cli("dureader", empty, ref), "empty.jsonl", "empty")
    assert_one_line_error(cli("msmarco", empty, empty), "empty")
    data = write(tmp_path / "data.json", '{"version": "1.1", "data": []}')
    preds = write(tmp_path / "pred.json", "{}")
    assert_one_line_error(cli("squad-v1", data, preds), "no questions")
    assert_one_line_error(cli("squad-v2", data, preds), "no questions")


def test_missing_file_and_usage_errors(tmp_path):
    assert_one_line_error(cli("squad-v1", str(tmp_path / "nope.json"), "x.json"), "not found")
    assert_one_line_error(cli("dureader"), "required")
    assert_one_line_error(cli("frobnicate"), "invalid choice")
    assert_one_line_error(cli("dureader", "a", "b", "--alpha", "nan"), "alpha")


def test_bonus_weights_must_be_finite_and_not_negative(tmp_path):
    ref = write(tmp_path / "ref.jsonl", REF_LINE)
    pred = write(tmp_path / "pred.jsonl", '{"question_id": 1, "answers": ["今天天气很好"]}\n')
    for option, value in (("--alpha", "nan"), ("--alpha", "-inf"), ("--beta", "inf"),
                          ("--beta", "-1"), ("--alpha", "-0.5")):
        for command in (["dureader", pred, ref], ["judgment", "--refs", ref, "--preds",
                                                  f"a={pred}", "--ratings", pred]):
            assert_one_line_error(cli(*command, f"{option}={value}"),
                                  f"argument {option}: must be a finite number >= 0, got "
                                  f"{value!r}")
    ok = cli("dureader", pred, ref, "--alpha", "0", "--beta", "2.5")
    assert ok.returncode == 0 and json.loads(ok.stdout)["beta"] == 2.5


def test_dureader_ids_of_another_json_type(tmp_path):
    ref = write(tmp_path / "ref.jsonl", REF_LINE.replace('"question_id": 1', '"question_id": 7')
                + REF_LINE.replace('"question_id": 1', '"question_id": 8'))
    strings = write(tmp_path / "pred.jsonl", '{"question_id": "7", "answers": ["今天"]}\n')
    assert_one_line_error(cli("dureader", strings, ref), "pred.jsonl: no question_id of the 1 "
                          "prediction(s) is in the reference file", 'the string "7" where the '
                          "reference file has the number 7")
    partly = write(tmp_path / "pred.jsonl", '{"question_id": 8, "answers": ["今天"]}\n'
                   '{"question_id": "7", "answers": ["今天"]}\n')
    loose = cli("dureader", partly, ref, "--scorer", "dureader2")
    assert loose.returncode == 0, loose.stderr
    assert ("1 prediction(s) for ids not in the gold data ignored, e.g. '7' (the string "
            '"7" where the gold data has the number 7)') in loose.stderr
    assert "1 unanswered question(s) scored as the empty answer, e.g. 7" in loose.stderr
    assert_one_line_error(cli("dureader", partly, ref, "--strict"), "pred.jsonl", "e.g. '7'",
                          "(--strict)")


def squad_data(tmp_path: Path) -> str:
    data = {"version": "1.1", "data": [{"title": "t", "paragraphs": [{"context": "c", "qas": [
        {"id": "q1", "question": "?", "answers": [{"text": "the Cat", "answer_start": 0}]},
        {"id": "q2", "question": "?", "answers": [{"text": "a dog", "answer_start": 0}]},
    ]}]}]}
    return write(tmp_path / "data.json", json.dumps(data))


def test_squad_malformed_prediction_file(tmp_path):
    data = squad_data(tmp_path)
    pred = write(tmp_path / "pred.json", '{"q1": "cat", "q2": 3}')
    assert_one_line_error(cli("squad-v1", data, pred), "pred.json", "'q2'", "string")
    pred = write(tmp_path / "pred.json", '["cat"]')
    assert_one_line_error(cli("squad-v1", data, pred), "pred.json", "JSON object")


def test_predictions_nested_too_deep_are_an_error_not_a_traceback(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    data = squad_data(tmp_path)
    pred = write(tmp_path / "pred.json", '{"q1": ' + deep + "}")
    assert_one_line_error(cli("squad-v1", data, pred), "pred.json", "nested deeper")
    ref = write(tmp_path / "ref.jsonl", REF_LINE)
    pred = write(tmp_path / "pred.jsonl", '{"question_id": 1, "answers": ' + deep + "}\n")
    assert_one_line_error(cli("dureader", pred, ref), "pred.jsonl", "line 1", "nested deeper")


def test_squad_unknown_and_missing_ids(tmp_path):
    data = squad_data(tmp_path)
    pred = write(tmp_path / "pred.json", '{"q1": "cat", "zz": "x"}')
    loose = cli("squad-v1", data, pred)
    assert loose.returncode == 0
    assert json.loads(loose.stdout) == {"exact_match": 50.0, "f1": 50.0}
    assert "unanswered" in loose.stderr
    assert_one_line_error(cli("squad-v1", data, pred, "--strict"), "unknown question ids")
    assert_one_line_error(cli("squad-v2", data, pred), "'q2'", "no prediction")


def test_msmarco_mismatched_query_ids(tmp_path):
    ref = write(tmp_path / "ref.jsonl", '{"query_id": 1, "answers": ["a b c"]}\n'
                '{"query_id": 2, "answers": ["d e f"]}\n')
    cand = write(tmp_path / "cand.jsonl", '{"query_id": 1, "answers": ["a b c"]}\n'
                 '{"query_id": 3, "answers": ["x"]}\n')
    assert_one_line_error(cli("msmarco", ref, cand), "same query ids")
    cand = write(tmp_path / "cand.jsonl", '{"query_id": 1, "answers": ["a", "b"]}\n'
                 '{"query_id": 2, "answers": ["d e f"]}\n')
    assert_one_line_error(cli("msmarco", ref, cand), "one allowed")
    cand = write(tmp_path / "cand.jsonl", '{"query_id": 1}\n')
    assert_one_line_error(cli("msmarco", ref, cand), "cand.jsonl", "line 1", "'answers'")
    cand = write(tmp_path / "cand.jsonl", '{"query_id": "1", "answers": ["a b c"]}\n'
                 '{"query_id": 2, "answers": ["d e f"]}\n')
    assert_one_line_error(cli("msmarco", ref, cand), "cand.jsonl", "e.g. 1 (the number 1 "
                          'where the candidate file has the string "1")')


def test_data_errors_name_the_data_file(tmp_path):
    # No answerable reference query: the reference file is what is wrong, not the candidates.
    ref = write(tmp_path / "ref.jsonl", '{"query_id": 1, "answers": ["No Answer Present."]}\n')
    cand = write(tmp_path / "cand.jsonl", '{"query_id": 1, "answers": ["x"]}\n')
    line = assert_one_line_error(cli("msmarco", ref, cand))
    assert line == (f"error: {ref}: no answerable reference query to score (every query is "
                    "'No Answer Present.')")
    empty = write(tmp_path / "data.json", '{"version": "1.1", "data": []}')
    preds = write(tmp_path / "pred.json", '{"a": "x"}')
    for fmt in ("squad-v1", "squad-v2"):
        line = assert_one_line_error(cli(fmt, empty, preds))
        assert line == f"error: {empty}: the dataset has no questions"
    no_answer = write(tmp_path / "noans.json", json.dumps(
        {"data": [{"paragraphs": [{"context": "c", "qas": [{"id": "a", "answers": []}]}]}]}))
    line = assert_one_line_error(cli("squad-v1", no_answer, preds))
    assert line == (f"error: {no_answer}: question 'a' has no gold answer; SQuAD v1.1 needs "
                    "one (use squad-v2)")


# --------------------------------------------------------------------------- pa
def test_pa_command_on_the_paper_table(tmp_path):
    inputs = json.loads((VECTORS / "pa_table2" / "inputs.json").read_text())
    refs = write(tmp_path / "refs.json", json.dumps({"q": inputs["references"]}))
    cands = write(tmp_path / "cands.json", json.dumps(
        {"q": [{"id": c["id"], "text": c["text"]} for c in inputs["candidates"]]}))
    proc = cli("pa", "--metric", "bleu", refs, cands)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    query = out["queries"][0]
    assert out["metric"] == "pa-bleu"
    assert len(query["reference_weights"]) == 20
    assert [c["id"] for c in query["candidates"]] == [1, 2, 3, 4, 5]
    assert [round(c["pa_score"], 4) for c in query["candidates"]] == [
        0.1634, 0.0287, 0.0374, 0.0114, 0.0219]
    single = cli("pa", "--metric", "meteor",
                 write(tmp_path / "r.json", json.dumps(inputs["references"])),
                 write(tmp_path / "c.json", json.dumps([inputs["candidates"][0]["text"]])))
    assert single.returncode == 0, single.stderr
    cand = json.loads(single.stdout)["queries"][0]["candidates"][0]
    assert round(cand["pa_score"], 4) == 0.4506
    assert round(cand["plain_score"], 4) == 0.7778


def test_pa_help_documents_the_format():
    proc = cli("pa", "--help")
    assert proc.returncode == 0
    assert "REFS.json" in proc.stdout and "CANDS.json" in proc.stdout


def test_pa_errors(tmp_path):
    refs = write(tmp_path / "refs.json", '{"q": ["a b c d"]}')
    cands = write(tmp_path / "cands.json", '{"other": "a b"}')
    assert_one_line_error(cli("pa", "--metric", "bleu", refs, cands), "unknown query id")
    cands = write(tmp_path / "cands.json", '["a b"]')
    assert_one_line_error(cli("pa", "--metric", "bleu", refs, cands), "cands.json")
    refs = write(tmp_path / "refs.json", '{"q": []}')
    cands = write(tmp_path / "cands.json", '{"q": "a"}')
    assert_one_line_error(cli("pa", "--metric", "bleu", refs, cands), "non-empty list")
