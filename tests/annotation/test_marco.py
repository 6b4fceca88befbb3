"""The MS MARCO answer-distillation recipe: judgment, curation, distillation by many
editors, pa-BLEU consensus weighting, the checker's review and the final records."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.http import QueryDict
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import engine
from annotation.models import Assignment, Item, Project, Stage
from annotation.roles import Role
from annotation.stages import Emit
from annotation.stages import marco as marco_stages
from collector.metrics import PaScorer, flag_outliers, pa_tokens, pairwise_bleu
from collector.metrics.pa import reference_weights
from collector.models import Job
from tests.factories import held_since, user_with_roles, zh_catalogue_holds

TABLE2 = json.loads(
    (Path(__file__).resolve().parents[2] / "data/datasets/metric-vectors/pa_table2/inputs.json")
    .read_text(encoding="utf-8")
)
QUERY = TABLE2["query"]  # "law for ages for children allowed to sit in front seat"

FILLER = ("Parents often ask which seat is safest for a young passenger and the answer depends "
          "on the vehicle the age of the child and local rules that change from time to time "
          "so drivers should read the manual of their car and check the advice of the road "
          "safety authority before a long journey with children in the back or front seats "
          "while some airbags can injure small children sitting too close to the dashboard in "
          "a crash which is why many experts recommend the rear seat for every child under "
          "thirteen years whenever it is possible to do so safely")


def make_passages(n: int = 10) -> list[dict]:
    """``n`` ranked passages of about 100 words; the first is the paper's Table 1 passage."""
    passages = [{"rank": 1, "passage_id": 101, "document": "gov-child-seats",
                 "url": "https://example.gov/child-car-seats", "text": TABLE2["passage"]}]
    for rank in range(2, n + 1):
        passages.append({"rank": rank, "passage_id": 100 + rank, "document": f"doc-{rank}",
                         "url": f"https://example.org/seats/{rank}",
                         "text": f"Passage {rank}. {FILLER}"})
    return passages


@pytest.fixture
def people(db):
    names = ("judge", "curator", "ed1", "ed2", "ed3", "ed4", "ed5")
    users = {name: user_with_roles(name, Role.ANNOTATOR) for name in names}
    users["chk"] = user_with_roles("chk", Role.CHECKER)
    return users


@pytest.fixture
def retrieval(monkeypatch):
    """The search service lands with the corpus issue: stand in for it here."""
    calls = []

    def fake(project, text, k):
        calls.append((text, k))
        return make_passages(k)

    monkeypatch.setattr(marco_stages, "_retrieve_passages", fake)
    return calls


@pytest.fixture
def project(db, settings, people, retrieval):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    project = engine.project_create(name="MARCO test", recipe="marco",
                                    params={5: {"editors_per_query": 3}})
    for name, user in people.items():
        role = Role.CHECKER if name == "chk" else Role.ANNOTATOR
        engine.project_member_add(project=project, user=user, role=role)
    # Active without running the import: queries come from the corpus models later.
    Project.objects.filter(pk=project.pk).update(status="active")
    project.refresh_from_db()
    return project


def emit_queries(project, committed, queries=(("q1", QUERY),)):
    """Judgment items, straight from the import stage (the Query model comes later)."""
    source = project.stages.get(kind="marco_queries")
    with committed():
        engine.items_emit(source_stage=source, emits=[
            Emit(kind="marco_judge", key=qid, data={"query": text, "query_id": qid})
            for qid, text in queries
        ])
    return list(Item.objects.filter(stage__kind="marco_judge").order_by("id"))


def claim(worker, project, kind, role=None):
    task = engine.task_claim(worker=worker, project=project, role=role)
    assert task is not None, f"{worker} got no task"
    assert task.stage.kind == kind, f"{worker} got {task.stage.kind}, not {kind}"
    return engine.assignment_for_worker(assignment_id=task.pk, worker=worker)


def submit(worker, task, payload, committed):
    with committed():
        return engine.task_submit(assignment_id=task.pk, worker=worker, payload=payload)


KEEP = {"intent": "informational", "decision": "keep", "exclusions": [],
        "query_type": "DESCRIPTION", "question_type": "DESCRIPTION"}


def judged(project, people, committed, **judgment):
    emit_queries(project, committed)
    submit(people["judge"], claim(people["judge"], project, "marco_judge"),
           {**KEEP, **judgment}, committed)
    return Item.objects.get(stage__kind="marco_curate")


def curated(project, people, committed, selected=(1,), **judgment):
    judged(project, people, committed, **judgment)
    submit(people["curator"], claim(people["curator"], project, "marco_curate"),
           {"selected": list(selected)}, committed)
    return Item.objects.get(stage__kind="marco_distill")


def distil(project, people, committed, answers, **judgment):
    """Curate, then each (editor, payload) writes an answer."""
    curated(project, people, committed, **judgment)
    for name, payload in answers:
        submit(people[name], claim(people[name], project, "marco_distill"), payload, committed)


GOOD = [
    "Children under the age of 12 need a child seat when they travel in the front seat.",
    "Children under the age of 12 need a child seat when they travel in the front or rear seat.",
]
OUTLIER = "Ask the dealer, it depends on the colour of the car."


# Recipe --------------------------------------------------------------------------------

def test_recipe_has_the_papers_stages_and_defaults(db):
    project = engine.project_create(name="defaults", recipe="marco")
    stages = list(project.stages.order_by("order"))
    assert [s.kind for s in stages] == [
        "marco_queries", "marco_judge", "marco_retrieve", "marco_curate", "marco_distill",
        "marco_consensus", "marco_review", "marco_record",
    ]
    params = {s.kind: s.params for s in stages}
    assert params["marco_retrieve"]["k"] == 10
    assert params["marco_distill"]["editors_per_query"] == 5
    assert params["marco_consensus"]["outlier_ratio"] == 0.7
    human = [s for s in stages if not s.kind_spec.automatic]
    assert all(s.guidelines.strip() for s in human)
    assert {s.kind: s.kind_spec.role for s in human} == {
        "marco_judge": Role.ANNOTATOR, "marco_curate": Role.ANNOTATOR,
        "marco_distill": Role.ANNOTATOR, "marco_review": Role.CHECKER,
    }


# 1. Queries ------------------------------------------------------------------------------

def test_import_stage_takes_the_corpus_queries_once(project, committed, monkeypatch,
                                                    run_reports):
    monkeypatch.setattr(marco_stages.QueriesKind, "queries",
                        lambda self, p: [(1, "q1", "what is a lumen", "en"),
                                         (2, "q2", "facebook", "en")])
    stage = project.stages.get(kind="marco_queries")
    for _ in range(2):
        with committed():
            engine.stage_run_enqueue(stage=stage)
    judge = Item.objects.filter(stage__kind="marco_judge").order_by("key")
    assert [(i.key, i.data, i.status) for i in judge] == [
        ("q1", {"query": "what is a lumen", "query_id": "q1"}, "open"),
        ("q2", {"query": "facebook", "query_id": "q2"}, "open"),
    ]
    assert Job.objects.filter(kind="stage_run", status="done").count() == 2
    # the second run found both taken, and says so
    assert run_reports(project)["marco_queries"] == (
        2, 0, {"taken by an earlier run": 2}, [])
    Stage.objects.filter(pk=stage.pk).update(params={"max_queries": 1})
    with committed():
        engine.stage_run_enqueue(stage=stage)
    assert run_reports(project)["marco_queries"] == (
        2, 0, {"beyond max_queries (1)": 1, "taken by an earlier run": 1}, [])


# 2. Judgment --------------------------------------------------------------------------------

@pytest.mark.parametrize(("payload", "message"), [
    ({"decision": "keep"}, "intent: choose one of"),
    ({**KEEP, "intent": "commercial"}, "'commercial' is not one of"),
    ({**KEEP, "intent": "navigational"}, "navigational queries are excluded"),
    ({**KEEP, "exclusions": ["open_list"]}, "an exclusion reason is ticked"),
    ({**KEEP, "decision": "exclude"}, "tick why this informational query is excluded"),
    ({**KEEP, "decision": "exclude", "exclusions": ["boring"]}, "unknown reason"),
    ({**KEEP, "query_type": "COLOUR"}, "query_type: 'COLOUR' is not one of"),
    ({**KEEP, "question_type": "OPINION"}, "question_type: 'OPINION' is not one of"),
])
def test_judgment_payloads_are_validated(project, people, committed, payload, message):
    emit_queries(project, committed)
    task = claim(people["judge"], project, "marco_judge")
    with pytest.raises(ValidationError, match=message):
        engine.task_submit(assignment_id=task.pk, worker=people["judge"], payload=payload)


def test_excluded_queries_keep_their_reasons_and_go_no_further(project, people, committed,
                                                               retrieval):
    emit_queries(project, committed, [("q1", "facebook"), ("q2", "holiday classroom ideas")])
    for payload in ({"intent": "navigational", "decision": "exclude"},
                    {"intent": "informational", "decision": "exclude",
                     "exclusions": ["open_list", "general_topic"]}):
        submit(people["judge"], claim(people["judge"], project, "marco_judge"), payload,
               committed)
    results = {i.key: i.result for i in Item.objects.filter(stage__kind="marco_judge")}
    assert results["q1"]["kept"] is False and results["q1"]["reasons"] == ["navigational"]
    assert results["q2"]["reasons"] == ["open_list", "general_topic"]
    assert not Item.objects.filter(stage__kind="marco_retrieve").exists()
    assert retrieval == []


def test_kept_query_is_retrieved_with_its_types(project, people, committed, retrieval):
    item = judged(project, people, committed, question_type="YES_NO", query_type="ENTITY")
    assert retrieval == [(QUERY, 10)]
    assert [p["rank"] for p in item.data["passages"]] == list(range(1, 11))
    assert item.data["question_type"] == "YES_NO" and item.data["query_type"] == "ENTITY"
    judge = Item.objects.get(stage__kind="marco_judge")
    assert judge.result["kept"] is True and judge.result["judge_ids"] == [people["judge"].pk]


# 4. Curation --------------------------------------------------------------------------------

@pytest.mark.parametrize(("payload", "message"), [
    ({"selected": []}, "or mark it not answerable"),
    ({}, "or mark it not answerable"),
    ({"selected": [1], "unanswerable": True}, "has no selected passages"),
    ({"selected": [1, 2], "conflict": True}, "passages conflict: say why"),
    ({"selected": [1], "conflict": True, "conflict_reason": "  "}, "say why"),
    ({"selected": [1, 2, 3, 4]}, "at most 3 passages"),
    ({"selected": [11]}, "no passage has rank 11"),
    ({"selected": [1, 1]}, "selected twice"),
    ({"selected": ["1"]}, "a list of passage ranks"),
])
def test_curation_payloads_are_validated(project, people, committed, payload, message):
    judged(project, people, committed)
    task = claim(people["curator"], project, "marco_curate")
    with pytest.raises(ValidationError, match=message):
        engine.task_submit(assignment_id=task.pk, worker=people["curator"], payload=payload)


def test_curation_records_selected_ranks_and_excludes_the_curator(project, people, committed):
    judged(project, people, committed)
    submit(people["curator"], claim(people["curator"], project, "marco_curate"),
           {"selected": [3, 1], "conflict": True,
            "conflict_reason": "passage 1 is from a government site"}, committed)
    curate = Item.objects.get(stage__kind="marco_curate")
    assert curate.result["selected"] == [1, 3]
    assert curate.result["conflict_reason"] == "passage 1 is from a government site"
    distill = Item.objects.get(stage__kind="marco_distill")
    assert [p["rank"] for p in distill.data["passages"] if p["is_selected"]] == [1, 3]
    assert distill.overlap == 3
    assert distill.exclusions.filter(user=people["curator"]).exists()
    # The curator never distils the query: nothing to claim for them.
    assert engine.task_claim(worker=people["curator"], project=project) is None
    assert not Assignment.objects.filter(item=distill, worker=people["curator"]).exists()


def test_unanswerable_query_is_excluded_with_its_reason_and_marked(project, people,
                                                                   committed):
    judged(project, people, committed)
    submit(people["curator"], claim(people["curator"], project, "marco_curate"),
           {"unanswerable": True, "note": "passages are about airbags"}, committed)
    curate = Item.objects.get(stage__kind="marco_curate")
    assert curate.result["unanswerable"] is True
    assert curate.result["note"] == "passages are about airbags"
    assert not Item.objects.filter(stage__kind="marco_distill").exists()
    record = Item.objects.get(stage__kind="marco_record", status="done").result
    assert record["no_answer"] is True and record["answers"] == []
    assert not any(p["is_selected"] for p in record["passages"])
    assert len(record["passages"]) == 10


# 5. Distillation ----------------------------------------------------------------------------

@pytest.mark.parametrize(("question_type", "payload", "message"), [
    ("DESCRIPTION", {"answer": "   "}, "write the answer"),
    ("DESCRIPTION", {"answer": "x" * 2001}, "at most 2000 characters"),
    ("YES_NO", {"answer": "Yes, from 12."}, "label the answer's opinion"),
    ("YES_NO", {"answer": "Yes, from 12.", "yesno": "Maybe"}, "'Maybe' is not one of"),
    ("YES_NO", {"answer": "Yes, from 12.", "yesno": "yes"}, "'yes' is not one of"),
    ("DESCRIPTION", {"answer": "From 12.", "yesno": "Yes"}, "only YES_NO questions"),
    ("ENTITY", {"answer": "The driver."}, "list the entities"),
    ("ENTITY", {"answer": "The driver.", "entities": ["  "]}, "list the entities"),
    ("ENTITY", {"answer": "The driver.", "entities": "driver"}, "a list of entity names"),
    ("DESCRIPTION", {"answer": "The driver.", "entities": ["driver"]}, "only ENTITY"),
])
def test_distillation_payloads_are_validated(project, people, committed, question_type,
                                             payload, message):
    curated(project, people, committed, question_type=question_type)
    task = claim(people["ed1"], project, "marco_distill")
    with pytest.raises(ValidationError, match=message):
        engine.task_submit(assignment_id=task.pk, worker=people["ed1"], payload=payload)


def test_editors_never_see_other_answers_on_the_page_or_the_api(project, people, committed,
                                                                client_for):
    curated(project, people, committed, selected=(1, 2))
    first = claim(people["ed1"], project, "marco_distill")
    secret = "The driver must check the seats of every child passenger."
    submit(people["ed1"], first, {"answer": secret}, committed)
    second = claim(people["ed2"], project, "marco_distill")
    page = client_for(people["ed2"]).get(reverse("annotation:task_detail", args=[second.pk]))
    content = page.content.decode()
    assert page.status_code == 200
    assert QUERY in content and "135cm in height" in content  # query and curated passages
    assert f"Passage 3. {FILLER[:30]}" not in content  # passages not selected are not shown
    assert secret not in content and "ed1" not in content
    api = APIClient()
    api.force_authenticate(people["ed2"])
    task = api.get(reverse("api_task_detail", args=[second.pk])).json()["task"]
    assert set(task) == {"query", "passages", "question_type", "yesno_labels"}
    assert [p["rank"] for p in task["passages"]] == [1, 2]
    assert secret not in json.dumps(task)
    # Another editor's task is reachable neither by page nor by API.
    assert client_for(people["ed2"]).get(
        reverse("annotation:task_detail", args=[first.pk])).status_code == 403
    assert api.get(reverse("api_task_detail", args=[first.pk])).status_code == 403


def test_time_taken_is_recorded_with_each_answer(project, people, committed):
    distil(project, people, committed, [
        ("ed1", {"answer": GOOD[0]}), ("ed2", {"answer": GOOD[1]}), ("ed3", {"answer": GOOD[0]}),
    ])
    consensus = Item.objects.get(stage__kind="marco_consensus")
    assert all(a["time_s"] >= 0 for a in consensus.data["answers"])
    record = Item.objects.get(stage__kind="marco_record").result
    assert len(record["answer_times_s"]) == 3


def test_spelling_check_warns_and_never_blocks(project, people, committed, client_for):
    curated(project, people, committed)
    task = claim(people["ed1"], project, "marco_distill")
    client = client_for(people["ed1"])
    url = reverse("annotation:spelling_check", args=[task.pk])
    warned = client.post(url, {"answer": "Chldren under 12 need a child seet, says 135cm."},
                         HTTP_HX_REQUEST="true").content.decode()
    assert 'data-testid="spelling-warning"' in warned
    assert "Chldren" in warned and "seet" in warned and "135cm" not in warned
    fine = client.post(url, {"answer": "Children under 12 need a child car seat."},
                       HTTP_HX_REQUEST="true").content.decode()
    assert "No spelling problems" in fine
    assert client_for(people["ed2"]).post(url, {"answer": "x"}).status_code == 403
    held_since(task, seconds=30)  # the page measured 9 active seconds of them
    with committed():
        response = client_for(people["ed1"]).post(
            reverse("annotation:task_detail", args=[task.pk]),
            {"answer": "Chldren under 12 need a child seet.", "active_time_s": "9"})
    assert response.status_code == 302
    submission = people["ed1"].submissions.get(stage__kind="marco_distill")
    assert submission.payload["answer"] == "Chldren under 12 need a child seet."
    assert submission.active_time_s == 9.0


# 6. Consensus weighting ---------------------------------------------------------------------

def weigh(project, committed, texts, **params):
    """A consensus item holding ``texts`` as the answers of one query, weighed by the
    stage's job (parameters as given)."""
    stage = project.stages.get(kind="marco_consensus")
    if params:
        stage.params = {**stage.params, **params}
        stage.save(update_fields=["params"])
    data = {"query": QUERY, "query_id": "t2", "passages": make_passages(1),
            "answers": [{"text": t, "yesno": None, "entities": [], "worker_id": None,
                         "submission": None, "time_s": 1.0, "active_time_s": None}
                        for t in texts]}
    with committed():
        engine.items_emit(source_stage=project.stages.get(kind="marco_distill"),
                          emits=[Emit(kind="marco_consensus", key="t2", data=data)])
    return Item.objects.get(stage__kind="marco_consensus", key="t2")


def test_consensus_weights_equal_the_metrics_library_on_table2(project, committed):
    refs = TABLE2["references"]
    item = weigh(project, committed, refs, outlier_ratio=0.5)
    assert item.status == "done"
    library = PaScorer(refs, metric="bleu", include_self=True).weights
    assert item.result["weights"] == pytest.approx(library, abs=1e-12)
    # Eq. 2 with j = i, from the pairwise BLEU itself.
    tokens = [pa_tokens(r) for r in refs]
    assert item.result["weights"] == pytest.approx(
        reference_weights(tokens, pairwise_bleu, include_self=True), abs=1e-12)
    assert sum(item.result["shares"]) == pytest.approx(1.0)
    # At half the median, the flagged references are the two least central ones: they
    # agree with no other reference (weight = their own BLEU of 1).
    assert item.result["flagged"] == flag_outliers(library, ratio=0.5) == [7, 18]
    lowest = sorted(range(len(refs)), key=lambda i: item.result["weights"][i])
    assert set(item.result["flagged"]) == set(lowest[:2])
    assert item.result["weights"][7] == item.result["weights"][18] == pytest.approx(1.0)
    review = Item.objects.get(stage__kind="marco_review")
    assert review.data["flagged"] == [7, 18]
    assert review.data["weights"] == item.result["weights"]


def test_chinese_answers_are_weighed_by_character_and_the_outlier_flagged(project, committed):
    """Chinese is written without spaces: each answer was one token (a BLEU of 0 with
    everything, itself included), so every weight was 0 and no outlier was ever flagged."""
    answers = ["法律规定十二岁以下的儿童不能坐在汽车前排座位上。",
               "法律规定十二岁以下的儿童不能坐在汽车的前排座位。",
               "根据法律规定，十二岁以下的儿童不能坐在汽车前排座位上。",
               "十二岁以下的儿童不能坐在汽车前排座位上，这是法律规定。",
               "去问汽车经销商吧，这要看车的颜色。"]
    item = weigh(project, committed, answers)
    weights = item.result["weights"]
    assert item.result["tokens"][0] == len("法律规定十二岁以下的儿童不能坐在汽车前排座位上。")
    assert min(weights[:4]) > 1.5  # each agrees with the others, not only with itself
    assert weights[4] == pytest.approx(1.0)  # its own BLEU only
    assert item.result["flagged"] == [4]
    review = Item.objects.get(stage__kind="marco_review")
    assert review.data["flagged"] == [4]


def test_the_default_threshold_flags_the_least_central_references(project, committed):
    refs = TABLE2["references"]
    item = weigh(project, committed, refs)
    weights = item.result["weights"]
    flagged = item.result["flagged"]
    assert flagged == [2, 7, 18]
    lowest = sorted(range(len(refs)), key=lambda i: weights[i])
    assert set(flagged) == set(lowest[: len(flagged)])
    assert max(weights[i] for i in flagged) < min(weights[i] for i in range(20)
                                                  if i not in flagged)


def test_agreeing_answers_skip_review_and_become_the_record(project, people, committed,
                                                           run_reports):
    distil(project, people, committed, [
        ("ed1", {"answer": GOOD[0]}), ("ed2", {"answer": GOOD[1]}), ("ed3", {"answer": GOOD[0]}),
    ])
    consensus = Item.objects.get(stage__kind="marco_consensus")
    assert consensus.result["flagged"] == []
    assert consensus.result["weights"] == pytest.approx(
        PaScorer([GOOD[0], GOOD[1], GOOD[0]]).weights)
    assert not Item.objects.filter(stage__kind="marco_review").exists()
    record = Item.objects.get(stage__kind="marco_record", status="done").result
    assert record["answers"] == [GOOD[0], GOOD[1], GOOD[0]]
    assert record["answer_weights"] == consensus.result["weights"]
    assert record["query"] == QUERY and record["query_id"] == "q1"
    assert record["query_type"] == "DESCRIPTION" and record["no_answer"] is False
    assert [p["is_selected"] for p in record["passages"]] == [1] + [0] * 9
    assert record["passages"][0]["passage_text"] == TABLE2["passage"]
    assert record["yesno_answers"] is None and record["entity_answers"] is None
    reports = run_reports(project)
    assert reports["marco_retrieve"] == (1, 1, {}, [])
    assert reports["marco_consensus"] == (
        1, 1, {}, ["0 with an outlier answer: to a checker's review; 1 straight to the final"
                   " records"])
    assert reports["marco_record"] == (1, 1, {}, [])


def test_a_query_without_passages_is_dropped_with_its_reason(project, people, committed,
                                                             monkeypatch, run_reports):
    monkeypatch.setattr(marco_stages, "_retrieve_passages", lambda project, text, k: [])
    judged_item = emit_queries(project, committed)[0]
    submit(people["judge"], claim(people["judge"], project, "marco_judge"), KEEP, committed)
    assert not Item.objects.filter(stage__kind="marco_curate").exists()
    assert run_reports(project)["marco_retrieve"] == (
        1, 0, {"no passage retrieved from the corpus index": 1}, [])
    assert Item.objects.get(stage__kind="marco_retrieve", key=judged_item.key).result[
        "excluded"] == "no passages retrieved"


# 7. Review by a checker -----------------------------------------------------------------------

def flagged_query(project, people, committed, answers=None, **judgment):
    """Two agreeing answers and an outlier, which the consensus flags for review."""
    answers = answers or [("ed1", {"answer": GOOD[0]}), ("ed2", {"answer": GOOD[1]}),
                          ("ed3", {"answer": OUTLIER})]
    distil(project, people, committed, answers, **judgment)
    return Item.objects.get(stage__kind="marco_review")


def test_outlier_goes_to_a_checker_never_to_an_annotator(project, people, committed):
    review = flagged_query(project, people, committed)
    assert review.data["flagged"] == [2]
    for name in ("ed1", "ed2", "ed3"):
        assert review.exclusions.filter(user=people[name]).exists()
    # Annotator members are never offered the review; the checker member is.
    for name in ("judge", "curator", "ed4", "ed5"):
        offered = engine.task_claim(worker=people[name], project=project)
        assert offered is None or offered.stage.kind != "marco_review"
    assert engine.task_claim(worker=people["chk"], project=project,
                             role=Role.ANNOTATOR) is None
    task = claim(people["chk"], project, "marco_review", role=Role.CHECKER)
    assert task.item_id == review.pk


@pytest.mark.parametrize(("payload", "message"), [
    ({}, "keep or drop for each flagged answer"),
    ({"decisions": {}}, "answer 3: choose keep or drop"),
    ({"decisions": {"2": "maybe"}}, "answer 3: choose keep or drop"),
    ({"decisions": {"2": "drop", "0": "drop"}}, "answer 1 is not flagged"),
])
def test_review_payloads_are_validated(project, people, committed, payload, message):
    flagged_query(project, people, committed)
    task = claim(people["chk"], project, "marco_review", role=Role.CHECKER)
    with pytest.raises(ValidationError, match=message):
        engine.task_submit(assignment_id=task.pk, worker=people["chk"], payload=payload)


def test_dropped_answer_leaves_the_record_and_the_decision_is_kept(project, people,
                                                                    committed):
    flagged_query(project, people, committed)
    task = claim(people["chk"], project, "marco_review", role=Role.CHECKER)
    submit(people["chk"], task, {"decisions": {2: "drop"}, "note": "off topic"}, committed)
    review = Item.objects.get(stage__kind="marco_review")
    assert review.result == {"decisions": {"2": "drop"}, "note": "off topic",
                             "checker_id": people["chk"].pk}
    record = Item.objects.get(stage__kind="marco_record", status="done").result
    assert record["answers"] == GOOD
    assert record["dropped_answers"][0]["text"] == OUTLIER
    assert record["review"]["decisions"] == {"2": "drop"}
    assert record["review"]["checker_id"] == people["chk"].pk


def test_final_records_are_the_projects_records(project, people, committed, admin_user):
    flagged_query(project, people, committed)
    submit(people["chk"], claim(people["chk"], project, "marco_review", role=Role.CHECKER),
           {"decisions": {"2": "drop"}}, committed)
    emit_queries(project, committed, [("q2", "what is a lumen")])
    submit(people["judge"], claim(people["judge"], project, "marco_judge"), KEEP, committed)
    submit(people["curator"], claim(people["curator"], project, "marco_curate"),
           {"unanswerable": True}, committed)
    api = APIClient()
    api.force_authenticate(admin_user)
    rows = api.get(reverse("api_project_records", args=[project.pk])).json()["results"]
    records = {row["record"]["query_id"]: row["record"] for row in rows}
    assert records["q1"]["answers"] == GOOD and records["q1"]["no_answer"] is False
    assert records["q2"]["answers"] == [] and records["q2"]["no_answer"] is True


def test_kept_outlier_stays_in_the_record(project, people, committed):
    flagged_query(project, people, committed)
    task = claim(people["chk"], project, "marco_review", role=Role.CHECKER)
    submit(people["chk"], task, {"decisions": {"2": "keep"}}, committed)
    record = Item.objects.get(stage__kind="marco_record", status="done").result
    assert record["answers"] == [*GOOD, OUTLIER] and record["dropped_answers"] == []
    assert record["review"]["decisions"] == {"2": "keep"}


def test_yes_no_and_entity_labels_run_parallel_to_the_answers(project, people, committed):
    flagged_query(project, people, committed, question_type="YES_NO", answers=[
        ("ed1", {"answer": GOOD[0], "yesno": "Yes"}),
        ("ed2", {"answer": GOOD[1], "yesno": "Depends"}),
        ("ed3", {"answer": OUTLIER, "yesno": "No"}),
    ])
    task = claim(people["chk"], project, "marco_review", role=Role.CHECKER)
    submit(people["chk"], task, {"decisions": {"2": "drop"}}, committed)
    record = Item.objects.get(stage__kind="marco_record").result
    assert record["question_type"] == "YES_NO"
    assert record["answers"] == GOOD and record["yesno_answers"] == ["Yes", "Depends"]
    assert record["entity_answers"] is None


def test_entity_answers_run_parallel_to_the_answers(project, people, committed):
    distil(project, people, committed, question_type="ENTITY", answers=[
        ("ed1", {"answer": "The driver is responsible for it.", "entities": ["driver"]}),
        ("ed2", {"answer": "The driver is responsible for it.", "entities": ["the driver"]}),
        ("ed3", {"answer": "The driver is responsible for it.", "entities": ["driver", "law"]}),
    ])
    record = Item.objects.get(stage__kind="marco_record").result
    assert record["entity_answers"] == [["driver"], ["the driver"], ["driver", "law"]]
    assert record["yesno_answers"] is None


def test_entity_lists_are_bounded_as_answers_are(project, people, committed):
    """An entity of 100,000 characters, or thousands of them, went into DuReader's
    entity_answers whatever the stage's longest answer."""
    curated(project, people, committed, question_type="ENTITY")
    task = claim(people["ed1"], project, "marco_distill")
    answer = "The driver is responsible for it."
    for entities, message in (
        (["d" * 2001], "entities: d{40}… is longer than an answer may be \\(2000 characters\\)"),
        ([f"e{n}" for n in range(51)], "entities: at most 50 entities \\(51 given\\)"),
    ):
        with pytest.raises(ValidationError, match=message):
            engine.task_submit(assignment_id=task.pk, worker=people["ed1"],
                               payload={"answer": answer, "entities": entities})
    submit(people["ed1"], task, {"answer": answer, "entities": ["driver", "d" * 2000]},
           committed)


# Pages ------------------------------------------------------------------------------------------

def test_checker_reaches_the_review_from_the_checker_home(project, people, committed,
                                                           client_for):
    flagged_query(project, people, committed)
    client = client_for(people["chk"])
    home = client.get(reverse("annotation:checker_home")).content.decode()
    assert 'data-testid="next-review"' in home
    assert 'MARCO test: <span data-testid="open-reviews">1</span> for you' in home
    response = client.post(reverse("annotation:task_next"), {"role": "checker"})
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert 'data-testid="plot-weights"' in page and 'data-testid="flagged-3"' in page
    assert OUTLIER in page and GOOD[0] in page
    assert 'data-key="1"' in page and 'data-key="q"' in page
    refused = client.post(response["Location"], {"note": "thinking"})
    assert refused.status_code == 400 and "choose keep or drop" in refused.content.decode()
    with committed():
        done = client.post(response["Location"], {"decision-2": "drop"})
    assert done.status_code == 302 and done["Location"] == reverse("annotation:checker_home")
    assert Item.objects.get(stage__kind="marco_record").result["answers"] == GOOD
    # Annotators may not ask for review tasks.
    assert client_for(people["ed4"]).post(reverse("annotation:task_next"),
                                          {"role": "checker"}).status_code == 403


def test_judgment_page_is_keyboard_first_and_keeps_values_after_a_refusal(
    project, people, committed, client_for
):
    emit_queries(project, committed)
    client = client_for(people["judge"])
    response = client.post(reverse("annotation:task_next"))
    page = client.get(response["Location"]).content.decode()
    assert QUERY in page
    for key in "123adltsx45678ywhke":
        assert f'data-key="{key}"' in page
    refused = client.post(response["Location"], {"intent": "informational",
                                                 "decision": "exclude"})
    assert refused.status_code == 400
    assert "tick why" in refused.content.decode()
    assert re.search(r'value="exclude"[^>]*checked', refused.content.decode())
    assert not re.search(r'value="keep"[^>]*checked', refused.content.decode())
    with committed():
        done = client.post(response["Location"], {"intent": "informational",
                                                  "decision": "exclude",
                                                  "exclusion": ["geo_local"]})
    assert done.status_code == 302
    assert Item.objects.get(stage__kind="marco_judge").result["reasons"] == ["geo_local"]


def test_curation_page_renders_ten_passages_at_once(project, people, committed, client_for):
    judged(project, people, committed)
    client = client_for(people["curator"])
    response = client.post(reverse("annotation:task_next"))
    started = time.perf_counter()
    page = client.get(response["Location"])
    elapsed = time.perf_counter() - started
    content = page.content.decode()
    assert content.count('name="selected"') == 10
    assert all(f'data-key="{k}"' in content for k in "1234567890cu")
    assert len(FILLER.split()) >= 80 and TABLE2["passage"][:60] in content
    assert elapsed < 1.0
    refused = client.post(response["Location"], {"selected": ["1", "4"], "conflict": "on"})
    assert refused.status_code == 400 and "say why" in refused.content.decode()
    assert refused.content.decode().count("checked") >= 3  # both passages and the box
    with committed():
        done = client.post(response["Location"], {"selected": ["4"], "conflict": "on",
                                                  "conflict_reason": "official source"})
    assert done.status_code == 302
    assert Item.objects.get(stage__kind="marco_curate").result["selected"] == [4]


def test_distillation_page_asks_for_the_opinion_on_yes_no_questions(project, people,
                                                                     committed, client_for):
    curated(project, people, committed, question_type="YES_NO")
    client = client_for(people["ed1"])
    response = client.post(reverse("annotation:task_next"))
    page = client.get(response["Location"]).content.decode()
    assert 'name="yesno"' in page and 'data-key="d"' in page
    assert "/check-spelling/" in page
    refused = client.post(response["Location"], {"answer": "Yes, from 12 years."})
    assert refused.status_code == 400 and "Yes, from 12 years." in refused.content.decode()
    with committed():
        client.post(response["Location"], {"answer": "Yes, from 12 years.", "yesno": "Yes"})
    assert people["ed1"].submissions.get().payload == {
        "answer": "Yes, from 12 years.", "yesno": "Yes", "entities": []}


def test_project_page_shows_weights_flags_reasons_and_times(project, people, committed,
                                                            client_for, admin_user):
    flagged_query(project, people, committed)
    emit_queries(project, committed, [("q9", "facebook login")])
    submit(people["judge"], claim(people["judge"], project, "marco_judge"),
           {"intent": "navigational", "decision": "exclude"}, committed)
    client = client_for(admin_user)
    page = client.get(reverse("annotation:project_detail", args=[project.pk])).content.decode()
    for testid in ("marco-figures", "plot-exclusions", "plot-selected", "plot-stage-times",
                   "plot-query-weights", "answer-weights"):
        assert f'data-testid="{testid}"' in page, testid
    assert "Navigational" in page and "flagged" in page and OUTLIER in page
    assert 'data-testid="answers-flagged">1<' in page
    api = APIClient()
    api.force_authenticate(admin_user)
    figures = api.get(reverse("api_project_detail", args=[project.pk])).json()["figures"]
    assert figures["queries_judged"] == 2 and figures["queries_excluded"] == 1
    assert figures["exclusion_reasons"] == [["Navigational", 1]]
    assert figures["selected_distribution"] == [[1, 1]]
    assert figures["weighed_queries"][0]["answers"][2]["flagged"] is True
    assert {row["stage"] for row in figures["time_per_stage"]} == {
        "Query judgment", "Passage curation", "Answer distillation"}


def weigh_many(project, committed, first: int, n: int) -> None:
    """``n`` weighed queries ``w<first>``…, each with two agreeing answers and an
    outlier (flagged), weighed by the consensus stage's job."""
    emits = []
    for k in range(first, first + n):
        data = {"query": f"query number {k}", "query_id": f"w{k}",
                "passages": make_passages(1),
                "answers": [{"text": t, "yesno": None, "entities": [], "worker_id": None,
                             "submission": None, "time_s": 1.0, "active_time_s": None}
                            for t in (*GOOD, OUTLIER)]}
        emits.append(Emit(kind="marco_consensus", key=f"w{k}", data=data))
    with committed():
        engine.items_emit(source_stage=project.stages.get(kind="marco_distill"), emits=emits)


def _get(client, url: str, **headers) -> tuple[str, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as seen:
        response = client.get(url, headers=headers)
    assert response.status_code == 200
    return response.content.decode(), len(seen)


def test_every_weighed_query_is_reachable_page_by_page_with_or_without_htmx(
    project, people, committed, client_for, admin_user
):
    """Fourteen weighed queries: the project page shows the twelve latest and a pager; the
    next page, as a whole page (no JavaScript) or as the htmx part, shows the other two;
    the part's queries do not grow with the queries weighed; the polled dashboard keeps
    the page shown; annotators and checkers are refused."""
    weigh_many(project, committed, 0, 14)
    assert Item.objects.filter(stage__kind="marco_consensus", status="done").count() == 14
    client = client_for(admin_user)
    url = reverse("annotation:project_detail", args=[project.pk])

    def shown(page: str) -> list[str]:
        return re.findall(r">query number (\d+)</a>", page)

    first, _ = _get(client, url)
    assert shown(first) == [str(k) for k in range(13, 1, -1)]
    whole, _ = _get(client, f"{url}?outliers_page=2")
    assert shown(whole) == ["1", "0"] and 'data-testid="stage-table"' in whole
    assert "Queries weighed: 14, the latest first" in first
    assert ('<a href="?outliers_page=2" hx-get="?outliers_page=2&amp;part=outliers" '
            'hx-target="#answer-weights" hx-swap="outerHTML" hx-push-url="?outliers_page=2" '
            'rel="next">') in first
    assert 'hx-include="#outliers-page"' in first
    part, queries = _get(client, f"{url}?outliers_page=2&part=outliers", HX_REQUEST="true")
    assert shown(part) == ["1", "0"] and "Page 2 of 2 (14 in all)" in part
    assert part.lstrip().startswith('<section class="card" id="answer-weights"')
    assert 'data-testid="stage-table"' not in part and "<html" not in part
    assert 'href="?outliers_page=1"' in part and 'name="outliers_page" value="2"' in part
    assert OUTLIER in part and "flagged" in part
    # The polled dashboard, asked with the page shown (hx-include), keeps it.
    polled, _ = _get(client, f"{url}?part=dashboard&outliers_page=2", HX_REQUEST="true")
    assert shown(polled) == ["1", "0"]

    weigh_many(project, committed, 14, 14)
    again, more = _get(client, f"{url}?outliers_page=2&part=outliers", HX_REQUEST="true")
    assert more == queries
    assert shown(again) == [str(k) for k in range(15, 3, -1)]
    assert "Page 2 of 3 (28 in all)" in again

    for name in ("ed1", "chk"):
        other = client_for(people[name])
        assert other.get(f"{url}?outliers_page=2&part=outliers",
                         headers={"HX-Request": "true"}).status_code == 403
        assert other.get(f"{url}?outliers_page=2").status_code == 403


#: New msgids of the project page's plots and their translations (as the catalogue gets them).
PLOT_LABELS_ZH = {
    "Items per stage by status": "各阶段条目（按状态）",
    "%(n)s submissions": "%(n)s 次提交",
    "Submissions per worker": "每位工作者的提交数",
    "Queries by passages selected": "按选中段落数统计的查询",
    "passages selected": "选中的段落数",
    "Median time on task per stage": "各阶段任务用时中位数",
    "median %(seconds)s s": "中位数 %(seconds)s 秒",
}


@pytest.fixture
def chinese_plot_labels():
    """The committed Chinese catalogue holds ``PLOT_LABELS_ZH`` (the pages are read in it)."""
    zh_catalogue_holds(PLOT_LABELS_ZH)


@pytest.fixture
def chinese_project_page(project, people, committed, client_for, admin_user):
    """The project page, a flagged query worked, read by its admin in Chinese."""
    flagged_query(project, people, committed)
    client = client_for(admin_user)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    return client.get(reverse("annotation:project_detail", args=[project.pk])).content.decode()


def test_project_page_plots_are_labelled_in_the_interface_language(
        chinese_project_page, chinese_plot_labels):
    """The plots' titles, axis names and bar tooltips were English in the Chinese page."""
    page = chinese_project_page

    def plot(testid: str) -> str:
        start = page.index(f'data-testid="{testid}"')
        return page[page.rindex("<svg", 0, start):page.index("</svg>", start)]

    stages = plot("plot-stages")
    assert 'aria-label="各阶段条目（按状态）"' in stages
    assert "<title>已完成 1</title>" in stages and "<title>done" not in stages
    selected = plot("plot-selected")
    assert 'aria-label="按选中段落数统计的查询"' in selected
    assert ">选中的段落数<" in selected and ">查询<" in selected
    assert ">passages selected<" not in selected and ">queries<" not in selected
    assert 'aria-label="各阶段任务用时中位数"' in plot("plot-stage-times")
    workers = plot("plot-workers")
    assert 'aria-label="每位工作者的提交数"' in workers
    assert re.search(r"<title>\d+ 次提交</title>", workers) and " submissions<" not in workers


def test_project_page_names_the_stages_in_the_interface_language(
        chinese_project_page, project, admin_user):
    """The items-per-stage plot and the time-on-task plot and table named the stages in
    English in the Chinese interface; the API's figures keep the stored names."""
    page = chinese_project_page

    def part(testid: str) -> str:
        start = page.index(f'data-testid="{testid}"')
        return page[start:page.index("</svg>", start)]

    assert ">1. 导入查询<" in part("plot-stages") and "Import queries" not in part("plot-stages")
    times = part("plot-stage-times")
    assert ">查询评判<" in times and ">段落整理<" in times and ">答案撰写<" in times
    assert "<td>查询评判</td>" in page
    for english in ("Query judgment", "Passage curation", "Answer distillation"):
        assert english not in times and f"<td>{english}</td>" not in page
    api = APIClient()
    api.force_authenticate(admin_user)
    figures = api.get(reverse("api_project_detail", args=[project.pk]),
                      HTTP_ACCEPT_LANGUAGE="zh-hans").json()["figures"]
    assert {row["stage"] for row in figures["time_per_stage"]} == {
        "Query judgment", "Passage curation", "Answer distillation"}


def test_project_page_gives_the_checkers_decisions_in_the_interface_language(
        project, people, committed, client_for, admin_user):
    """The keep / drop badges by the weighed answers were the stored codes, in English,
    on the Chinese page."""
    flagged_query(project, people, committed)
    task = claim(people["chk"], project, "marco_review", role=Role.CHECKER)
    submit(people["chk"], task, {"decisions": {2: "drop"}}, committed)
    client = client_for(admin_user)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    page = client.get(reverse("annotation:project_detail", args=[project.pk])).content.decode()
    badges = re.findall(r'<span class="badge (?:failed|done)"[^>]*>([^<]+)</span>', page)
    assert badges == ["丢弃"]


# Engine: who is offered which stage ---------------------------------------------------------------

def test_stages_are_offered_by_membership_role(project, people, committed, db):
    flagged_query(project, people, committed)
    both = user_with_roles("both", Role.ANNOTATOR, Role.CHECKER)
    engine.project_member_add(project=project, user=both, role=Role.ANNOTATOR)

    def kinds(user, role=None):
        return [stage.kind for stage in engine.worker_queue(worker=user, project=project,
                                                         role=role)[1]]

    assert "marco_review" not in kinds(both) and "marco_distill" in kinds(both)
    engine.project_member_add(project=project, user=both, role=Role.CHECKER)
    assert sorted(kinds(both)) == ["marco_curate", "marco_distill", "marco_judge",
                                   "marco_review"]
    assert kinds(both, Role.CHECKER) == ["marco_review"]
    checker_only = kinds(people["chk"])
    assert checker_only == ["marco_review"]


def test_checker_home_counts_the_reviews_this_checker_may_take_and_says_why_not(
        project, people, committed, client_for):
    """An answerer who is also a checker member may not review the answers they wrote:
    the open review is counted for the other checker only, and the answerer is told why
    (the count used to be the stage's raw open slots, the same for every checker)."""
    from django.contrib.auth.models import Group

    flagged_query(project, people, committed)
    ed3 = people["ed3"]
    ed3.groups.add(Group.objects.get(name=Role.CHECKER.value))
    engine.project_member_add(project=project, user=ed3, role=Role.CHECKER)

    def review_row(user):
        home = client_for(user).get(reverse("annotation:checker_home")).content.decode()
        return home.split('data-testid="review-project"', 1)[1].split("</li></ul>", 1)[0]

    assert '<span data-testid="open-reviews">1</span>' in review_row(people["chk"])
    row = review_row(ed3)
    assert '<span data-testid="open-reviews">0</span>' in row
    assert "its open tasks are ones you already did or may not do" in row
    response = client_for(ed3).post(reverse("annotation:task_next"), {"role": "checker"},
                                    follow=True)
    assert "see why under Answers to review" in response.content.decode()
    # paused on the stage: that is the reason given
    from django.db import transaction

    from annotation.quality import standing_for, standing_set

    with transaction.atomic():
        standing_set(standing=standing_for(
            member=project.members.get(user=people["chk"], role="checker"),
            stage=project.stages.get(kind="marco_review")), action="pause")
    row = review_row(people["chk"])
    assert '<span data-testid="open-reviews">0</span>' in row and "you are paused" in row


def test_judgment_page_says_exclude_needs_an_intent_and_errors_sit_by_their_field(
    project, people, committed, client_for
):
    emit_queries(project, committed)
    client = client_for(people["judge"])
    url = client.post(reverse("annotation:task_next"))["Location"]
    page = client.get(url).content.decode()
    assert "Every query needs an <strong>intent</strong>, also one you exclude" in page
    assert "data-enter-submits" in page and 'data-missing="Choose the query\'s intent' in page
    refused = client.post(url, {"decision": "exclude", "exclusion": ["geo_local"]})
    body = refused.content.decode()
    assert refused.status_code == 400
    error = re.search(r'data-testid="field-error-intent">([^<]*)<', body)
    assert error and "choose one of" in error.group(1).lower()
    # the intent fieldset holds its error; the decision's does not
    intent = body[body.index("<legend>Intent</legend>"):body.index("<legend>Exclude because")]
    assert 'data-testid="field-error-intent"' in intent
    assert 'data-testid="field-error-decision"' not in body
    refused = client.post(url, {"intent": "navigational", "decision": "keep"})
    assert 'data-testid="field-error-decision"' in refused.content.decode()


def test_a_correction_opens_with_the_answer_filled_in(project, people, committed, client_for):
    """Curation and distillation: the correction's form holds the worker's answer, as the
    guide says (they opened empty)."""
    judged(project, people, committed)
    note = "Rank 2 repeats rank 1 <b>word for word</b>"
    curation = submit(people["curator"], claim(people["curator"], project, "marco_curate"),
                      {"selected": [1, 2], "note": note}, committed)
    # One curator: the item is done at once, so only a returned batch or gold shows the form
    # again; the values it would show, posted back, are the same answer.
    spec = curation.stage.kind_spec
    shown = spec.payload_form_values(curation.item, curation.payload)
    posted = QueryDict(mutable=True)
    posted.setlist("selected", [str(n) for n in shown["selected"]])
    posted.update({"note": shown["note"], "conflict_reason": shown["conflict_reason"]})
    assert spec.clean_payload(curation.item, spec.payload_from_form(curation.item, posted)) \
        == curation.payload
    answer = submit(people["ed1"], claim(people["ed1"], project, "marco_distill"),
                    {"answer": GOOD[0]}, committed)
    page = client_for(people["ed1"]).get(
        reverse("annotation:submission_correct", args=[answer.pk])).content.decode()
    assert f">{GOOD[0]}</textarea>" in page
