"""Benchmark: adapted BLEU-4 + ROUGE-L (DuReader bonus scorer) and pa-BLEU.

Run from the repository root::

    .venv/bin/python bench/metrics.py [--questions 100000] [--baseline-every 5] [--seed 20180715]

1. Generates DuReader-style questions with a fixed seed: Chinese-like character answers of
   about 60 characters, 3 references each, a third YES_NO (opinion labels), a third ENTITY
   (gold entities cut from the references), a third DESCRIPTION.
2. Scores them with ``collector.metrics.dureader.AdaptedScorer`` (alpha 2.0, beta 1.0, the
   paper's study values): n-gram counting in C via cached slices, bit-parallel LCS.
3. In the same run scores them with the *baseline*: a straightforward pure-Python
   implementation that mirrors the official MRC2018 scorer — n-gram lists and per-call
   dictionaries for BLEU, and for ROUGE-L the dynamic programme over a full
   (|a|+1) x (|b|+1) table, recomputed for the yes-no bonus as the official code does.
   The questions are taken in blocks of 1,000; the baseline scores every k-th block
   (``--baseline-every``, default 5: a 20% sample) right after ours has scored the same
   block, so both run under the same machine load; the speedup is the ratio of their
   times on those blocks, and the output names the sample.
4. Checks the scores are identical (corpus BLEU-4, ROUGE-L and every per-question ROUGE-L,
   compared with ==) on the questions both scored.
5. Times pa-BLEU for 20 references x 1,000 candidates (weights + all candidate scores).

The last line is ``RESULT metrics speedup=<x> identical=<1|0> pa_bleu_s=<s>``.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from collector.metrics.dureader import AdaptedScorer  # noqa: E402
from collector.metrics.lcs import lcs_length_dp, lcs_lengths  # noqa: E402
from collector.metrics.pa import PaScorer  # noqa: E402

ALPHA, BETA, GAMMA = 2.0, 1.0, 1.2
CHARS = (
    "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过"
    "家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本"
    "见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己"
)
PA_WORDS = (
    "children can travel in the front rear seat of a car they need child if under age 12 "
    "years old and less than 135cm tall law requires all must use correct until height "
    "driver is responsible for restraining"
)
ASCII_WORDS = ["USB", "WiFi", "CPU", "2018", "km", "APP", "NBA", "mp3", "1.5", "ok"]


@dataclass
class Question:
    qtype: str
    cand: str
    refs: list[str]
    label: str | None
    ref_labels: list[str]
    entities: list[str] | None


# --------------------------------------------------------------------------- data
def _text(rng: random.Random, length: int) -> str:
    parts = []
    while sum(map(len, parts)) < length:
        if rng.random() < 0.08:
            parts.append(rng.choice(ASCII_WORDS))
        else:
            parts.append("".join(rng.choices(CHARS, k=rng.randint(2, 8))))
    return "".join(parts)[:length]


def _mutate(rng: random.Random, base: str) -> str:
    out = list(base)
    for _ in range(rng.randint(2, 8)):
        pos = rng.randrange(len(out) + 1)
        op = rng.random()
        if op < 0.4 and out:
            del out[pos : pos + rng.randint(1, 4)]
        elif op < 0.7:
            out[pos:pos] = _text(rng, rng.randint(1, 5))
        elif out:
            out[pos : pos + 2] = _text(rng, 2)
    return "".join(out)


def generate(n: int, seed: int) -> list[Question]:
    rng = random.Random(seed)  # noqa: S311 - reproducible benchmark data
    questions = []
    for i in range(n):
        base = _text(rng, rng.randint(50, 70))
        refs = [_mutate(rng, base) for _ in range(3)]
        cand = _mutate(rng, base)
        qtype = ("YES_NO", "ENTITY", "DESCRIPTION")[i % 3]
        label, ref_labels, entities = None, [], None
        if qtype == "YES_NO":
            ref_labels = [rng.choice(("Yes", "No", "Depends")) for _ in refs]
            label = rng.choice(("Yes", "No", "Depends"))
        elif qtype == "ENTITY":
            entities = []
            for _ in range(rng.randint(1, 3)):
                ref = rng.choice(refs)
                start = rng.randrange(max(1, len(ref) - 4))
                entities.append(ref[start : start + rng.randint(2, 4)])
        questions.append(Question(qtype, cand, refs, label, ref_labels, entities))
    return questions


# --------------------------------------------------------------------------- baseline
def _ngrams(text: str, size: int, label: str | None = None) -> list[str]:
    grams = [text[i : i + size] for i in range(len(text) - size + 1)]
    if label is not None:
        grams = [g + "_" + label for g in grams]
    return grams


def _match_size(cand: list[str], refs: list[list[str]]) -> int:
    best: dict[str, int] = {}
    for ref in refs:
        counts: dict[str, int] = {}
        for g in ref:
            counts[g] = counts.get(g, 0) + 1
        for g, c in counts.items():
            best[g] = max(best.get(g, 0), c)
    mine: dict[str, int] = {}
    for g in cand:
        mine[g] = mine.get(g, 0) + 1
    return sum(min(c, best.get(g, 0)) for g, c in mine.items())


class Baseline:
    """Pure-Python mirror of the official scorer, accumulated block by block."""

    def __init__(self) -> None:
        self.match = [0.0] * 4
        self.total = [0.0] * 4
        self.bp_c = self.bp_r = 0
        self.per_q: list[float] = []

    def add(self, q: Question) -> float:
        for k in range(4):
            cand = _ngrams(q.cand, k + 1)
            self.match[k] += _match_size(cand, [_ngrams(r, k + 1) for r in q.refs])
            self.total[k] += len(cand)
        self.bp_c += len(q.cand)
        self.bp_r += min((abs(len(q.cand) - len(r)), len(r)) for r in q.refs)[1]
        if q.label is not None:
            for k in range(4):
                m = _match_size(_ngrams(q.cand, k + 1, q.label),
                                [_ngrams(r, k + 1, lab) for r, lab in zip(q.refs, q.ref_labels,
                                                                           strict=True)])
                self.match[k] += ALPHA * m
                self.total[k] += ALPHA * m
        elif q.entities is not None:
            for k in range(4):
                m = _match_size(_ngrams(q.cand, k + 1, "ENTITY"),
                                [_ngrams(e, k + 1, "ENTITY") for e in set(q.entities)])
                self.match[k] += BETA * m
                self.total[k] += BETA * m
        precs, recs = [], []
        for i, ref in enumerate(q.refs):
            basic = lcs_length_dp(q.cand, ref)
            yn = ent = 0.0
            if q.label is not None:
                yn = float(lcs_length_dp(q.cand, ref)) if q.label == q.ref_labels[i] else 0.0
            elif q.entities is not None:
                ent = float(sum(len(e) for e in set(q.entities) if e in q.cand))
            p_den = len(q.cand) + ALPHA * yn + BETA * ent
            r_den = len(ref) + ALPHA * yn + BETA * ent
            num = basic + ALPHA * yn + BETA * ent
            precs.append(num / p_den if p_den > 0 else 0.0)
            recs.append(num / r_den if r_den > 0 else 0.0)
        p, r = max(precs), max(recs)
        score = ((1 + GAMMA**2) * p * r) / float(r + GAMMA**2 * p) if p and r else 0.0
        self.per_q.append(score)
        return score

    def bleu4(self) -> float:
        probs = [self.match[k] / float(self.total[k]) for k in range(4)]
        cum = probs[0]
        for k in range(1, 4):
            cum = cum * probs[k]
        return cum ** (1.0 / 4.0) * math.exp(min(1 - self.bp_r / float(self.bp_c), 0))

    def rouge_l(self) -> float:
        return 1.0 * sum(self.per_q) / len(self.per_q)


# --------------------------------------------------------------------------- LCS kernel
def lcs_kernel_ratio(questions: list[Question]) -> tuple[float, float]:
    start = time.perf_counter()
    fast = [lcs_lengths(q.cand, q.refs) for q in questions]
    t_fast = time.perf_counter() - start
    start = time.perf_counter()
    slow = [[lcs_length_dp(q.cand, r) for r in q.refs] for q in questions]
    t_slow = time.perf_counter() - start
    assert fast == slow
    return t_fast, t_slow


# --------------------------------------------------------------------------- pa-BLEU
def pa_bleu_timing(seed: int, n_refs: int = 20, n_cands: int = 1000) -> tuple[float, float]:
    rng = random.Random(seed)  # noqa: S311 - reproducible benchmark data
    words = PA_WORDS.split()

    def sentence() -> str:
        return " ".join(rng.choices(words[:30], k=rng.randint(6, 12))) + ". " + " ".join(
            rng.choices(words, k=rng.randint(4, 14))) + "."

    base = sentence()
    refs = [base if rng.random() < 0.3 else sentence() for _ in range(n_refs)]
    cands = [sentence() for _ in range(n_cands)]
    start = time.perf_counter()
    scorer = PaScorer(refs, metric="bleu")
    scores = [scorer.score(c).score for c in cands]
    elapsed = time.perf_counter() - start
    return elapsed, max(scores)


# --------------------------------------------------------------------------- main
BLOCK = 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100_000)
    parser.add_argument("--baseline-every", type=int, default=5,
                        help="run the baseline on every k-th block of 1,000 questions (5)")
    parser.add_argument("--seed", type=int, default=20180715)
    args = parser.parse_args()

    n = args.questions
    every = max(1, args.baseline_every)
    t0 = time.perf_counter()
    questions = generate(n, args.seed)
    t_gen = time.perf_counter() - t0
    chars = sum(len(q.cand) for q in questions) / n
    ref_chars = sum(len(r) for q in questions for r in q.refs) / (3 * n)
    print(f"questions: {n:,} generated in {t_gen:.1f} s (seed {args.seed}); mean candidate "
          f"{chars:.1f} chars, mean reference {ref_chars:.1f} chars, 3 references; "
          f"alpha={ALPHA} beta={BETA} gamma={GAMMA}")

    # Blocks are scored in turn by ours and, for every k-th block, right after by the
    # baseline, so that both see the same machine load (the ratio is paired by block).
    t_ours = t_ours_paired = t_base = 0.0
    sampled: list[Question] = []
    ours_all = AdaptedScorer(alpha=ALPHA, beta=BETA, gamma=GAMMA)
    ours_sample = AdaptedScorer(alpha=ALPHA, beta=BETA, gamma=GAMMA)
    base = Baseline()
    for b, lo in enumerate(range(0, n, BLOCK)):
        block = questions[lo : lo + BLOCK]
        start = time.perf_counter()
        for q in block:
            ours_all.add(q.cand, q.refs, yesno_label=q.label,
                         reference_labels=q.ref_labels if q.qtype == "YES_NO" else None,
                         entities=q.entities)
        elapsed = time.perf_counter() - start
        t_ours += elapsed
        if b % every == 0:
            t_ours_paired += elapsed
            start = time.perf_counter()
            for q in block:
                base.add(q)
            t_base += time.perf_counter() - start
            sampled.extend(block)
            for q in block:  # untimed: the same blocks scored into their own corpus
                ours_sample.add(q.cand, q.refs, yesno_label=q.label,
                                reference_labels=q.ref_labels if q.qtype == "YES_NO" else None,
                                entities=q.entities)
    bleu_all, rouge_all = ours_all.bleu.score()[-1], ours_all.rouge.score()
    m = len(sampled)
    print(f"ours (AdaptedScorer: C-level n-gram counting, bit-parallel LCS): {t_ours:.2f} s "
          f"for {n:,} questions = {t_ours / n * 1e6:.1f} us/question; "
          f"BLEU-4 {bleu_all * 100:.4f} ROUGE-L {rouge_all * 100:.4f}")
    label = ("all questions" if every == 1 else
             f"every {every}th block of {BLOCK:,} questions ({m:,} questions, a "
             f"{100 / every:g}% sample; its time is scaled x{n / m:g})")
    print(f"baseline (pure-Python mirror of the official MRC2018 scorer, full-table DP LCS) "
          f"on {label}: {t_base:.2f} s = {t_base / m * 1e6:.1f} us/question; ours on the "
          f"same blocks: {t_ours_paired:.2f} s = {t_ours_paired / m * 1e6:.1f} us/question")

    bleu_o, rouge_o = ours_sample.bleu.score()[-1], ours_sample.rouge.score()
    identical = int(bleu_o == base.bleu4() and rouge_o == base.rouge_l()
                    and ours_sample.rouge.scores == base.per_q)
    print(f"identical scores on the {m:,} baseline questions (corpus BLEU-4 {bleu_o * 100:.6f}, "
          f"ROUGE-L {rouge_o * 100:.6f} and each per-question ROUGE-L, exact float "
          f"equality): {'yes' if identical else 'NO'}")

    speedup = t_base / t_ours_paired
    print(f"speedup vs that baseline, end to end (BLEU-4 + ROUGE-L), paired by block: "
          f"{t_base:.2f} s / {t_ours_paired:.2f} s = {speedup:.1f}x (target >= 20x); "
          f"baseline time for all {n:,} questions, scaled: {t_base * n / m:.1f} s vs ours "
          f"{t_ours:.2f} s")

    kernel = sampled[: min(m, 5_000)]
    t_fast, t_slow = lcs_kernel_ratio(kernel)
    print(f"LCS kernel alone on {len(kernel):,} questions x 3 references: bit-parallel "
          f"{t_fast:.3f} s vs full-table DP {t_slow:.2f} s = {t_slow / t_fast:.1f}x")

    pa_s, best = pa_bleu_timing(args.seed)
    print(f"pa-BLEU, 20 references x 1,000 candidates (weights + scores): {pa_s:.3f} s "
          f"(best candidate {best:.4f})")
    print(f"RESULT metrics speedup={speedup:.1f} identical={identical} pa_bleu_s={pa_s:.3f}")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
