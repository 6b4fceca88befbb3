"""The judgment recipe end to end through the services: import (all or nothing, errors
naming file, line and field), seeded sampling per type, blind rating by two raters in
orders of their own, the study job and its report, pages, downloads and role checks."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.http import QueryDict
from django.urls import reverse

from annotation import engine
from annotation.judgment_demo import references_upload, scripted_score, system_uploads
from annotation.judgment_models import JudgmentReport
from annotation.models import Item, Project
from annotation.roles import Role
from annotation.stages.judgment_import import Upload, judgment_import
from tests.factories import user_with_roles


@pytest.fixture
def raters(db):
    return [user_with_roles(name, Role.ANNOTATOR) for name in ("rater1", "rater2")]


@pytest.fixture
def draft(db, admin_user):
    return engine.project_create(name="Judgment test", recipe="judgment", language="zh",
                                 user=admin_user, params={1: {"yes_no": 4, "entity": 4,
                                                              "description": 3, "seed": 5}})


def test_import_errors_name_file_line_and_field_and_write_nothing(draft):
    refs = references_upload()
    (name_a, a), (name_b, b) = system_uploads()
    lines = b.text.splitlines()
    bad = json.loads(lines[2])
    bad["yesno_answers"] = ["Maybe"]
    lines[2] = json.dumps(bad, ensure_ascii=False)
    with pytest.raises(ValidationError, match=r"lead-sentence.jsonl: line 3: field "
                                              r"'yesno_answers': 'Maybe' is not one of"):
        judgment_import(project=draft, references=refs,
                        predictions=[(name_a, a), (name_b, Upload(b.name, "\n".join(lines)))])
    assert not Item.objects.filter(project=draft).exists()

    ref_lines = refs.text.splitlines()
    broken = json.loads(ref_lines[4])
    del broken["question_type"]
    ref_lines[4] = json.dumps(broken, ensure_ascii=False)
    with pytest.raises(ValidationError,
                       match=r"refs.jsonl: line 5: field 'question_type': is missing"):
        judgment_import(project=draft, references=Upload("refs.jsonl", "\n".join(ref_lines)),
                        predictions=[(name_a, a)])
    short = Upload("short.jsonl", "\n".join(a.text.splitlines()[:-1]))
    with pytest.raises(ValidationError, match=r"short.jsonl: system 'x' has no prediction "
                                              r"for 1 question"):
        judgment_import(project=draft, references=refs, predictions=[("x", short)])
    with pytest.raises(ValidationError, match="given twice"):
        judgment_import(project=draft, references=refs, predictions=[("x", a), ("x", b)])
    assert not Item.objects.filter(project=draft).exists()


def _rate_all(project: Project, rater) -> list[str]:
    seen = []
    while (assignment := engine.task_claim(worker=rater, project=project)) is not None:
        data = assignment.item.data
        seen.append(assignment.item.key)
        engine.task_submit(assignment_id=assignment.pk, worker=rater,
                           payload={"score": scripted_score(data, rater.username)})
    return seen


def test_the_study_end_to_end(draft, raters, admin_user, committed, client, settings,
                              tmp_path, run_reports):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    result = judgment_import(project=draft, references=references_upload(),
                             predictions=system_uploads())
    assert result["questions"] == 25 and result["systems"] == ["extractive", "lead-sentence"]
    for rater in raters:
        engine.project_member_add(project=draft, user=rater, role=Role.ANNOTATOR)
    with committed():
        engine.project_start(project=draft, actor=admin_user)
    rate = draft.stages.get(kind="judgment_rate")
    items = list(Item.objects.filter(stage=rate))
    types = sorted(i.data["question_type"] for i in items)
    # 4 yes-no, 4 entity, 3 description questions sampled, two systems each.
    assert types.count("YES_NO") == 8 and types.count("ENTITY") == 8
    assert types.count("DESCRIPTION") == 6
    assert all(i.overlap == 2 for i in items)
    # The sample says what it left out, per question type.
    imported = Counter(i.data["question_type"] for i in Item.objects.filter(
        stage__kind="judgment_sample"))
    received, passed, dropped, notes = run_reports(draft)["judgment_sample"]
    assert (received, passed, notes) == (25, 11, ["22 system answers to rate"])
    assert dropped == {f"not sampled: {qtype} beyond the {n} asked for ({qtype.lower()})":
                       imported[qtype] - n
                       for qtype, n in (("YES_NO", 4), ("ENTITY", 4), ("DESCRIPTION", 3))
                       if imported[qtype] > n}

    # Blind: the rater's page never names the system; the key does not either.
    client.force_login(raters[0])
    assignment = engine.task_claim(worker=raters[0], project=draft)
    page = client.get(reverse("annotation:task_detail", args=[assignment.pk]))
    body = page.content.decode()
    assert page.status_code == 200 and "score-5" in body
    assert "extractive" not in body and "lead-sentence" not in body
    assert assignment.item.data["question"] in body
    bad = client.post(reverse("annotation:task_detail", args=[assignment.pk]), {"score": "9"})
    assert bad.status_code == 400
    assert "score: choose a score from 1 to 5" in html.unescape(bad.content.decode())

    with committed():
        first = _rate_all(draft, raters[0])
    assert not JudgmentReport.objects.exists()  # the second rater is still to come
    with committed():  # a run asked for now says what it waits for
        engine.stage_run_enqueue(stage=draft.stages.get(kind="judgment_study"))
    assert run_reports(draft)["judgment_study"] == (
        0, 0, {}, ["waiting: 22 item(s) not rated yet"])
    with committed():
        second = _rate_all(draft, raters[1])
    assert sorted(first) == sorted(second) and len(first) == 22
    # the study's run received the rated candidates and wrote the report
    first_report = JudgmentReport.objects.get(project=draft)
    assert run_reports(draft)["judgment_study"] == (
        22, 22, {}, [f"report #{first_report.pk} over 22 rated candidate(s)"])
    assert first != second  # each rater meets the candidates in an order of their own

    saved = JudgmentReport.objects.get(project=draft)
    report = saved.report
    assert report["counts"]["candidates"] == 22 and report["counts"]["ratings"] == 44
    assert set(report["table2"]) == {"rouge_l", "bleu_4", "adapted_rouge_l", "adapted_bleu_4"}
    done = Item.objects.filter(stage__kind="judgment_study", status=Item.Status.DONE)
    assert done.count() == 22
    assert {"rouge_l", "human", "scores"} <= set(done.first().result)

    client.force_login(admin_user)
    page = client.get(reverse("annotation:judgment_report", args=[draft.pk]))
    text = page.content.decode()
    for testid in ("table1", "table2", "table3", "bootstrap", "plot-alpha", "plot-beta",
                   "plot-scores_overall", "download-csv"):
        assert f'data-testid="{testid}"' in text, testid
    download = client.get(reverse("annotation:judgment_download", args=[draft.pk, "csv"]))
    assert download["Content-Type"] == "text/csv; charset=utf-8"  # answers may be Chinese
    rows = list(csv.reader(io.StringIO(download.content.decode())))
    assert rows[0][:3] == ["question_id", "system", "type"] and len(rows[1:23]) == 22
    as_json = client.get(reverse("annotation:judgment_download", args=[draft.pk, "json"]))
    assert json.loads(as_json.content)["table1"] == report["table1"]

    # The admin runs it again: a new report, the first one kept.
    with committed():
        client.post(reverse("annotation:judgment_run", args=[draft.pk]))
    assert JudgmentReport.objects.filter(project=draft).count() == 2
    latest = JudgmentReport.objects.filter(project=draft).latest("id")
    assert run_reports(draft)["judgment_study"] == (
        0, 0, {}, [f"report #{latest.pk} over 22 rated candidate(s)"])

    # The report is part of a release; the datasheet says what was rated.
    from annotation import releases

    settings.MEDIA_ROOT = str(tmp_path)
    release = releases.release_create(project=draft, version="1.0.0", formats=["judgment"],
                                      user=admin_user, build=False)
    releases.release_build(release=release)
    release.refresh_from_db()
    assert release.status == "ready"
    paths = sorted(release.files.values_list("path", flat=True))
    assert paths == ["DATASHEET.md", "judgment/candidates.jsonl", "judgment/report.json"]
    rated = release.datasheet["rated"]
    assert rated["candidates"] == 22 and rated["systems"] == ["extractive", "lead-sentence"]
    assert rated["raters_per_candidate"] == 2
    with releases.release_open(release, "judgment/candidates.jsonl") as file:
        assert len(file.read().decode().splitlines()) == 22
    with releases.release_open(release, "DATASHEET.md") as file:
        sheet = file.read().decode("utf-8")
    assert "Human judgment study" in sheet and "lead-sentence" in sheet
    # ... and how far its raters agreed: the latest report's Table 1, all types.
    latest = latest.report
    assert release.datasheet["agreement"] == {
        "rater_pearson_r": latest["table1"]["overall"],
        "krippendorff_alpha_interval": latest["table1_krippendorff_alpha"]["overall"],
        "candidates_rated_twice_or_more": 22, "rating_pairs": 22,
        "candidates_rated_once_left_out": 0}
    alpha = latest["table1_krippendorff_alpha"]["overall"]
    assert f"| Krippendorff's α (interval), all ratings | {alpha:.4g} |" in sheet
    assert "| Candidates rated at least twice | 22 |" in sheet

    # Raters may not see the report, nor download it.
    client.force_login(raters[0])
    assert client.get(reverse("annotation:judgment_report", args=[draft.pk])).status_code == 403
    assert client.get(reverse("annotation:judgment_download",
                              args=[draft.pk, "csv"])).status_code == 403


@pytest.fixture
def started(draft, raters, admin_user, committed, settings):
    """The study imported, its raters members and the project started."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    judgment_import(project=draft, references=references_upload(),
                    predictions=system_uploads())
    for rater in raters:
        engine.project_member_add(project=draft, user=rater, role=Role.ANNOTATOR)
    with committed():
        engine.project_start(project=draft, actor=admin_user)
    return draft


def test_raters_working_side_by_side_meet_the_candidates_in_orders_of_their_own(
    started, raters, committed
):
    """Two raters taking turns (a QA report said they met the candidates in nearly the same
    order): every slot has its own seeded place in the queue, so their orders are unrelated
    (rank correlation 0.29 here; 1.0 were a candidate's slots placed together)."""
    from scipy import stats

    draft = started
    seen: dict[str, list[str]] = {rater.username: [] for rater in raters}
    working = True
    while working:
        working = False
        for rater in raters:
            assignment = engine.task_claim(worker=rater, project=draft)
            if assignment is None:
                continue
            working = True
            seen[rater.username].append(assignment.item.key)
            with committed():
                engine.task_submit(assignment_id=assignment.pk, worker=rater, payload={
                    "score": scripted_score(assignment.item.data, rater.username)})
    first, second = seen["rater1"], seen["rater2"]
    assert sorted(first) == sorted(second) and len(first) == 22
    rho = stats.spearmanr([first.index(key) for key in first],
                          [second.index(key) for key in first]).statistic
    assert rho < 0.5, (rho, first, second)


def test_import_page_uploads_and_refuses_bad_files(draft, admin_user, client):
    client.force_login(admin_user)
    url = reverse("annotation:judgment_import", args=[draft.pk])
    refs = references_upload()
    (name, upload), _ = system_uploads()

    def files(pred_text: str) -> dict:
        return {"references": io.BytesIO(refs.text.encode()), "system": [name],
                "predictions": [io.BytesIO(pred_text.encode())]}

    bad = client.post(url, files(upload.text.replace('"answers"', '"answerz"', 1)))
    assert bad.status_code == 400
    assert "line 1: field 'answers': is missing (required)" in html.unescape(bad.content.decode())
    assert not Item.objects.filter(project=draft).exists()
    # The form has five name fields; without JavaScript the browser sends the empty ones
    # too, while an empty file field sends nothing.
    form = files(upload.text)
    form["system"] = [name, "", "", "", ""]
    good = client.post(url, form)
    assert good.status_code == 302
    assert Item.objects.filter(project=draft, stage__kind="judgment_sample").count() == 25


def test_import_page_pairs_each_system_name_with_the_file_of_its_row(draft, admin_user,
                                                                     client):
    """A row with a name and no file next to a row with a file and no name is refused,
    naming both rows, with the names kept: it must not give the second file the first
    row's name (the study would report one system's answers under another's name)."""
    client.force_login(admin_user)
    url = reverse("annotation:judgment_import", args=[draft.pk])
    refs = references_upload()
    (first, first_upload), (second, second_upload) = system_uploads()

    def upload(u: Upload) -> io.BytesIO:
        f = io.BytesIO(u.text.encode())
        f.name = u.name
        return f

    mixed = client.post(url, {"references": upload(refs), "system-1": first,
                              "predictions-1": upload(first_upload),
                              "system-2": "", "predictions-2": upload(second_upload),
                              "system-3": "typo-name"})
    assert mixed.status_code == 400
    page = html.unescape(mixed.content.decode())
    assert "System 2 (lead-sentence.jsonl): name the system" in page
    assert 'name="system-3" value="typo-name"' in page
    assert not Item.objects.filter(project=draft).exists()

    # Rows 1 and 3 filled, row 2 left empty: each file keeps its own row's name.
    good = client.post(url, {"references": upload(refs), "system-1": "sys-b",
                             "predictions-1": upload(second_upload),
                             "system-3": "sys-a", "predictions-3": upload(first_upload)})
    assert good.status_code == 302
    imported = {str(i.data["question_id"]): i.data["candidates"] for i in
                Item.objects.filter(project=draft, stage__kind="judgment_sample")}
    for system, source in {"sys-a": first_upload, "sys-b": second_upload}.items():
        answers = {str(r["question_id"]): r["answers"][0]
                   for r in map(json.loads, source.text.splitlines())}
        assert {q: c[system]["answer"] for q, c in imported.items()} == answers


DATASETS = Path(__file__).resolve().parents[2] / "data" / "datasets"


def test_squad_and_msmarco_layouts():
    from annotation.stages.judgment_import import read_predictions, read_references

    squad = json.loads((DATASETS / "squad_v1.1_dev/dev-v1.1.sample.json").read_text())
    refs = read_references(Upload("dev.json", json.dumps(squad)))
    assert len(refs) == 186 and {r["question_type"] for r in refs.values()} == {"ENTITY"}
    first = squad["data"][0]["paragraphs"][0]["qas"][0]
    assert refs[first["id"]]["reference"]["answers"][0] == first["answers"][0]["text"]
    preds = {qa["id"]: qa["answers"][0]["text"] for a in squad["data"]
             for p in a["paragraphs"] for qa in p["qas"]}
    read = read_predictions(Upload("pred.json", json.dumps(preds)), refs)
    assert read[first["id"]] == {"answer": first["answers"][0]["text"], "yesno_answer": None}
    with pytest.raises(ValidationError, match="pred.json: field 'nope': question nope is not"):
        read_predictions(Upload("pred.json", json.dumps({**preds, "nope": "x"})), refs)

    marco = (DATASETS / "msmarco_qa_v2.1/synthetic/msmarco_v2.1.synthetic.jsonl").read_text()
    refs = read_references(Upload("marco.jsonl", marco))
    # 900002 has no answer ("No Answer Present."): left out, its predictions ignored.
    assert sorted(refs) == ["900001", "900003"] and refs.skipped == {"900002"}
    assert refs["900003"]["question_type"] == "DESCRIPTION"
    assert refs["900001"]["question_type"] == "ENTITY"  # NUMERIC: an entity question
    candidates = (DATASETS / "msmarco_qa_v2.1/synthetic/eval_candidates.synthetic.jsonl")
    read = read_predictions(Upload("cands.jsonl", candidates.read_text()), refs)
    assert read == {"900001": {"answer": "12 minutes", "yesno_answer": None}}


def test_references_from_a_release_of_this_platform(draft, admin_user, settings, tmp_path):
    """A marco project's release holds a DuReader file per split: a judgment project
    takes the evaluation split's (dev), not the training questions."""
    from annotation import releases
    from annotation.models import Release, ReleaseFile
    from annotation.stages.judgment_import import release_references

    settings.MEDIA_ROOT = str(tmp_path)
    marco = engine.project_create(name="Source", recipe="marco", user=admin_user)
    release = Release.objects.create(project=marco, version="1.0.0", formats=["dureader"],
                                     status=Release.Status.READY, pseudonym_salt="s")
    lines = references_upload().text.splitlines(keepends=True)
    for split, text in (("train", "".join(lines[:3])), ("dev", "".join(lines))):
        path = f"dureader.{split}.jsonl"
        releases.release_storage().save(releases.release_file_name(release, path),
                                        ContentFile(text.encode("utf-8")))
        ReleaseFile.objects.create(release=release, format="dureader", path=path, split=split,
                                   records=text.count("\n"), sha256="0" * 64, bytes=1)
    references = release_references(release)
    assert references.name == "Source 1.0.0 dureader.dev.jsonl"
    result = judgment_import(project=draft, references=references,
                             predictions=system_uploads())
    assert result["questions"] == 25


def test_a_rating_correction_marks_the_score_given():
    """The rating page marks the button whose value equals the form's score (as posted,
    text); a correction opened with none marked."""
    from annotation.stages import stage_kind

    spec = stage_kind("judgment_rate")
    shown = spec.payload_form_values(None, {"score": 3})
    assert shown == spec.form_values(None, QueryDict("score=3")) == {"score": "3"}


def test_the_report_csv_runs_no_imported_name_as_a_formula():
    """System names and question ids come from imported files: one starting like a formula
    is written with a leading apostrophe, as a spreadsheet shows text."""
    import csv

    from annotation.stages.judgment_report import COLUMNS, report_csv

    candidate = {"question_id": "=HYPERLINK(\"http://x\")", "system": "+sys", "type": "ENTITY",
                 "rouge_l": 0.5, "bleu_4": 0.25, "adapted_rouge_l": 0.5, "adapted_bleu_4": 0.25,
                 "human": 4.0, "scores": [4, 4]}
    plain = {**candidate, "question_id": "q7", "system": "extractive"}
    empty = {column: None for column in COLUMNS}
    rows = list(csv.reader(io.StringIO(report_csv({
        "candidates": [candidate, plain], "table1": empty, "table2": {}, "table3": {},
        "bootstrap": {}}))))
    assert rows[1][:2] == ["'=HYPERLINK(\"http://x\")", "'+sys"]
    assert rows[2][:3] == ["q7", "extractive", "ENTITY"]


def test_the_report_names_each_score_chart_and_its_colours_on_the_page(
        started, raters, admin_user, client, committed):
    """The score charts are told apart by a visible caption (their type), not only by the
    screen reader's label, and a legend says which colour is which score."""
    with committed():
        for rater in raters:
            _rate_all(started, rater)
    client.force_login(admin_user)
    page = client.get(reverse("annotation:judgment_report", args=[started.pk])).content.decode()
    visible = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html.unescape(page)))
    for label in ("Yes-no", "Entity", "Description", "All types"):
        assert f"Scores 1–5 per system: {label}" in visible, label
    assert "score 1 · score 2 · score 3 · score 4 · score 5" in visible


def test_a_second_score_sent_for_a_rated_candidate_is_said_to_be_lost(
        started, raters, client, committed):
    """A rater pressed 5, then 4 before the page changed: the second post found the task
    submitted and said "Saved", while the 5 was kept and the 4 lost."""
    rater = raters[0]
    client.force_login(rater)
    location = client.post(reverse("annotation:task_next"))["Location"]
    with committed():
        first = client.post(location, {"score": "5"})
    assert first.status_code == 302
    again = client.post(location, {"score": "4"}, follow=True)
    assert again.redirect_chain[0] == (first["Location"], 302)
    message = [str(m) for m in again.context["messages"]][-1]
    assert message.startswith("This task was already submitted with a different answer")
    assert [s.payload for s in rater.submissions.all()] == [{"score": 5}]
    # The same score sent twice (a double click) is saved, as it is.
    with committed():
        same = client.post(first["Location"], {"score": "3"})
    assert same.status_code == 302
    twice = client.post(first["Location"], {"score": "3"}, follow=True)
    assert [str(m) for m in twice.context["messages"]][-1] == "Saved. Here is your next task."


def _table1_page(client, project) -> str:
    page = client.get(reverse("annotation:judgment_report", args=[project.pk])).content.decode()
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html.unescape(page)))


def test_three_raters_per_candidate_all_count_in_table1_beside_krippendorffs_alpha(
        draft, raters, admin_user, committed, client, settings):
    """Overlap 3 (a stage parameter): Table 1 is scipy's r over the three pairs of every
    candidate's ratings (the first two alone were read before), Krippendorff's interval
    alpha (of its definition, redone in the metrics tests) stands beside it on the page,
    in the CSV and in the JSON."""
    from itertools import combinations

    from scipy import stats

    from tests.collector.metrics.test_judgment import interval_alpha

    settings.CELERY_TASK_ALWAYS_EAGER = True
    engine.stage_params_update(stage=draft.stages.get(kind="judgment_rate"),
                               params={"raters_per_candidate": 3})
    three = [*raters, user_with_roles("rater3", Role.ANNOTATOR)]
    judgment_import(project=draft, references=references_upload(),
                    predictions=system_uploads())
    for rater in three:
        engine.project_member_add(project=draft, user=rater, role=Role.ANNOTATOR)
    with committed():
        engine.project_start(project=draft, actor=admin_user)
    with committed():
        for rater in three:
            _rate_all(draft, rater)
    report = JudgmentReport.objects.get(project=draft).report

    units = [[r["score"] for r in sorted(item.data["ratings"], key=lambda r: r["rater"])]
             for item in Item.objects.filter(stage__kind="judgment_study")]
    assert len(units) == 22 and {len(u) for u in units} == {3}
    pairs = [p for u in units for p in combinations(u, 2)]
    r = stats.pearsonr([p[0] for p in pairs], [p[1] for p in pairs]).statistic
    assert report["table1"]["overall"] == pytest.approx(r, abs=1e-4)
    first_two = stats.pearsonr([u[0] for u in units], [u[1] for u in units]).statistic
    assert report["table1"]["overall"] != pytest.approx(first_two, abs=1e-3)
    alpha = report["table1_krippendorff_alpha"]["overall"]
    assert alpha == pytest.approx(interval_alpha(units), abs=1e-4)
    assert (report["table1_n"]["overall"], report["table1_pairs"]["overall"],
            report["table1_one_rating"]["overall"]) == (22, 66, 0)

    client.force_login(admin_user)
    text = _table1_page(client, draft)
    assert f"Krippendorff's α (interval) {report['table1_krippendorff_alpha']['YES_NO']:.3f}" \
        in text
    assert "Krippendorff's α (interval metric) is the agreement beyond chance" in text
    assert "with one rating" not in text
    download = client.get(reverse("annotation:judgment_download", args=[draft.pk, "csv"]))
    rows = list(csv.reader(io.StringIO(download.content.decode())))
    assert ["table1", "krippendorff_alpha_interval", "overall", str(alpha)] in rows
    assert ["table1", "rating_pairs", "overall", "66"] in rows
    assert ["table1", "candidates_rated_once_left_out", "overall", "0"] in rows
    as_json = json.loads(client.get(reverse("annotation:judgment_download",
                                            args=[draft.pk, "json"])).content)
    assert as_json["table1_krippendorff_alpha"] == report["table1_krippendorff_alpha"]


def test_the_report_page_says_how_many_candidates_rated_once_were_left_out(
        started, raters, admin_user, committed, client):
    """A ratings set where a rater left (the platform waits for every rating, so the report
    is made here from its own items with one rating dropped, as the study makes it): the
    page says one candidate was left out of the agreement; its one score is its human
    score."""
    from annotation.stages.judgment_report import _study_inputs
    from collector.metrics.judgment import judgment_study

    with committed():
        for rater in raters:
            _rate_all(started, rater)
    stage = started.stages.get(kind="judgment_study")
    refs, preds, ratings = _study_inputs(list(Item.objects.filter(stage=stage)), "char")
    left = ratings.pop(0)
    report = judgment_study(refs, preds, ratings, resamples=10)
    JudgmentReport.objects.create(project=started, stage=stage, report=report)
    assert report["table1_one_rating"]["overall"] == 1 and report["table1_n"]["overall"] == 21
    one = next(c for c in report["candidates"] if (c["question_id"], c["system"]) == (
        left["question_id"], left["system"]))
    assert len(one["scores"]) == 1 and one["human"] == one["scores"][0]

    client.force_login(admin_user)
    assert ("1 candidate with one rating was left out of the agreement; its score is its "
            "human score in Tables 2 and 3.") in _table1_page(client, started)


def test_a_report_from_before_krippendorffs_alpha_still_shows():
    """Reports saved before the new keys: Table 1 without an alpha row, no count; the CSV
    has no rows for them."""
    from annotation.stages.judgment_report import COLUMNS, report_csv, report_tables

    old = {"table1": dict.fromkeys(COLUMNS, 0.8), "table1_n": dict.fromkeys(COLUMNS, 5),
           "table2": {m: dict.fromkeys(COLUMNS) for m in ("adapted_rouge_l", "rouge_l",
                                                          "adapted_bleu_4", "bleu_4")},
           "table2_ci": {m: dict.fromkeys(COLUMNS) for m in ("adapted_rouge_l", "rouge_l",
                                                             "adapted_bleu_4", "bleu_4")},
           "table3": {m: {} for m in ("adapted_rouge_l", "rouge_l", "adapted_bleu_4",
                                      "bleu_4")},
           "table3_n": {}, "bootstrap": {}, "candidates": []}
    tables = report_tables(old)
    assert tables["table1_alpha"] is None and tables["table1_one_rating"] == 0
    assert "krippendorff" not in report_csv(old)
