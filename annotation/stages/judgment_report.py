"""The judgment study's run, its report and the report's downloads and plots."""

from __future__ import annotations

import csv
import io
from typing import Any

from django.db import transaction
from django.utils.text import format_lazy
from django.utils.translation import gettext, gettext_lazy, gettext_noop

from annotation.models import Item, Project, Stage
from annotation.plots import Plot, hbar, line_plot
from annotation.stages import run_result
from annotation.stages.judgment import TYPE_LABELS, TYPES, text_level, token_level
from collector.question_rules import starts_like_a_formula
from collector.stored_text import StoredText

METRIC_LABELS = {"adapted_rouge_l": "Adapted ROUGE-L", "rouge_l": "ROUGE-L",
                 "adapted_bleu_4": "Adapted BLEU-4", "bleu_4": "BLEU-4"}
COLUMNS = (*TYPES, "overall")
# Table 1's figures beside the raters' r, as the CSV names them (report key, name).
TABLE1_CSV = (("table1_krippendorff_alpha", "krippendorff_alpha_interval"),
              ("table1_n", "candidates_rated_twice_or_more"), ("table1_pairs", "rating_pairs"),
              ("table1_one_rating", "candidates_rated_once_left_out"))
# The steps ``judgment_study`` reports (in English), shown in the admin's language.
STUDY_STEPS = [gettext_noop("metrics per candidate"), gettext_noop("rater agreement"),
               gettext_noop("single-question correlations and bootstrap"),
               gettext_noop("overall-level correlations"), gettext_noop("bonus weight sweeps")]


def _study_inputs(items: list[Item], level: str) -> tuple[dict, dict, list[dict]]:
    from collector.metrics.judgment import parse_prediction, parse_reference

    refs: dict[str, Any] = {}
    preds: dict[str, dict[str, Any]] = {}
    ratings: list[dict[str, Any]] = []
    for item in items:
        data = item.data
        qid = str(data["question_id"])
        if qid not in refs:
            refs[qid] = parse_reference({"question_type": data["question_type"],
                                         **data["reference"]}, level=level)
        preds.setdefault(data["system"], {})[qid] = parse_prediction(
            {"answers": [data["answer"]],
             "yesno_answers": [data["yesno_answer"]] if data.get("yesno_answer") else []},
            level=level)
        ratings.extend({"question_id": qid, "system": data["system"], "rater": r["rater"],
                        "score": r["score"]} for r in data["ratings"])
    return refs, preds, ratings


def study_run(*, stage: Stage, progress: Any, user: Any = None) -> dict[str, Any]:
    """Run the study over every rated candidate once no candidate waits for a rating;
    write a report and finish the candidates that were waiting (idempotent: a run with
    nothing new writes a new report only when asked by a person — ``user`` — or when
    candidates were waiting)."""
    from annotation.engine import item_finish
    from annotation.judgment_models import JudgmentReport
    from collector.metrics.judgment import judgment_study

    project = stage.project
    unrated = Item.objects.filter(project=project, gold="", stage__kind__in=(
        "judgment_sample", "judgment_rate"), status__in=(Item.Status.OPEN,
                                                         Item.Status.PENDING)).count()
    if unrated:
        progress.start(total=None, message=format_lazy(
            gettext_lazy("waiting: {count} item(s) not rated yet"), count=unrated))
        return run_result(received=0, passed=0, waiting=unrated,
                          notes=[StoredText(gettext_noop("waiting: %(count)s item(s) not rated "
                                                         "yet"), count=unrated)])
    items = list(Item.objects.filter(stage=stage, status__in=(
        Item.Status.PENDING, Item.Status.DONE)).order_by("id"))
    waiting = [i for i in items if i.status == Item.Status.PENDING]
    if not items or (not waiting and user is None and not getattr(
            progress.job, "created_by_id", None)):
        return run_result(received=0, passed=0, candidates=len(items), new=0,
                          notes=[StoredText(gettext_noop("nothing new since the last report"))]
                          if items else [])
    steps = STUDY_STEPS
    progress.start(total=len(steps) + 1, message=gettext_lazy("reading the ratings"))

    def step(message: str) -> None:
        progress.set(steps.index(message) if message in steps else 0,
                     message=gettext_lazy(message))

    # By character when the references are Chinese (DuReader's scorer), whatever language
    # the project took from the corpus it was created with; by the project's otherwise.
    level = text_level([a for i in items for a in i.data["reference"]["answers"]]) \
        or token_level(project.language)
    refs, preds, ratings = _study_inputs(items, level)
    params = stage.params
    report = judgment_study(refs, preds, ratings, alpha=params["alpha"], beta=params["beta"],
                            gamma=params["gamma"], resamples=params["resamples"],
                            sample=params["sample"], seed=params["seed"], progress=step)
    report["parameters"]["tokens"] = level
    progress.set(len(steps), message=gettext_lazy("saving the report"))
    values = {(str(c["question_id"]), c["system"]): c for c in report["candidates"]}
    with transaction.atomic():
        saved = JudgmentReport.objects.create(
            project=project, stage=stage, report=report, job=getattr(progress, "job", None),
            created_by=user or getattr(progress.job, "created_by", None))
        for item in waiting:
            locked = Item.objects.select_for_update().filter(
                pk=item.pk, status=Item.Status.PENDING).first()
            if locked is not None:
                item_finish(item=locked, emits=[], result=values[
                    (str(item.data["question_id"]), item.data["system"])])
    progress.set(len(steps) + 1, message=gettext_lazy("done"))
    return run_result(
        received=len(waiting), passed=len(waiting), report=saved.pk, candidates=len(items),
        new=len(waiting),
        table2_overall={m: report["table2"][m]["overall"] for m in report["table2"]},
        notes=[StoredText(gettext_noop("report #%(report)s over %(count)s rated candidate(s)"),
                          report=saved.pk, count=len(items))])


# Reading the report ---------------------------------------------------------------------------

def report_latest(*, project: Project) -> Any:
    from annotation.judgment_models import JudgmentReport

    return JudgmentReport.objects.filter(project=project).order_by("-created_at", "-id").first()


def _row(values: dict[str, Any]) -> list[Any]:
    return [values.get(c) for c in COLUMNS]


def report_tables(report: dict[str, Any]) -> dict[str, Any]:
    """The paper's three tables as rows (columns: yes-no, entity, description, overall)."""
    order = ("adapted_rouge_l", "rouge_l", "adapted_bleu_4", "bleu_4")
    return {
        "columns": [gettext(TYPE_LABELS[t]) for t in TYPES] + [gettext("Overall")],
        "table1": _row(report["table1"]),
        "table1_n": _row(report["table1_n"]),
        # Reports written before Krippendorff's alpha and the one-rating count have neither:
        # no alpha row, no count (run the study again to get them).
        "table1_alpha": _row(report["table1_krippendorff_alpha"])
        if "table1_krippendorff_alpha" in report else None,
        "table1_one_rating": report.get("table1_one_rating", {}).get("overall", 0),
        "table2": [{"metric": METRIC_LABELS[m], "key": m, "values": _row(report["table2"][m]),
                    "ci": _row(report["table2_ci"][m])} for m in order],
        "table3": [{"metric": METRIC_LABELS[m], "key": m, "values": _row(report["table3"][m])}
                   for m in order],
        "table3_n": _row(report["table3_n"]),
        "bootstrap": [{"pair": f"{METRIC_LABELS['adapted_' + p]} vs {METRIC_LABELS[p]}",
                       "values": [report["bootstrap"].get(c, {}).get(p) for c in COLUMNS]}
                      for p in ("rouge_l", "bleu_4")],
    }


def report_plots(report: dict[str, Any]) -> dict[str, Plot]:
    """The α and β sweeps (paper figures 1 and 2) and the score distributions."""
    plots: dict[str, Plot] = {}
    for name, label in (("alpha", gettext("PCC on yes-no answers as α goes 0…5")),
                        ("beta", gettext("PCC on entity answers as β goes 0…5"))):
        sweep = report["sweeps"][name]
        series = {METRIC_LABELS[m]: [v if v is not None else 0.0 for v in sweep[m]]
                  for m in ("adapted_rouge_l", "adapted_bleu_4") if sweep[m]}
        if series:
            values = [v for s in series.values() for v in s]
            lo = min(0.0, round(min(values) - 0.05, 1))
            plots[name] = line_plot(series, label=label, lo=lo,
                                    hi=max(1.0, round(max(values) + 0.05, 1)))
    dist = report["distribution"]
    for where in COLUMNS:
        rows = []
        for system, by_type in dist.items():
            counts = by_type.get(where, {})
            if sum(counts.values()):
                rows.append((system, [(counts.get(str(s), 0), f"bar-score-{s}",
                                       gettext("score %(score)s: %(count)s")
                                       % {"score": s, "count": counts.get(str(s), 0)})
                                      for s in range(1, 6)]))
        if rows:
            label = gettext(TYPE_LABELS.get(where, gettext_noop("All types")))
            plots[f"scores_{where}"] = hbar(
                rows, label=gettext("Scores 1–5 per system: %(type)s") % {"type": label},
                total=" " + gettext("ratings"))
    return plots


def _cell(text: Any) -> Any:
    """An imported name or id as a spreadsheet shows it, never run as a formula (OWASP,
    "CSV Injection"): one starting like a formula is quoted with a leading apostrophe."""
    return f"'{text}" if isinstance(text, str) and starts_like_a_formula(text) else text


def report_csv(report: dict[str, Any]) -> str:
    """Per candidate: question, system, type, the four metrics, the mean and each score;
    then the tables (one row per table cell)."""
    out = io.StringIO()
    writer = csv.writer(out)
    raters = max((len(c["scores"]) for c in report["candidates"]), default=0)
    writer.writerow(["question_id", "system", "type", "rouge_l", "bleu_4", "adapted_rouge_l",
                     "adapted_bleu_4", "human_mean",
                     *[f"score_{n + 1}" for n in range(raters)]])
    for c in report["candidates"]:
        writer.writerow([_cell(c["question_id"]), _cell(c["system"]), c["type"], c["rouge_l"],
                         c["bleu_4"],
                         c["adapted_rouge_l"], c["adapted_bleu_4"], c["human"], *c["scores"]])
    writer.writerow([])
    writer.writerow(["table", "metric", "type", "value"])
    for column in COLUMNS:
        writer.writerow(["table1", "raters", column, report["table1"].get(column)])
    for key, name in TABLE1_CSV:
        for column in COLUMNS if key in report else ():
            writer.writerow(["table1", name, column, report[key].get(column)])
    for table in ("table2", "table3"):
        for metric, by_type in report[table].items():
            for column in COLUMNS:
                writer.writerow([table, metric, column, by_type.get(column)])
    for column, pairs in report["bootstrap"].items():
        for pair, share in pairs.items():
            writer.writerow(["bootstrap", f"adapted_{pair}>{pair}", column, share])
    return out.getvalue()


# The release ----------------------------------------------------------------------------------

def release_files(release: Any, folder: Any, report: Any) -> list[tuple[str, str, Any]]:
    """``judgment/candidates.jsonl`` (one line per rated candidate) and
    ``judgment/report.json`` (the tables, bootstrap, sweeps, distributions) of the latest
    report. ``report`` is the release's progress callback."""
    from collector.exporters.judgment import write_judgment_candidates, write_judgment_report

    saved = report_latest(project=release.project)
    if saved is None:
        raise ValueError("the judgment project has no study report yet: run the study")
    folder.mkdir(parents=True, exist_ok=True)
    return [
        ("judgment", "", write_judgment_candidates(folder / "candidates.jsonl",
                                                   saved.report["candidates"],
                                                   progress=report)),
        ("judgment", "", write_judgment_report(folder / "report.json", saved.report)),
    ]


def datasheet_agreement(project: Project) -> dict[str, Any]:
    """The raters' agreement over all question types (Table 1's overall column) for the
    datasheet: Pearson r of rating pairs, Krippendorff's alpha (interval), and what they
    were computed over. Empty without a report; a report written before alpha and the
    one-rating count gives r and the candidates only."""
    saved = report_latest(project=project)
    if saved is None:
        return {}
    report = saved.report
    figures = {"rater_pearson_r": report["table1"].get("overall")}
    for key, name in TABLE1_CSV:
        if key in report:
            figures[name] = report[key].get("overall")
    return figures


def datasheet_rated(project: Project) -> dict[str, Any]:
    """What was rated: questions per type, systems, candidates, raters and scale."""
    saved = report_latest(project=project)
    rate = project.stages.filter(kind="judgment_rate").first()
    sample = project.stages.filter(kind="judgment_sample").first()
    if saved is None:
        return {"report": None}
    counts = saved.report["counts"]
    return {
        "questions": counts["questions"], "questions_by_type": counts["by_type"],
        "systems": counts["systems"], "candidates": counts["candidates"],
        "ratings": counts["ratings"],
        "raters_per_candidate": rate.params.get("raters_per_candidate") if rate else None,
        "sample": sample.params if sample else {},
        "scale": "1-5, the paper's guideline (5 perfect with little redundancy ... 1 totally "
                 "irrelevant); yes-no opinion and gold entities weighed as key points",
        "blind": "raters saw the question, the references and one answer at a time, never "
                 "the system nor the other raters' scores",
        "report": saved.pk, "parameters": saved.report["parameters"],
    }
