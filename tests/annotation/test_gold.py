"""Gold items and qualification: JSONL imports and gold from an earlier project, the
qualification try page by page, the gold measure of each kind, the pages' role checks, and
gold checks answered in the live queue (the claim's side: test_quality.py)."""

from __future__ import annotations

import html
import json
import re
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import F
from django.urls import reverse
from django.utils.translation import override

from annotation import engine, gold
from annotation.eligibility import GOLD_PRIORITY
from annotation.models import (
    Assignment,
    GoldAnswer,
    Item,
    ProjectMember,
    WorkerStage,
)
from annotation.roles import Role
from annotation.stages import Emit, stage_kind
from collector.models import Document
from tests.annotation.test_newsqa_flow import claim_item, phrase_span
from tests.factories import user_with_roles

ARTICLE = "portvale-library"
TRAINING = [  # key, question, the answer's words in the article, reason
    ("weiss", "Who voted against the library?", "Dario Weiss",
     "Weiss is the council member who voted against the plan."),
    ("march", "When will construction begin?", "in March",
     "The mayor said construction would begin in March."),
    ("books", "How many books will the library hold?", "80,000 books",
     "The last sentence gives the size of the collection."),
]


def span_of(phrase: str) -> list[int]:
    body = Document.objects.get(external_id=ARTICLE).body
    start = body.index(phrase)
    return [start, start + len(phrase)]


def gold_line(key: str, question: str, phrase: str, reason: str, **changes) -> str:
    row = {"key": key, "data": {"question": question}, "document": ARTICLE,
           "expected": {"spans": [span_of(phrase)]}, "reason": reason}
    row.update(changes)
    return json.dumps(row)


def training_jsonl() -> str:
    return "\n".join(gold_line(*row) for row in TRAINING) + "\n"


def build(news_corpus, workers, admin_user, committed, settings, name="Gold", **params):
    """An active NewsQA project whose answer stage takes ``params``, with six answer items
    of the first article waiting."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    project = engine.project_create(name=name, recipe="newsqa", corpus=news_corpus)
    answer = project.stages.get(kind="newsqa_answer")
    engine.stage_params_update(stage=answer, params=params)
    for user in workers.values():
        engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
    with committed():
        engine.project_start(project=project, actor=admin_user)
    question = project.stages.get(kind="newsqa_question")
    doc_id = project.items.filter(stage=question).values_list("document_id", flat=True)[0]
    engine.items_emit(source_stage=question, emits=[
        Emit(kind="newsqa_answer", key=f"w{n}", data={"question": f"Question {n}?"},
             document_id=doc_id) for n in range(6)])
    answer.refresh_from_db()
    return project, answer


@pytest.fixture
def qualifying(news_corpus, workers, admin_user, committed, settings):
    """The answer stage asks for a qualification: 2 training items a try, 2 tries, a mean of
    0.8; three training items imported."""
    project, answer = build(news_corpus, workers, admin_user, committed, settings,
                            qualification_items=2, qualification_tries=2,
                            qualification_threshold=0.8)
    gold.gold_items_import(stage=answer, text=training_jsonl(), name="training.jsonl",
                           purpose="training")
    return project, answer


def gold_count() -> int:
    return Item.objects.exclude(gold="").count()


# Imports --------------------------------------------------------------------------------------

def test_import_makes_training_items_without_slots_and_check_items_with_three(
        news_corpus, workers, admin_user, committed, settings):
    project, answer = build(news_corpus, workers, admin_user, committed, settings)
    training = gold.gold_items_import(stage=answer, text=training_jsonl(),
                                      name="training.jsonl", purpose="training")
    assert [item.key for item in training] == ["gold:weiss", "gold:march", "gold:books"]
    weiss = Item.objects.get(stage=answer, key="gold:weiss")
    assert (weiss.gold, weiss.status, weiss.document.external_id) == ("training", "open",
                                                                      ARTICLE)
    assert weiss.result["expected"] == {"spans": [span_of("Dario Weiss")]}
    assert weiss.result["reason"].startswith("Weiss is the council member")
    assert not Assignment.objects.filter(item__in=training).exists()

    check_line = gold_line("c1", "Who is the mayor?", "Lena Ortiz", "Named in paragraph 2.")
    [check] = gold.gold_items_import(stage=answer, text=check_line, name="check.jsonl",
                                     purpose="check")
    assert (check.gold, check.priority, check.overlap) == ("check", GOLD_PRIORITY, 3)
    slots = Assignment.objects.filter(item=check)
    assert slots.count() == 3 and {s.status for s in slots} == {"open"}
    assert {s.priority for s in slots} == {GOLD_PRIORITY}
    # Keys are unique per stage: the same key again is refused.
    with pytest.raises(ValidationError, match="already has a gold item 'c1'"):
        gold.gold_items_import(stage=answer, text=check_line, name="again.jsonl",
                               purpose="check")


def test_a_bad_file_names_file_line_and_field_and_writes_nothing(
        news_corpus, workers, admin_user, committed, settings):
    project, answer = build(news_corpus, workers, admin_user, committed, settings)
    body_length = len(Document.objects.get(external_id=ARTICLE).body)
    lines = [
        gold_line(*TRAINING[0]),
        gold_line(*TRAINING[1], expected={"spans": [[body_length - 3, body_length + 40]]}),
        gold_line(*TRAINING[2], document="no-such-story"),
        json.dumps({"key": "q", "data": {}, "document": ARTICLE,
                    "expected": {"no_answer": True}}),
        gold_line(*TRAINING[0]),
        "{not json",
        gold_line("extra", "Who?", "Dario Weiss", "", colour="red"),
    ]
    before = Item.objects.count()
    with pytest.raises(ValidationError) as refused:
        gold.gold_items_import(stage=answer, text="\n".join(lines), name="gold.jsonl",
                               purpose="check")
    messages = refused.value.messages
    assert messages[0].startswith("gold.jsonl: line 2: field 'expected': spans[1]:")
    assert "outside the article" in messages[0]
    assert messages[1] == ("gold.jsonl: line 3: field 'document': no document "
                           "'no-such-story' in the project's corpus")
    assert messages[2] == ("gold.jsonl: line 4: field 'data.question': is missing (the task "
                           "shows it)")
    assert messages[3] == "gold.jsonl: line 5: field 'key': 'weiss' is on line 1 too"
    assert messages[4] == ("gold.jsonl: line 6: invalid JSON: expected a key in double "
                           "quotes, found 'n' (column 2)")
    assert messages[5].startswith("gold.jsonl: line 7: field 'colour': unknown field")
    assert len(messages) == 6
    assert Item.objects.count() == before and not Assignment.objects.filter(
        priority=GOLD_PRIORITY).exists()


def test_kinds_without_a_gold_measure_and_batched_checks_are_refused(
        news_corpus, workers, admin_user, committed, settings):
    project, answer = build(news_corpus, workers, admin_user, committed, settings)
    questions = project.stages.get(kind="newsqa_question")
    with pytest.raises(ValidationError, match="has no gold measure"):
        gold.gold_items_import(stage=questions, text=training_jsonl(), name="q.jsonl",
                               purpose="training")
    with pytest.raises(ValidationError, match="purpose: 'exam' is not one of check, training"):
        gold.gold_items_import(stage=answer, text=training_jsonl(), name="q.jsonl",
                               purpose="exam")
    reco = engine.project_create(name="ReCO gold", recipe="reco")
    evidence = reco.stages.get(kind="reco_evidence")
    with pytest.raises(ValidationError, match="hands out whole batches"):
        gold.gold_items_import(stage=evidence, text="{}", name="e.jsonl", purpose="check")


def test_marco_judgments_and_reco_evidence_import_through_their_kinds(db):
    marco = engine.project_create(name="MARCO gold", recipe="marco")
    judge = marco.stages.get(kind="marco_judge")
    good = {"key": "k1", "data": {"query": "what is a fjord", "query_id": "7"},
            "expected": {"intent": "informational", "decision": "keep",
                         "query_type": "DESCRIPTION", "question_type": "DESCRIPTION"},
            "reason": "A definition answers it."}
    bad = {**good, "key": "k2", "expected": {"intent": "navigational", "decision": "keep"}}
    with pytest.raises(ValidationError, match=r"judge\.jsonl: line 2: field 'expected': decision: "
                                              "navigational queries are excluded"):
        gold.gold_items_import(stage=judge, text=f"{json.dumps(good)}\n{json.dumps(bad)}",
                               name="judge.jsonl", purpose="check")
    [item] = gold.gold_items_import(stage=judge, text=json.dumps(good), name="judge.jsonl",
                                    purpose="check")
    assert item.result["expected"]["exclusions"] == []  # cleaned by the kind

    reco = engine.project_create(name="ReCO gold", recipe="reco", language="zh")
    evidence = reco.stages.get(kind="reco_evidence")
    text = "阿司匹林可以和布洛芬一起吃吗？一般不建议同时服用。"
    row = {"key": "z1", "data": {"query": "阿司匹林能和布洛芬一起吃吗", "language": "zh",
                                 "documents": [{"title": "用药", "text": text}]},
           "expected": {"doc": 0, "evidence": [15, 25], "answer": "negative",
                        "alternatives": {"positive": "能", "negative": "不能",
                                         "uncertain": "无法确定"}},
           "reason": "文中说不建议同时服用。"}
    [item] = gold.gold_items_import(stage=evidence, text=json.dumps(row, ensure_ascii=False),
                                    name="reco.jsonl", purpose="training")
    assert item.result["expected"]["evidence_text"] == "一般不建议同时服用。"
    assert not Assignment.objects.filter(item=item).exists()


def test_gold_from_an_earlier_project_takes_agreed_consensus_answers(
        newsqa_project, news_corpus, workers, admin_user, committed, settings):
    # The earlier project: two answerers agree on "in March"; it is consolidated.
    task = engine.task_claim(worker=workers["questioner"], project=newsqa_project)
    with committed():
        engine.task_submit(assignment_id=task.pk, worker=workers["questioner"],
                           payload={"questions": ["When will the builders begin work?"]})
    when = Item.objects.get(stage__project=newsqa_project, stage__kind="newsqa_answer")
    for name in ("ann1", "ann2"):
        claimed = claim_item(workers[name], newsqa_project, when)
        with committed():
            engine.task_submit(assignment_id=claimed.pk, worker=workers[name],
                               payload={"spans": [phrase_span(when, "in March")]})
    assert Item.objects.filter(stage__project=newsqa_project, stage__kind="newsqa_consolidate",
                               status="done").count() == 1

    project, answer = build(news_corpus, {}, admin_user, committed, settings, name="Later")
    [item] = gold.gold_items_from_project(stage=answer, source_project=newsqa_project,
                                          purpose="training", limit=10)
    assert item.data == {"question": "When will the builders begin work?"}
    assert item.document_id == when.document_id and item.gold == "training"
    expected = item.result["expected"]
    assert item.document.body[slice(*expected["spans"][0])] == "in March"
    assert "agreed on" in item.result["reason"]
    assert stage_kind("newsqa_answer").gold_explain(item, expected) == "in March"
    with pytest.raises(ValidationError, match="no consolidated record usable"):  # taken already
        gold.gold_items_from_project(stage=answer, source_project=newsqa_project,
                                     purpose="training", limit=10)
    validate = project.stages.get(kind="newsqa_validate")
    with pytest.raises(ValidationError, match="cannot take gold items from consolidated"):
        gold.gold_items_from_project(stage=validate, source_project=newsqa_project,
                                     purpose="check", limit=10)
    marco = engine.project_create(name="MARCO source", recipe="marco")
    with pytest.raises(ValidationError, match="is a marco project; stage 'Answer sourcing' "
                                              "needs records of a newsqa project"):
        gold.gold_items_from_project(stage=answer, source_project=marco, purpose="check",
                                     limit=10)


# Qualification --------------------------------------------------------------------------------

def answer_stage_claimed(worker, project, answer) -> bool:
    """Whether a claim gives the worker a slot of the answer stage (released either way)."""
    task = engine.task_claim(worker=worker, project=project)
    if task is None:
        return False
    engine.task_release(assignment_id=task.pk, worker=worker)
    return task.stage_id == answer.pk


def test_a_worker_fails_a_try_sees_each_answer_passes_the_second_and_then_gets_the_stage(
        qualifying, workers, client_for):
    project, answer = qualifying
    worker = workers["ann1"]
    url = reverse("annotation:qualification", args=[answer.pk])
    assert not answer_stage_claimed(worker, project, answer)  # the claim skips the stage
    client = client_for(worker)
    page = client.get(url).content.decode()
    assert 'data-testid="state-label">To do<' in page and 'data-testid="start"' in page

    def take_try(correct: bool) -> list[str]:
        started = client.post(url, {"qualification_action": "start"})
        assert started.status_code == 302
        pages = []
        location = started["Location"]
        for number in (1, 2):
            item_id = int(location.rsplit("=", 1)[1])
            item = Item.objects.get(pk=item_id)
            task = client.get(location)
            assert task.status_code == 200
            text = task.content.decode()
            assert item.data["question"] in text and 'id="task-form"' in text
            assert f"item {number} of 2" in text and "I can't do this task" not in text
            form = ({"payload": json.dumps(item.result["expected"])} if correct
                    else {"flag": "no_answer"})
            done = client.post(location, {**form, "active_time_s": "5"})
            assert done.status_code == 302 and done["Location"].endswith(f"?answered={item_id}")
            feedback = client.get(done["Location"]).content.decode()
            score = "1.00" if correct else "0.00"
            assert f'data-testid="score">{score}<' in feedback
            phrase = next(p for k, _, p, _ in TRAINING if f"gold:{k}" == item.key)
            reason = item.result["reason"].replace("'", "&#x27;")
            assert f'data-testid="expected">{phrase}<' in feedback and reason in feedback
            pages.append(feedback)
            if number == 1:
                assert 'data-testid="next"' in feedback
                location = url + feedback.split('data-testid="next"')[0].rsplit(
                    'href="', 1)[1].split('"')[0]
        return pages

    first = take_try(correct=False)
    assert 'data-testid="failed"' in first[-1] and "You have 1 try left" in first[-1]
    standing = WorkerStage.objects.get(member__user=worker, stage=answer)
    assert (standing.qualification_tries, standing.qualification_score,
            standing.qualified) == (1, 0.0, False)
    assert not answer_stage_claimed(worker, project, answer)

    second = take_try(correct=True)
    assert 'data-testid="passed"' in second[-1]
    standing.refresh_from_db()
    assert (standing.qualification_tries, standing.qualification_score,
            standing.qualified) == (2, 1.0, True)
    assert GoldAnswer.objects.filter(standing=standing, purpose="training").count() == 4
    assert sorted(GoldAnswer.objects.filter(standing=standing).values_list(
        "try_number", flat=True)) == [1, 1, 2, 2]
    task = engine.task_claim(worker=worker, project=project)
    assert task.stage_id == answer.pk and not task.item.gold  # now the stage is theirs
    assert 'data-testid="state-label">Passed<' in client.get(url).content.decode()
    # Passed: no further try.
    with pytest.raises(ValidationError, match="qualified for 'Answer sourcing' already"):
        gold.qualification_start(stage=answer, worker=worker)


def test_an_item_is_answered_once_and_only_the_next_one_of_the_own_try(qualifying, workers,
                                                                       client_for):
    project, answer = qualifying
    worker = workers["ann2"]
    standing = gold.qualification_start(stage=answer, worker=worker)
    again = gold.qualification_start(stage=answer, worker=worker)  # a running try is kept
    assert again.training_items == standing.training_items and len(standing.training_items) == 2
    first = gold.qualification_item(standing=standing)
    feedback = gold.qualification_answer(standing=standing, item=first,
                                         payload={"no_answer": True})
    assert (feedback["score"], feedback["finished"], feedback["number"]) == (0.0, False, 1)
    with pytest.raises(ValidationError, match="answered this item already"):
        gold.qualification_answer(standing=standing, item=first, payload={"no_answer": True})
    unused = Item.objects.filter(stage=answer, gold="training").exclude(
        pk__in=standing.training_items).get()
    with pytest.raises(ValidationError, match="not part of your try"):
        gold.qualification_answer(standing=standing, item=unused, payload={"no_answer": True})
    with override("zh-hans"), pytest.raises(ValidationError, match="不属于你这次的资格测试"):
        gold.qualification_answer(standing=standing, item=unused, payload={"no_answer": True})
    # The page refuses a second answer too, and sends the worker to its feedback.
    client = client_for(worker)
    url = reverse("annotation:qualification", args=[answer.pk])
    resent = client.post(f"{url}?item={first.pk}", {"flag": "no_answer"})
    assert resent["Location"].endswith(f"?answered={first.pk}")
    assert GoldAnswer.objects.filter(item=first).count() == 1
    # A refused payload comes back on the task page with the reason.
    standing.refresh_from_db()
    second = gold.qualification_item(standing=standing)
    assert second.pk == standing.training_items[1]
    refused = client.post(f"{url}?item={second.pk}", {"payload": '{"spans": [[5, 2]]}'})
    assert refused.status_code == 400 and "is outside the article" in refused.content.decode()
    # Another worker's try is theirs alone: ann3 has none, so the item is not theirs.
    other = client_for(workers["ann3"])
    assert other.post(f"{url}?item={second.pk}", {"flag": "no_answer"}).status_code == 302
    assert not GoldAnswer.objects.filter(item=second).exists()


def test_tries_exhausted_is_failed_for_good(qualifying, workers, client_for):
    project, answer = qualifying
    worker = workers["ann3"]
    for _ in range(2):
        standing = gold.qualification_start(stage=answer, worker=worker)
        while (item := gold.qualification_item(standing=standing)) is not None:
            result = gold.qualification_answer(standing=standing, item=item,
                                               payload={"bad_question": True})
            standing.refresh_from_db()
    assert result["finished"] and not result["passed"] and result["tries_left"] == 0
    with pytest.raises(ValidationError, match="no qualification try left"):
        gold.qualification_start(stage=answer, worker=worker)
    [row] = gold.qualifications_for(worker=worker, project=project)
    assert (row["state"], row["label"], row["can_start"]) == ("failed_final",
                                                              "Failed, no try left", False)
    page = client_for(worker).get(reverse("annotation:qualification", args=[answer.pk]))
    assert "Failed, no try left" in page.content.decode()
    assert 'data-testid="start"' not in page.content.decode()
    assert not answer_stage_claimed(worker, project, answer)


def test_qualifications_and_accuracy_on_the_workers_pages(qualifying, workers, client_for):
    project, answer = qualifying
    worker = workers["val1"]
    [row] = gold.qualifications_for(worker=worker)
    assert (row["stage"], row["state"], row["tries_left"]) == (answer, "todo", 2)
    standing = gold.qualification_start(stage=answer, worker=worker)
    item = gold.qualification_item(standing=standing)
    gold.qualification_answer(standing=standing, item=item, payload=item.result["expected"])
    assert gold.qualifications_for(worker=worker)[0]["state"] == "in_progress"
    [accuracy] = gold.worker_accuracy(worker=worker)
    assert (accuracy["training_count"], accuracy["training_mean"],
            accuracy["check_count"]) == (1, 1.0, 0)
    client = client_for(worker)
    home = client.get(reverse("annotation:annotator_home")).content.decode()
    assert 'data-testid="qualifications"' in home and "In progress" in home
    assert reverse("annotation:qualification", args=[answer.pk]) in home
    assert reverse("annotation:my_quality") in home
    mine = client.get(reverse("annotation:my_quality")).content.decode()
    assert f'data-testid="accuracy-{answer.pk}"' in mine and "1.00" in mine
    # the standing by its label (translated), not the stored value ("active")
    assert '<span class="badge active" data-testid="standing">Active</span>' in mine
    # Too few training items: the stage is listed, but no try can start.
    Item.objects.filter(stage=answer, gold="training").exclude(pk=item.pk).update(
        status=Item.Status.CANCELLED)
    assert gold.qualifications_for(worker=workers["val2"])[0]["state"] == "unavailable"
    with pytest.raises(ValidationError, match=r"has 1 training item\(s\); a try needs 2"):
        gold.qualification_start(stage=answer, worker=workers["val2"])


# Gold checks in the live queue ------------------------------------------------------------------

def test_a_gold_check_answered_through_task_submit_is_scored_and_never_finishes(
        news_corpus, workers, admin_user, committed, settings):
    project, answer = build(news_corpus, workers, admin_user, committed, settings,
                            gold_rate=1.0, gold_min_items=50)
    [check] = gold.gold_items_import(stage=answer, name="check.jsonl", purpose="check",
                                     text=gold_line(*TRAINING[0]))
    weiss = {"spans": [span_of("Dario Weiss")]}
    scores = {"ann1": weiss, "ann2": {"spans": [span_of("Council member Dario Weiss")]},
              "ann3": {"no_answer": True}, "val1": weiss}
    for name, payload in scores.items():
        task = engine.task_claim(worker=workers[name], project=project)
        assert task.item_id == check.pk  # rate 1: the gold check comes first
        with committed():
            engine.task_submit(assignment_id=task.pk, worker=workers[name], payload=payload)
        standing = WorkerStage.objects.get(member__user=workers[name], stage=answer)
        recorded = GoldAnswer.objects.get(standing=standing)
        assert standing.gold_seen == 1 and recorded.purpose == "check"
        assert recorded.score == standing.gold_score_sum
    assert [round(s, 2) for s in GoldAnswer.objects.order_by("id").values_list(
        "score", flat=True)] == [1.0, 0.67, 0.0, 1.0]
    check.refresh_from_db()
    assert check.status == "open" and check.finished_at is None  # four answers, never done
    assert Assignment.objects.filter(item=check, status="open").count() == 3
    assert not Item.objects.filter(parent=check).exists()
    assert not project.items.filter(stage__kind="newsqa_agreement").exists()
    assert project.items.filter(key__startswith="gold:").count() == 1
    # "My accuracy" counts a check from the next day: counted at once, it told the worker
    # which task was a gold check (the count moved right after it).
    assert gold.worker_accuracy(worker=workers["ann2"], project=project) == []
    GoldAnswer.objects.update(created_at=F("created_at") - timedelta(days=1))
    [accuracy] = gold.worker_accuracy(worker=workers["ann2"], project=project)
    assert (accuracy["check_count"], round(accuracy["check_mean"], 2)) == (1, 0.67)


# The gold measure of each kind ------------------------------------------------------------------

def test_newsqa_validation_is_scored_by_exact_choice():
    kind = stage_kind("newsqa_validate")
    doc = Document(body="The mayor, Lena Ortiz, opened the library.")
    item = Item(document=doc, data={"question": "Who opened it?", "unique_answers": [
        {"spans": [[11, 21]]}, {"no_answer": True}]})
    assert kind.scores_gold
    assert kind.gold_score(item, {"choice": 0}, {"choice": 0}) == 1.0
    assert kind.gold_score(item, {"choice": 1}, {"choice": 0}) == 0.0
    assert kind.gold_score(item, {"all_bad": True}, {"all_bad": True}) == 1.0
    assert kind.gold_score(item, {"bad_question": True}, {"all_bad": True}) == 0.0
    assert kind.gold_explain(item, {"choice": 0}) == "Answer 1: Lena Ortiz"
    assert kind.gold_explain(item, {"choice": 1}) == "Answer 2: No answer in the article"
    assert kind.gold_explain(item, {"all_bad": True}) == "All answers are very bad."


def test_marco_judgment_curation_and_review_measures():
    judge = stage_kind("marco_judge")
    keep = {"intent": "informational", "decision": "keep", "exclusions": [],
            "query_type": "NUMERIC", "question_type": "ENTITY"}
    item = Item(data={"query": "how tall is k2", "query_id": "1"})
    assert judge.gold_score(item, keep, keep) == 1.0
    assert judge.gold_score(item, {**keep, "query_type": "ENTITY"}, keep) == pytest.approx(0.8)
    exclude = {"intent": "navigational", "decision": "exclude", "exclusions": [],
               "query_type": "", "question_type": ""}
    assert judge.gold_score(item, {**exclude, "query_type": "ENTITY"}, exclude) == 1.0
    assert judge.gold_score(item, keep, exclude) == pytest.approx(1 / 3)  # no exclusions
    ambiguous = {**exclude, "intent": "informational", "exclusions": ["ambiguous", "adult"]}
    assert judge.gold_score(item, {**ambiguous, "exclusions": ["adult", "ambiguous"]},
                            ambiguous) == 1.0
    assert judge.gold_explain(item, keep) == ("Keep: Informational · query type NUMERIC · "
                                              "question type ENTITY")

    curate = stage_kind("marco_curate")
    passages = Item(data={"passages": [{"rank": 1, "text": "K2 is 8,611 m tall."},
                                       {"rank": 2, "text": "K2 is in the Karakoram."}]})
    picked = {"unanswerable": False, "selected": [1, 2]}
    assert curate.gold_score(passages, picked, picked) == 1.0
    assert curate.gold_score(passages, {"selected": [1]}, picked) == pytest.approx(2 / 3)
    assert curate.gold_score(passages, {"unanswerable": True, "selected": []}, picked) == 0.0
    assert curate.gold_score(passages, {"unanswerable": True}, {"unanswerable": True}) == 1.0
    assert curate.gold_explain(passages, {"selected": [1]}) == "Passage 1: K2 is 8,611 m tall."

    review = stage_kind("marco_review")
    flagged = Item(data={"answers": [{"text": "8,611 m"}, {"text": "tall"},
                                     {"text": "a mountain"}], "flagged": [1, 2]})
    decisions = {"decisions": {"1": "drop", "2": "keep"}, "note": ""}
    assert review.gold_score(flagged, decisions, decisions) == 1.0
    assert review.gold_score(flagged, {"decisions": {"1": "drop", "2": "drop"}},
                             decisions) == 0.5
    assert review.gold_explain(flagged, decisions) == ("Answer 2 (tall): drop · "
                                                       "Answer 3 (a mountain): keep")
    assert not stage_kind("marco_distill").scores_gold  # free text: no gold answer
    assert not stage_kind("newsqa_question").scores_gold


def evidence(text: str, answer: str = "positive") -> dict:
    return {"doc": 0, "evidence": [0, len(text)], "evidence_text": text, "answer": answer,
            "alternatives": {"positive": "能", "negative": "不能", "uncertain": "无法确定"}}


def test_reco_evidence_is_the_mean_of_the_label_and_the_evidence_overlap():
    kind = stage_kind("reco_evidence")
    item = Item(data={"documents": [{"text": "..."}]})
    gold_answer = evidence("一般不建议同时服用")  # 9 characters
    assert kind.gold_score(item, gold_answer, gold_answer) == 1.0
    # Chinese counts characters: 6 of 9 shared ("建议同时服用"), precision 1, recall 2/3.
    assert kind.gold_score(item, evidence("建议同时服用"), gold_answer) == pytest.approx(
        (1 + 0.8) / 2)
    assert kind.gold_score(item, evidence("一般不建议同时服用", "negative"),
                           gold_answer) == pytest.approx(0.5)
    assert kind.gold_score(item, {"reject": True}, gold_answer) == 0.0
    assert kind.gold_score(item, {"reject": True}, {"reject": True}) == 1.0
    # English counts words, case and punctuation aside.
    english = evidence("You can take them together, doctors say.")
    assert kind.gold_score(item, evidence("you can take them together"),
                           english) == pytest.approx((1 + 10 / 12) / 2)
    assert kind.gold_explain(item, gold_answer) == (
        "Document 1, evidence: “一般不建议同时服用” · answer: Positive (yes) (“能”)")
    assert stage_kind("reco_test_evidence").gold_score(item, gold_answer, gold_answer) == 1.0


def test_reco_choices_are_scored_by_exact_label():
    choice, adjudicate = stage_kind("reco_evidence_choice"), stage_kind("reco_adjudicate")
    text = "Aspirin and ibuprofen should not be taken together."
    candidate = {"doc": 0, "evidence": [0, len(text)], "evidence_text": text,
                 "answer": "negative", "alternatives": {"positive": "yes", "negative": "no",
                                                        "uncertain": "unclear"}}
    item = Item(data={"documents": [{"text": text}], "candidates": [
        {"payload": candidate}, {"payload": {"reject": True}}]})
    assert choice.gold_score(item, {"choice": 0}, {"choice": 0}) == 1.0
    assert choice.gold_score(item, {"choice": 1}, {"choice": 0}) == 0.0
    assert adjudicate.gold_score(item, {"reject": True, "reason": "x"},
                                 {"reject": True, "reason": "x"}) == 1.0
    assert adjudicate.gold_score(item, {"choice": 0}, {"reject": True, "reason": "x"}) == 0.0
    assert choice.gold_explain(item, {"choice": 0}) == (
        f"Label A: evidence “{text}” · answer: Negative (no) (“no”)")


# Pages and their role checks ----------------------------------------------------------------------

def test_pages_need_login_the_right_role_and_membership(qualifying, client, workers,
                                                        admin_user, checker):
    project, answer = qualifying
    qualify = reverse("annotation:qualification", args=[answer.pk])
    mine = reverse("annotation:my_quality")
    manage = reverse("annotation:stage_gold", args=[answer.pk])
    for url in (qualify, mine, manage):
        response = client.get(url)
        assert response.status_code == 302 and "/login/" in response["Location"]
    client.force_login(checker)  # another role, of no project: no such stage for them
    assert client.get(qualify).status_code == 404
    assert client.post(qualify, {"qualification_action": "start"}).status_code == 404
    assert client.get(manage).status_code == 403
    assert client.get(mine).status_code == 200  # their own page (empty)
    client.force_login(user_with_roles("outsider", Role.ANNOTATOR))  # not a member
    # A 404, like the stage's guidelines: the refusal named the project, so any annotator
    # learned every project's name by trying stage ids.
    response = client.get(qualify)
    assert response.status_code == 404 and project.name not in response.content.decode()
    assert client.post(qualify, {"qualification_action": "start"}).status_code == 404
    assert not WorkerStage.objects.exists()
    client.force_login(workers["ann1"])
    assert client.get(manage).status_code == 403
    assert client.post(manage, {"action": "import"}).status_code == 403
    questions = project.stages.get(kind="newsqa_question")  # no qualification there
    page = client.get(reverse("annotation:qualification", args=[questions.pk]))
    assert page.status_code == 200 and "Not needed" in page.content.decode()
    assert 'data-testid="start"' not in page.content.decode()
    client.force_login(admin_user)  # admins manage gold, they do not qualify
    refused = client.get(qualify)
    assert refused.status_code == 403
    assert "This stage is worked by annotators." in html.unescape(refused.content.decode())
    # An annotator who is a member of the project as its checker only: told so, in their
    # language (it read "… is not a annotator of …", in English whatever the language).
    both = user_with_roles("both", Role.ANNOTATOR, Role.CHECKER)
    engine.project_member_add(project=project, user=both, role=Role.CHECKER)
    client.force_login(both)
    refused = client.get(qualify)
    assert refused.status_code == 403
    assert f"both does not work on {project} as annotator" \
        in html.unescape(refused.content.decode())
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-hans"
    assert f"both 不以标注员身份参与 {project}" \
        in html.unescape(client.get(qualify).content.decode())
    client.force_login(admin_user)
    assert "这个阶段由标注员完成。" in html.unescape(client.get(qualify).content.decode())
    del client.defaults["HTTP_ACCEPT_LANGUAGE"]
    assert client.get(manage).status_code == 200
    assert ProjectMember.objects.filter(user=admin_user).count() == 0


def test_admin_gold_page_lists_imports_and_takes_from_a_project(qualifying, client_for,
                                                                admin_user, workers):
    project, answer = qualifying
    client = client_for(admin_user)
    url = reverse("annotation:stage_gold", args=[answer.pk])
    page = client.get(url).content.decode()
    assert 'data-testid="gold-weiss"' in page and "Dario Weiss" in page
    assert "Weiss is the council member" in page and 'data-testid="import-form"' in page
    standing = gold.qualification_start(stage=answer, worker=workers["ann1"])
    item = gold.qualification_item(standing=standing)
    gold.qualification_answer(standing=standing, item=item, payload={"no_answer": True})
    key = item.key.removeprefix("gold:")
    row = client.get(url).content.decode().split(f'data-testid="gold-{key}"')[1].split("</tr>")[0]
    assert "<td>1</td>" in row and "0.00" in row

    upload = SimpleUploadedFile("check.jsonl", (gold_line(
        "mayor", "Who is the mayor?", "Lena Ortiz", "Paragraph 2.") + "\n").encode())
    done = client.post(url, {"action": "import", "purpose": "check", "file": upload})
    assert done.status_code == 302
    assert Item.objects.get(stage=answer, key="gold:mayor").gold == "check"
    bad = SimpleUploadedFile("bad.jsonl", b'{"key": "x", "data": {"question": "Q?"}}\n')
    refused = client.post(url, {"action": "import", "purpose": "check", "file": bad})
    assert refused.status_code == 400
    assert ("bad.jsonl: line 1: field &#x27;document&#x27;: is missing: this stage&#x27;s "
            "tasks show a document"
            in refused.content.decode())
    missing = client.post(url, {"action": "from_project", "purpose": "check", "project": "",
                                "limit": "5"})
    assert missing.status_code == 400 and "choose the project" in missing.content.decode()


REVIEW = {"query": "how tall is k2",
          "passages": [{"rank": 1, "document": "k2", "url": "https://example.org/k2",
                        "text": "K2 is 8,611 m tall.", "is_selected": 1}],
          "answers": [{"text": "8,611 m"}, {"text": "8,611 metres"}, {"text": "a mountain"}],
          "flagged": [2], "weights": [2.0, 2.0, 1.0], "shares": [0.4, 0.4, 0.2]}


def test_a_checkers_qualification_leads_to_the_checker_home(db, client_for):
    """A review stage (worked by checkers) asks for a qualification: the checker home shows
    the way there, and the end of a try, passed or failed for good, leads back to the
    checker home (it led to the annotator home, which refuses checkers)."""
    project = engine.project_create(name="MARCO review gold", recipe="marco")
    review = project.stages.get(kind="marco_review")
    engine.stage_params_update(stage=review, params={
        "qualification_items": 1, "qualification_tries": 1, "qualification_threshold": 0.8})
    gold.gold_items_import(stage=review, name="review.jsonl", purpose="training", text=json.dumps(
        {"key": "k2", "data": REVIEW, "expected": {"decisions": {"2": "drop"}},
         "reason": "A mountain is not a height."}))
    url = reverse("annotation:qualification", args=[review.pk])
    home = reverse("annotation:checker_home")
    for name, decision, outcome in (("passes", "drop", "passed"), ("fails", "keep", "failed")):
        checker = user_with_roles(name, Role.CHECKER)
        engine.project_member_add(project=project, user=checker, role=Role.CHECKER)
        client = client_for(checker)
        card = client.get(home).content.decode().split('data-testid="qualifications"')[1]
        assert f'href="{url}"' in card and "Outlier review" in card
        started = client.post(url, {"qualification_action": "start"})
        assert client.get(started["Location"]).status_code == 200
        answered = client.post(started["Location"], {"decision-2": decision})
        page = client.get(answered["Location"]).content.decode()
        assert f'data-testid="{outcome}"' in page
        assert reverse("annotation:annotator_home") not in page.split('<main id="main">')[1]
        mine = re.search(r'href="([^"]+)" data-testid="my-tasks"', page).group(1)
        assert mine == home and client.get(mine).status_code == 200


@pytest.mark.parametrize("how", ["paused", "blocked"])
def test_a_member_an_admin_stopped_can_do_no_qualification_try(qualifying, workers,
                                                                client_for, admin_user, how):
    """A member blocked or paused in the project could still start a qualification try and
    answer its training items; both are refused now, with why, and the page shows the
    state instead of the next item."""
    project, answer = qualifying
    url = reverse("annotation:qualification", args=[answer.pk])
    running, fresh = workers["ann2"], workers["ann3"]
    standing = gold.qualification_start(stage=answer, worker=running)
    first = gold.qualification_item(standing=standing)
    gold.qualification_answer(standing=standing, item=first, payload={"no_answer": True})
    for worker in (running, fresh):
        engine.member_status_set(member=ProjectMember.objects.get(project=project, user=worker),
                                 status=how, actor=admin_user)
    why = f"you are {how} in Gold: an admin decides when you work there again"

    # The try that was running takes no more answers, in the service or on the page.
    standing.refresh_from_db()
    second = gold.qualification_item(standing=standing)
    with pytest.raises(ValidationError, match=why):
        gold.qualification_answer(standing=standing, item=second, payload={"no_answer": True})
    client = client_for(running)
    assert client.get(f"{url}?item={second.pk}")["Location"] == url
    refused = client.post(f"{url}?item={second.pk}", {"flag": "no_answer"})
    assert refused.status_code == 302 and refused["Location"] == url
    assert not GoldAnswer.objects.filter(item=second).exists()
    page = client.get(url)
    html_ = page.content.decode()
    assert why in [str(m) for m in page.context["messages"]]
    assert 'data-testid="continue"' not in html_ and 'data-testid="start"' not in html_
    assert "An admin decides when you work in Gold again." in html_
    assert page.context["state"]["label"] == how.capitalize()

    # A worker who had not begun cannot start one.
    with pytest.raises(ValidationError, match=why):
        gold.qualification_start(stage=answer, worker=fresh)
    other = client_for(fresh)
    started = other.post(url, {"qualification_action": "start"})
    assert started.status_code == 302 and started["Location"] == url
    assert why in [str(m) for m in other.get(url).context["messages"]]
    assert not WorkerStage.objects.filter(member__user=fresh, stage=answer).exclude(
        training_items=[]).exists()
    [row] = gold.qualifications_for(worker=fresh, project=project)
    assert (row["state"], row["can_start"]) == (how, False)

    # Resumed, the try goes on where it was.
    engine.member_status_set(member=ProjectMember.objects.get(project=project, user=running),
                             status="active", actor=admin_user)
    client = client_for(running)  # the test client: logged in as ann3 above
    assert client.post(f"{url}?item={second.pk}", {"flag": "no_answer"})[
        "Location"].endswith(f"?answered={second.pk}")


def test_a_worker_blocked_on_the_stage_mid_try_answers_no_more(qualifying, workers,
                                                               admin_user):
    """The stage's own block was checked when a try began, not at each answer."""
    from annotation import quality

    project, answer = qualifying
    worker = workers["ann2"]
    standing = gold.qualification_start(stage=answer, worker=worker)
    item = gold.qualification_item(standing=standing)
    engine.standing_decide(standing=quality.standing_for(
        member=ProjectMember.objects.get(project=project, user=worker), stage=answer),
        action="block", actor=admin_user)
    with pytest.raises(gold.QualificationStopped, match="you are blocked on"):
        gold.qualification_answer(standing=standing, item=item, payload={"no_answer": True})
    assert not GoldAnswer.objects.filter(standing=standing).exists()
