"""A refused answer in the worker's language, for every stage kind worked by people: a
Chinese worker whose answer the kind refuses (empty, out of range, overlapping, too long,
a NUL character, a wrong choice...) reads why in Chinese on the task page (HTML form) and
in the API's JSON error. They read English before: the kinds' own checks, the NUL refusal
and the API parser's NUL error were English f-strings. The gold-items upload embeds a
kind's refusal of an expected answer, read in Chinese there too."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils.translation import override

from annotation import engine
from annotation.judgment_demo import references_upload, system_uploads
from annotation.models import Assignment, Item, Project
from annotation.roles import Role
from annotation.stages import Emit, reco
from annotation.stages import marco as marco_stages
from annotation.stages.judgment_import import judgment_import
from tests.annotation import test_marco, test_reco
from tests.annotation.test_gold import TRAINING, build, gold_line
from tests.factories import user_with_roles

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
#: What the NUL refusal reads in Chinese after the place it names.
NUL_ZH = "：包含 NUL 字符（U+0000），这不是文本"


def _page_errors(response) -> list[str]:
    """The refusals the task page lists (its ``errors`` box)."""
    assert response.status_code == 400, response.status_code
    box = re.search(r'data-testid="errors">(.*?)</ul>', response.content.decode(), re.S)
    return [html.unescape(e) for e in re.findall(r"<li>(.*?)</li>", box.group(1), re.S)]


def _api_errors(client, task: Assignment, payload: Any) -> list[str]:
    response = client.post(f"/api/v1/tasks/{task.pk}/submit/", {"payload": payload},
                           content_type="application/json", **ZH)
    assert response.status_code == 400, response.content
    return response.json()["errors"]


def _api_nul(client, task: Assignment, body: dict[str, Any]) -> str:
    """The API's refusal of a JSON body with a NUL character in ``body``'s first text."""
    text = json.dumps({"payload": body}).replace("\\u0001", "\\u0000")
    response = client.post(f"/api/v1/tasks/{task.pk}/submit/", text,
                           content_type="application/json", **ZH)
    assert response.status_code == 400, response.content
    return response.json()["detail"]


def _api_form_nul(client, task: Assignment, payload: dict[str, Any]) -> list[str]:
    """The API's refusal of a form whose ``payload`` (JSON text, as the pages post it)
    holds a NUL character (escaped, so no form field holds one)."""
    text = json.dumps(payload).replace("\\u0001", "\\u0000")
    response = client.post(f"/api/v1/tasks/{task.pk}/submit/", {"payload": text}, **ZH)
    assert response.status_code == 400, response.content
    return response.json()["errors"]


def _page(client, task: Assignment, form: dict[str, Any]) -> list[str]:
    return _page_errors(client.post(reverse("annotation:task_detail", args=[task.pk]), form,
                                    **ZH))


def _claimed(worker, project: Project, kind: str, role: Role | None = None) -> Assignment:
    task = engine.task_claim(worker=worker, project=project, role=role)
    while task is not None and task.stage.kind != kind:  # another kind's task first
        engine.task_release(assignment_id=task.pk, worker=worker)
        task = engine.task_claim(worker=worker, project=project, role=role)
    assert task is not None, f"{worker} got no {kind} task"
    return task


def _unchanged(task: Assignment) -> None:
    task.refresh_from_db()
    assert task.status == Assignment.Status.ACTIVE and not task.item.submissions.exists()


# MS MARCO ---------------------------------------------------------------------------------

@pytest.fixture
def marco(db, settings, monkeypatch, committed):
    """An active MS MARCO project (its retrieval stood in for) and its people."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    monkeypatch.setattr(marco_stages, "_retrieve_passages",
                        lambda project, text, k: test_marco.make_passages(k))
    people = {name: user_with_roles(name, Role.ANNOTATOR)
              for name in ("judge", "curator", "ed1", "ed2", "ed3", "ed4", "ed5")}
    people["chk"] = user_with_roles("chk", Role.CHECKER)
    project = engine.project_create(name="MARCO", recipe="marco",
                                    params={5: {"editors_per_query": 3}})
    for name, user in people.items():
        engine.project_member_add(project=project, user=user,
                                  role=Role.CHECKER if name == "chk" else Role.ANNOTATOR)
    Project.objects.filter(pk=project.pk).update(status="active")
    project.refresh_from_db()
    return project, people


def test_marco_judgment_refusals_in_chinese(marco, client_for, committed):
    project, people = marco
    test_marco.emit_queries(project, committed)
    task = _claimed(people["judge"], project, "marco_judge")
    client = client_for(people["judge"])
    assert _page(client, task, {"decision": "keep"}) == [
        "intent: 请从 informational, navigational, transactional 中选择一项"]
    assert _api_errors(client, task, {**test_marco.KEEP, "exclusions": "adult"}) == [
        "exclusions: 应为排除原因的列表"]
    assert _api_errors(client, task, {**test_marco.KEEP, "question_type": "OPINION"}) == [
        "question_type: 'OPINION' 不是 YES_NO, ENTITY, DESCRIPTION 之一"]
    assert _api_nul(client, task, {**test_marco.KEEP, "intent": "\u0001"}) == (
        "JSON 解析错误 - body['payload']['intent'] 包含 NUL 字符（\\u0000），任何字段都不接受")
    _unchanged(task)


def test_marco_curation_refusals_in_chinese(marco, client_for, committed):
    project, people = marco
    test_marco.judged(project, people, committed)
    task = _claimed(people["curator"], project, "marco_curate")
    client = client_for(people["curator"])
    assert _page(client, task, {"selected": ["1", "1"]}) == ["selected: 有段落被选了两次"]
    assert _page(client, task, {"selected": ["first"]}) == ["selected: 应为段落排名"]
    assert _api_errors(client, task, {"selected": [42]}) == ["selected: 没有排名为 42 的段落"]
    assert _api_errors(client, task, {"selected": [1], "conflict": "yes"}) == [
        "conflict: 应为 true 或 false"]
    assert _api_form_nul(client, task, {"selected": [1], "note": "see \u0001 1"}) == [
        "payload['note']" + NUL_ZH]
    _unchanged(task)


def test_marco_distillation_refusals_in_chinese(marco, client_for, committed):
    project, people = marco
    test_marco.curated(project, people, committed)  # a DESCRIPTION question
    task = _claimed(people["ed1"], project, "marco_distill")
    client = client_for(people["ed1"])
    assert _page(client, task, {"answer": "Children under 13 sit in the back.",
                                "yesno": "Yes"}) == ["yesno: 只有是非类问题才需要观点标签"]
    assert _api_errors(client, task, {"answer": "In the back.", "yesno": "Maybe"}) == [
        "yesno: 'Maybe' 不是 Yes, No, Depends 之一"]
    assert _api_errors(client, task, {"answer": "In the back.", "entities": "Paris"}) == [
        "entities: 应为实体名称的列表"]
    assert _api_errors(client, task, {"answer": ["In the back."]}) == ["answer: 应为文本"]
    assert _api_errors(client, task, {"answer": "In the back.", "entities": ["Paris"]}) == [
        "entities: 只有实体类问题才需要实体列表"]
    assert _api_form_nul(client, task, {"answer": "In the \u0001 back."}) == [
        "payload['answer']" + NUL_ZH]
    _unchanged(task)


def test_marco_review_refusals_in_chinese(marco, client_for, committed):
    """A checker's kind: the API is the annotators' (403 to a checker), so what the page
    cannot send is refused by the service, in the language active there."""
    project, people = marco
    test_marco.flagged_query(project, people, committed)  # answer 3 is flagged
    task = _claimed(people["chk"], project, "marco_review", role=Role.CHECKER)
    client = client_for(people["chk"])
    assert _page(client, task, {"note": "?"}) == ["decisions: 答案 3：请选择保留或丢弃"]
    assert _page(client, task, {"decision-2": "drop", "active_time_s": "later"}) == [
        "active_time_s: 'later' 不是秒数"]
    for payload, refused in [
        ({"decisions": ["drop"]}, "decisions: 应为每个被标记的答案给出保留或丢弃"),
        ({"decisions": {"2": "drop", "0": "drop"}}, "decisions: 答案 1 未被标记"),
        ({"decisions": {"2": "drop", "first": "drop"}}, "decisions: 未知答案 'first'"),
        ({"decisions": {"2": "drop"}, "note": 5}, "note: 应为文本"),
        ({"decisions": {"2": "drop"}, "note": "\x00"}, "payload['note']" + NUL_ZH),
    ]:
        with override("zh-hans"), pytest.raises(ValidationError) as caught:
            engine.task_submit(assignment_id=task.pk, worker=people["chk"], payload=payload)
        assert caught.value.messages == [refused]
    _unchanged(task)


# NewsQA ------------------------------------------------------------------------------------

def test_newsqa_question_refusals_in_chinese(newsqa_project, workers, client_for):
    worker = workers["questioner"]
    task = _claimed(worker, newsqa_project, "newsqa_question")
    client = client_for(worker)
    refused = _page(client, task, {"question": ["Why did the council vote for it?"]})
    assert refused == ["question 1: 不允许“为什么”问题：它们的答案不简短。"]
    assert _api_errors(client, task, {"questions": "Who opposed the plan?"}) == [
        "questions: 必须是问题文本的列表"]
    assert _api_errors(client, task, {"questions": ["Who opposed the plan?",
                                                    "Why did they vote?"]}) == [
        "question 2: 不允许“为什么”问题：它们的答案不简短。"]
    assert _api_form_nul(client, task, {"questions": ["Who opposed \u0001 the plan?"]}) == [
        "payload['questions'][0]" + NUL_ZH]
    _unchanged(task)


def _newsqa_item(project: Project, kind: str, source: str, data: dict[str, Any]) -> Item:
    document = project.corpus.documents.get(external_id="portvale-library")
    engine.items_emit(source_stage=project.stages.get(kind=source), emits=[
        Emit(kind=kind, key=f"portvale/{kind}", data=data, document_id=document.pk)])
    return Item.objects.get(stage__kind=kind, key=f"portvale/{kind}")


def test_newsqa_answer_refusals_in_chinese(newsqa_project, workers, client_for, committed):
    with committed():
        item = _newsqa_item(newsqa_project, "newsqa_answer", "newsqa_question",
                            {"question": "Who opposed the plan?"})
    task = _claimed(workers["ann1"], newsqa_project, "newsqa_answer")
    assert task.item_id == item.pk
    client = client_for(workers["ann1"])
    length = len(item.document.body)
    assert _page(client, task, {"payload": json.dumps({"spans": [[5, length + 9]]})}) == [
        f"spans[1]: [5, {length + 9}] 超出了文章范围（0..{length}）"]
    refused = _page(client, task, {"payload": "{spans"})
    assert len(refused) == 1 and refused[0].startswith("payload: 不是有效的 JSON（")
    assert _page(client, task, {"payload": "[1, 2]"}) == ["payload: 必须是一个 JSON 对象"]
    assert _page(client, task, {"payload": json.dumps({"spans": [[0, 4], [2, 9]]})}) == [
        "spans: [0, 4] 与 [2, 9] 重叠；答案的每一部分只选择一次"]
    assert _api_errors(client, task, {"spans": [[1]]}) == [
        "spans[1]: 应为 [start, end] 字符偏移量"]
    assert _api_nul(client, task, {"spans": [[0, 4]], "note": "\u0001"}) == (
        "JSON 解析错误 - body['payload']['note'] 包含 NUL 字符（\\u0000），任何字段都不接受")
    _unchanged(task)


def test_newsqa_validation_refusals_in_chinese(newsqa_project, workers, client_for,
                                               committed):
    with committed():
        _newsqa_item(newsqa_project, "newsqa_validate", "newsqa_agreement", {
            "question": "Who opposed the plan?",
            "unique_answers": [{"spans": [[206, 217]]}, {"no_answer": True}]})
    task = _claimed(workers["val1"], newsqa_project, "newsqa_validate")
    client = client_for(workers["val1"])
    expected = ["choice: 请在 2 个答案中选择一个，或选择“所有答案都很差”或“问题没有意义”"]
    assert _page(client, task, {"choice": "7"}) == expected
    assert _api_errors(client, task, {"choice": 9}) == expected
    assert _page(client, task, {"choice": "0", "active_time_s": "soon"}) == [
        "active_time_s: 'soon' 不是秒数"]
    _unchanged(task)


# ReCO ----------------------------------------------------------------------------------------

@pytest.fixture
def reco_people(db):
    people = {name: user_with_roles(name, Role.ANNOTATOR) for name in ("ann1", "ann2", "ann3")}
    people["chk"] = user_with_roles("chk", Role.CHECKER)
    return people


@pytest.fixture
def reco_project(db, settings, committed, monkeypatch, admin_user, reco_people):
    """``reco_project(queries, params)``: an active ReCO project, its automatic stages run."""
    settings.CELERY_TASK_ALWAYS_EAGER = True

    def make(queries: list[str], params: dict) -> Project:
        monkeypatch.setattr(reco.QueriesKind, "queries",
                            lambda self, project: test_reco.rows(queries))
        monkeypatch.setattr(reco, "_retrieve_documents", lambda project, text, k, max_chars=0:
                            test_reco.DOCUMENTS.get(text, [])[:k])
        project = engine.project_create(name="ReCO", recipe="reco", params=params,
                                        user=admin_user)
        with committed():
            engine.project_start(project=project, actor=admin_user)
        test_reco.join(project, reco_people)
        return project

    return make


def _evidence_form(task: Assignment, **changes: str) -> dict[str, str]:
    payload = test_reco.evidence(task.item, test_reco.needle_of(task.item))
    start, end = payload["evidence"]
    alternatives = payload["alternatives"]
    return {"doc": str(payload["doc"]), "start": str(start), "end": str(end),
            **{f"alt_{k}": v for k, v in alternatives.items()}, "answer": "positive",
            **changes}


@pytest.mark.parametrize(("kind", "params"), [
    ("reco_evidence", {**test_reco.TRAIN_ONLY, 6: {"batch_size": 2}}),
    ("reco_test_evidence", test_reco.TEST_ONLY),
])
def test_reco_evidence_refusals_in_chinese(reco_project, reco_people, client_for, kind,
                                           params):
    project = reco_project(["孕妇能吃芹菜吗"], params)
    task = _claimed(reco_people["ann1"], project, kind)
    client = client_for(reco_people["ann1"])
    assert _page(client, task, _evidence_form(task, alt_negative="能")) == [
        "alternatives: 三个候选答案必须互不相同"]
    length = len(task.item.data["documents"][0]["text"])
    assert _page(client, task, _evidence_form(task, end="9999")) == [
        f"evidence：[0, 9999] 超出了第 1 篇文档的范围（0..{length}）"]
    payload = test_reco.evidence(task.item, test_reco.needle_of(task.item))
    payload["alternatives"] = {**payload["alternatives"], "uncertain": "说不\u0001准"}
    assert _api_form_nul(client, task, payload) == [
        "payload['alternatives']['uncertain']" + NUL_ZH]
    assert _api_nul(client, task, payload) == (
        "JSON 解析错误 - body['payload']['alternatives']['uncertain'] 包含 NUL 字符（\\u0000），"
        "任何字段都不接受")
    _unchanged(task)


def _test_labels(reco_project, reco_people, committed) -> Project:
    """Two test queries labelled twice: the two labels of the first agree (a third
    annotator chooses the evidence), those of the second do not (a checker adjudicates)."""
    project = reco_project(["can pregnant women eat celery", "孕妇能吃芹菜吗"],
                           test_reco.TEST_ONLY)

    def first(item):
        return test_reco.evidence(item, test_reco.needle_of(item))

    def second(item):
        text = item.data["documents"][0]["text"]
        answer = "negative" if item.data["query"] == "孕妇能吃芹菜吗" else "positive"
        return test_reco.evidence(item, text[-12:], answer=answer)

    assert test_reco.submit(reco_people["ann1"], project, committed, first) == 2
    assert test_reco.submit(reco_people["ann2"], project, committed, second) == 2
    return project


@pytest.mark.parametrize(("kind", "name", "role"), [
    ("reco_evidence_choice", "ann3", None), ("reco_adjudicate", "chk", Role.CHECKER)])
def test_reco_choice_refusals_in_chinese(reco_project, reco_people, client_for, committed,
                                         kind, name, role):
    project = _test_labels(reco_project, reco_people, committed)
    task = _claimed(reco_people[name], project, kind, role=role)
    client = client_for(reco_people[name])
    assert _page(client, task, {"choice": "5"}) == ["choice: 请在 2 个标注中选择一个"]
    assert _page(client, task, {"choice": "0", "active_time_s": "-1"}) == [
        "active_time_s: -1 不是时间：必须是有限的秒数（0 或更多）"]
    if role is None:  # the API is the annotators'
        assert _api_errors(client, task, {"choice": 2}) == ["choice: 请在 2 个标注中选择一个"]
        assert _api_nul(client, task, {"choice": 0, "why": "\u0001"}) == (
            "JSON 解析错误 - body['payload']['why'] 包含 NUL 字符（\\u0000），任何字段都不接受")
    _unchanged(task)


# Judgment ----------------------------------------------------------------------------------

def test_judgment_rating_refusals_in_chinese(db, admin_user, committed, settings, client_for):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    project = engine.project_create(name="Judgment", recipe="judgment", language="zh",
                                    user=admin_user, params={1: {"yes_no": 2, "entity": 2,
                                                                 "description": 2, "seed": 5}})
    judgment_import(project=project, references=references_upload(),
                    predictions=system_uploads())
    rater = user_with_roles("rater", Role.ANNOTATOR)
    engine.project_member_add(project=project, user=rater, role=Role.ANNOTATOR)
    with committed():
        engine.project_start(project=project, actor=admin_user)
    task = _claimed(rater, project, "judgment_rate")
    client = client_for(rater)
    assert _page(client, task, {"score": "6"}) == ["score: 请选择 1 到 5 的分数（收到的是 6）"]
    assert _api_errors(client, task, {"score": "great"}) == [
        "score: 请选择 1 到 5 的分数（收到的是 'great'）"]
    assert _page(client, task, {"score": "4", "active_time_s": "inf"}) == [
        "active_time_s: inf 不是时间：必须是有限的秒数（0 或更多）"]
    assert _api_nul(client, task, {"score": 4, "comment": "\u0001"}) == (
        "JSON 解析错误 - body['payload']['comment'] 包含 NUL 字符（\\u0000），任何字段都不接受")
    _unchanged(task)


# The gold-items upload ------------------------------------------------------------------------

def test_the_gold_upload_names_the_kinds_refusal_of_an_expected_answer_in_chinese(
        news_corpus, workers, admin_user, committed, settings, client_for):
    """The kind's refusal is embedded in the upload's (``gold.jsonl: line 2: field
    'expected': …``); the page shows it in the admin's language, the whole line Chinese."""
    _, answer = build(news_corpus, workers, admin_user, committed, settings)
    bad = json.loads(gold_line(*TRAINING[1]))
    bad["expected"] = {"spans": [[1]]}
    text = "\n".join([gold_line(*TRAINING[0]), json.dumps(bad),
                      json.dumps({**bad, "key": "out", "expected": {"spans": [[0, 99999]]}})])
    page = client_for(admin_user).post(
        reverse("annotation:stage_gold", args=[answer.pk]),
        {"action": "import", "purpose": "check",
         "file": SimpleUploadedFile("gold.jsonl", text.encode())}, **ZH)
    assert page.status_code == 400
    shown = html.unescape(page.content.decode())
    assert "gold.jsonl：第 2 行：字段 'expected'：spans[1]: 应为 [start, end] 字符偏移量" in shown
    length = len(news_corpus.documents.get(external_id="portvale-library").body)
    assert (f"gold.jsonl：第 3 行：字段 'expected'：spans[1]: [0, 99999] 超出了文章范围"
            f"（0..{length}）") in shown
    assert "character offsets" not in shown and "is outside the article" not in shown
