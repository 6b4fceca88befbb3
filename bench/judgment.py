"""Benchmark: the human judgment study (adapted-metrics paper section 4) at the paper's size.

Run from the repository root::

    .venv/bin/python bench/judgment.py [--questions 500] [--systems 5] [--resamples 100]

1. Generates DuReader-style data with a fixed seed, in the paper's proportions: 500
   questions (201 yes-no, 201 entity, 98 description), 1-3 references of about 60
   Chinese-like characters each (opinion labels on yes-no references, gold entities cut
   from entity references), 5 systems' answers (2,500 candidates), 2 raters' 1-5 scores
   per candidate (5,000 ratings).
2. Runs ``collector.metrics.judgment.judgment_study`` as the platform's study stage does:
   per-candidate ROUGE-L and BLEU-4 with and without the bonuses, Table 1, Table 2 with
   100-resample bootstrap intervals and the paired tests, Table 3 (30 questions x 100
   draws x 5 systems per type and overall) and both sweeps (alpha and beta in 0..5, 11
   points each).
3. Times each phase (the progress callback marks them) and the whole study; the baseline
   is the issue's target of 30 s. scipy.stats is imported before the clock starts (a
   worker process imports it once; its import time is printed).

The last line is ``RESULT judgment study_s=<s> target_s=30 ratio=<study / target> ...``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from collector.metrics.judgment import (  # noqa: E402
    judgment_study,
    parse_prediction,
    parse_reference,
)

TARGET_S = 30.0
CHARS = (
    "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过"
    "家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本"
)


def generate(questions: int, systems: int, seed: int) -> tuple[dict, dict, list[dict]]:
    rng = random.Random(seed)  # noqa: S311 (benchmark data)
    n_yes = round(questions * 201 / 500)
    n_ent = round(questions * 201 / 500)
    types = ["YES_NO"] * n_yes + ["ENTITY"] * n_ent + ["DESCRIPTION"] * (
        questions - n_yes - n_ent)
    refs, preds, ratings = {}, {f"system{s + 1}": {} for s in range(systems)}, []
    for q, qtype in enumerate(types):
        qid = 100000 + q
        answers = ["".join(rng.choice(CHARS) for _ in range(rng.randint(40, 80)))
                   for _ in range(rng.randint(1, 3))]
        labels = [rng.choice(("Yes", "No", "Depends")) for _ in answers]
        entities = [[a[5:9], a[20:23]] for a in answers]
        refs[qid] = parse_reference({
            "question_id": qid, "question_type": qtype, "answers": answers,
            "yesno_answers": labels if qtype == "YES_NO" else [],
            "entity_answers": entities if qtype == "ENTITY" else [[] for _ in answers]})
        for s, name in enumerate(preds):
            base = rng.choice(answers)
            keep = rng.randint(10, len(base))
            text = base[:keep] + "".join(rng.choice(CHARS) for _ in range(rng.randint(0, 30)))
            right = rng.random() < 0.35 + 0.1 * s
            label = labels[answers.index(base)] if right else "No"
            preds[name][qid] = parse_prediction({
                "question_id": qid, "answers": [text],
                "yesno_answers": [label] if qtype == "YES_NO" else []})
            quality = 1 + 3 * keep / len(base) + (1 if right else -1)
            for rater in ("rater1", "rater2"):
                score = min(5, max(1, round(quality + rng.gauss(0, 0.6))))
                ratings.append({"question_id": qid, "system": name, "rater": rater,
                                "score": score})
    return refs, preds, ratings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--systems", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=100)
    parser.add_argument("--seed", type=int, default=20180715)
    args = parser.parse_args()

    started = time.perf_counter()
    from scipy import stats  # noqa: F401  (a worker imports it once, not per study)

    import_s = time.perf_counter() - started
    started = time.perf_counter()
    refs, preds, ratings = generate(args.questions, args.systems, args.seed)
    gen_s = time.perf_counter() - started
    phases: list[tuple[str, float]] = []

    def mark(message: str) -> None:
        phases.append((message, time.perf_counter()))

    started = time.perf_counter()
    result = judgment_study(refs, preds, ratings, resamples=args.resamples, progress=mark)
    study_s = time.perf_counter() - started
    ends = [t for _, t in phases[1:]] + [started + study_s]
    print(f"data: {result['counts']['candidates']} candidates, {len(ratings)} ratings, "
          f"{args.systems} systems, by type {result['counts']['by_type']} "
          f"(generated and parsed in {gen_s:.2f} s; scipy.stats imported before the study "
          f"in {import_s:.2f} s)")
    for (message, t0), t1 in zip(phases, ends, strict=True):
        print(f"  {message:<45} {t1 - t0:7.2f} s")
    print(f"study: {study_s:.2f} s (target {TARGET_S:.0f} s; ratio {study_s / TARGET_S:.3f})")
    print("table2 overall:", {m: v["overall"] for m, v in result["table2"].items()})
    print("table3 overall:", {m: v["overall"] for m, v in result["table3"].items()})
    print(f"RESULT judgment study_s={study_s:.2f} target_s={TARGET_S:.0f} "
          f"ratio={study_s / TARGET_S:.3f} candidates={result['counts']['candidates']} "
          f"resamples={args.resamples}")


if __name__ == "__main__":
    main()
