"""ReCO JSON from the synthetic fixture."""

from __future__ import annotations

import json

import pytest

from collector.exporters import InvalidRecordError, RecoRecord, verify_entry, write_reco
from tests.collector.exporters.samples import RECO_JSON, load_json, reco_records


def test_round_trip_field_by_field(tmp_path):
    out = tmp_path / "ReCO.validationset.json"
    entry = write_reco(out, iter(reco_records()))
    written = load_json(out)
    original = load_json(RECO_JSON)
    assert written == original
    assert [list(r) for r in written] == [list(r) for r in original]  # key order
    assert entry.records == 3
    assert verify_entry(entry)
    assert "示例" in out.read_text("utf-8")  # UTF-8, not \\u escapes
    for record in written:
        assert record["passage"] in record["doc"]
        assert record["alternatives"].split("|")[0] == record["answer"]


def test_gold_answer_goes_first_others_keep_their_order(tmp_path):
    record = RecoRecord(1, "能吗", "文档", "证据", ["能", "不能", "无法确定"], answer="无法确定")
    write_reco(tmp_path / "x.json", [record])
    assert load_json(tmp_path / "x.json")[0]["alternatives"] == "无法确定|能|不能"


def test_unlabelled_records_omit_answer_and_url(tmp_path):
    record = RecoRecord(1, "能吗", "文档", "证据", ["能", "不能", "无法确定"])
    write_reco(tmp_path / "x.json", [record])
    assert load_json(tmp_path / "x.json") == [
        {"query_id": 1, "query": "能吗", "doc": "文档", "passage": "证据",
         "alternatives": "能|不能|无法确定"}]


def test_empty_file_is_an_empty_array(tmp_path):
    write_reco(tmp_path / "x.json", [])
    assert json.loads((tmp_path / "x.json").read_text("utf-8")) == []


@pytest.mark.parametrize(("alternatives", "answer", "needle"), [
    (["能", "不能"], "能", "2 alternatives"),
    (["能", "不|能", "无法确定"], "能", "contains '|'"),
    (["能", "能", "无法确定"], "能", "repeat"),
    (["能", "不能", "无法确定"], "也许", "not one of"),
])
def test_invalid_alternatives_are_named(tmp_path, alternatives, answer, needle):
    record = RecoRecord(900009, "q", "d", "p", alternatives, answer=answer)
    with pytest.raises(InvalidRecordError, match=f"query 900009: .*{needle}"):
        write_reco(tmp_path / "x.json", [record])
    assert list(tmp_path.iterdir()) == []
