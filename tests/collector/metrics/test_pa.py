"""pa-metrics: the answer-distillation paper's Table 2, to the precision its README sets.

``data/datasets/metric-vectors/pa_table2/README.md`` establishes what is reproducible:
the BLEU column for candidates 3-5 at 2 decimals, every pa-BLEU value within 0.01, and
j = i included in Imp (candidate 4). METEOR / pa-METEOR cannot be reproduced from Eq. 9 with
these references (candidate 3's 0.97 is impossible: at most 11 of its 26 tokens match any
reference), so they are checked against the Eq. 9 values the README computed.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from itertools import combinations, permutations, product

import pytest

from collector.metrics.pa import (
    PaScorer,
    _crossings,
    count_chunks,
    flag_outliers,
    meteor,
    meteor_alignment,
    pa_bleu,
    pa_metric,
    pa_score,
    pairwise_bleu,
)
from collector.metrics.tokenize import pa_tokens
from tests.collector.metrics.vectors import REPO, VECTORS

INPUTS = json.loads((VECTORS / "pa_table2" / "inputs.json").read_text(encoding="utf-8"))
REFS = INPUTS["references"]
CANDS = INPUTS["candidates"]

# The README's 4-decimal values for candidates 1-5.
README_BLEU = [0.5851, 0.6725, 0.3640, 0.8485, 1.0000]
README_PA_BLEU = [0.1634, 0.0287, 0.0374, 0.0114, 0.0219]
README_PA_BLEU_NO_SELF = [0.1716, 0.0250, 0.0353, 0.0000, 0.0201]
README_METEOR = [0.7778, 0.5829, 0.6368, 0.9271, 0.4359]
README_PA_METEOR = [0.4506, 0.2364, 0.2012, 0.1708, 0.1785]


@pytest.fixture(scope="module")
def bleu_scorer():
    return PaScorer(REFS, metric="bleu")


@pytest.fixture(scope="module")
def meteor_scorer():
    return PaScorer(REFS, metric="meteor")


def test_inputs_are_the_papers_table():
    assert len(REFS) == 20 and [c["id"] for c in CANDS] == [1, 2, 3, 4, 5]


def test_bleu_column(bleu_scorer):
    got = [bleu_scorer.plain_score(c["text"]) for c in CANDS]
    assert [round(g, 4) for g in got] == README_BLEU
    for cand, value in zip(CANDS[2:], got[2:], strict=True):  # #3, #4, #5 exact at 2 dp
        assert round(value, 2) == cand["paper"]["BLEU"]
    # #1 and #2 print 0.50 / 0.63: no BLEU variant gives these (README), ours is above.
    assert round(got[0] - 0.50, 2) == 0.09 and round(got[1] - 0.63, 2) == 0.04


def test_pa_bleu_column_within_001(bleu_scorer):
    got = [bleu_scorer.score(c["text"]).score for c in CANDS]
    assert [round(g, 4) for g in got] == README_PA_BLEU
    for cand, value in zip(CANDS, got, strict=True):
        assert abs(value - cand["paper"]["pa-BLEU"]) <= 0.01, cand["id"]
    assert round(got[2], 2) == 0.04 and round(got[3], 2) == 0.01  # #3, #4 exact at 2 dp
    assert max(got) == got[0]  # the paper's bold: candidate 1 is best


def test_imp_includes_the_reference_itself():
    """Candidate 4 decides Eq. 2: only reference 19 is similar to it, and reference 19 has
    BLEU 0 with every other reference, so without j = i pa-BLEU(#4) is 0.00, not 0.01."""
    cand4 = pa_tokens(CANDS[3]["text"])
    sims = [pairwise_bleu(cand4, pa_tokens(r)) for r in REFS]
    assert [i for i, s in enumerate(sims) if s > 0] == [18]
    ref19 = pa_tokens(REFS[18])
    assert all(pairwise_bleu(ref19, pa_tokens(r)) == 0 for j, r in enumerate(REFS) if j != 18)
    with_self = pa_bleu(CANDS[3]["text"], REFS).score
    without = pa_bleu(CANDS[3]["text"], REFS, include_self=False).score
    assert round(with_self, 2) == CANDS[3]["paper"]["pa-BLEU"] == 0.01
    assert without == 0.0
    no_self = PaScorer(REFS, metric="bleu", include_self=False)
    assert [round(no_self.score(c["text"]).score, 4) for c in CANDS] == README_PA_BLEU_NO_SELF


def test_meteor_matches_eq9_not_the_paper(meteor_scorer):
    got = [meteor_scorer.plain_score(c["text"]) for c in CANDS]
    assert [round(g, 4) for g in got] == README_METEOR
    pa = [meteor_scorer.score(c["text"]).score for c in CANDS]
    assert [round(p, 4) for p in pa] == README_PA_METEOR
    # Documented difference from the printed table (lenient METEOR tool in the paper):
    assert round(got[2], 2) != CANDS[2]["paper"]["METEOR"] == 0.97
    cand3 = Counter(pa_tokens(CANDS[2]["text"]))
    assert sum(cand3.values()) == 26
    assert max(sum((cand3 & Counter(pa_tokens(r))).values()) for r in REFS) == 11


def test_reference_weights_and_outliers(bleu_scorer):
    weights = bleu_scorer.weights
    assert len(weights) == 20 and all(w >= 1.0 for w in weights)  # self-similarity is 1
    assert weights[18] == 1.0  # reference 19 only agrees with itself
    assert 18 in flag_outliers(weights)


def test_pa_metric_with_any_similarity():
    def overlap(a: str, b: str) -> float:
        sa, sb = set(a.split()), set(b.split())
        return len(sa & sb) / len(sa | sb)

    refs = ["a b c", "a b d", "x y z"]
    res = pa_metric("a b", refs, overlap)
    imp = [1 + 0.5 + 0, 0.5 + 1 + 0, 0 + 0 + 1]
    sims = [2 / 3, 2 / 3, 0]
    assert res.weights == pytest.approx(imp)
    assert res.score == pytest.approx(sum(s * w for s, w in zip(sims, imp, strict=True)) / sum(imp))
    assert pa_metric("q", ["a"], lambda a, b: 0.0).score == 0.0  # no weight at all


def test_meteor_alignment_fewest_crossings_then_chunks():
    # Swapping the two "the" would give the 2-chunk reading "the cat sat | on the mat", but
    # it has 9 crossings against 8 for the in-order mapping: Banerjee & Lavie's rule (most
    # matches, then fewest crossings) keeps the in-order one, with 5 chunks.
    cand = ["the", "cat", "sat", "on", "the", "mat"]
    ref = ["on", "the", "mat", "the", "cat", "sat"]
    pairs = meteor_alignment(cand, ref)
    assert pairs == [(0, 1), (1, 4), (2, 5), (3, 0), (4, 3), (5, 2)]
    assert count_chunks(pairs) == 5
    assert meteor(cand, ref) == pytest.approx((1 - 0.5 * (5 / 6) ** 3) * 6 / (0.1 * 6 + 0.9 * 6))
    # Equal crossings (0): the fewest chunks wins.
    assert meteor_alignment(["the", "cat", "sat"], ["the", "cat", "the", "cat", "sat"]) == [
        (0, 2), (1, 3), (2, 4)]
    assert meteor(cand, ["dog"]) == 0.0
    identical = meteor(cand, cand)
    assert identical == pytest.approx(1 - 0.5 * (1 / 6) ** 3)


def test_pa_tokens_split_chinese_and_japanese_by_character():
    assert pa_tokens("法律规定12岁以下。Child-seat 答案abc") == (
        "法", "律", "规", "定", "12", "岁", "以", "下", "。", "child", "-", "seat",
        "答", "案", "abc")
    assert pa_tokens("ひらがなカナ") == tuple("ひらがなカナ")
    assert pa_tokens("Ünïcödé answer, it's") == ("ünïcödé", "answer", ",", "it", "'", "s")
    same = pa_tokens("十二岁以下的儿童不能坐前排")
    assert pairwise_bleu(same, same) == 1.0


def test_pairwise_bleu_basics():
    a = pa_tokens("children can travel in the front seat of a car.")
    assert pairwise_bleu(a, a) == 1.0
    assert pairwise_bleu(pa_tokens("a b c"), pa_tokens("a b c")) == 0.0  # no 4-gram
    shorter = a[:-3]
    bp = pytest.approx(math.exp(1 - len(a) / len(shorter)))
    assert pairwise_bleu(shorter, a) == bp


def _eq9(m: int, chunks: int, l1: int, l2: int) -> float:
    return (1 - 0.5 * (chunks / m) ** 3) * m / (0.1 * l1 + 0.9 * l2) if m else 0.0


def _brute_force_meteor(cand: list[str], ref: list[str]) -> float:
    """Eq. 9 with the least (crossings, chunks) over every maximum one-to-one matching,
    crossing ones included: each word's occurrences on its shorter side mapped
    injectively, in any order, into those on its longer side."""
    per_word = []
    for word in dict.fromkeys(cand):
        ci = [i for i, t in enumerate(cand) if t == word]
        rj = [j for j, t in enumerate(ref) if t == word]
        if not rj:
            continue
        if len(ci) <= len(rj):
            per_word.append([list(zip(ci, js, strict=True)) for js in permutations(rj, len(ci))])
        else:
            per_word.append([list(zip(is_, rj, strict=True))
                             for is_ in permutations(ci, len(rj))])
    best = min(((_crossings(pairs), count_chunks(pairs))
                for pairs in ([p for part in combo for p in part] for combo in product(*per_word))),
               default=(0, 0))
    m = sum(len(options[0]) for options in per_word)
    return _eq9(m, best[1], len(cand), len(ref))


def test_meteor_equals_brute_force_on_small_random_inputs():
    rng = random.Random(5)  # noqa: S311 - reproducible test data
    for _ in range(1500):
        cand = [rng.choice("abcd") for _ in range(rng.randint(0, 7))]
        ref = [rng.choice("abcd") for _ in range(rng.randint(0, 7))]
        assert meteor(cand, ref) == pytest.approx(_brute_force_meteor(cand, ref), abs=1e-12), (
            cand, ref)


def _descent_by_enumeration(cand: list[str], ref: list[str]) -> list[tuple[int, int]]:
    """The coordinate descent spelled out: every choice of every word tried in turn."""
    fixed, choices = [], []
    for word in dict.fromkeys(cand):
        ci = [i for i, t in enumerate(cand) if t == word]
        rj = [j for j, t in enumerate(ref) if t == word]
        if not rj:
            continue
        if len(ci) == len(rj):
            fixed += list(zip(ci, rj, strict=True))
        elif len(ci) > len(rj):
            choices.append([list(zip(s, rj, strict=True)) for s in combinations(ci, len(rj))])
        else:
            choices.append([list(zip(ci, s, strict=True)) for s in combinations(rj, len(ci))])

    def cost(sel):
        pairs = fixed + [p for opts, s in zip(choices, sel, strict=True) for p in opts[s]]
        return _crossings(pairs), count_chunks(pairs)

    picked = [0] * len(choices)
    current, improved = cost(picked), True
    while improved:
        improved = False
        for t, opts in enumerate(choices):
            for s in range(len(opts)):
                trial = picked[:t] + [s] + picked[t + 1:]
                if s != picked[t] and cost(trial) < current:
                    picked, current, improved = trial, cost(trial), True
    return sorted(fixed + [p for opts, s in zip(choices, picked, strict=True) for p in opts[s]])


def test_meteor_descent_equals_trying_every_choice_of_each_word():
    # Past 512 combinations the alignment is a coordinate descent whose steps are found by
    # a dynamic programme instead of by trying every choice; the result is the same.
    rng = random.Random(11)  # noqa: S311 - reproducible test data
    tried = 0
    while tried < 150:
        words = "abcdef"[: rng.randint(2, 6)]
        weights = [rng.random() ** 3 for _ in words]
        cand = rng.choices(words, weights, k=rng.randint(0, 20))
        ref = rng.choices(words, weights, k=rng.randint(0, 20))
        if any(math.comb(max(cand.count(w), ref.count(w)), min(cand.count(w), ref.count(w)))
               > 300 for w in words):
            continue  # too slow to spell out
        tried += 1
        expected = _descent_by_enumeration(cand, ref)
        assert meteor_alignment(cand, ref, max_exhaustive=0) == expected, (cand, ref)


def test_meteor_of_long_repetitive_answers_is_polynomial():
    # QA's inputs: every choice of which "the" to match was built before (C(40, 10) of them
    # for the pa-METEOR file, C(328, ...) for the paragraphs): minutes and gigabytes.
    refs = [" ".join(["the man saw the dog"] * 20) + ".", "a short other answer about the dog"]
    cands = [" ".join(["the cat"] * 10) + "."]
    result = pa_score(refs, cands, metric="meteor")["queries"][0]["candidates"][0]
    # 10 "the" and the period match the first reference, each its own chunk (0 crossings);
    # one "the" matches the second.
    assert result["similarities"] == [pytest.approx(_eq9(11, 11, 21, 101)),
                                      pytest.approx(_eq9(1, 1, 21, 7))]
    # 30 of 60 "the": the first 30 face the reference's 30 as one chunk.
    assert meteor(["the"] * 60, ["the"] * 30) == pytest.approx(_eq9(30, 1, 60, 30))
    data = json.loads((REPO / "data/datasets/squad_v1.1_dev/dev-v1.1.sample.json").read_text(
        encoding="utf-8"))
    contexts = sorted((p["context"] for a in data["data"] for p in a["paragraphs"]), key=len)
    a, b = pa_tokens(contexts[-2]), pa_tokens(contexts[-1])
    assert (len(a), len(b)) == (183, 328)
    pairs = meteor_alignment(a, b)
    assert len(pairs) == sum((Counter(a) & Counter(b)).values()) == 74
    assert all(a[i] == b[j] for i, j in pairs)
    assert len({i for i, _ in pairs}) == len({j for _, j in pairs}) == 74
    assert (_crossings(pairs), count_chunks(pairs)) == (377, 74)  # in order: 781 crossings
    assert meteor(a, b) == pytest.approx(_eq9(74, 74, 183, 328))
    assert meteor(b, a) == pytest.approx(_eq9(74, 74, 328, 183))
