"""Worker competence: simulated crowds with known accuracies, hand-checked cases, the CLI."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

from collector.metrics import cli
from collector.metrics.competence import (
    dawid_skene,
    freetext_competence,
    labels_competence,
    leave_one_out_f1,
    read_judgments,
    spans_competence,
)
from collector.metrics.errors import MetricsInputError
from collector.metrics.pa import PaScorer

REPO = Path(__file__).resolve().parents[3]
N_WORKERS, N_ITEMS, PER_ITEM = 50, 2000, 5
TRUE_ACCURACY = np.linspace(0.35, 0.95, N_WORKERS)


def worker_id(w: int) -> str:
    return f"w{w:02d}"


# --------------------------------------------------------------------------- simulations
def simulated_labels(seed: int = 1) -> tuple[list[dict], dict[str, str]]:
    """3 classes; a worker is right with their accuracy, otherwise picks a wrong class."""
    rng = np.random.default_rng(seed)
    classes = ("no", "uncertain", "yes")
    truth = rng.integers(0, 3, N_ITEMS)
    rows = []
    for i in range(N_ITEMS):
        for w in rng.choice(N_WORKERS, PER_ITEM, replace=False):
            right = rng.random() < TRUE_ACCURACY[w]
            label = truth[i] if right else (truth[i] + rng.integers(1, 3)) % 3
            rows.append({"item": f"i{i}", "worker": worker_id(w), "label": classes[label]})
    return rows, {f"i{i}": classes[t] for i, t in enumerate(truth)}


def simulated_spans(seed: int = 2) -> list[dict]:
    """A 40-word passage per item and a 2-5 word gold span. A worker gives the gold span
    (sometimes with an article and a period, which SQuAD normalisation removes) with
    their accuracy; otherwise a partial overlap (gold boundaries moved by up to 2 words),
    a distractor span elsewhere in the passage, or no answer."""
    rng = np.random.default_rng(seed)
    vocab = [f"word{n}" for n in range(400)]
    rows = []
    for i in range(N_ITEMS):
        passage = [vocab[t] for t in rng.integers(0, len(vocab), 40)]
        start = int(rng.integers(0, 34))
        end = start + int(rng.integers(2, 6))
        for w in rng.choice(N_WORKERS, PER_ITEM, replace=False):
            draw = rng.random()
            if rng.random() < TRUE_ACCURACY[w]:
                text = " ".join(passage[start:end])
                if draw < 0.3:
                    text = f"The {text}."
            elif draw < 0.4:
                a = max(0, start + int(rng.integers(-2, 3)))
                b = max(a + 1, end + int(rng.integers(-2, 3)))
                text = " ".join(passage[a:b])
            elif draw < 0.85:
                a = int(rng.integers(0, 36))
                text = " ".join(passage[a:a + int(rng.integers(1, 5))])
            else:
                text = ""
            rows.append({"item": f"i{i}", "worker": worker_id(w), "answer": text})
    return rows


def rho(estimates: dict[str, float]) -> float:
    est = [estimates[worker_id(w)] for w in range(N_WORKERS)]
    return float(spearmanr(TRUE_ACCURACY, est).statistic)


def test_dawid_skene_ranks_simulated_workers_by_their_true_accuracy():
    rows, truth = simulated_labels()
    result = labels_competence(rows)
    r = rho({w: v["accuracy"] for w, v in result["workers"].items()})
    print(f"labels: Spearman rho = {r:.4f}")
    assert r >= 0.9, f"Dawid-Skene accuracy vs true accuracy: Spearman rho = {r:.4f}"
    right = np.mean([result["items"][i] == t for i, t in truth.items()])
    votes: dict[str, list[str]] = {}
    for row in rows:
        votes.setdefault(row["item"], []).append(row["label"])
    majority = np.mean([max(sorted(set(v)), key=v.count) == truth[i] for i, v in votes.items()])
    assert right >= majority, (right, majority)
    # the estimates are calibrated, not only ordered
    est = np.array([result["workers"][worker_id(w)]["accuracy"] for w in range(N_WORKERS)])
    assert np.abs(est - TRUE_ACCURACY).mean() < 0.05


def test_spans_with_a_memo_recompute_only_what_new_answers_change(monkeypatch):
    """A memo kept between calls gives the same figures as a fresh estimate, and after a
    few new answers recomputes only their items and their workers."""
    from collector.metrics import competence

    rows = simulated_spans()[:1500]
    memo: dict = {}
    first = spans_competence(rows, resamples=200, memo=memo)
    assert first == spans_competence(rows, resamples=200)
    calls = {"loo": 0, "bootstrap": 0}
    loo, bootstrap = competence.leave_one_out_f1, competence._bootstrap_mean

    def counted_loo(*args, **kwargs):
        calls["loo"] += 1
        return loo(*args, **kwargs)

    def counted_bootstrap(*args, **kwargs):
        calls["bootstrap"] += 1
        return bootstrap(*args, **kwargs)

    monkeypatch.setattr(competence, "leave_one_out_f1", counted_loo)
    monkeypatch.setattr(competence, "_bootstrap_mean", counted_bootstrap)
    assert spans_competence(rows, resamples=200, memo=memo) == first
    assert calls == {"loo": 0, "bootstrap": 0}
    # One more answer to an item answered before: that item, and the workers on it.
    item = rows[-1]["item"]
    on_item = {r["worker"] for r in rows if r["item"] == item}
    newcomer = next(worker_id(w) for w in range(N_WORKERS) if worker_id(w) not in on_item)
    more = [*rows, {"item": item, "worker": newcomer, "answer": rows[-1]["answer"]}]
    again = spans_competence(more, resamples=200, memo=memo)
    # the newcomer's interval, and those of the others on the item whose scores moved
    assert calls["loo"] == 1 and 1 <= calls["bootstrap"] <= len(on_item) + 1
    assert again == spans_competence(more, resamples=200)
    assert again != first


def test_spans_rank_simulated_workers_by_their_true_accuracy():
    result = spans_competence(simulated_spans(), resamples=200)
    workers = result["workers"]
    r = rho({w: v["f1"] for w, v in workers.items()})
    print(f"spans: Spearman rho = {r:.4f}")
    assert r >= 0.9, f"leave-one-out span F1 vs true accuracy: Spearman rho = {r:.4f}"
    for w, v in workers.items():
        assert set(v) == {"f1", "low", "high"}
        assert 0 <= v["low"] <= v["f1"] <= v["high"] <= 1, (w, v)
        assert v["high"] - v["low"] < 0.25, (w, v)


# --------------------------------------------------------------------------- labels by hand
def labelled(*triples: tuple[str, str, str]) -> list[dict]:
    return [{"item": i, "worker": w, "label": lab} for i, w, lab in triples]


def test_one_reliable_worker_outweighs_two_random_ones():
    """R always gives the truth; X and Y are noise: every (truth, X, Y) combination of 3
    classes occurs equally often. On calibration items two more good workers (G1, G2)
    join, which is how R's reliability can be learned at all (with R, X and Y alone the
    three label streams are independent and uniform, so the data cannot tell R from X).
    On the test items only R, X and Y answer, and on the 24 where X and Y agree on a wrong
    class the majority vote is wrong; Dawid-Skene follows R."""
    rows, truth = [], {}
    for part, rep, (t, x, y) in itertools.product(("cal", "test"), range(4),
                                                   itertools.product("abc", repeat=3)):
        item = f"{part}{rep}{t}{x}{y}"
        truth[item] = t
        rows += labelled((item, "R", t), (item, "X", x), (item, "Y", y))
        if part == "cal":
            rows += labelled((item, "G1", t), (item, "G2", t))
    outvoted = [i for i, t in truth.items() if i.startswith("test") and i[-2] == i[-1] != t]
    assert len(outvoted) == 24
    fit = dawid_skene(rows)
    assert fit.converged
    result = labels_competence(rows)
    assert result["items"] == truth
    acc = {w: v["accuracy"] for w, v in result["workers"].items()}
    assert acc["R"] > 0.97
    assert acc["X"] == pytest.approx(1 / 3, abs=0.03)
    assert acc["Y"] == pytest.approx(1 / 3, abs=0.03)


def test_accuracy_is_the_prior_weighted_diagonal_and_rows_are_distributions():
    rows, _ = simulated_labels()
    fit = dawid_skene(rows[:600])
    assert np.allclose(fit.confusion.sum(axis=2), 1)
    assert fit.priors.sum() == pytest.approx(1)
    for w in range(len(fit.workers)):
        expected = sum(fit.priors[j] * fit.confusion[w, j, j] for j in range(3))
        assert fit.accuracy[w] == pytest.approx(expected)


def test_a_worker_seen_once_gets_no_zero_or_one_probability():
    rows, truth = simulated_labels()
    rows = rows[:1000] + labelled(("i0", "newcomer", truth["i0"]))
    fit = dawid_skene(rows)
    k = fit.workers.index("newcomer")
    assert ((fit.confusion[k] > 0) & (fit.confusion[k] < 1)).all()
    acc = labels_competence(rows)["workers"]
    # with one judgment the newcomer looks like an average worker, not a perfect or a
    # random one
    typical = np.median([v["accuracy"] for w, v in acc.items() if w != "newcomer"])
    assert 1 / 3 < acc["newcomer"]["accuracy"] < 0.99
    assert acc["newcomer"]["accuracy"] == pytest.approx(typical, abs=0.15)


def test_small_file_does_not_collapse_to_the_prior():
    rows = labelled(("q1", "a", "yes"), ("q1", "b", "yes"), ("q1", "c", "no"),
                    ("q2", "a", "no"), ("q2", "b", "no"))
    result = labels_competence(rows)
    assert result["items"] == {"q1": "yes", "q2": "no"}
    acc = {w: v["accuracy"] for w, v in result["workers"].items()}
    assert acc["a"] == acc["b"] > acc["c"]


def test_ties_are_broken_the_same_way_whatever_the_row_order():
    rows = labelled(("q1", "a", "yes"), ("q1", "b", "no"))
    assert labels_competence(rows)["items"] == {"q1": "no"}  # first class in sorted order
    rows, _ = simulated_labels()
    rows = rows[:500]
    shuffled = [rows[k] for k in np.random.default_rng(3).permutation(len(rows))]
    assert labels_competence(shuffled) == labels_competence(rows)


def test_one_class_and_convergence_controls():
    result = labels_competence(labelled(("q1", "a", "yes"), ("q1", "b", "yes"),
                                        ("q2", "a", "yes")))
    assert result == {"method": "dawid-skene",
                      "workers": {"a": {"accuracy": 1.0}, "b": {"accuracy": 1.0}},
                      "items": {"q1": "yes", "q2": "yes"}}
    rows, _ = simulated_labels()
    fit = dawid_skene(rows[:500], max_iter=1)
    assert (fit.iterations, fit.converged) == (1, False)
    for bad in ({"smoothing": 0}, {"tol": -1.0}, {"max_iter": 0}):
        with pytest.raises(MetricsInputError):
            dawid_skene(rows[:10], **bad)


@pytest.mark.parametrize(("row", "message"), [
    ({"worker": "a", "label": "yes"}, "row 2: missing field 'item'"),
    ({"item": "q1", "worker": 7, "label": "yes"}, "row 2: field 'worker' must be"),
    ({"item": "q1", "worker": "b", "label": ""}, "row 2: field 'label' must be"),
    ({"item": "q1", "worker": "a", "label": "no"}, "row 2: field 'worker': worker 'a' already"),
])
def test_bad_rows_name_the_row_and_the_field(row, message):
    with pytest.raises(MetricsInputError, match=message):
        labels_competence([{"item": "q1", "worker": "a", "label": "yes"}, row])


# --------------------------------------------------------------------------- spans by hand
def answered(*triples: tuple[str, str, str]) -> list[dict]:
    return [{"item": i, "worker": w, "answer": a} for i, w, a in triples]


def test_leave_one_out_consensus_by_hand():
    """F1: A-B 1 ("the" is dropped), A-C and B-C 2/3, D shares nothing. For A the other
    answers' mean F1 to the rest is B 1/3, C 1/3, D 0: B and C tie, so A scores
    (1 + 2/3) / 2. For C, A and B tie (1/2 each): (2/3 + 2/3) / 2. For D, A and B tie."""
    rows = answered(("q", "A", "the Eiffel Tower"), ("q", "B", "Eiffel Tower"),
                    ("q", "C", "Eiffel Tower in Paris"), ("q", "D", "Louvre"))
    workers = spans_competence(rows)["workers"]
    expected = {"A": 5 / 6, "B": 5 / 6, "C": 2 / 3, "D": 0.0}
    for w, f1 in expected.items():
        assert workers[w] == pytest.approx({"f1": f1, "low": f1, "high": f1}), w


def test_medoid_consensus_ignores_a_lone_outlier():
    # the others of "X" are three "paris" and one "lyon": the consensus is "paris"
    assert leave_one_out_f1(["paris", "paris", "paris", "lyon", "paris"])[3] == 0.0
    assert leave_one_out_f1(["paris", "paris", "paris", "lyon", "paris"])[0] == 1.0


def test_empty_answers_mean_no_answer():
    rows = answered(("q1", "a", ""), ("q1", "b", "  "), ("q2", "a", ""), ("q2", "b", "Paris"))
    workers = spans_competence(rows)["workers"]
    assert workers["a"]["f1"] == workers["b"]["f1"] == 0.5  # 1 on q1, 0 on q2


def test_a_worker_alone_on_items_gets_no_score():
    rows = answered(("q1", "a", "x"), ("q1", "b", "x"), ("q2", "c", "y"))
    assert set(spans_competence(rows)["workers"]) == {"a", "b"}


def test_bootstrap_is_seeded_and_per_worker():
    rows = simulated_spans()[:2000]
    one = spans_competence(rows, resamples=300, seed=5)["workers"]
    assert spans_competence(list(reversed(rows)), resamples=300, seed=5)["workers"] == one
    other = spans_competence(rows, resamples=300, seed=6)["workers"]
    assert all(other[w]["f1"] == one[w]["f1"] for w in one)
    assert any(other[w]["low"] != one[w]["low"] for w in one)
    for bad in ({"resamples": 0}, {"seed": -1}, {"confidence": 1.0}):
        with pytest.raises(MetricsInputError):
            spans_competence(rows[:10], **bad)


# --------------------------------------------------------------------------- free text
def test_freetext_weight_is_the_normalised_pa_weight():
    consensus = "children must use a child seat until they are 12 years old"
    answers = [
        ("e1", consensus),
        ("e2", consensus + " or 135 cm tall"),
        ("e3", "children must use a child seat until they are 135 cm tall"),
        ("e4", "the driver is responsible for passengers wearing seat belts"),
    ]
    rows = answered(*[("q1", w, a) for w, a in answers],
                    ("q2", "e1", "a child seat is needed"), ("q2", "e4", "a child seat is needed"))
    result = freetext_competence(rows)
    weights = PaScorer([a for _, a in answers]).weights
    workers = result["workers"]
    assert result["metric"] == "pa-bleu"
    assert workers["e2"] == pytest.approx({"weight": weights[1] / sum(weights),
                                           "relative": 4 * weights[1] / sum(weights),
                                           "items": 1})
    q1_e1 = weights[0] / sum(weights)
    assert workers["e1"] == pytest.approx({"weight": (q1_e1 + 0.5) / 2,
                                           "relative": (4 * q1_e1 + 1) / 2, "items": 2})
    # the off-topic editor has the lowest weight on q1 even after a perfect agreement on q2
    assert workers["e4"]["relative"] < workers["e3"]["relative"] < workers["e2"]["relative"]
    # answers too short for BLEU-4 give all-zero weights: the item carries no information
    short = freetext_competence(answered(("q3", "e5", "yes"), ("q3", "e6", "yes")))
    assert short["workers"] == {}
    assert freetext_competence(rows, include_self=False)["workers"]["e4"]["items"] == 2
    with pytest.raises(MetricsInputError, match="unknown pa metric"):
        freetext_competence(rows[:1], metric="rouge")


# --------------------------------------------------------------------------- command line
def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "collector.metrics", *args], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=60, check=False)


def jsonl(path: Path, rows: list) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_cli_labels_prints_one_json_object(tmp_path):
    rows, _ = simulated_labels()
    proc = run_cli("competence", "--kind", "labels", jsonl(tmp_path / "labels.jsonl", rows[:300]))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert list(out) == ["method", "workers", "items"]
    assert out["method"] == "dawid-skene"
    assert all(list(v) == ["accuracy"] and 0 < v["accuracy"] < 1 for v in out["workers"].values())
    assert set(out["items"]) == {r["item"] for r in rows[:300]}
    assert set(out["items"].values()) <= {"no", "uncertain", "yes"}


def test_cli_spans_prints_one_json_object(tmp_path, capsys):
    rows = answered(("q1", "a", "Paris"), ("q1", "b", "paris."), ("q1", "c", ""),
                    ("q2", "a", "Lyon"), ("q2", "b", "Lyon"), ("q3", "d", "Nice"))
    path = jsonl(tmp_path / "spans.jsonl", rows)
    assert cli.main(["competence", "--kind", "spans", path, "--resamples", "50"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert list(out) == ["workers"]
    assert sorted(out["workers"]) == ["a", "b", "c"]
    assert all(list(v) == ["f1", "low", "high"] for v in out["workers"].values())
    assert out["workers"]["c"] == {"f1": 0.0, "low": 0.0, "high": 0.0}
    assert "1 worker(s) share no item" in captured.err and "'d'" in captured.err


GOOD = '{"item": "q1", "worker": "a", "label": "yes"}\n'


@pytest.mark.parametrize(("text", "needles"), [
    (GOOD + '{"item": "q1", "worker": "b"}\n', ["line 2", "'label'"]),
    (GOOD + '{"item": "q1", "worker": ["b"], "label": "no"}\n', ["line 2", "'worker'"]),
    (GOOD + '{"item": 3, "worker": "b", "label": "no"}\n', ["line 2", "'item'"]),
    (GOOD + '{"item": "q1", "worker": "b", "label": 1}\n', ["line 2", "'label'"]),
    (GOOD + '{"item": "q1", "worker": "b", "label": "no"\n', ["line 2", "invalid JSON"]),
    (GOOD + '["q1", "b", "no"]\n', ["line 2", "expected a JSON object"]),
    ("", ["file is empty"]),
    (GOOD + '{"item": "q2", "worker": "b", "label": "no"}\n' + GOOD,
     ["line 3", "'worker'", "already judged item 'q1' (line 1)"]),
])
def test_cli_labels_errors_are_one_line_naming_file_line_and_field(tmp_path, capsys, text,
                                                                     needles):
    path = tmp_path / "judgments.jsonl"
    path.write_text(text, encoding="utf-8")
    assert cli.main(["competence", "--kind", "labels", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"error: {path}")
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_cli_spans_errors_and_usage(tmp_path):
    path = jsonl(tmp_path / "spans.jsonl", [{"item": "q1", "worker": "a", "answer": None}])
    proc = run_cli("competence", "--kind", "spans", path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == f"error: {path}, line 1: field 'answer' must be a string " \
                                  '("" for no answer)'
    proc = run_cli("competence", path)
    assert proc.returncode == 2 and "--kind" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_read_judgments_skips_blank_lines_and_checks_the_kind(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text(GOOD + "\n" + GOOD.replace('"a"', '"b"'), encoding="utf-8")
    assert [r["worker"] for r in read_judgments(path, kind="labels")] == ["a", "b"]
    with pytest.raises(MetricsInputError, match=r"line 1: missing field 'answer'"):
        read_judgments(path, kind="spans")
