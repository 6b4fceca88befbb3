"""The judgment study's statistics (``collector.metrics.judgment``) against values computed
independently here: scipy.stats for every Pearson r, the per-candidate metrics from the
dureader building blocks, a bootstrap redone with the same seed; a synthetic study in
which the adapted metrics must win by construction; and the ``judgment`` command line."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from collector.metrics import MetricsInputError
from collector.metrics.cli import main
from collector.metrics.dureader import adapted_bleu, adapted_rouge_l
from collector.metrics.judgment import (
    METRICS,
    judgment_study,
    judgment_study_files,
    parse_prediction,
    parse_reference,
)
from collector.metrics.tokenize import char_tokens

FILLER = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去"


def synthetic(n_questions: int = 150, *, seed: int = 3, systems: int = 5
              ) -> tuple[list[dict], dict[str, list[dict]], list[dict]]:
    """DuReader-layout references, predictions and two raters' scores where people judge
    what only the bonuses see: the yes-no opinion (YES_NO) and the gold entity (ENTITY).
    The answer text's overlap with the reference is drawn independently of that, so the
    original metrics see mostly noise and the adapted ones must correlate better. Systems
    differ in how often they get the judged part right (30% ... 70%)."""
    rng = random.Random(seed)  # noqa: S311 (test data)
    refs, preds, ratings = [], {f"sys{s}": [] for s in range(systems)}, []
    types = ("YES_NO", "ENTITY", "DESCRIPTION")
    for q in range(n_questions):
        qtype = types[q % 3]
        answer = "".join(rng.choice(FILLER) for _ in range(24))
        entity = "".join(rng.choice("0123456789") for _ in range(6))
        ref = {"question_id": 1000 + q, "question": f"问题{q}", "question_type": qtype,
               "answers": [answer + (entity if qtype == "ENTITY" else "")],
               "yesno_answers": ["Yes"] if qtype == "YES_NO" else [],
               "entity_answers": [[entity]] if qtype == "ENTITY" else [[]]}
        refs.append(ref)
        for number, name in enumerate(preds):
            keep = rng.randint(6, 24)  # overlap, independent of the judged part
            text = answer[:keep] + "".join(rng.choice(FILLER) for _ in range(24 - keep))
            right = rng.random() < 0.3 + 0.4 * number / max(systems - 1, 1)
            label = []
            if qtype == "YES_NO":
                label = ["Yes" if right else "No"]
            elif qtype == "ENTITY" and right:
                text += entity
            elif qtype == "ENTITY":
                text += "".join(rng.choice("0123456789") for _ in range(6))
            preds[name].append({"question_id": 1000 + q, "question_type": qtype,
                                "answers": [text], "yesno_answers": label})
            base = (3.5 if right else 1.5) if qtype != "DESCRIPTION" else 1 + 3 * keep / 24
            for rater in ("r1", "r2"):
                score = min(5, max(1, round(base + rng.choice((-0.5, 0, 0.5)))))
                ratings.append({"question_id": 1000 + q, "system": name, "rater": rater,
                                "score": score})
    return refs, preds, ratings


def parsed(refs: list[dict], preds: dict[str, list[dict]]) -> tuple[dict, dict]:
    return ({r["question_id"]: parse_reference(r) for r in refs},
            {name: {p["question_id"]: parse_prediction(p) for p in rows}
             for name, rows in preds.items()})


@pytest.fixture(scope="module")
def study() -> tuple[dict, tuple]:
    refs, preds, ratings = synthetic()
    return judgment_study(*parsed(refs, preds), ratings, resamples=100, seed=0), (
        refs, preds, ratings)


def test_rater_agreement_is_scipy_pearson_per_type(study):
    result, (refs, _, ratings) = study
    types = {r["question_id"]: r["question_type"] for r in refs}
    pairs: dict[tuple, dict[str, int]] = {}
    for row in ratings:
        pairs.setdefault((row["question_id"], row["system"]), {})[row["rater"]] = row["score"]
    for name in ("YES_NO", "ENTITY", "DESCRIPTION", "overall"):
        keys = [k for k in pairs if name == "overall" or types[k[0]] == name]
        expected = stats.pearsonr([pairs[k]["r1"] for k in keys], [pairs[k]["r2"] for k in keys])
        assert result["table1"][name] == pytest.approx(expected.statistic, abs=1e-4)
        assert result["table1_n"][name] == len(keys)


def test_single_question_pcc_is_scipy_pearson_of_the_library_metrics(study):
    result, (refs, preds, ratings) = study
    ref_by = {r["question_id"]: r for r in refs}
    mean: dict[tuple, list[int]] = {}
    for row in ratings:
        mean.setdefault((row["question_id"], row["system"]), []).append(row["score"])
    rows = []
    for (qid, system), scores in mean.items():
        ref = ref_by[qid]
        pred = next(p for p in preds[system] if p["question_id"] == qid)
        cand = char_tokens(pred["answers"][0])
        answers = [char_tokens(a) for a in ref["answers"]]
        kw = {}
        if ref["question_type"] == "YES_NO":
            kw = {"yesno_label": pred["yesno_answers"][0],
                  "reference_labels": ref["yesno_answers"]}
        elif ref["question_type"] == "ENTITY":
            kw = {"entities": [char_tokens(e) for e in ref["entity_answers"][0]]}
        rows.append({
            "type": ref["question_type"], "human": sum(scores) / len(scores),
            "rouge_l": adapted_rouge_l(cand, answers, **kw, alpha=0, beta=0).score,
            "adapted_rouge_l": adapted_rouge_l(cand, answers, **kw, alpha=2.0, beta=1.0).score,
            "bleu_4": adapted_bleu(cand, answers, **kw, alpha=0, beta=0),
            "adapted_bleu_4": adapted_bleu(cand, answers, **kw, alpha=2.0, beta=1.0),
        })
    by_cand = {(c["question_id"], c["system"]): c for c in result["candidates"]}
    for (qid, system), row in zip(mean, rows, strict=True):
        for metric in METRICS:
            assert by_cand[(qid, system)][metric] == pytest.approx(row[metric], abs=1e-6)
    for name in ("YES_NO", "ENTITY", "overall"):
        subset = [r for r in rows if name == "overall" or r["type"] == name]
        for metric in METRICS:
            expected = stats.pearsonr([r[metric] for r in subset], [r["human"] for r in subset])
            assert result["table2"][metric][name] == pytest.approx(expected.statistic, abs=1e-4)


def test_bootstrap_with_a_fixed_seed(study):
    """Koehn's paired test redone here: the same seeded draws of candidates for both
    metrics, the share of draws in which the adapted r is higher."""
    result, (refs, preds, ratings) = study
    cands = [c for c in result["candidates"] if c["type"] == "ENTITY"]
    human = np.array([c["human"] for c in cands])
    draws = np.random.default_rng(0).integers(0, len(cands), (100, len(cands)))
    for pair, (adapted, original) in {"rouge_l": ("adapted_rouge_l", "rouge_l"),
                                      "bleu_4": ("adapted_bleu_4", "bleu_4")}.items():
        a = np.array([c[adapted] for c in cands])
        o = np.array([c[original] for c in cands])
        wins = sum(stats.pearsonr(a[d], human[d]).statistic
                   > stats.pearsonr(o[d], human[d]).statistic for d in draws)
        assert result["bootstrap"]["ENTITY"][pair] == wins / 100
    again = judgment_study(*parsed(refs, preds), ratings, resamples=100, seed=0)
    assert again["bootstrap"] == result["bootstrap"]
    assert again["table3"] == result["table3"]


def test_adapted_metrics_win_by_construction(study):
    result, _ = study
    t2, t3 = result["table2"], result["table3"]
    for name in ("YES_NO", "ENTITY", "overall"):
        assert t2["adapted_rouge_l"][name] > t2["rouge_l"][name] + 0.1, name
        assert t2["adapted_bleu_4"][name] > t2["bleu_4"][name], name
        assert result["bootstrap"][name]["rouge_l"] >= 0.95, name
        assert t3["adapted_rouge_l"][name] > t3["rouge_l"][name], name
    # Description questions get no bonus: both versions are the same numbers.
    assert t2["adapted_rouge_l"]["DESCRIPTION"] == t2["rouge_l"]["DESCRIPTION"]
    assert result["bootstrap"]["DESCRIPTION"]["rouge_l"] == 0
    # The CI brackets the estimate.
    low, high = result["table2_ci"]["adapted_rouge_l"]["overall"]
    assert low <= t2["adapted_rouge_l"]["overall"] <= high


def test_overall_level_design(study):
    result, (refs, _, _) = study
    # 100 draws x 5 systems pairs, from 30-question samples (50 of each type here).
    assert result["table3_n"]["overall"] == 500
    assert result["table3_n"]["YES_NO"] == 500
    assert -1 <= result["table3"]["bleu_4"]["overall"] <= 1


def test_sweeps_start_at_the_original_metric(study):
    result, _ = study
    alpha, beta = result["sweeps"]["alpha"], result["sweeps"]["beta"]
    assert alpha["values"] == [x / 2 for x in range(11)]
    assert alpha["adapted_rouge_l"][0] == result["table2"]["rouge_l"]["YES_NO"]
    assert beta["adapted_rouge_l"][0] == result["table2"]["rouge_l"]["ENTITY"]
    assert alpha["adapted_rouge_l"][4] == result["table2"]["adapted_rouge_l"]["YES_NO"]  # α=2
    assert beta["adapted_bleu_4"][2] == result["table2"]["adapted_bleu_4"]["ENTITY"]  # β=1
    assert alpha["adapted_rouge_l"][-1] > alpha["adapted_rouge_l"][0]


def test_distribution_counts_every_rating(study):
    result, (_, _, ratings) = study
    dist = result["distribution"]
    assert sum(sum(d["overall"].values()) for d in dist.values()) == len(ratings)
    assert sorted(dist) == ["sys0", "sys1", "sys2", "sys3", "sys4"]


def _write(tmp_path: Path, refs, preds, ratings) -> list[str]:
    def jsonl(name: str, rows: list[dict]) -> str:
        path = tmp_path / name
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                        encoding="utf-8")
        return str(path)

    args = ["judgment", "--refs", jsonl("ref.jsonl", refs)]
    for name, rows in preds.items():
        args += ["--preds", f"{name}={jsonl(name + '.jsonl', rows)}"]
    return [*args, "--ratings", jsonl("ratings.jsonl", ratings)]


def test_command_line_prints_the_contract(tmp_path, capsys, study):
    result, (refs, preds, ratings) = study
    assert main([*_write(tmp_path, refs, preds, ratings), "--alpha", "2.0", "--beta", "1.0",
                 "--resamples", "100", "--sample", "30", "--seed", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("table1", "table2", "table3", "bootstrap", "candidates"):
        assert key in out
    assert set(out["table2"]) == set(METRICS)
    assert set(out["table2"]["rouge_l"]) == {"YES_NO", "ENTITY", "DESCRIPTION", "overall"}
    assert out["table2"] == result["table2"]
    assert out["table3"] == result["table3"]
    for key in ("table1_n", "table1_pairs", "table1_one_rating", "table1_krippendorff_alpha"):
        assert out[key] == result[key]
    first = out["candidates"][0]
    assert {"question_id", "system", "type", "human", *METRICS} <= set(first)


def test_command_line_errors_name_file_and_line(tmp_path, capsys):
    refs, preds, ratings = synthetic(6)
    ratings[3] = {**ratings[3], "score": 7}
    assert main(_write(tmp_path, refs, preds, ratings)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "ratings.jsonl, line 4" in err and "'score'" in err

    refs, preds, ratings = synthetic(6)
    ratings[0] = {**ratings[0], "system": "nobody"}
    assert main(_write(tmp_path, refs, preds, ratings)) == 2
    assert "line 1: system 'nobody' has no predictions" in capsys.readouterr().err

    refs, preds, ratings = synthetic(6)
    del refs[2]["question_type"]
    assert main(_write(tmp_path, refs, preds, ratings)) == 2
    assert "ref.jsonl, line 3: missing field 'question_type'" in capsys.readouterr().err


def test_same_system_twice_is_refused(tmp_path):
    refs, preds, ratings = synthetic(6)
    args = _write(tmp_path, refs, preds, ratings)
    with pytest.raises(MetricsInputError, match="given twice"):
        judgment_study_files(args[2], [("a", args[4].split("=")[1])] * 2, args[-1])


def test_a_type_without_candidates_is_reported_undefined():
    refs, preds, ratings = synthetic(30)
    kept = {r["question_id"] for r in refs if r["question_type"] != "DESCRIPTION"}
    result = judgment_study(*parsed(refs, preds),
                            [r for r in ratings if r["question_id"] in kept], resamples=20)
    assert result["table1"]["DESCRIPTION"] is None
    assert result["table2"]["rouge_l"]["DESCRIPTION"] is None
    assert result["bootstrap"]["DESCRIPTION"] == {"rouge_l": None, "bleu_4": None}
    assert result["counts"]["by_type"]["DESCRIPTION"] == 0
    assert result["table2"]["rouge_l"]["YES_NO"] is not None


def test_overall_level_with_fewer_questions_than_a_draw_is_not_a_perfect_r():
    """A type with no more questions than ``sample`` gives the same draw every time: the
    pairs are one per system, not resamples × systems copies of them (two systems' two
    points repeated 100 times made Table 3 read ±1.0 in every cell)."""
    refs, preds, ratings = synthetic(30, systems=2)
    result = judgment_study(*parsed(refs, preds), ratings, resamples=50, sample=30)
    for name in ("YES_NO", "ENTITY", "DESCRIPTION", "overall"):
        assert result["table3_n"][name] == 2
        assert all(result["table3"][m][name] is None for m in METRICS)

    # With three systems the one draw is the system-level r: the mean ROUGE-L and mean
    # human score of each system over every question, scipy's r over those three points.
    refs, preds, ratings = synthetic(30, systems=3)
    result = judgment_study(*parsed(refs, preds), ratings, resamples=50, sample=30)
    by_system: dict[str, list[dict]] = {}
    for c in result["candidates"]:
        by_system.setdefault(c["system"], []).append(c)
    xs = [np.mean([c["rouge_l"] for c in by_system[s]]) for s in sorted(by_system)]
    ys = [np.mean([c["human"] for c in by_system[s]]) for s in sorted(by_system)]
    assert result["table3_n"]["overall"] == 3
    assert result["table3"]["rouge_l"]["overall"] == pytest.approx(
        stats.pearsonr(xs, ys).statistic, abs=1e-3)


# --------------------------------------------------------------------- raters beyond two
def interval_alpha(units: list[list[int]]) -> float:
    """Krippendorff's alpha, interval metric, from its definition (Krippendorff 2011,
    "Computing Krippendorff's Alpha-Reliability", sections A and E): only units with two
    or more values are pairable; D_o = (1/n) Σ_u Σ_{i≠j in u} (v_i - v_j)² / (m_u - 1),
    D_e = Σ_{i≠j over all n pairable values} (v_i - v_j)² / (n (n - 1)), α = 1 - D_o / D_e.
    Σ_{i≠j} (v_i - v_j)² over m values is 2 m Σv² - 2 (Σv)²."""
    def spread(values: list[int]) -> float:
        v = np.asarray(values, dtype=float)
        return 2 * len(v) * float((v * v).sum()) - 2 * float(v.sum()) ** 2

    pairable = [u for u in units if len(u) >= 2]
    n = sum(len(u) for u in pairable)
    observed = sum(spread(u) / (len(u) - 1) for u in pairable) / n
    expected = spread([v for u in pairable for v in u]) / (n * (n - 1))
    return 1 - observed / expected


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C/E: four
# observers, twelve units, missing values (None); published alpha: interval 0.849 (nominal
# 0.743, ordinal 0.815, ratio 0.797). Unit 12 has one value and cannot be paired.
KRIPPENDORFF_2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}


def _units(ratings: list[dict]) -> dict[tuple, list[int]]:
    """Each candidate's scores in rater order, as the study orders them."""
    by: dict[tuple, list[tuple[str, int]]] = {}
    for row in ratings:
        by.setdefault((row["question_id"], row["system"]), []).append(
            (row["rater"], row["score"]))
    return {key: [score for _, score in sorted(rows)] for key, rows in by.items()}


def _expected_table1(refs: list[dict], ratings: list[dict]) -> dict[str, dict]:
    """Table 1 redone here: scipy's Pearson r over every pair of a candidate's ratings
    (rater order), the alpha of the definition, the counts."""
    from itertools import combinations

    types = {r["question_id"]: r["question_type"] for r in refs}
    units = _units(ratings)
    out = {}
    for name in ("YES_NO", "ENTITY", "DESCRIPTION", "overall"):
        mine = [u for k, u in units.items() if name == "overall" or types[k[0]] == name]
        rated = [u for u in mine if len(u) >= 2]
        pairs = [p for u in rated for p in combinations(u, 2)]
        out[name] = {"r": stats.pearsonr([p[0] for p in pairs], [p[1] for p in pairs]).statistic,
                     "alpha": interval_alpha(rated), "n": len(rated), "pairs": len(pairs),
                     "one": len(mine) - len(rated)}
    return out


def _check_table1(result: dict, expected: dict[str, dict]) -> None:
    for name, want in expected.items():
        assert result["table1"][name] == pytest.approx(want["r"], abs=1e-4), name
        assert result["table1_krippendorff_alpha"][name] == pytest.approx(want["alpha"],
                                                                          abs=1e-4), name
        assert result["table1_n"][name] == want["n"]
        assert result["table1_pairs"][name] == want["pairs"]
        assert result["table1_one_rating"][name] == want["one"]


def _third_rater(ratings: list[dict], *, seed: int, keep=lambda key: True) -> list[dict]:
    """A third rater r3 who scores each candidate (where ``keep``) as r2 did half the
    time and at random otherwise: less in agreement than r1 and r2, so leaving r3 out
    changes Table 1."""
    rng = random.Random(seed)  # noqa: S311 (test data)
    extra = []
    for row in ratings:
        if row["rater"] == "r2" and keep((row["question_id"], row["system"])):
            score = row["score"] if rng.random() < 0.5 else rng.randint(1, 5)
            extra.append({**row, "rater": "r3", "score": score})
    return ratings + extra


def test_the_interval_alpha_of_the_definition_is_krippendorffs_published_value():
    units = [[v[u] for v in KRIPPENDORFF_2011.values() if v[u] is not None]
             for u in range(12)]
    assert round(interval_alpha(units), 3) == 0.849


def test_table1_with_exactly_two_raters_is_the_papers_pcc_and_alpha_comes_beside_it(study):
    """The paper's case: one pair per candidate, r as before (scipy's r of r1 against r2,
    see the first test), and the new figures beside it."""
    result, (refs, _, ratings) = study
    expected = _expected_table1(refs, ratings)
    _check_table1(result, expected)
    assert result["table1_pairs"] == result["table1_n"]
    assert result["table1_one_rating"] == dict.fromkeys(expected, 0)


def test_table1_with_three_raters_uses_every_rating(study):
    """Overlap 3: every pair of the three ratings is a point of r. The first two alone
    (what Table 1 read before) give another figure, so the third rater was ignored."""
    _, (refs, preds, ratings) = study
    three = _third_rater(ratings, seed=1)
    result = judgment_study(*parsed(refs, preds), three, resamples=10)
    expected = _expected_table1(refs, three)
    _check_table1(result, expected)
    units = _units(three)
    assert result["table1_n"]["overall"] == len(units)
    assert result["table1_pairs"]["overall"] == 3 * len(units)
    first_two = stats.pearsonr([u[0] for u in units.values()],
                               [u[1] for u in units.values()]).statistic
    assert abs(result["table1"]["overall"] - first_two) > 0.05
    assert result["counts"]["ratings"] == 3 * len(units)


def test_table1_with_uneven_overlap_and_candidates_rated_once():
    """Candidates rated 1, 2, 3 or 4 times: r pools each candidate's pairs, alpha takes
    every rating, the ones rated once are left out of both and counted per type; their
    one score is their human score in Tables 2 and 3."""
    refs, preds, ratings = synthetic(60, seed=8)
    keys = sorted(_units(ratings), key=str)
    rng = random.Random(4)  # noqa: S311 (test data)
    overlap = {key: rng.choice((1, 2, 3, 4)) for key in keys}
    more = _third_rater(ratings, seed=2, keep=lambda key: overlap[key] >= 3)
    for row in [r for r in more if r["rater"] == "r1"]:
        if overlap[(row["question_id"], row["system"])] == 4:
            more.append({**row, "rater": "r4", "score": min(5, row["score"] + 1)})
    uneven = [r for r in more if not (overlap[(r["question_id"], r["system"])] == 1
                                      and r["rater"] != "r2")]
    result = judgment_study(*parsed(refs, preds), uneven, resamples=10)
    expected = _expected_table1(refs, uneven)
    _check_table1(result, expected)
    once = [k for k in keys if overlap[k] == 1]
    assert result["table1_one_rating"]["overall"] == len(once) > 0
    assert {len(u) for u in _units(uneven).values()} == {1, 2, 3, 4}

    # The mean human score keeps the candidates rated once (their one score) ...
    human = {(c["question_id"], c["system"]): c["human"] for c in result["candidates"]}
    units = _units(uneven)
    assert human == {k: pytest.approx(sum(u) / len(u), abs=1e-4) for k, u in units.items()}
    assert result["counts"]["candidates"] == len(keys)
    # ... and Table 2 is scipy's r over every candidate, those included.
    rouge = {(c["question_id"], c["system"]): c["rouge_l"] for c in result["candidates"]}
    assert result["table2"]["rouge_l"]["overall"] == pytest.approx(stats.pearsonr(
        [rouge[k] for k in keys], [human[k] for k in keys]).statistic, abs=1e-4)


def test_table1_alpha_is_krippendorffs_worked_example():
    """The 2011 example as a study: twelve questions answered by one system, rated by
    four raters with gaps; alpha is the published 0.849, unit 12 (one rating) is left out
    and counted, and r pools the pairs of each unit."""
    refs, preds, _ = synthetic(12, systems=1)
    ratings = [{"question_id": refs[u]["question_id"], "system": "sys0", "rater": rater,
                "score": values[u]}
               for rater, values in KRIPPENDORFF_2011.items()
               for u in range(12) if values[u] is not None]
    result = judgment_study(*parsed(refs, preds), ratings, resamples=10)
    assert round(result["table1_krippendorff_alpha"]["overall"], 3) == 0.849
    assert result["table1_one_rating"]["overall"] == 1
    assert result["table1_n"]["overall"] == 11
    _check_table1(result, _expected_table1(refs, ratings))


def test_table1_alpha_is_undefined_when_every_rating_agrees_on_one_score():
    refs, preds, ratings = synthetic(9)
    same = [{**r, "score": 3} for r in ratings]
    result = judgment_study(*parsed(refs, preds), same, resamples=5)
    assert result["table1"]["overall"] is None
    assert result["table1_krippendorff_alpha"]["overall"] is None
    assert result["table1_pairs"]["overall"] == result["table1_n"]["overall"] == 45
