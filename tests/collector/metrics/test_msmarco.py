"""MS MARCO: coco-caption BLEU / ROUGE-L quirks and the Python API against the vectors."""

from __future__ import annotations

import json

import pytest

from collector.metrics.errors import MetricsInputError
from collector.metrics.msmarco import (
    CocoBleu,
    coco_rouge_l,
    msmarco_score,
    msmarco_score_files,
)
from collector.metrics.tokenize import msmarco_normalize, msmarco_normalize_many
from tests.collector.metrics.vectors import agrees, compared_keys, run_id, runs


@pytest.mark.parametrize("item", runs("msmarco"), ids=run_id)
def test_files_api_matches_official(item):
    folder, exp, run = item
    got = msmarco_score_files(folder / "ref.jsonl", folder / "cand.jsonl")
    for key in compared_keys(exp, run):
        assert agrees(exp, run["expected"][key], got[key]), key
    totals = got["bleu_totals"]
    verbose = run["official_verbose_lines"]
    assert str({k: totals[k] for k in ("testlen", "reflen", "guess", "correct")}) == verbose[0]


@pytest.mark.parametrize("item", runs("msmarco"), ids=run_id)
def test_records_api_matches_files_api(item):
    folder, _, _ = item

    def records(name):
        out = {}
        for line in (folder / name).read_text(encoding="utf-8").splitlines():
            obj = json.loads(line)
            out.setdefault(obj["query_id"], []).extend(obj["answers"])
        return out

    by_records = msmarco_score(records("ref.jsonl"), records("cand.jsonl"))
    by_files = msmarco_score_files(folder / "ref.jsonl", folder / "cand.jsonl")
    assert by_records == by_files


def test_spacy_normalisation_keeps_whitespace_tokens():
    assert msmarco_normalize("U.S.  Before") == "u.s.  before"
    assert msmarco_normalize_many(["(approx.)?", ""]) == ["( approx . ) ?", ""]


def test_rouge_split_on_single_spaces():
    assert coco_rouge_l("a  b", ["a  b"]) == pytest.approx(1.0)
    # The empty answer is one empty token, which matches the empty token of a double space.
    assert coco_rouge_l("", ["x  y"]) > 0
    assert coco_rouge_l("", ["x y"]) == 0.0


def test_coco_bleu_epsilons():
    bleu = CocoBleu()
    bleu.add("a b c", ["a b c d e"])
    scores = bleu.score()
    # no 4-gram in the candidate: (0 + 1e-15) / (0 + 1e-9) instead of a division by zero
    assert 0 < scores[3] < 0.05
    assert bleu.ratio() < 1


def test_answerability_f1_and_errors():
    refs = {1: ["yes it is"], 2: ["No Answer Present."]}
    out = msmarco_score(refs, {1: ["yes it is"], 2: ["No Answer Present."]})
    assert out["F1"] == 1.0 and out["bleu_1"] == pytest.approx(1.0)
    with pytest.raises(MetricsInputError, match="F1 is undefined"):
        msmarco_score(refs, {1: ["No Answer Present."], 2: ["something"]})
    with pytest.raises(MetricsInputError, match="same query ids"):
        msmarco_score({1: ["a b c"], 3: ["d"]}, {1: ["a b c"]})
    with pytest.raises(MetricsInputError, match="no answerable"):
        msmarco_score({2: ["No Answer Present."]}, {2: ["No Answer Present."]})
