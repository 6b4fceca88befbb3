"""NewsQA agreement weighted by the answerers' competence (``weight_by_competence``),
through the real services: questions written, answered by four workers each, agreement run
by the stage job."""

from __future__ import annotations

import pytest

from annotation import engine
from annotation.eligibility import GOLD_PRIORITY
from annotation.models import Item, Submission
from annotation.roles import Role

WHEN, WHO = "When will the builders begin work?", "Who opposed the plan?"
ANSWER_STAGE, AGREEMENT_STAGE = 4, 5  # stage order in the NewsQA recipe


@pytest.fixture
def project_with(news_corpus, workers, admin_user, settings, committed):
    """``project_with(weighted)``: an active NewsQA project whose questions take four
    answers at once, so two agreeing pairs can reach the agreement stage."""
    settings.CELERY_TASK_ALWAYS_EAGER = True

    def build(weighted: bool, **answer_params):
        project = engine.project_create(
            name="NewsQA weights", recipe="newsqa", corpus=news_corpus, user=admin_user,
            params={ANSWER_STAGE: {"answers_per_question": 4, **answer_params},
                     AGREEMENT_STAGE: {"weight_by_competence": weighted}})
        for user in workers.values():
            engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
        with committed():
            engine.project_start(project=project, actor=admin_user)
        return project

    return build


def _claim_item(worker, project, item):
    task = engine.task_claim(worker=worker, project=project)
    while task is not None and task.item_id != item.pk:
        engine.task_release(assignment_id=task.pk, worker=worker)
        task = engine.task_claim(worker=worker, project=project)
    assert task is not None, f"{worker} never got item {item.pk}"
    return task


def _questions(project, workers, committed) -> dict[str, Item]:
    task = engine.task_claim(worker=workers["questioner"], project=project)
    while task.stage.kind != "newsqa_question":  # a gold check first, at gold_rate 1
        engine.task_release(assignment_id=task.pk, worker=workers["questioner"])
        task = engine.task_claim(worker=workers["questioner"], project=project)
    with committed():
        engine.task_submit(assignment_id=task.pk, worker=workers["questioner"],
                           payload={"questions": [WHEN, WHO]})
    return {i.data["question"]: i for i in Item.objects.filter(
        stage__kind="newsqa_answer", document=task.item.document)}


def _payload(item: Item, phrase: str | None) -> dict:
    if phrase is None:
        return {"no_answer": True}
    start = item.document.body.index(phrase)
    return {"spans": [[start, start + len(phrase)]]}


def _answer(project, worker, item, phrase, committed, task=None):
    task = task or _claim_item(worker, project, item)
    with committed():
        engine.task_submit(assignment_id=task.pk, worker=worker,
                           payload=_payload(item, phrase))


def _run(project, workers, committed, *, before_last=None,
         after_questions=None) -> dict[str, dict]:
    """On "when" the pairs (ann1, ann2) and (ann3, val1) agree with each other, ann1's pair
    answering first; val1 answers last, after "who", where ann3 and val2 agree while ann1
    and ann2 do not. val1 holds the last "when" slot meanwhile, so nobody releases it.
    ``after_questions`` runs once the questions wait for answers."""
    items = _questions(project, workers, committed)
    if after_questions is not None:
        after_questions()
    when, who = items[WHEN], items[WHO]
    for name, phrase in (("ann1", "on Tuesday"), ("ann2", "on Tuesday"), ("ann3", "in March")):
        _answer(project, workers[name], when, phrase, committed)
    last = _claim_item(workers["val1"], project, when)
    for name, phrase in (("ann3", "Dario Weiss"), ("val2", "Dario Weiss"),
                         ("ann1", "Mayor Lena Ortiz"), ("ann2", None)):
        _answer(project, workers[name], who, phrase, committed)
    if before_last is not None:
        before_last()
    _answer(project, workers["val1"], when, "in March", committed, task=last)
    done = Item.objects.filter(project=project, stage__kind="newsqa_agreement", status="done")
    assert done.count() == 2
    return {i.data["question"]: i for i in done}


def _consensus_text(item: Item) -> str:
    (start, end), = item.result["consensus"]["spans"]
    return item.document.body[start:end]


def test_reliable_answerers_span_becomes_the_consensus(project_with, workers, committed):
    results = _run(project_with(True), workers, committed)
    when = results[WHEN]
    # Leave-one-out F1 when "when" completes: on "who" ann3 and val2 score 1/3 (their answer
    # against the three tied others), ann1 and ann2 0; on "when" everyone scores 0 (the
    # two spans share no word). Means: ann1 0, ann2 0, ann3 1/6, val1 0.
    assert when.data["answerer_ids"] == [workers[n].pk for n in ("ann1", "ann2", "ann3",
                                                                 "val1")]
    assert _consensus_text(when) == "in March"
    assert when.result["agreed"] is True and when.result["support"] == 2
    assert when.result["weighted"] is True
    assert when.result["weights"] == pytest.approx([0, 0, 1 / 6, 0])
    assert when.result["weighted_support"] == pytest.approx(1 / 6)
    # The consolidated record (what releases carry) names the same weighted consensus.
    record = Item.objects.get(stage__kind="newsqa_consolidate", key=when.key).result
    body = when.document.body
    assert body[record["consensus"]["s"]:record["consensus"]["e"]] == "in March"
    # "who" was checked while "when" had three answers (Tuesday, Tuesday, March: ann1 and
    # ann2 scored 1/2 there, ann3 0): competence is estimated afresh at every run.
    who = results[WHO]
    assert who.data["answerer_ids"] == [workers[n].pk for n in ("ann3", "val2", "ann1",
                                                                "ann2")]
    assert _consensus_text(who) == "Dario Weiss"
    assert who.result["weights"] == pytest.approx([1 / 6, 1 / 3, 1 / 4, 1 / 4])
    assert who.result["weighted_support"] == pytest.approx(1 / 2)


def test_without_the_option_the_papers_rule_picks_the_earlier_pair(project_with, workers,
                                                                    committed):
    results = _run(project_with(False), workers, committed)
    when = results[WHEN]
    assert _consensus_text(when) == "on Tuesday"
    assert when.result == {"agreed": True, "support": 2,
                           "consensus": when.data["answers"][0]}
    assert set(results[WHO].result) == {"agreed", "support", "consensus"}


def test_set_aside_answers_do_not_count_towards_competence(project_with, workers, committed):
    project = project_with(True)

    def set_aside_who():
        # ann3's and val2's answers to "who" no longer count: every answerer's competence
        # comes from "who" without agreement and from "when" (0 each), and the paper's
        # choice stays.
        Submission.objects.filter(item__data__question=WHO, stage__project=project,
                                  worker__in=[workers["ann3"], workers["val2"]]
                                  ).update(set_aside=True)

    when = _run(project, workers, committed, before_last=set_aside_who)[WHEN]
    assert _consensus_text(when) == "on Tuesday"
    assert when.result["weights"] == [0, 0, 0, 0]
    assert when.result["weighted_support"] == 0


def test_answers_to_gold_checks_do_not_count_towards_competence(project_with, workers,
                                                                committed):
    project = project_with(True, gold_rate=1.0, gold_min_items=50)
    answer = project.stages.get(kind="newsqa_answer")
    doc = project.items.filter(stage__kind="newsqa_question").first().document
    gold = Item.objects.create(
        project=project, stage=answer, key="gold:1", document=doc, gold="check",
        data={"question": "Who voted against the plan?"}, status=Item.Status.OPEN,
        priority=GOLD_PRIORITY, overlap=2,
        result={"expected": _payload(Item(document=doc), "Dario Weiss"), "reason": "-"})
    engine.slots_add(item=gold, n=2)
    # ann1 and ann2 agree on the gold check (served once the answer stage has work): counted,
    # they would weigh 1/3 each and "on Tuesday" would win.
    def gold_answers() -> None:
        for name in ("ann1", "ann2"):
            _answer(project, workers[name], gold, "Dario Weiss", committed)
        assert Submission.objects.filter(item=gold).count() == 2

    when = _run(project, workers, committed, after_questions=gold_answers)[WHEN]
    assert _consensus_text(when) == "in March"
    assert when.result["weights"] == pytest.approx([0, 0, 1 / 6, 0])
