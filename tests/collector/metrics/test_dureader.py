"""DuReader bonus scorer: in-process checks against the official per-question detail."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from collector.metrics.dureader import (
    AdaptedBleu,
    AdaptedRougeL,
    adapted_rouge_l,
    dureader_score,
    dureader_score_files,
    read_predictions,
    read_references,
    score_parsed,
    scorer_weights,
)
from collector.metrics.errors import MetricsInputError
from collector.metrics.tokenize import char_tokens
from tests.collector.metrics.vectors import run_id, runs

DUREADER_RUNS = runs("dureader")


def _alpha_beta(run):
    args = run["cli_args"]
    return float(args[args.index("--alpha") + 1]), float(args[args.index("--beta") + 1])


@pytest.mark.parametrize("item", DUREADER_RUNS, ids=run_id)
def test_counts_and_per_question_scores_equal_the_official_detail(item):
    folder, _, run = item
    alpha, beta = _alpha_beta(run)
    preds = read_predictions(folder / "pred.jsonl")
    refs = read_references(folder / "ref.jsonl")
    bleu = AdaptedBleu(4, alpha=alpha, beta=beta)
    rouge = AdaptedRougeL(alpha=alpha, beta=beta)
    per_question = {}
    for qid, ref in refs.items():
        if not ref.answers:
            continue
        pred = preds.get(qid)
        label = pred.yesno_label if pred is not None and ref.question_type == "YES_NO" else None
        kwargs = {
            "yesno_label": label,
            "reference_labels": ref.yesno_labels if ref.question_type == "YES_NO" else None,
            "entities": ref.entities if ref.question_type == "ENTITY" and ref.entities else None,
        }
        cand = pred.answer if pred is not None else ""
        bleu.add(cand, ref.answers, **kwargs)
        per_question[str(qid)] = rouge.add(cand, ref.answers, **kwargs).score
    detail = run["detail"]
    for order, (match, cand_count) in detail["ngram_match_over_candidate"].items():
        k = int(order) - 1
        assert bleu.match[k] == pytest.approx(match, abs=1e-9)
        assert bleu.total[k] == pytest.approx(cand_count, abs=1e-9)
    assert (bleu.bp_c, bleu.bp_r) == (detail["bp_c"], detail["bp_r"])
    assert bleu.brevity_penalty() == pytest.approx(detail["BP"], rel=1e-12)
    assert bleu.score() == pytest.approx(detail["BLEU-1..4"], rel=1e-12)
    assert rouge.score() == pytest.approx(detail["ROUGE-L_raw"], rel=1e-12)
    for qid, info in detail["per_question"].items():
        if "skipped" in info:
            assert qid not in per_question
        else:
            assert per_question[qid] == pytest.approx(info["ROUGE-L"], rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("item", DUREADER_RUNS, ids=run_id)
def test_python_api_matches_the_printed_values(item):
    folder, _, run = item
    alpha, beta = _alpha_beta(run)
    result = score_parsed(read_predictions(folder / "pred.jsonl"),
                          read_references(folder / "ref.jsonl"),
                          alpha=alpha, beta=beta, gamma=1.2, by_type=True)
    assert result["ROUGE-L"] == run["expected"]["ROUGE-L"]
    assert result["BLEU-4"] == run["expected"]["BLEU-4"]


def test_dureader_score_on_records():
    refs = {
        1: {"question_type": "YES_NO", "answers": ["跳绳是有氧运动。", "不一定"],
            "yesno_answers": ["Yes", "Depends"], "entity_answers": [[], []]},
        2: {"question_type": "ENTITY", "answers": ["秦朝在公元前221年统一中国"],
            "yesno_answers": [], "entity_answers": [["公元前221年"]]},
        3: {"question_type": "DESCRIPTION", "answers": [], "yesno_answers": []},
    }
    preds = {1: {"answers": ["跳绳是 有氧运动"], "yesno_answers": ["Yes"]},
             2: {"answers": ["公元前221年秦统一中国"]}}
    plain = dureader_score(preds, refs, alpha=0.0, beta=0.0)
    bonus = dureader_score(preds, refs, alpha=2.0, beta=1.0)
    assert bonus["ROUGE-L"] > plain["ROUGE-L"] and bonus["BLEU-4"] > plain["BLEU-4"]
    assert bonus["questions"] == 2 and bonus["skipped_empty_references"] == 1
    assert set(bonus["by_type"]) == {"YES_NO", "ENTITY"}


def test_whitespace_is_removed_character_tokens():
    assert char_tokens(" a\tb\u3000c\n d ") == "abcd"


def test_missing_prediction_scores_the_empty_answer():
    refs = {1: {"question_type": "DESCRIPTION", "answers": ["今天天气很好"]},
            2: {"question_type": "DESCRIPTION", "answers": ["明天下雨了吗"]}}
    one = dureader_score({1: {"answers": ["今天天气很好"]}}, refs)
    assert one["ROUGE-L"] == 50.0


def test_label_count_mismatch_is_refused():
    refs = {1: {"question_type": "YES_NO", "answers": ["是的可以", "不可以的"],
                "yesno_answers": ["Yes"]}}
    with pytest.raises(MetricsInputError, match="yes-no labels"):
        dureader_score({1: {"answers": ["是的可以"], "yesno_answers": ["Yes"]}}, refs)
    # without a predicted label the labels are never indexed, as officially
    ok = dureader_score({1: {"answers": ["是的可以"], "yesno_answers": []}}, refs)
    assert ok["ROUGE-L"] == 100.0


def test_no_question_to_score():
    refs = {1: {"question_type": "DESCRIPTION", "answers": []}}
    with pytest.raises(MetricsInputError, match="no question"):
        dureader_score({}, refs)


def test_entity_bonus_on_word_tokens_uses_contiguous_match():
    cand = ("qin", "unified", "china", "in", "221", "bc")
    entity_in = ("221", "bc")
    entity_split = ("china", "221")
    detail = adapted_rouge_l(cand, [cand], entities=[entity_in, entity_split])
    assert detail.references[0].entity_bonus == 2


def test_random_corpora_scores_are_bounded():
    rng = random.Random(7)  # noqa: S311 - reproducible test data
    for _ in range(30):
        bleu = AdaptedBleu(4, alpha=2.0, beta=1.0)
        rouge = AdaptedRougeL(alpha=2.0, beta=1.0)
        for _ in range(5):
            cand = "".join(rng.choice("甲乙丙丁戊") for _ in range(rng.randint(4, 20)))
            refs = ["".join(rng.choice("甲乙丙丁戊") for _ in range(rng.randint(1, 20)))
                    for _ in range(3)]
            labels = [rng.choice(["Yes", "No"]) for _ in refs]
            bleu.add(cand, refs, yesno_label="Yes", reference_labels=labels)
            rouge.add(cand, refs, yesno_label="Yes", reference_labels=labels)
        assert all(0.0 <= b <= 1.0 for b in bleu.score())
        assert 0.0 <= rouge.score() <= 1.0


def test_string_fast_path_counts_equal_the_generic_counts():
    """Strings take the set-intersection path, tuples the Counter path: same counts."""
    rng = random.Random(11)  # noqa: S311 - reproducible test data
    for _ in range(400):
        alphabet = "甲乙丙丁"[: rng.randint(1, 4)]

        def text(lo, hi, alphabet=alphabet):
            return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))

        cand, refs = text(0, 25), [text(0, 25) for _ in range(rng.randint(1, 4))]
        labels = [rng.choice(["Yes", "No"]) for _ in refs]
        ents = [text(1, 4) for _ in range(rng.randint(1, 3))]
        for kwargs in ({}, {"yesno_label": "Yes", "reference_labels": labels},
                       {"entities": ents}):
            fast = AdaptedBleu(4).add(cand, refs, **kwargs)
            slow_kwargs = dict(kwargs)
            if "entities" in kwargs:
                slow_kwargs["entities"] = [tuple(e) for e in ents]
            slow = AdaptedBleu(4).add(tuple(cand), [tuple(r) for r in refs], **slow_kwargs)
            assert fast == slow, (cand, refs, kwargs)


def test_word_level_records_reproduce_example_4():
    refs = {"q": {"question_type": "ENTITY",
                  "answers": ["Qin unified China in ten years, from 230 BC to 221 BC."],
                  "entity_answers": [["ten years", "230 BC", "221 BC"]]}}
    preds = {"q": {"answers": ["Qin unified China in 221 BC after the war against other "
                               "kingdoms which lasted ten years."]}}
    out = dureader_score(preds, refs, beta=1.0, gamma=1.0, level="word")
    assert out["ROUGE-L"] == 56.41  # the paper's adapted 0.56 (11/21, 11/18, gamma 1)


# --------------------------------------------------------------------------- dureader2
def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                    encoding="utf-8")
    return path


def _ref(qid, answers, qtype="DESCRIPTION", labels=(), entities=((),)):
    return {"question_id": qid, "question_type": qtype, "source": "search", "answers": answers,
            "yesno_answers": list(labels), "entity_answers": [list(e) for e in entities]}


def _pred(qid, answers, labels=()):
    return {"question_id": qid, "answers": answers, "yesno_answers": list(labels)}


def test_dureader2_is_coco_caption_bleu_and_rouge(tmp_path):
    # dureader_eval.py: coco-caption Bleu(4) (option closest) and Rouge on the characters
    # joined by spaces. "北京" against "北京天安门": guess 2, 1, 0, 0; correct 2, 1, 0, 0;
    # lengths 2 and 5.
    refs = _jsonl(tmp_path / "ref.jsonl", [_ref(1, ["北京天安门"])])
    preds = _jsonl(tmp_path / "pred.jsonl", [_pred(1, ["北 京"])])
    got = dureader_score_files(preds, refs, scorer="dureader2")
    tiny, small = 1e-15, 1e-9
    precisions = [(2 + tiny) / (2 + small), (1 + tiny) / (1 + small), tiny / small, tiny / small]
    ratio = (2 + tiny) / (5 + small)
    bleu4 = math.prod(precisions) ** 0.25 * math.exp(1 - 1 / ratio)
    p, r = 1.0, 2 / 5
    rouge = (1 + 1.2**2) * p * r / (r + 1.2**2 * p)
    assert (got["BLEU-4"], got["ROUGE-L"]) == (round(bleu4 * 100, 2), round(rouge * 100, 2))
    assert (got["alpha"], got["beta"], got["questions"]) == (0.0, 0.0, 1)


def test_dureader2_scores_answers_shorter_than_four_characters(tmp_path):
    # QA's case: every answer has 2 characters, so there are no 3- or 4-grams. The
    # MRC2018 scorer divides by zero (its official script crashes); dureader_eval.py's
    # coco-caption BLEU gives P3 = P4 = 1e-15 / 1e-9 = 1e-6, Bleu-4 0.10.
    refs = _jsonl(tmp_path / "ref.jsonl", [
        _ref(1, ["北京"], "ENTITY", entities=[["北京"]]),
        _ref(2, ["是的"], "YES_NO", labels=["Yes"], entities=[[]]),
    ])
    preds = _jsonl(tmp_path / "pred.jsonl", [_pred(1, ["北京"]), _pred(2, ["是的"], ["Yes"])])
    got = dureader_score_files(preds, refs, scorer="dureader2")
    assert (got["BLEU-4"], got["BLEU-3"], got["ROUGE-L"]) == (0.1, 1.0, 100.0)
    assert got["by_type"]["ENTITY"] == {"ROUGE-L": 100.0, "BLEU-4": 0.1, "questions": 1}
    with pytest.raises(MetricsInputError, match="pred.jsonl: no candidate has 3-grams"):
        dureader_score_files(preds, refs)  # mrc2018


def test_dureader2_leaves_out_questions_whose_answers_are_one_empty_string(tmp_path):
    # dureader_eval.py's prepare_bleu deletes a question whose answers are [] or exactly
    # [""]; mrc_eval.py scores [""] (an empty reference).
    refs = _jsonl(tmp_path / "ref.jsonl", [_ref(1, ["北京天安门广场很大"]), _ref(2, [""])])
    preds = _jsonl(tmp_path / "pred.jsonl", [_pred(1, ["北京天安门广场很大"]),
                                             _pred(2, ["北京天安门广场"])])
    got = dureader_score_files(preds, refs, scorer="dureader2")
    assert (got["BLEU-4"], got["ROUGE-L"]) == (100.0, 100.0)
    assert (got["questions"], got["skipped_empty_references"]) == (1, 1)
    mrc = dureader_score_files(preds, refs)
    assert (mrc["questions"], mrc["skipped_empty_references"], mrc["ROUGE-L"]) == (2, 0, 50.0)


def test_dureader2_empty_answer_is_one_empty_token_to_rouge(tmp_path):
    # A whitespace-only reference is not [""], so it is scored; normalised it is "", which
    # coco-caption's Rouge splits into one empty token, matched by the empty prediction.
    refs = _jsonl(tmp_path / "ref.jsonl", [_ref(1, ["北京天安门"]), _ref(2, ["  "])])
    preds = _jsonl(tmp_path / "pred.jsonl", [_pred(1, ["北京天安门"])])  # 2 unanswered
    got = dureader_score_files(preds, refs, scorer="dureader2")
    assert (got["questions"], got["missing_prediction_ids"]) == (2, 1)
    assert got["ROUGE-L"] == 100.0
    assert dureader_score_files(preds, refs)["ROUGE-L"] == 50.0  # mrc2018: 0 for question 2


def test_predictions_whose_ids_all_miss_name_the_file_and_the_id_type(tmp_path):
    refs = _jsonl(tmp_path / "ref.jsonl", [_ref(327283948, ["Robert Boyle proved it"]),
                                           _ref(453221560, ["Denver Broncos"])])
    preds = _jsonl(tmp_path / "pred.jsonl", [_pred("327283948", ["Robert Boyle proved"]),
                                             _pred("453221560", ["Denver Broncos"])])
    for scorer in ("mrc2018", "dureader2"):
        with pytest.raises(MetricsInputError) as info:
            dureader_score_files(preds, refs, scorer=scorer, level="word")
        assert str(info.value) == (
            f"{preds}: no question_id of the 2 prediction(s) is in the reference file, e.g. "
            "'327283948'; the ids do not match: the string \"327283948\" where the "
            "reference file has the number 327283948")


def test_bonus_weights_must_be_finite_and_not_negative():
    refs = {1: {"question_type": "DESCRIPTION", "answers": ["今天天气很好"]}}
    preds = {1: {"answers": ["今天天气很好"]}}
    for bad in (float("nan"), float("inf"), -1.0):
        with pytest.raises(MetricsInputError, match="alpha must be a finite number >= 0"):
            dureader_score(preds, refs, alpha=bad)
        with pytest.raises(MetricsInputError, match="beta must be a finite number >= 0"):
            scorer_weights("mrc2018", None, bad)
    assert scorer_weights("mrc2018", 0.0, 2.5) == (0.0, 2.5)
