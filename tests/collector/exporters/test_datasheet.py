"""The datasheet renderer: every section, pseudonymised annotators, tolerant of gaps."""

from __future__ import annotations

import pytest

from collector.exporters import (
    Pseudonymizer,
    new_release_salt,
    render_datasheet,
    verify_entry,
    write_datasheet,
)

FULL = {
    "title": "Portvale QA",
    "version": "1.2.0",
    "created": "2026-11-22T14:00:00+00:00",
    "recipe": "reco",
    "description": "Opinion questions about fictional products.",
    "protocol": "ReCO protocol: batches of 5,000 samples, one annotator per batch.",
    "stages": [
        {"name": "retrieve documents", "kind": "reco.retrieve", "automatic": True,
         "parameters": {"top_k": 10}},
        {"name": "evidence + answer", "kind": "reco.annotate", "automatic": False,
         "parameters": {"batch_size": 5000, "alternatives": ["positive", "negative|x"]}},
        {"name": "import", "kind": "reco.import"},
    ],
    "counts": {"evidence + answer": {"train": 4000, "test": 500, "dev": 500},
               "batch inspection": {"train": 400}},
    "splits": {"test": 480, "train": 3990, "dev": 495},
    "agreement": {"share_agreed": 0.9, "cohen_kappa": 0.81234, "krippendorff_alpha": None,
                  "custom_stat": 3},
    "batch_inspections": [
        {"batch": "B1", "annotator": 41, "round": 1, "sampled": 200, "errors": 12.5,
         "accuracy": 0.9375, "passed": False},
        {"batch": "B1", "annotator": 41, "round": 2, "sampled": 200, "errors": 4.0,
         "accuracy": 0.98, "passed": True},
    ],
    "median_time_on_task_s": 42.0,
    "licence": {"name": "CC BY-SA 4.0", "spdx": "cc-by-sa-4.0",
                "source": "Synthetic web pages", "attribution": "CrowdQA demo"},
    "human_performance": {"exact_match": 88.0, "f1": 91.25, "questions": 500,
                          "method": "One held-out human answer against the others."},
    "files": [{"path": "ReCO.trainingset.json", "format": "reco", "split": "train",
               "records": 3990},
              {"path": "ReCO.validationset.json", "format": "reco", "split": "dev",
               "records": 495},
              {"path": "portvale-qa-1.2.0/README.md", "format": "hf", "split": "",
               "records": 1}],
    "notes": ["Test split annotated twice,\nevidence chosen by a third annotator."],
    "something_new": {"k": [1, 2]},
}


def test_every_section_is_rendered():
    text = render_datasheet(FULL)
    for heading in ("# Datasheet: Portvale QA (version 1.2.0)", "## Collection protocol",
                    "### 1. retrieve documents (`reco.retrieve`), automatic",
                    "### 2. evidence + answer (`reco.annotate`), by people",
                    "### 3. import (`reco.import`)", "## Counts", "## Agreement",
                    "## Batch inspection", "## Time on task", "## Human performance",
                    "## Files", "## Licence", "## Notes", "## Other"):
        assert heading in text.splitlines(), heading
    assert "| batch_size | `5000` |" in text
    assert '| alternatives | `["positive", "negative\\|x"]` |' in text  # pipes escaped
    assert "| split | records |" in text
    assert "| train | 3,990 |" in text
    assert "| **total** | 4,965 |" in text
    assert "| stage | train | dev | test | total |" in text  # canonical split order
    assert "| evidence + answer | 4,000 | 500 | 500 | 5,000 |" in text
    assert "| batch inspection | 400 | 0 | 0 | 400 |" in text
    assert "| Cohen's κ | 0.8123 |" in text
    assert "| Krippendorff's α | not defined |" in text
    assert "| custom_stat | 3 |" in text
    assert "2 inspection(s), 1 passed." in text
    assert "Median time on task: 42 s." in text
    assert "| all | 500 | 88 | 91.25 |" in text
    # Which file holds which split; "all" for a file of every split.
    assert "| file | format | split | records |" in text
    assert "| `ReCO.validationset.json` | reco | dev | 495 |" in text
    assert "| `portvale-qa-1.2.0/README.md` | hf | all | 1 |" in text
    assert "**files:**" not in text
    assert "- **Licence:** CC BY-SA 4.0" in text
    assert "- Test split annotated twice, evidence chosen by a third annotator." in text
    assert '- **something_new:** `{"k": [1, 2]}`' in text


def test_annotators_appear_only_as_pseudonyms():
    plain = render_datasheet(FULL)
    assert "| batch | round |" in plain  # no pseudonymizer: no worker column at all
    assert "| 41 |" not in plain
    pseudonyms = Pseudonymizer(new_release_salt())
    text = render_datasheet(FULL, pseudonyms=pseudonyms)
    assert f"| B1 | {pseudonyms(41)} | 1 | 200 | 12.5 | 0.9375 | no |" in text
    omitted = render_datasheet(FULL, pseudonyms=Pseudonymizer(new_release_salt(), omit=True))
    assert "| batch | round |" in omitted


def test_empty_and_partial_sheets():
    assert render_datasheet({}) == "# Datasheet: Dataset\n"
    text = render_datasheet({"title": "X", "median_time_on_task_s": {"a": 125.0, "b": None},
                             "human_performance": {"by_split": {"test": {"f1": 70.0}}}})
    assert "| a | 2 min 5 s |" in text
    assert "| b | not recorded |" in text
    assert "| test | not defined | not defined | 70 |" in text
    assert "## Counts" not in text


def test_heading_level_for_embedding():
    text = render_datasheet(FULL, heading_level=2)
    assert text.startswith("## Datasheet: Portvale QA")
    assert "### Agreement" in text.splitlines()


def test_write_datasheet_is_atomic_and_checksummed(tmp_path):
    entry = write_datasheet(tmp_path / "DATASHEET.md", FULL)
    assert verify_entry(entry)
    assert (tmp_path / "DATASHEET.md").read_text("utf-8") == render_datasheet(FULL)
    with pytest.raises(FileExistsError):
        write_datasheet(tmp_path / "DATASHEET.md", FULL)
