"""Forms sent by hand (a word, an empty value or a number no database holds where an id
goes; an amount too large to be money): a 404 or a message that says what is wrong, never
a server error, and nothing written."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.http import QueryDict
from django.urls import reverse

from annotation import studies
from annotation.http import posted_id
from annotation.models import Bonus, Study

NOT_IDS = ["", "abc", "0", "-3", "1.5", "²", "99999999999999999999999"]


@pytest.mark.parametrize("value", NOT_IDS)
def test_an_id_that_is_none_is_not_found(newsqa_project, admin_user, workers, client_for,
                                         value):
    project = newsqa_project
    study = studies.study_create(project=project, platform="prolific", completion_code="C0DE1")
    admin = client_for(admin_user)
    for url, data in [
        (reverse("annotation:study_action", args=[project.pk]),
         {"action": "close", "study": value}),
        (reverse("annotation:project_action", args=[project.pk]),
         {"action": "params", "stage": value}),
        (reverse("annotation:release_action", args=[project.pk]),
         {"action": "publish", "release": value}),
        (reverse("annotation:release_action", args=[project.pk]),
         {"action": "rebuild", "release": value}),
        (reverse("annotation:project_worker_standing", args=[project.pk, workers["ann1"].pk]),
         {"action": "resume", "stage": value}),
    ]:
        response = admin.post(url, data)
        assert response.status_code == 404, (url, data, response.status_code)
    assert Study.objects.get(pk=study.pk).status == Study.Status.OPEN
    if value:  # an empty project means "any project"
        claimed = client_for(workers["ann1"]).post(reverse("annotation:task_next"),
                                                   {"project": value})
        assert claimed.status_code == 404


def test_posted_ids_are_whole_numbers_a_bigint_holds():
    assert [posted_id(v) for v in NOT_IDS] == [None] * len(NOT_IDS)
    assert [posted_id(v) for v in ("7", " 12 ", str(2**63 - 1))] == [7, 12, 2**63 - 1]
    assert posted_id(None) is None and posted_id(5) is None  # only what a form sends


@pytest.mark.parametrize("amount", ["1e400", "1e8", "NaN", "-Infinity", "0.001"])
def test_a_bonus_that_is_no_amount_of_money_is_refused(newsqa_project, admin_user, workers,
                                                       client_for, amount):
    response = client_for(admin_user).post(
        reverse("annotation:project_pay", args=[newsqa_project.pk]),
        {"action": "bonus", "username": "ann1", "amount": amount, "reason": "x"},
        follow=True)
    assert response.status_code == 200
    page = response.content.decode()
    assert "amount: " in page and ("not a number" in page or "at most two decimals" in page)
    assert not Bonus.objects.exists()


@pytest.mark.parametrize("path", [
    "/api/v1/tasks/{id}/", "/tasks/{id}/", "/api/v1/projects/{id}/", "/manage/items/{id}/",
])
def test_an_id_in_a_path_beyond_a_bigint_is_not_found(client_for, admin_user, workers, path):
    """The task paths went on to the database's raw statements: an overflow, a 500."""
    user = workers["ann1"] if "tasks" in path else admin_user
    client = client_for(user)
    for number in (2**63, 2**64, 10**30):
        assert client.get(path.format(id=number)).status_code == 404
    assert client.get(path.format(id=2**63 - 1)).status_code in (403, 404)
    submit = client_for(workers["ann1"]).post(f"/api/v1/tasks/{2**63}/submit/",
                                             {"payload": {}}, content_type="application/json")
    assert submit.status_code == 404


@pytest.mark.parametrize("value", ["²", "٣", "³"])
def test_digits_that_are_not_ascii_are_no_numbers_on_the_task_forms(value):
    """``str.isdigit`` takes them; ``int`` refused "²" (a 500) and read "٣" as 3."""
    from annotation.http import whole_number
    from annotation.stages import stage_kind

    assert whole_number(value) is None
    with pytest.raises(ValidationError, match="score: choose a score from 1 to 5"):
        stage_kind("judgment_rate").clean_payload(None, {"score": value})
    assert stage_kind("judgment_rate").clean_payload(None, {"score": " 4 "}) == {"score": 4}
    assert stage_kind("newsqa_validate").payload_from_form(None, QueryDict(f"choice={value}")) \
        == {}
    with pytest.raises(ValidationError, match="selected: passage ranks expected"):
        stage_kind("marco_curate").payload_from_form(None, QueryDict(f"selected={value}"))


def test_a_nul_character_is_refused_wherever_it_would_be_stored(
        newsqa_project, admin_user, workers, client_for, committed):
    """PostgreSQL's text and jsonb cannot hold one: a form field, an answer's JSON, a JSON
    body and a stage parameter each say so (400) before anything is written."""
    from annotation import engine
    from annotation.models import Stage, Submission
    client = client_for(workers["questioner"])
    task = engine.task_claim(worker=workers["questioner"], project=newsqa_project)
    page = client.post(reverse("annotation:task_detail", args=[task.pk]),
                       {"question": ["Who opposed\x00 the plan?"]})
    assert page.status_code == 400 and not Submission.objects.exists()
    with pytest.raises(ValidationError, match=r"payload\['questions'\]\[0\]: holds a NUL"):
        engine.task_submit(assignment_id=task.pk, worker=workers["questioner"],
                           payload={"questions": ["Who opposed\x00 the plan?"]})
    api = client_for(workers["questioner"])
    body = '{"payload": {"questions": ["Who opposed\\u0000 the plan?"]}}'
    refused = api.post(f"/api/v1/tasks/{task.pk}/submit/", body,
                       content_type="application/json")
    assert refused.status_code == 400
    assert "body['payload']['questions'][0] contains a NUL" in refused.json()["detail"]
    # An escaped backslash before "u0000" is text, not a NUL: read as it is.
    kept = api.post(f"/api/v1/tasks/{task.pk}/submit/",
                    '{"payload": {"questions": ["Who wrote \\\\u0000?"]}}',
                    content_type="application/json")
    assert kept.status_code == 201, kept.content
    assert Submission.objects.get().payload == {"questions": ["Who wrote \\u0000?"]}
    stage = engine.project_create(name="ReCO", recipe="reco").stages.get(
        kind="reco_query_filter")
    with pytest.raises(ValidationError, match=r"the parameter at \['blocklists'\]\['en'\]\[0\] "
                                              "holds a NUL character"):
        engine.stage_params_update(stage=stage, params={"blocklists": {"en": ["sex\x00"]}})
    assert Stage.objects.get(pk=stage.pk).params == stage.params
