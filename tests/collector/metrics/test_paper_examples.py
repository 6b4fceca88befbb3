"""Examples 1-4 of *Adaptations of ROUGE and BLEU to Better Evaluate MRC* (Yang et al.).

English word tokens with the period counted (the paper's footnote 1), computed with the
same code as the DuReader scorer (``level="word"``). Every count the paper prints (bigrams,
hits, bonus counts, LCS lengths, entity length sum) is asserted exactly. For the final
ROUGE-L values: the paper computes the plain harmonic mean, gamma = 1 (its footnote 2),
not the gamma = 1.2 of its section 4; where a printed value does not follow from its own
P and R, the assertion message says so.
"""

from __future__ import annotations

import pytest

from collector.metrics.dureader import AdaptedBleu, adapted_rouge_l, rouge_l_f
from collector.metrics.tokenize import word_tokens

PRED_YN = word_tokens("Skipping rope is an aerobic exercise.")
GOLD_YN = [
    word_tokens("Skipping rope is a kind of aerobic exercise with low intensity."),
    word_tokens("Skipping rope can be regarded as an aerobic exercise only when skipping "
                "for a long time."),
]
LABELS = ["Yes", "Depends"]
PRED_ENT = word_tokens("Qin unified China in 221 BC after the war against other kingdoms "
                       "which lasted ten years.")
GOLD_ENT = [word_tokens("Qin unified China in ten years, from 230 BC to 221 BC.")]
ENTITIES = [word_tokens("ten years"), word_tokens("230 BC"), word_tokens("221 BC")]


def test_token_counts_include_the_period():
    assert len(PRED_YN) == 7 and len(GOLD_YN[0]) == 12 and len(GOLD_YN[1]) == 17
    assert len(PRED_ENT) == 17 and len(GOLD_ENT[0]) == 14


def test_example_1_adapted_p2_yes_no():
    bleu = AdaptedBleu(4, alpha=1.0)
    stats = bleu.add(PRED_YN, GOLD_YN, yesno_label="Yes", reference_labels=LABELS)
    assert stats.candidates[1] == 6  # "Number of predicted bigrams: 6"
    assert stats.matches[1] == 4  # "Number of hit predicted bigrams: 4"
    assert stats.bonus_kind == "yesno"
    assert stats.bonus_matches[1] == 3  # "Bigram count for bonus: 3 (hit gold answer 1)"
    assert round(stats.matches[1] / stats.candidates[1], 2) == 0.67  # vanilla P2
    assert bleu.precisions()[1] == pytest.approx(7 / 9)
    assert round(bleu.precisions()[1], 2) == 0.78  # adapted P2 = (4 + 3) / (6 + 3)


def test_example_2_adapted_p2_entity():
    bleu = AdaptedBleu(4, beta=1.0)
    stats = bleu.add(PRED_ENT, GOLD_ENT, entities=ENTITIES)
    assert stats.candidates[1] == 16
    assert stats.matches[1] == 5
    assert stats.bonus_kind == "entity"
    assert stats.bonus_matches[1] == 2  # "221 BC" and "ten years"
    assert round(5 / 16, 2) == 0.31
    assert bleu.precisions()[1] == pytest.approx(7 / 18)
    assert round(bleu.precisions()[1], 2) == 0.39


def test_example_3_adapted_rouge_l_yes_no():
    adapted = adapted_rouge_l(PRED_YN, GOLD_YN, yesno_label="Yes", reference_labels=LABELS,
                              alpha=1.0, gamma=1.0)
    first = adapted.references[0]
    assert first.lcs == 6  # "LCS length: 6"
    assert first.yesno_bonus == 6  # "LCS length for bonus: 6 (LCS to gold answer 1)"
    assert adapted.references[1].yesno_bonus == 0  # gold 2 is "Depends"
    assert adapted.precision == pytest.approx(12 / 13)  # (6 + 6) / (7 + 6)
    assert adapted.recall == pytest.approx(12 / 18)  # (6 + 6) / (12 + 6)
    assert round(adapted.precision, 2) == 0.92 and round(adapted.recall, 2) == 0.67

    # Adapted ROUGE-L printed 0.78: gamma = 1 (footnote 2). The exact value is 0.774; the
    # paper's 0.78 comes from the already rounded P = 0.92 and R = 0.67.
    assert round(adapted.score, 2) == 0.77, "exact adapted ROUGE-L (gamma 1) is 0.774"
    assert round(rouge_l_f(0.92, 0.67, gamma=1.0), 2) == 0.78, "paper rounded P, R first"
    gamma_12 = adapted_rouge_l(PRED_YN, GOLD_YN, yesno_label="Yes", reference_labels=LABELS)
    assert round(gamma_12.score, 2) == 0.75, "with gamma = 1.2 it would print 0.75"

    # Vanilla ROUGE-L printed 0.59 does NOT follow from the example's own counts.
    vanilla = adapted_rouge_l(PRED_YN, GOLD_YN, gamma=1.0)
    assert (vanilla.precision, vanilla.recall) == (pytest.approx(6 / 7), 0.5)
    assert round(vanilla.score, 2) == 0.63, (
        "P = 6/7 and R = 6/12 give 0.63 (0.60 with gamma 1.2), not the printed 0.59")
    no_period = [tuple(t for t in seq if t != ".") for seq in [PRED_YN, *GOLD_YN]]
    vanilla_np = adapted_rouge_l(no_period[0], no_period[1:], gamma=1.0)
    assert round(vanilla_np.score, 2) == 0.59, (
        "0.59 is what tokens without the period give: P = 5/6, R = 5/11")


def test_example_3_trivial_answer_margins():
    trivial = word_tokens("exercise with low intensity")
    score = adapted_rouge_l(trivial, GOLD_YN, gamma=1.0).score
    assert score == 0.5  # P = 4/4, R = 4/12
    assert round(0.78 - score, 2) == 0.28  # "0.28 higher point" with the printed 0.78
    assert round(0.59 - score, 2) == 0.09  # "narrows to only 0.09" with the printed 0.59


def test_example_4_adapted_rouge_l_entity():
    adapted = adapted_rouge_l(PRED_ENT, GOLD_ENT, entities=ENTITIES, beta=1.0, gamma=1.0)
    ref = adapted.references[0]
    assert ref.lcs == 7  # "LCS length: 7"
    assert ref.entity_bonus == 4  # "Entity length sum for bonus: 4" (ten years + 221 BC)
    assert adapted.precision == pytest.approx(11 / 21)  # (7 + 4) / (17 + 4)
    assert adapted.recall == pytest.approx(11 / 18)  # (7 + 4) / (14 + 4)
    assert round(adapted.precision, 2) == 0.52 and round(adapted.recall, 2) == 0.61
    assert round(adapted.score, 2) == 0.56  # printed 0.56, gamma = 1
    vanilla = adapted_rouge_l(PRED_ENT, GOLD_ENT, gamma=1.0)
    assert round(vanilla.score, 2) == 0.45  # printed 0.45, gamma = 1
    gamma_12 = adapted_rouge_l(PRED_ENT, GOLD_ENT, entities=ENTITIES, beta=1.0)
    assert round(gamma_12.score, 2) == 0.57, "with gamma = 1.2 it would print 0.57"


def test_example_4_shorter_candidate_claims():
    short = word_tokens("Qin unified China in 221 BC after the war against other kingdoms")
    vanilla_short = adapted_rouge_l(short, GOLD_ENT, gamma=1.0).score
    vanilla_long = adapted_rouge_l(PRED_ENT, GOLD_ENT, gamma=1.0).score
    # The claim that vanilla ROUGE-L prefers the shorter answer holds ...
    assert vanilla_short > vanilla_long
    # ... but its printed 0.53 is not the vanilla value (P = 6/12, R = 6/14 give 0.46);
    # 0.53 is the shorter answer's ADAPTED score with beta = 1 (bonus 2 for "221 BC").
    assert round(vanilla_short, 2) == 0.46, "printed 0.53 does not follow from P, R"
    adapted_short = adapted_rouge_l(short, GOLD_ENT, entities=ENTITIES, gamma=1.0).score
    assert round(adapted_short, 2) == 0.53
    # "rectified ... with beta > 2.6" does not follow either: the longer answer already
    # wins from beta = 2/11 (about 0.18) on.
    for beta, long_wins in [(0.17, False), (0.19, True), (1.0, True), (2.6, True)]:
        long_score = adapted_rouge_l(PRED_ENT, GOLD_ENT, entities=ENTITIES, beta=beta,
                                     gamma=1.0).score
        short_score = adapted_rouge_l(short, GOLD_ENT, entities=ENTITIES, beta=beta,
                                      gamma=1.0).score
        assert (long_score > short_score) is long_wins, beta
