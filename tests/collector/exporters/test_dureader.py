"""DuReader JSON lines: the real samples (preprocessed form) and the raw form."""

from __future__ import annotations

import json

import pytest

from collector.exporters import (
    DureaderDocument,
    DureaderRecord,
    InvalidRecordError,
    verify_entry,
    write_dureader,
)
from tests.collector.exporters.samples import DUREADER, dureader_records


def _lines(path):
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_round_trip_field_by_field(tmp_path, split):
    out = tmp_path / f"search.{split}.json"
    entry = write_dureader(out, iter(dureader_records(DUREADER[split])))
    written = _lines(out)
    original = _lines(DUREADER[split])
    assert written == original  # every field; absent ones stay absent
    assert entry.records == len(original)
    assert verify_entry(entry)
    assert "\\u" not in out.read_text("utf-8")  # unescaped UTF-8 like the official files


@pytest.mark.parametrize("split", ["train", "dev"])
def test_answers_are_aligned_and_extractive_spans_check(tmp_path, split):
    out = tmp_path / "x.json"
    write_dureader(out, dureader_records(DUREADER[split]))
    for record in _lines(out):
        n = len(record["answers"])
        if "yesno_answers" in record:
            assert record["question_type"] == "YES_NO"
            assert len(record["yesno_answers"]) == n
        if "entity_answers" in record:
            assert len(record["entity_answers"]) == n
        for doc_index, (s, e), fake in zip(record["answer_docs"], record["answer_spans"],
                                           record["fake_answers"], strict=True):
            doc = record["documents"][doc_index]
            tokens = doc["segmented_paragraphs"][doc["most_related_para"]]
            assert "".join(tokens[s:e + 1]) == fake


def _raw(**changes) -> DureaderRecord:
    base = dict(question_id=5, question="能退货吗", question_type="YES_NO",
                fact_or_opinion="FACT", yesno_type="FACT",
                documents=[DureaderDocument("标题", ["可以退货。"], 0, is_selected=True)],
                answers=["可以。"], yesno_answers=["Yes"])
    base.update(changes)
    return DureaderRecord(**base)


def test_raw_form_has_only_raw_fields(tmp_path):
    write_dureader(tmp_path / "x.json", [_raw()])
    assert _lines(tmp_path / "x.json") == [{
        "question_id": 5, "question": "能退货吗", "question_type": "YES_NO",
        "fact_or_opinion": "FACT", "yesno_type": "FACT",
        "documents": [{"title": "标题", "paragraphs": ["可以退货。"], "bs_rank_pos": 0,
                       "is_selected": True}],
        "answers": ["可以。"], "yesno_answers": ["Yes"]}]


@pytest.mark.parametrize(("changes", "needle"), [
    ({"yesno_answers": ["Yes", "No"]}, "2 yesno_answers for 1 answers"),
    ({"yesno_answers": ["Maybe"]}, "'Maybe'"),
    ({"question_type": "ENTITY"}, "yesno_answers on a ENTITY question"),
    ({"question_type": "OTHER"}, "question_type 'OTHER'"),
    ({"yesno_answers": None, "question_type": "ENTITY", "entity_answers": []},
     "0 entity lists for 1 answers"),
    ({"answers": None}, "yesno_answers given without answers"),
    ({"answer_docs": [0], "answer_spans": [[0, 0]], "fake_answers": ["可以"],
      "match_scores": [1.0]}, "no segmented_paragraphs"),
])
def test_invalid_records_are_named(tmp_path, changes, needle):
    with pytest.raises(InvalidRecordError, match=f"question 5: .*{needle}"):
        write_dureader(tmp_path / "x.json", [_raw(question_id=4), _raw(**changes)])
    assert list(tmp_path.iterdir()) == []


def test_wrong_fake_answer_span_is_refused(tmp_path):
    records = dureader_records(DUREADER["dev"])
    records[3].answer_spans = [[s + 1, e + 1] for s, e in records[3].answer_spans]
    with pytest.raises(InvalidRecordError, match=f"question {records[3].question_id}: "
                                                 "fake_answers\\[0\\]"):
        write_dureader(tmp_path / "x.json", records)
    assert list(tmp_path.iterdir()) == []
