"""The ReCO recipe: query filter on real queries, document filter, split, the evidence form,
batches returned to their annotator, the test-set protocol, and the project pages.

Here queries and retrieved documents are given through the stage's ``queries`` method and
``_retrieve_documents`` (test_pipelines_on_real_corpora.py runs both for real on an
imported corpus and its index); everything from the query filter on runs for real.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from django.utils.html import escape

from annotation import batches, engine
from annotation.models import Assignment, Batch, Inspection, Item, Project, Submission
from annotation.roles import Role
from annotation.stages import reco
from collector.filters import QueryFilter, evaluate_filter
from tests.collector.filters.labels import REAL_EN, REAL_ZH
from tests.factories import held_since, user_with_roles

QUERIES_DIR = Path(__file__).resolve().parents[2] / "data" / "datasets" / "search_queries"

CELERY_VERBATIM = "Can pregnant women eat celery? Many readers ask. Doctors agree it is fine."
CELERY_PARAPHRASE = (
    "Expectant mothers may safely include celery stalks in their diet: the vegetable is rich "
    "in folate and fibre, and nutritionists recommend it during the second trimester."
)
QINCAI_VERBATIM = "孕妇能吃芹菜吗？很多准妈妈都有这个疑问。"
QINCAI_PARAPHRASE = "怀孕期间适量食用芹菜有好处，芹菜富含叶酸和膳食纤维，有助于预防便秘。"
SUSSEX = ("Sussex is a historic county in the south east of England, bordered by Kent, "
          "Surrey and Hampshire.")
FARGO = "《冰血暴》第一季口碑极佳，豆瓣评分高达9.3分，被誉为近年来最值得一看的美剧之一。"


def doc(external_id: str, text: str, title: str = "") -> dict:
    return {"document_id": None, "external_id": external_id, "title": title or external_id,
            "url": f"http://example.org/{external_id}", "source_type": "web", "text": text}


DOCUMENTS = {
    "can pregnant women eat celery": [doc("celery-faq", CELERY_VERBATIM, "Celery FAQ"),
                                      doc("diet", CELERY_PARAPHRASE, "Diet in pregnancy")],
    "孕妇能吃芹菜吗": [doc("qincai-1", QINCAI_VERBATIM, "芹菜问答"),
                   doc("qincai-2", QINCAI_PARAPHRASE, "孕期饮食")],
    "is sussex in england": [doc("sussex", SUSSEX, "Sussex")],
    "冰血暴好看吗": [doc("fargo", FARGO, "冰血暴")],
    # every document states the question: nothing is left to annotate
    "is celery a vegetable": [doc("veg", "Is celery a vegetable? Yes, celery is a vegetable.")],
}
QUERIES = [
    "can pregnant women eat celery",
    "孕妇能吃芹菜吗",
    "is sussex in england",
    "when was the last time anyone was on the moon",  # a question, not yes/no
    "冰血暴好看吗",
    "is celery a vegetable",
]
GOOD_ALTERNATIVES = {
    "en": {"positive": "yes", "negative": "no", "uncertain": "can't tell"},
    "zh": {"positive": "能", "negative": "不能", "uncertain": "无法确定"},
}


def rows(texts: list[str]) -> list[tuple[int, str, str, str]]:
    from collector.filters import detect_language

    return [(n, f"ext-{n}", text, detect_language(text)) for n, text in enumerate(texts, 1)]


@pytest.fixture
def make_project(db, settings, committed, monkeypatch, admin_user):
    """``make_project(queries, params=..., documents=...)``: an active reco project whose
    automatic stages have run over ``queries``."""
    settings.CELERY_TASK_ALWAYS_EAGER = True

    def make(queries=QUERIES, *, params=None, documents=DOCUMENTS, name="ReCO test"):
        monkeypatch.setattr(reco.QueriesKind, "queries", lambda self, project: rows(queries))
        monkeypatch.setattr(reco, "_retrieve_documents",
                            lambda project, text, k, max_chars=0: documents.get(text, [])[:k])
        project = engine.project_create(name=name, recipe="reco", params=params, user=admin_user)
        with committed():
            engine.project_start(project=project, actor=admin_user)
        project.refresh_from_db()
        return project

    return make


TRAIN_ONLY = {5: {"train": 1.0, "dev": 0.0, "test": 0.0},
              6: {"batch_size": 2, "inspect_fraction": 1.0}}
TEST_ONLY = {5: {"train": 0.0, "dev": 0.0, "test": 1.0}}


@pytest.fixture
def people(db):
    users = {name: user_with_roles(name, Role.ANNOTATOR) for name in ("ann1", "ann2", "ann3")}
    users["chk"] = user_with_roles("chk", Role.CHECKER)
    users["chk2"] = user_with_roles("chk2", Role.CHECKER)
    return users


def join(project, people, checkers=("chk",)):
    for name in ("ann1", "ann2", "ann3"):
        engine.project_member_add(project=project, user=people[name], role=Role.ANNOTATOR)
    for name in checkers:
        engine.project_member_add(project=project, user=people[name], role=Role.CHECKER)


def evidence(item, needle: str, *, answer="positive", doc=None, alternatives=None) -> dict:
    """A valid payload selecting ``needle`` in the first document that holds it."""
    documents = item.data["documents"]
    n = doc if doc is not None else next(i for i, d in enumerate(documents)
                                         if needle in d["text"])
    start = documents[n]["text"].index(needle)
    language = item.data.get("language", "en")
    return {"doc": n, "evidence": [start, start + len(needle)],
            "alternatives": alternatives or GOOD_ALTERNATIVES[language], "answer": answer}


def needle_of(item) -> str:
    """A short piece of the item's first document to use as evidence."""
    return item.data["documents"][0]["text"][:12]


def submit(worker, project, committed, payload_for, *, role=None) -> int:
    """Claim and submit every task the worker gets; ``payload_for(item)`` gives each payload."""
    done = 0
    while (task := engine.task_claim(worker=worker, project=project, role=role)) is not None:
        with committed():
            engine.task_submit(assignment_id=task.pk, worker=worker,
                               payload=payload_for(task.item))
        done += 1
    return done


# Query filter --------------------------------------------------------------------------------

def _read(name: str) -> list[str]:
    with (QUERIES_DIR / name).open(encoding="utf-8") as fh:
        return [json.loads(line)["question"] for line in fh if line.strip()]


def test_query_filter_on_the_real_query_samples(make_project):
    english = _read("queries.en.nq_open_dev.sample.jsonl")
    chinese = _read("queries.zh.dureader_demo.sample.jsonl")
    project = make_project(english + chinese, documents={})
    items = list(Item.objects.filter(project=project, stage__kind="reco_query_filter"))
    assert len(items) == len(english) + len(chinese)
    assert {i.status for i in items} == {"done"}
    for item in items:  # every verdict is recorded with its reason and steps
        verdict = item.result
        assert verdict["reason"] and verdict["steps"] and verdict["text"] == item.data["query"]
        assert verdict["accepted"] == (verdict["failed_step"] is None)
    by_text = {i.data["query"]: i for i in items}
    for text, expected, fragment in REAL_EN + REAL_ZH:
        verdict = by_text[text].result
        if expected == "accept":
            assert verdict["accepted"], (text, verdict["reason"])
        else:
            assert verdict["failed_step"] == expected, (text, verdict["reason"])
        assert fragment in verdict["reason"] + " ".join(verdict["matched"]), text
    blocked = by_text["2017还怎么下载岛国片"].result
    assert blocked["failed_step"] == "blocklist" and blocked["matched"] == ["岛国片"]
    # kept queries go on to retrieval; refused ones finish here, kept for audit
    kept = {i.key for i in items if i.result["accepted"]}
    retrieved = set(Item.objects.filter(project=project, stage__kind="reco_retrieve")
                    .values_list("key", flat=True))
    assert retrieved == kept and 15 <= len(kept) < len(items) // 4
    assert not Item.objects.filter(parent__in=[i for i in items if not i.result["accepted"]])
    # the filter stage's language is detected per query
    assert by_text["孕妇能吃银耳吗"].result["language"] == "zh"


def test_filter_parameters_are_validated_and_used(make_project):
    with pytest.raises(ValidationError, match="yesno_threshold"):
        engine.project_create(name="bad1", recipe="reco", params={2: {"yesno_threshold": "hi"}})
    with pytest.raises(ValidationError, match="steps"):
        engine.project_create(name="bad2", recipe="reco",
                              params={2: {"steps": ["intent", "vibes"]}})
    with pytest.raises(ValidationError, match="intent_models"):
        engine.project_create(name="bad3", recipe="reco", params={2: {"intent_mode": "model"}})
    project = make_project(["can pregnant women eat celery", "is sussex in england"],
                           params={2: {"blocklists": {"en": ["celery"]}}})
    verdicts = dict(Item.objects.filter(project=project, stage__kind="reco_query_filter")
                    .values_list("data__query", "result"))
    assert verdicts["can pregnant women eat celery"]["failed_step"] == "blocklist"
    assert verdicts["can pregnant women eat celery"]["matched"] == ["celery"]
    assert verdicts["is sussex in england"]["accepted"]


def test_query_verdicts_are_written_to_the_stored_query(db):
    from collector.models import Corpus, Query

    corpus = Corpus.objects.create(name="queries-en", language="en")
    query = Query.objects.create(corpus=corpus, external_id="q1", text="is sussex in england",
                                 language="en")
    verdict = QueryFilter().check("is sussex in england").to_dict()
    assert reco._query_verdicts_record(10**9, verdict, 1) is False  # no such row
    assert reco._query_verdicts_record(None, verdict, 1) is False
    assert reco._query_verdicts_record(query.pk, verdict, 7) is True
    query.refresh_from_db()
    assert query.verdicts["reco_query_filter"]["verdict"] == "keep"
    assert query.verdicts["reco_query_filter"]["reason"].startswith("project 7:")
    assert {"intent", "blocklist", "yesno"} <= set(query.verdicts)


# Document filter and split ---------------------------------------------------------------------

def test_document_filter_drops_verbatim_documents_and_keeps_paraphrases(make_project):
    project = make_project(params=TRAIN_ONLY)
    results = dict(Item.objects.filter(project=project, stage__kind="reco_doc_filter")
                   .values_list("data__query", "result"))
    for query, dropped, kept in [("can pregnant women eat celery", "celery-faq", "diet"),
                                 ("孕妇能吃芹菜吗", "qincai-1", "qincai-2")]:
        audit = {d["external_id"]: d for d in results[query]["documents"]}
        assert audit[dropped]["kept"] is False and audit[dropped]["rule"] == "contains"
        assert audit[dropped]["score"] == 1.0 and "occurs in the document" in \
            audit[dropped]["reason"]
        assert audit[kept]["kept"] is True and audit[kept]["score"] < 0.9
        annotated = Item.objects.get(stage__kind="reco_evidence", data__query=query)
        assert [d["external_id"] for d in annotated.data["documents"]] == [kept]
        assert annotated.data["dropped_documents"][0]["external_id"] == dropped
    # no document left: the query is finished as such and goes no further
    empty = Item.objects.get(stage__kind="reco_doc_filter", data__query="is celery a vegetable")
    assert empty.result["outcome"] == "no documents" and empty.result["dropped"] == 1
    assert not Item.objects.filter(stage__kind="reco_split", key=empty.key).exists()


def test_document_filter_parameters_are_validated(db):
    with pytest.raises(ValidationError, match="rules"):
        engine.project_create(name="bad", recipe="reco", params={4: {"rules": ["magic"]}})
    with pytest.raises(ValidationError, match="ngram_threshold"):
        engine.project_create(name="bad", recipe="reco", params={4: {"ngram_threshold": 0}})


def test_split_is_seeded_recorded_and_independent_of_order(make_project):
    shares = [("train", 0.834), ("dev", 0.1), ("test", 0.066)]
    keys = [f"q{n}" for n in range(2000)]
    splits = {k: reco.split_of(k, seed=5, shares=shares)[0] for k in keys}
    assert splits == {k: reco.split_of(k, seed=5, shares=shares)[0] for k in reversed(keys)}
    counts = Counter(splits.values())
    assert 1580 < counts["train"] < 1760 and 150 < counts["dev"] < 250 and 90 < counts["test"] < 180
    assert {reco.split_of(k, seed=5, shares=[("train", 0), ("dev", 0), ("test", 1)])[0]
            for k in keys[:50]} == {"test"}
    project = make_project(params=TRAIN_ONLY)
    for item in Item.objects.filter(project=project, stage__kind="reco_split"):
        assert item.split == item.result["split"] == "train"
        assert item.result["seed"] == 20200207 and 0 <= item.result["draw"] < 1
    assert set(Item.objects.filter(stage__kind="reco_evidence").values_list("split", flat=True)) \
        == {"train"}


def test_split_shares_may_not_all_be_zero(db):
    with pytest.raises(ValidationError, match="add up to 0"):
        engine.project_create(name="bad", recipe="reco",
                              params={5: {"train": 0.0, "dev": 0.0, "test": 0.0}})


# The evidence form ------------------------------------------------------------------------------

DOCS = [doc("a", "  Celery is safe.  Doctors agree.  "),
        doc("b", "芹菜富含叶酸。孕妇可以适量食用。")]


def clean(payload: dict, limit: int = 40) -> dict:
    return reco.clean_evidence_payload(DOCS, payload, max_alternative_chars=limit)


def good(**changes) -> dict:
    payload = {"doc": 1, "evidence": [7, 16], "answer": "positive",
               "alternatives": {"positive": "能", "negative": "不能", "uncertain": "无法确定"}}
    return {**payload, **changes}


def test_evidence_payload_valid_span_alternatives_and_answer():
    cleaned = clean(good())
    assert cleaned["evidence_text"] == "孕妇可以适量食用。" == DOCS[1]["text"][7:16]
    assert cleaned["doc"] == 1 and cleaned["external_id"] == "b" and cleaned["answer"] == "positive"
    # white space around the selection is trimmed; offsets stay exact
    trimmed = clean(good(doc=0, evidence=[0, 19], alternatives={
        "positive": " yes ", "negative": "no", "uncertain": "unclear"}))
    assert trimmed["evidence"] == [2, 17] and trimmed["evidence_text"] == "Celery is safe."
    assert trimmed["alternatives"]["positive"] == "yes"
    # the answer may name the alternative's text
    assert clean(good(answer="不能"))["answer"] == "negative"
    assert clean({"reject": True}) == {"reject": True, "reason": reco.REJECTED}


@pytest.mark.parametrize(("changes", "message"), [
    ({"doc": 2}, "choose one of the 2 documents"),
    ({"doc": True}, "choose one of the 2 documents"),
    ({"doc": None}, "choose one of the 2 documents"),
    ({"evidence": None}, "select the evidence"),
    ({"evidence": [3, 3]}, "outside document 2"),
    ({"evidence": [0, 17]}, "outside document 2"),  # inside document 1 only
    ({"doc": 0, "evidence": [0, 2]}, "only white space"),
    ({"evidence": [True, 5]}, "select the evidence"),
    ({"alternatives": {"positive": "能", "negative": " ", "uncertain": "?"}}, r"Negative \(no\)"),
    ({"alternatives": {"positive": "能", "negative": "不能"}}, "Uncertain alternative is empty"),
    ({"alternatives": {"positive": "能", "negative": "能", "uncertain": "?"}}, "must differ"),
    ({"alternatives": {"positive": "能|行", "negative": "不", "uncertain": "?"}}, "'|'"),
    ({"alternatives": "能|不能|无法确定"}, "write a positive"),
    ({"alternatives": {"positive": "x" * 41, "negative": "n", "uncertain": "u"}}, "longer"),
    ({"answer": "maybe"}, "mark which alternative is correct"),
    ({"answer": None}, "mark which alternative is correct"),
])
def test_evidence_payload_refusals(changes, message):
    with pytest.raises(ValidationError, match=message):
        clean(good(**changes))


def test_alternatives_are_one_line_of_visible_text():
    """An alternative of only a zero-width space was accepted (and released as an invisible
    candidate); tabs and line breaks inside one went into the release, whose prediction
    files are query_id<TAB>answer lines."""
    with pytest.raises(ValidationError, match="Positive"):
        clean(good(alternatives={"positive": "\u200b\u200d", "negative": "不能",
                                 "uncertain": "无法确定"}))
    cleaned = clean(good(alternatives={"positive": "能\t吃", "negative": "不\n能\r\n 吃",
                                       "uncertain": "无法\u3000确定"}))
    assert cleaned["alternatives"] == {"positive": "能 吃", "negative": "不 能 吃",
                                       "uncertain": "无法 确定"}


def test_evidence_payload_refusals_name_the_alternative_in_the_pages_language():
    """A Chinese annotator who typed '|' in the negative alternative read
    "alternatives: negative 候选答案不能包含 '|'": the alternative's key, in English."""
    from django.utils import translation

    with translation.override("zh-hans"):
        for changes, label in [
            ({"alternatives": {"positive": "能", "negative": "不|能", "uncertain": "?"}},
             "否定（否）"),
            ({"alternatives": {"positive": "能", "negative": "不能", "uncertain": " "}}, "不确定"),
            ({"alternatives": {"positive": "能" * 41, "negative": "不能", "uncertain": "?"}},
             "肯定（是）"),
        ]:
            with pytest.raises(ValidationError) as refused:
                clean(good(**changes))
            message = refused.value.messages[0]
            assert label in message, message
            assert not re.search(r"\b(positive|negative|uncertain)\b", message), message


def test_document_tokens_are_exact_and_chinese_is_per_character():
    text = "孕妇 can't eat <b>芹菜</b>?"
    spans = reco.document_tokens(text)
    assert [text[s:e] for s, e in spans][:6] == ["孕", "妇", "can", "'", "t", "eat"]
    assert "".join(text[s:e] for s, e in spans) == re.sub(r"\s", "", text)


# Batches, inspection, the return loop ----------------------------------------------------------

def test_batch_returned_to_its_annotator_and_relabelled_with_history(make_project, people,
                                                                     committed):
    project = make_project(params=TRAIN_ONLY)
    join(project, people, checkers=("chk", "chk2"))
    ann1, ann2, chk = people["ann1"], people["ann2"], people["chk"]
    stage = project.stages.get(kind="reco_evidence")
    assert stage.items.count() == 4 and stage.batches.count() == 2
    task = engine.task_claim(worker=ann1, project=project)
    batch = Batch.objects.get(pk=task.item.batch_id)
    first_answers = {}

    def first_round(item):
        first_answers[item.pk] = "negative"
        return evidence(item, needle_of(item), answer="negative")

    with committed():
        engine.task_submit(assignment_id=task.pk, worker=ann1, payload=first_round(task.item))
    # ann1 only ever gets her own batch's items; ann2 takes the other batch
    mine = set(batch.items.values_list("pk", flat=True))
    other = engine.task_claim(worker=ann2, project=project)
    assert other.item.batch_id != batch.pk
    while (task := engine.task_claim(worker=ann1, project=project)) is not None:
        assert task.item_id in mine
        with committed():
            engine.task_submit(assignment_id=task.pk, worker=ann1, payload=first_round(task.item))
    batch.refresh_from_db()
    assert batch.status == "inspection" and len(first_answers) == 2
    inspection = Inspection.objects.get(batch=batch)
    assert sorted(inspection.sample) == sorted(mine)  # fraction 1.0
    with pytest.raises(PermissionDenied, match="own batch"):
        batches.inspection_claim(inspection_id=inspection.pk, checker=ann1)
    batches.inspection_claim(inspection_id=inspection.pk, checker=chk)
    bad = inspection.sample[0]
    with committed():
        batches.inspection_submit(inspection_id=inspection.pk, checker=chk,
                                  marks={bad: ["answer_incorrect"]})
    inspection.refresh_from_db()
    assert (inspection.accuracy, inspection.passed) == (0.5, False)
    batch.refresh_from_db()
    assert (batch.status, batch.round, batch.annotator) == ("returned", 2, ann1)
    assert not Item.objects.filter(stage__kind="reco_final").exists()
    # Round 2: the same annotator relabels; others never see the batch.
    assert engine.task_claim(worker=people["ann3"], project=project) is None \
        or engine.task_current(worker=people["ann3"]).item.batch_id != batch.pk
    relabelled = submit(ann1, project, committed,
                        lambda item: evidence(item, needle_of(item), answer="positive"))
    assert relabelled == 2
    assert Item.objects.get(pk=bad).submissions.count() == 2  # history kept
    second = Inspection.objects.get(batch=batch, round=2)
    batches.inspection_claim(inspection_id=second.pk, checker=chk)
    with committed():
        batches.inspection_submit(inspection_id=second.pk, checker=chk,
                                  marks={second.sample[0]: ["question_too_easy"]})
    second.refresh_from_db()
    # one loose error (0.5) in two items: 0.75, still below 0.95
    assert (second.errors, second.passed) == (0.5, False)
    submit(ann1, project, committed, lambda item: evidence(item, needle_of(item)))
    third = Inspection.objects.get(batch=batch, round=3)
    batches.inspection_claim(inspection_id=third.pk, checker=people["chk2"])
    with committed():
        batches.inspection_submit(inspection_id=third.pk, checker=people["chk2"], marks={})
    batch.refresh_from_db()
    assert (batch.status, batch.round) == ("accepted", 3)
    finals = Item.objects.filter(stage__kind="reco_final", status="done")
    assert {f.parent.batch_id for f in finals} == {batch.pk}
    for final in finals:
        record = final.result
        assert record["answer_type"] == "positive" and record["split"] == "train"
        assert record["provenance"]["round"] == 3 and record["provenance"]["batch"] == batch.number
        assert record["provenance"]["annotators"] == [ann1.pk]
        assert record["alternatives"].count("|") == 2
        assert record["doc"][slice(*record["provenance"]["evidence"])] == record["passage"]
        assert record["answer"] in record["alternatives"].split("|")
        evidence_item = final.parent
        assert evidence_item.result["outcome"] == "answered"
        assert evidence_item.submissions.count() == 3


def test_rejected_queries_leave_the_final_set(make_project, people, committed):
    project = make_project(["is sussex in england", "冰血暴好看吗"],
                           params={**TRAIN_ONLY, 6: {"batch_size": 2, "inspect_fraction": 0.5}})
    join(project, people)
    submit(people["ann1"], project, committed, lambda item: {"reject": True}
           if item.data["language"] == "en" else evidence(item, "豆瓣评分高达9.3分"))
    inspection = Inspection.objects.get()
    assert len(inspection.sample) == 1
    batches.inspection_claim(inspection_id=inspection.pk, checker=people["chk"])
    with committed():
        batches.inspection_submit(inspection_id=inspection.pk, checker=people["chk"], marks={})
    outcomes = dict(Item.objects.filter(stage__kind="reco_evidence")
                    .values_list("data__query", "result__outcome"))
    assert outcomes == {"is sussex in england": "rejected", "冰血暴好看吗": "answered"}
    record = Item.objects.get(stage__kind="reco_final").result
    assert record["query"] == "冰血暴好看吗" and record["passage"] == "豆瓣评分高达9.3分"
    assert record["alternatives"] == "能|不能|无法确定" and record["answer"] == "能"
    assert record["url"] == "http://example.org/fargo"


def test_only_checkers_inspect_and_annotators_see_only_their_batch(make_project, people,
                                                                   committed, client_for):
    project = make_project(params=TRAIN_ONLY)
    join(project, people)
    ann1, ann2 = people["ann1"], people["ann2"]
    a = engine.task_claim(worker=ann1, project=project)
    b = engine.task_claim(worker=ann2, project=project)
    assert a.item.batch_id != b.item.batch_id
    # another annotator's task page is closed to you
    assert client_for(ann2).get(reverse("annotation:task_detail", args=[a.pk])).status_code == 403
    assert not Assignment.objects.filter(item__batch_id=a.item.batch_id, reserved_for=ann2)
    submit(ann1, project, committed, lambda item: evidence(item, needle_of(item)))
    inspection = Inspection.objects.get(batch_id=a.item.batch_id)
    url = reverse("annotation:inspection_detail", args=[inspection.pk])
    assert client_for(ann2).get(url).status_code == 403
    assert client_for(ann2).post(url, {"action": "claim"}).status_code == 403
    inspection.refresh_from_db()
    assert inspection.status == "open"
    client = client_for(people["chk"])
    home = client.get(reverse("annotation:checker_home")).content.decode()
    assert 'data-testid="waiting-batches"' in home and "ann1" in home
    client.post(url, {"action": "claim"})
    page = client.get(url).content.decode()
    for rule in ("answer_incorrect", "question_invalid", "evidence_irrelevant",
                 "question_too_easy"):
        assert f'value="{rule}"' in page
    assert 'data-testid="inspect-query"' in page and "<mark>" in page
    assert "Documents dropped for trivial overlap" in page  # the audit of the doc filter
    assert "marked correct" in page


# Test-set protocol -------------------------------------------------------------------------------

def test_test_set_agreement_goes_to_a_third_annotator_disagreement_to_a_checker(
        make_project, people, committed):
    project = make_project(["can pregnant women eat celery", "孕妇能吃芹菜吗",
                            "is sussex in england"], params=TEST_ONLY)
    join(project, people)
    ann1, ann2, ann3, chk = (people[n] for n in ("ann1", "ann2", "ann3", "chk"))
    double = project.stages.get(kind="reco_test_evidence")
    assert not project.stages.get(kind="reco_evidence").items.exists()
    assert set(double.items.values_list("overlap", flat=True)) == {2}
    assert set(double.items.values_list("split", flat=True)) == {"test"}

    def first(item):
        if item.data["query"] == "is sussex in england":
            return {"reject": True}
        return evidence(item, needle_of(item), answer="positive")

    def second(item):
        query = item.data["query"]
        if query == "is sussex in england":
            return {"reject": True}  # both reject: the query leaves the set
        text = item.data["documents"][0]["text"]
        answer = "negative" if query == "孕妇能吃芹菜吗" else "positive"
        return evidence(item, text[-12:], answer=answer)

    assert submit(ann1, project, committed, first) == 3
    assert submit(ann2, project, committed, second) == 3
    agreed = double.items.get(data__query="can pregnant women eat celery")
    assert agreed.result["agreed"] is True and agreed.status == "done"
    assert double.items.get(data__query="is sussex in england").result == {
        "answers": ["rejected", "rejected"], "agreed": True,
        "submissions": list(double.items.get(data__query="is sussex in england")
                            .submissions.values_list("pk", flat=True))}
    choice = Item.objects.get(stage__kind="reco_evidence_choice")
    adjudication = Item.objects.get(stage__kind="reco_adjudicate")
    assert choice.data["query"] == "can pregnant women eat celery"
    assert adjudication.data["query"] == "孕妇能吃芹菜吗"
    assert set(choice.exclusions.values_list("user", flat=True)) == {ann1.pk, ann2.pk}
    # the two labellers never choose; annotators never adjudicate
    assert engine.task_claim(worker=ann1, project=project) is None
    assert engine.task_claim(worker=ann2, project=project) is None
    task = engine.task_claim(worker=ann3, project=project)
    assert task.item == choice
    context = task.stage.kind_spec.context(task.item)
    assert [c["letter"] for c in context["candidates"]] == ["A", "B"]
    with committed():
        engine.task_submit(assignment_id=task.pk, worker=ann3, payload={"choice": 1})
    assert engine.task_claim(worker=ann3, project=project) is None
    # a checker who is not a member of the project gets nothing; the member adjudicates
    assert engine.task_claim(worker=people["chk2"], project=project, role=Role.CHECKER) is None
    review = engine.task_claim(worker=chk, project=project, role=Role.CHECKER)
    assert review.item == adjudication
    with pytest.raises(ValidationError, match="choose one of the 2"):
        engine.task_submit(assignment_id=review.pk, worker=chk, payload={"choice": 5})
    with committed():
        engine.task_submit(assignment_id=review.pk, worker=chk, payload={"choice": 0})
    records = {r["query"]: r for r in reco.final_records(project=project)}
    assert set(records) == {"can pregnant women eat celery", "孕妇能吃芹菜吗"}
    chosen = records["can pregnant women eat celery"]
    assert chosen["provenance"]["source"] == "test: evidence chosen by a third annotator"
    assert chosen["provenance"]["annotators"] == [ann1.pk, ann2.pk, ann3.pk]
    assert chosen["passage"] == CELERY_PARAPHRASE[-12:] and chosen["split"] == "test"
    adjudicated = records["孕妇能吃芹菜吗"]
    assert adjudicated["provenance"]["source"] == "test: adjudicated by a checker"
    assert adjudicated["answer"] == "能" and adjudicated["passage"] == QINCAI_PARAPHRASE[:12]


def test_adjudication_may_reject_and_never_keeps_a_rejection(make_project, people, committed):
    project = make_project(["is sussex in england"], params=TEST_ONLY)
    join(project, people)
    submit(people["ann1"], project, committed, lambda item: {"reject": True})
    submit(people["ann2"], project, committed, lambda item: evidence(item, "Sussex"))
    review = engine.task_claim(worker=people["chk"], project=project, role=Role.CHECKER)
    rejecting = next(n for n, c in enumerate(review.item.data["candidates"])
                     if c["payload"].get("reject"))
    with pytest.raises(ValidationError, match="rejects the query"):
        engine.task_submit(assignment_id=review.pk, worker=people["chk"],
                           payload={"choice": rejecting})
    with committed():
        engine.task_submit(assignment_id=review.pk, worker=people["chk"],
                           payload={"reject": True})
    assert Item.objects.get(stage__kind="reco_adjudicate").result["outcome"] == "rejected"
    assert not Item.objects.filter(stage__kind="reco_final").exists()


def test_test_protocol_off_sends_test_queries_to_batches(make_project):
    project = make_project(["is sussex in england"],
                           params={5: {**TEST_ONLY[5], "test_double_annotation": False}})
    item = Item.objects.get(project=project, stage__kind="reco_evidence")
    assert item.split == "test" and item.overlap == 1


# Pages -------------------------------------------------------------------------------------------

def test_evidence_page_and_form_post(make_project, people, client_for, committed):
    project = make_project(["孕妇能吃芹菜吗", "can pregnant women eat celery"],
                           params={**TRAIN_ONLY, 6: {"batch_size": 2}})
    join(project, people)
    client = client_for(people["ann1"])
    response = client.post(reverse("annotation:task_next"))
    url = response["Location"]
    task = Assignment.objects.get(worker=people["ann1"], status="active")
    page = client.get(url).content.decode()
    assert 'data-testid="doc-tab-0"' in page and "js/reco.js" in page
    assert 'data-testid="alt-uncertain"' in page and "Reject the question" in page
    text = task.item.data["documents"][0]["text"]
    # the text once, escaped, for the browser to cut into tokens (no element per character)
    assert f'data-testid="doc-0">{escape(text)}</div>' in page and 'class="tok"' not in page
    placeholder = "无法确定" if task.item.data["language"] == "zh" else "can&#x27;t tell"
    assert placeholder in page
    form = {"doc": "0", "start": "0", "end": "6", "alt_positive": "能", "alt_negative": "能",
            "alt_uncertain": "无法确定", "answer": "positive", "active_time_s": "9"}
    refused = client.post(url, form)
    assert refused.status_code == 400 and "must differ" in refused.content.decode()
    held_since(task, seconds=30)  # the page measured 9 active seconds of them
    assert 'id="ev-end" value="6"' in refused.content.decode()  # kept for the page to restore
    with committed():
        done = client.post(url, {**form, "alt_negative": "不能"})
    assert done.status_code == 302
    submission = task.item.submissions.get()
    assert submission.payload["evidence"] == [0, 6]
    assert submission.payload["evidence_text"] == text[:6]
    assert submission.active_time_s == 9.0
    nxt = done["Location"]
    with committed():
        rejected = client.post(nxt, {"reject": "1"})
    assert rejected.status_code == 302
    assert Submission_payloads(project) == [submission.payload, {"reject": True,
                                                                 "reason": reco.REJECTED}]


def test_evidence_page_links_document_urls_only_when_http(make_project, people, client_for):
    project = make_project(["孕妇能吃芹菜吗", "can pregnant women eat celery"],
                           params={**TRAIN_ONLY, 6: {"batch_size": 2}})
    join(project, people)
    client = client_for(people["ann1"])
    url = client.post(reverse("annotation:task_next"))["Location"]
    task = Assignment.objects.get(worker=people["ann1"], status="active")
    data = task.item.data
    for link in ("javascript:alert(4)", "https://example.org/page"):
        data["documents"][0]["url"] = link
        Item.objects.filter(pk=task.item.pk).update(data=data)
        page = client.get(url).content.decode()
        assert link in page
        if link.startswith("https:"):
            assert f'<a href="{link}" rel="noreferrer noopener nofollow"' in page
        else:
            assert 'href="javascript' not in page


def Submission_payloads(project):  # noqa: N802 - reads like the model it lists
    from annotation.models import Submission

    return [s.payload for s in Submission.objects.filter(stage__project=project).order_by("id")]


def test_checker_reviews_from_the_checker_home(make_project, people, client_for, committed):
    project = make_project(["孕妇能吃芹菜吗"], params=TEST_ONLY)
    join(project, people)
    submit(people["ann1"], project, committed,
           lambda item: evidence(item, "芹菜", answer="positive"))
    submit(people["ann2"], project, committed,
           lambda item: evidence(item, "叶酸", answer="negative"))
    client = client_for(people["chk"])
    home = client.get(reverse("annotation:checker_home")).content.decode()
    assert 'data-testid="next-review"' in home
    response = client.post(reverse("annotation:task_next"), {"role": "checker"})
    page = client.get(response["Location"]).content.decode()
    assert 'data-testid="choice-reject"' in page and "<mark>叶酸</mark>" in page
    with committed():
        done = client.post(response["Location"], {"choice": "1"})
    assert done.status_code == 302 and done["Location"].endswith(reverse("annotation:checker_home"))
    assert next(reco.final_records(project=project))["answer"] == "不能"
    # annotators cannot take review tasks
    assert client_for(people["ann3"]).post(reverse("annotation:task_next"),
                                           {"role": "checker"}).status_code == 403


def test_project_page_counts_items_waiting_for_their_batchs_inspection(
        make_project, people, client_for, committed, admin_user):
    """Labelled items of a batch waiting for its checker are neither open nor done: the
    stage table and the items chart left them out, so the stage seemed to hold fewer
    items than it does (4 labelled of 4 read as 0 open, 0 done)."""
    project = make_project(params=TRAIN_ONLY)
    join(project, people)
    assert submit(people["ann1"], project, committed,
                  lambda item: evidence(item, needle_of(item))) == 4
    stage = project.stages.get(kind="reco_evidence")
    assert stage.items.filter(status="review").count() == 4
    page = client_for(admin_user).get(
        reverse("annotation:project_detail", args=[project.pk])).content.decode()
    assert f'data-testid="stage-review-{stage.order}">4<' in page
    assert "in review 4" in page  # the chart's segment


def test_project_page_figures_labels_and_final_set(make_project, people, client_for, committed,
                                                   admin_user):
    project = make_project(QUERIES + ["2017还怎么下载岛国片", "成都二手房交易流程"],
                           params=TRAIN_ONLY)
    join(project, people)
    submit(people["ann1"], project, committed, lambda item: evidence(item, needle_of(item)))
    for inspection in Inspection.objects.all():
        batches.inspection_claim(inspection_id=inspection.pk, checker=people["chk"])
        with committed():
            batches.inspection_submit(inspection_id=inspection.pk, checker=people["chk"],
                                      marks={})
    submit(people["ann2"], project, committed, lambda item: evidence(item, needle_of(item)))
    for inspection in Inspection.objects.filter(status="open"):
        batches.inspection_claim(inspection_id=inspection.pk, checker=people["chk"])
        with committed():
            batches.inspection_submit(inspection_id=inspection.pk, checker=people["chk"],
                                      marks={})
    client = client_for(admin_user)
    url = reverse("annotation:project_detail", args=[project.pk])
    page = client.get(url).content.decode()
    assert 'data-testid="reco-figures"' in page and 'data-testid="plot-reco-steps"' in page
    assert "inappropriate content: &#x27;岛国片&#x27;: 1" in page
    assert "not a question: 1" in page and "not yes/no: wh_question: 1" in page
    assert 'data-testid="reco-docs-dropped">3 / 7<' in page
    assert 'data-testid="reco-acceptance">100.0%<' in page
    assert 'data-testid="reco-records">4<' in page and 'data-testid="reco-final"' in page
    assert "能|不能|无法确定" in page and "No labels yet." in page
    assert "as checker (test-set adjudication)" in page
    # the admin labels the sample without seeing the verdicts
    labels_url = reverse("annotation:reco_filter_labels", args=[project.pk])
    sheet = client.get(labels_url).content.decode()
    assert 'data-testid="label-table"' in sheet and "failed_step" not in sheet
    stage = project.stages.get(kind="reco_query_filter")
    sample = reco.query_label_sample(stage=stage)
    assert len(sample) == 8  # fewer filtered queries than label_sample
    truth = {"can pregnant women eat celery": True, "孕妇能吃芹菜吗": True,
             "is sussex in england": True, "冰血暴好看吗": True, "is celery a vegetable": False,
             "when was the last time anyone was on the moon": False,
             "2017还怎么下载岛国片": False, "成都二手房交易流程": False}
    client.post(labels_url, {f"label-{i.pk}": "keep" if truth[i.data["query"]] else "drop"
                             for i in sample})
    expected = evaluate_filter(QueryFilter(), truth.items())
    assert (expected.tp, expected.fp) == (4, 1)
    page = client.get(url).content.decode()
    assert f'data-testid="reco-precision">{expected.precision:.3f}<' in page
    assert f'data-testid="reco-recall">{expected.recall:.3f}<' in page
    assert "is celery a vegetable" in page  # the false positive, shown with its reason
    # clearing a label
    client.post(labels_url, {f"label-{sample[0].pk}": "clear"})
    assert reco.query_filter_evaluation(stage=stage)["total"] == 7


def test_stage_parameters_form_round_trips_lists_and_dicts(db, client_for, admin_user):
    from tests.annotation.test_stage_params import posted_form

    project = engine.project_create(name="params", recipe="reco", user=admin_user)
    stage = project.stages.get(kind="reco_query_filter")
    client = client_for(admin_user)
    page = client.get(reverse("annotation:project_detail", args=[project.pk])).content.decode()
    assert 'value="intent, blocklist, yesno"' in page
    form = posted_form(stage, {"steps": "intent, yesno",
                               "blocklists": '{"zh": ["芹菜"]}'})
    client.post(reverse("annotation:project_action", args=[project.pk]), form)
    stage.refresh_from_db()
    assert stage.params["steps"] == ["intent", "yesno"]
    assert stage.params["blocklists"] == {"zh": ["芹菜"]}
    assert Project.objects.get(pk=project.pk).status == "draft"


def test_admin_trains_the_intent_classifier_from_uploaded_labels(db, client_for, admin_user):
    import json as jsonlib

    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from collector.filters import QueryFilter

    sample = [jsonlib.loads(line)["question"] for line in (
        QUERIES_DIR / "queries.en.nq_open_dev.sample.jsonl"
    ).read_text().splitlines()[:30]]
    not_questions = ["cheap flights paris", "weather tomorrow", "pizza near me",
                     "taylor swift lyrics", "facebook login", "buy running shoes",
                     "nba scores", "translate hello spanish", "youtube", "calculator"]
    lines = [jsonlib.dumps({"text": q, "label": "question"}) for q in sample]
    lines += [f"not_question\t{q}" for q in not_questions]
    project = engine.project_create(name="trained", recipe="reco", user=admin_user,
                                    params={2: {"language": "en"}})
    url = reverse("annotation:reco_filter_labels", args=[project.pk])
    client = client_for(admin_user)
    bad = SimpleUploadedFile("labels.txt", b'{"text": "x", "label": "maybe"}\n')
    page = client.post(url, {"action": "train", "language": "en", "labelled": bad}, follow=True)
    assert "labels.txt: line 1: field &#x27;label&#x27;" in page.content.decode()
    upload = SimpleUploadedFile("labels.jsonl", "\n".join(lines).encode())
    client.post(url, {"action": "train", "language": "en", "labelled": upload})
    stage = project.stages.get(kind="reco_query_filter")
    assert stage.params["intent_mode"] == "rules_or_model"
    assert "en" in stage.params["intent_models"]
    # The stage's filter now carries the model.
    assert isinstance(reco.query_filter(stage.params), QueryFilter)
    project.status = "active"
    project.save(update_fields=["status"])
    late = SimpleUploadedFile("labels.jsonl", "\n".join(lines).encode())
    page = client.post(url, {"action": "train", "language": "en", "labelled": late}, follow=True)
    assert "before the project starts" in page.content.decode()


def test_returned_item_shows_the_marks_comments_and_the_previous_answer(
        make_project, people, client_for, committed):
    project = make_project(["孕妇能吃芹菜吗", "can pregnant women eat celery"],
                           params=TRAIN_ONLY)
    join(project, people)
    submit(people["ann1"], project, committed,
           lambda item: evidence(item, needle_of(item), answer="negative"))
    inspection = Inspection.objects.get()
    batches.inspection_claim(inspection_id=inspection.pk, checker=people["chk"])
    bad = inspection.sample[0]
    with committed():
        batches.inspection_submit(inspection_id=inspection.pk, checker=people["chk"],
                                  marks={bad: ["answer_incorrect"]}, verdict="return",
                                  comment="Read the whole evidence first.",
                                  item_comments={bad: "The evidence says yes."})
    client = client_for(people["ann1"])
    home = client.get(reverse("annotation:annotator_home")).content.decode()
    assert 'data-testid="returned-batches"' in home and "Read the whole evidence first." in home
    seen = 0
    while True:
        response = client.post(reverse("annotation:task_next"))
        if response["Location"].endswith(reverse("annotation:annotator_home")):
            break
        task = Assignment.objects.get(worker=people["ann1"], status="active")
        page = client.get(response["Location"]).content.decode()
        previous = task.item.submissions.get().payload
        assert 'data-testid="returned-banner"' in page and "accuracy" in page
        assert "Read the whole evidence first." in page
        start, end = previous["evidence"]
        assert f'id="ev-start" value="{start}"' in page and f'id="ev-end" value="{end}"' in page
        alternatives = previous["alternatives"]
        assert f'value="{alternatives["negative"]}"' in page
        assert re.search(r'value="negative" required data-testid="answer-negative"\s+checked',
                         page)
        if task.item_id == bad:
            assert "The answer is incorrect" in page and "The evidence says yes." in page
        else:
            assert "found nothing wrong" in page
        with committed():
            client.post(response["Location"], {
                "doc": str(previous["doc"]), "start": str(start), "end": str(end),
                **{f"alt_{k}": v for k, v in alternatives.items()}, "answer": "positive"})
        seen += 1
    assert seen == 2
    second = Inspection.objects.get(round=2)
    assert {s.payload["answer"] for s in Submission.objects.filter(assignment__round=2)} == {
        "positive"}
    assert second.batch.status == "inspection"


LONG_DOCUMENT_CHARS = 1500  # ReCO documents run to about 1,500 characters (top-10 retrieved)


def test_evidence_page_weight_and_render_time_with_ten_long_documents(
        make_project, people, client_for):
    """The page sends each document's text once, as text (the browser cuts it into
    selectable units): about the documents' own size, not an element per character."""
    import statistics
    import time

    texts = [(f"第{n}篇。" + QINCAI_PARAPHRASE * 40)[:LONG_DOCUMENT_CHARS] for n in range(10)]
    project = make_project(["孕妇能吃芹菜吗"], params=TRAIN_ONLY, documents={
        "孕妇能吃芹菜吗": [doc(f"long-{n}", text, f"文档 {n}") for n, text in enumerate(texts)]})
    join(project, people)
    client = client_for(people["ann1"])
    url = client.post(reverse("annotation:task_next"))["Location"]
    times, page = [], b""
    for _ in range(5):
        started = time.perf_counter()
        page = client.get(url).content
        times.append(time.perf_counter() - started)
    documents = Assignment.objects.get(worker=people["ann1"], status="active").item.data[
        "documents"]
    text_bytes = sum(len(d["text"].encode()) for d in documents)
    print(f"\nreco evidence page: {len(documents)} documents, {text_bytes:,} bytes of text, "
          f"page {len(page):,} bytes, render median {statistics.median(times) * 1000:.0f} ms")
    assert len(documents) == 10
    assert len(page) < text_bytes + 40_000  # the text once, plus the form around it


# What each automatic stage dropped and why ------------------------------------------------------

def test_every_automatic_stage_reports_what_it_dropped_and_why(make_project, people, committed,
                                                               run_reports, client_for,
                                                               admin_user):
    """Each automatic ReCO stage's last run: received, passed on, dropped by reason, notes;
    the project page and the job page show them."""
    from django.urls import reverse

    from collector.models import Job

    unretrieved = "is the moon made of cheese"  # a yes/no query the index has nothing for
    project = make_project([*QUERIES, unretrieved], params=TRAIN_ONLY)
    reports = run_reports(project)
    assert reports["reco_queries"] == (7, 7, {}, [])
    assert reports["reco_query_filter"] == (7, 6, {"not yes/no: wh_question": 1}, [])
    assert reports["reco_retrieve"] == (
        6, 5, {"no document retrieved from the corpus index": 1}, [])
    assert reports["reco_doc_filter"] == (
        5, 4, {"every retrieved document overlapped the query trivially": 1},
        ["documents: 4 kept, 3 dropped for trivial overlap (rule contains: 3)"])
    assert reports["reco_split"] == (4, 4, {}, ["train 4, dev 0, test 0"])
    assert "reco_final" not in reports  # nothing reached it yet

    page = client_for(admin_user).get(
        reverse("annotation:project_detail", args=[project.pk])).content.decode()
    assert "received 6, passed on 5" in page
    assert "dropped 1: no document retrieved from the corpus index" in page
    assert "documents: 4 kept, 3 dropped for trivial overlap (rule contains: 3)" in page
    job = Job.objects.filter(kind="stage_run", params__stage_id=project.stages.get(
        kind="reco_query_filter").pk).latest("id")
    job_page = client_for(admin_user).get(
        reverse("collector:job_detail", args=[job.pk])).content.decode()
    assert "Received 7, passed on 6." in job_page
    assert "Dropped 1: not yes/no: wh_question." in job_page

    # the last stage: one final record per accepted answer
    join(project, people)
    submit(people["ann1"], project, committed, lambda item: evidence(item, needle_of(item)))
    submit(people["ann2"], project, committed, lambda item: evidence(item, needle_of(item)))
    for inspection in Inspection.objects.filter(status="open"):
        batches.inspection_claim(inspection_id=inspection.pk, checker=people["chk"])
        with committed():
            batches.inspection_submit(inspection_id=inspection.pk, checker=people["chk"],
                                      marks={})
    records = Item.objects.filter(stage__kind="reco_final", status="done").count()
    assert records == 4
    received, passed, dropped, _ = run_reports(project)["reco_final"]
    assert received == passed >= 1 and dropped == {}


def test_a_project_whose_corpus_gave_no_query_says_so(make_project, client_for, admin_user):
    project = make_project([])
    page = client_for(admin_user).get(
        reverse_project(project)).content.decode()
    assert "Stage 1 (Import queries) passed nothing on" in page
    assert "received 0, passed on 0" in page
    assert "the project has no corpus" in page


def reverse_project(project):
    from django.urls import reverse

    return reverse("annotation:project_detail", args=[project.pk])
