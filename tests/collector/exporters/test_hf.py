"""Hugging Face release folders: Parquet / JSONL per split read back with pyarrow and
json, and the dataset card's front matter."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from collector.exporters import (
    ManifestEntry,
    Pseudonymizer,
    hf_columns,
    hf_schema,
    new_release_salt,
    verify_entry,
    write_dataset_card,
    write_hf_split,
)
from tests.collector.exporters.samples import (
    DUREADER,
    MARCO_JSONL,
    NEWSQA_JSON,
    RECO_JSON,
    SQUAD_V1,
    SQUAD_V2,
    dureader_records,
    load_json,
    marco_records,
    newsqa_stories,
    reco_records,
    squad_articles,
    squad_questions,
)
from tests.collector.exporters.yaml_subset import front_matter

FORMATS = ["parquet", "jsonl"]


def read_rows(entry: ManifestEntry) -> list[dict]:
    if entry.path.endswith(".parquet"):
        return pq.read_table(entry.path).to_pylist()
    with open(entry.path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def _expected_squad(source, v2: bool) -> list[dict]:
    rows = []
    data = load_json(source)
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                row = {"id": qa["id"], "title": article["title"],
                       "context": paragraph["context"], "question": qa["question"],
                       "answers": {"text": [a["text"] for a in qa["answers"]],
                                   "answer_start": [a["answer_start"] for a in qa["answers"]]}}
                if v2:
                    plausible = qa.get("plausible_answers", [])
                    row["is_impossible"] = qa["is_impossible"]
                    row["plausible_answers"] = {
                        "text": [a["text"] for a in plausible],
                        "answer_start": [a["answer_start"] for a in plausible]}
                rows.append(row)
    return rows


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("kind", "source"), [("squad_v1", SQUAD_V1), ("squad_v2", SQUAD_V2)])
def test_squad_rows(tmp_path, fmt, kind, source):
    entry = write_hf_split(tmp_path, "validation", squad_articles(source), kind=kind, fmt=fmt)
    assert entry.path == str(tmp_path / "data" / f"validation.{fmt}")
    rows = read_rows(entry)
    assert rows == _expected_squad(source, kind == "squad_v2")
    assert entry.records == len(rows) == sum(1 for _ in squad_questions(load_json(source)))
    assert verify_entry(entry)
    for row in rows:
        for text, start in zip(row["answers"]["text"], row["answers"]["answer_start"],
                               strict=True):
            assert row["context"][start:start + len(text)] == text


@pytest.mark.parametrize("fmt", FORMATS)
def test_newsqa_rows(tmp_path, fmt):
    entry = write_hf_split(tmp_path, "dev", newsqa_stories(), kind="newsqa", fmt=fmt)
    rows = read_rows(entry)
    story = load_json(NEWSQA_JSON)["data"][0]
    assert len(rows) == len(story["questions"])
    for row, q in zip(rows, story["questions"], strict=True):
        assert (row["story_id"], row["story_text"], row["type"], row["question"]) == (
            story["storyId"], story["text"], story["type"], q["q"])
        assert row["sourcer_answers"] == [
            [{"s": s["s"], "e": s["e"]} for s in a["sourcerAnswers"] if "s" in s]
            for a in q["answers"]]
        assert row["is_answer_absent"] == q["isAnswerAbsent"]
        assert row["is_question_bad"] == q.get("isQuestionBad")
        consensus = q["consensus"]
        if "s" in consensus:
            assert row["consensus"] == {"s": consensus["s"], "e": consensus["e"],
                                        "no_answer": False, "bad_question": False}
            assert row["consensus_text"] == story["text"][consensus["s"]:consensus["e"]]
        else:
            assert row["consensus"]["no_answer"] is True
            assert row["consensus_text"] is None
        if "validatedAnswers" in q:
            assert [(v["s"], v["e"], v["count"]) for v in row["validated_answers"]] == [
                (v.get("s"), v.get("e"), v["count"]) for v in q["validatedAnswers"]]
        else:
            assert row["validated_answers"] is None


@pytest.mark.parametrize("fmt", FORMATS)
def test_msmarco_rows(tmp_path, fmt):
    entry = write_hf_split(tmp_path, "train", marco_records(), kind="msmarco", fmt=fmt)
    rows = read_rows(entry)
    original = [json.loads(line) for line in MARCO_JSONL.read_text("utf-8").splitlines()]
    for row in original:
        if row["wellFormedAnswers"] == "[]":
            row["wellFormedAnswers"] = []  # a typed list column, not the official string
    assert rows == original


@pytest.mark.parametrize("fmt", FORMATS)
def test_reco_rows(tmp_path, fmt):
    entry = write_hf_split(tmp_path, "train", reco_records(), kind="reco", fmt=fmt)
    assert read_rows(entry) == load_json(RECO_JSON)


@pytest.mark.parametrize("fmt", FORMATS)
def test_dureader_rows_hold_the_raw_form(tmp_path, fmt):
    entry = write_hf_split(tmp_path, "dev", dureader_records(DUREADER["dev"]),
                           kind="dureader", fmt=fmt)
    rows = read_rows(entry)
    original = [json.loads(line) for line in DUREADER["dev"].read_text("utf-8").splitlines()]
    assert len(rows) == len(original) == 16
    for row, record in zip(rows, original, strict=True):
        for key in ("question_id", "question", "question_type", "fact_or_opinion", "answers"):
            assert row[key] == record[key]
        for key in ("yesno_type", "yesno_answers", "entity_answers"):
            assert row[key] == record.get(key)
        assert row["documents"] == [
            {"title": d["title"], "paragraphs": d["paragraphs"],
             "bs_rank_pos": d["bs_rank_pos"], "is_selected": d["is_selected"]}
            for d in record["documents"]]


def test_schema_matches_the_documented_columns():
    for kind in ("squad_v1", "squad_v2", "newsqa", "msmarco", "reco", "dureader"):
        for with_workers in (False, True):
            names = hf_schema(kind, with_workers=with_workers).names
            assert names == [c for c, _ in hf_columns(kind, with_workers=with_workers)]


def test_worker_column_only_with_a_pseudonymizer(tmp_path):
    articles = squad_articles(SQUAD_V1)
    for article in articles:
        for paragraph in article.paragraphs:
            for q in paragraph.qas:
                for n, answer in enumerate(q.answers):
                    answer.worker = 1000 + n
    plain = read_rows(write_hf_split(tmp_path / "a", "train", articles, kind="squad_v1"))
    assert "answer_workers" not in plain[0]
    omit = Pseudonymizer(new_release_salt(), omit=True)
    omitted = read_rows(write_hf_split(tmp_path / "b", "train", articles, kind="squad_v1",
                                       pseudonyms=omit))
    assert "answer_workers" not in omitted[0]
    named = Pseudonymizer(new_release_salt())
    rows = read_rows(write_hf_split(tmp_path / "c", "train", articles, kind="squad_v1",
                                    pseudonyms=named))
    assert rows[0]["answer_workers"] == [named(1000 + n) for n in
                                         range(len(rows[0]["answers"]["text"]))]
    assert all(w.startswith("w-") for row in rows for w in row["answer_workers"])


def test_large_split_is_written_in_row_groups(tmp_path):
    articles = squad_articles(SQUAD_V2)
    entry = write_hf_split(tmp_path, "train", articles, kind="squad_v2", batch_rows=10)
    meta = pq.ParquetFile(entry.path).metadata
    assert meta.num_rows == 116
    assert meta.num_row_groups == 12


def test_invalid_split_name_and_failed_split_leave_nothing(tmp_path):
    with pytest.raises(ValueError, match="split name"):
        write_hf_split(tmp_path, "dev set", [], kind="reco")
    records = reco_records()
    records[2].answer = "nonsense"
    with pytest.raises(Exception, match="900003"):
        write_hf_split(tmp_path, "train", records, kind="reco", batch_rows=1)
    assert list((tmp_path / "data").iterdir()) == []


SHEET = {
    "title": "Portvale QA", "version": "1.0.0", "recipe": "newsqa",
    "description": "Questions about local news.",
    "licence": {"name": "CC BY 4.0", "spdx": "cc-by-4.0", "source": "synthetic stories"},
    "splits": {"train": 3, "dev": 1},
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_dataset_card_front_matter_lists_every_split(tmp_path, fmt):
    splits = {"train": write_hf_split(tmp_path, "train", squad_articles(SQUAD_V1),
                                      kind="squad_v1", fmt=fmt),
              "validation": write_hf_split(tmp_path, "validation", squad_articles(SQUAD_V1),
                                           kind="squad_v1", fmt=fmt)}
    card = write_dataset_card(tmp_path, kind="squad_v1", splits=splits, datasheet=SHEET,
                              fmt=fmt)
    assert card.path == str(tmp_path / "README.md")
    assert verify_entry(card)
    text = (tmp_path / "README.md").read_text("utf-8")
    meta = front_matter(text)
    assert meta["license"] == "cc-by-4.0"
    assert meta["pretty_name"] == "Portvale QA"
    assert meta["task_categories"] == ["question-answering"]
    assert meta["configs"] == [{"config_name": "default", "default": True, "data_files": [
        {"split": "train", "path": f"data/train.{fmt}"},
        {"split": "validation", "path": f"data/validation.{fmt}"}]}]
    for item in meta["configs"][0]["data_files"]:
        assert (tmp_path / item["path"]).is_file()
    for entry in splits.values():
        assert entry.sha256 in text
    assert "## Datasheet: Portvale QA (version 1.0.0)" in text
    assert "| `answers` |" in text
    try:
        import yaml
    except ImportError:
        return
    assert yaml.safe_load(text.split("---")[1]) == meta


def test_card_loads_with_datasets_when_installed(tmp_path):
    datasets = pytest.importorskip("datasets")
    splits = {"train": write_hf_split(tmp_path, "train", newsqa_stories(), kind="newsqa"),
              "test": write_hf_split(tmp_path, "test", newsqa_stories(), kind="newsqa")}
    write_dataset_card(tmp_path, kind="newsqa", splits=splits, datasheet=SHEET)
    loaded = datasets.load_dataset(str(tmp_path))
    assert loaded["train"].num_rows == 4
    assert loaded["test"].num_rows == 4
