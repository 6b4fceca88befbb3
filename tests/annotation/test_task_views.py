"""Task pages and API: role checks, independence of answerers, keyboard-first pages."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import engine
from annotation.models import Assignment, Item, Submission
from annotation.roles import Role
from tests.annotation.test_newsqa_flow import claim_item
from tests.factories import held_since


def _questions_written(project, workers, committed):
    task = engine.task_claim(worker=workers["questioner"], project=project)
    with committed():
        engine.task_submit(assignment_id=task.pk, worker=workers["questioner"],
                           payload={"questions": ["Who opposed the plan?"]})
    return Item.objects.get(stage__kind="newsqa_answer")


def test_my_tasks_shows_projects_next_key_and_done_today(client_for, newsqa_project, workers):
    page = client_for(workers["ann1"]).get(reverse("annotation:annotator_home")).content.decode()
    assert "NewsQA test" in page
    assert 'data-testid="next-task"' in page and "<kbd>n</kbd>" in page
    assert 'data-testid="done-today">0<' in page


def test_next_task_opens_the_question_page_and_submits_from_the_form(
    client_for, newsqa_project, workers, committed
):
    client = client_for(workers["questioner"])
    response = client.post(reverse("annotation:task_next"))
    assert response.status_code == 302
    page = client.get(response["Location"])
    content = page.content.decode()
    assert "Portvale council votes" in content or "Elm Street bridge" in content
    assert "city council of Portvale voted" not in content  # no article for questioners
    assert "Guidelines" in content and "how" in content.lower()
    # A refused question comes back with the explanation and the text kept, next to it:
    # the second question's reason under the second question (it was under the first).
    refused = client.post(response["Location"], {"question": ["Why is the sky blue today?"]})
    assert refused.status_code == 400
    assert "Why" in refused.content.decode() and "not allowed" in refused.content.decode()
    refused = client.post(response["Location"],
                          {"question": ["Who opposed the plan?", "Why is the sky blue today?"]})
    page = refused.content.decode()
    second = page.split('data-testid="question-2"', 1)[1].split('data-testid="question-3"')[0]
    assert 'data-testid="field-error-question-2"' in second and "not allowed" in second
    first = page.split('data-testid="question-1"', 1)[1].split('data-testid="question-2"')[0]
    assert "field-error" not in first
    # The worker held the task 30 s, of which the page measured 12 active.
    held_since(Assignment.objects.get(worker=workers["questioner"], status="active"),
               seconds=30)
    with committed():
        done = client.post(response["Location"], {"question": ["Who opposed the plan?", ""],
                                                  "active_time_s": "12"})
    assert done.status_code == 302
    submission = workers["questioner"].submissions.get()
    assert submission.payload == {"questions": ["Who opposed the plan?"]}
    assert submission.active_time_s == 12.0


def test_a_task_whose_time_ran_out_does_not_open_as_workable(
    client_for, newsqa_project, workers
):
    """Before the lease job puts it back, the page said nothing and took the work, which
    the submit then refused."""
    from datetime import timedelta

    from django.utils import timezone

    client = client_for(workers["questioner"])
    location = client.post(reverse("annotation:task_next"))["Location"]
    task = Assignment.objects.get(worker=workers["questioner"], status="active")
    Assignment.objects.filter(pk=task.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1))
    page = client.get(location, follow=True)
    assert page.redirect_chain[0] == (reverse("annotation:annotator_home"), 302)
    assert "Your time for this task ran out; take the next task." in page.content.decode()


def test_each_saved_task_says_once_whether_another_follows(
    client_for, newsqa_project, workers, committed
):
    """"Here is your next task" while there is one; after the last, only that it was the
    last (not both)."""
    client = client_for(workers["questioner"])
    location = client.post(reverse("annotation:task_next"))["Location"]
    said = []
    while "/tasks/" in location and location != reverse("annotation:annotator_home"):
        with committed():
            done = client.post(location, {"question": ["Who opposed the plan?"]}, follow=True)
        said.append([str(m) for m in done.context["messages"]])
        location = done.redirect_chain[-1][0]
    assert len(said) == Item.objects.filter(stage__kind="newsqa_question").count() >= 2
    assert said[:-1] == [["Saved. Here is your next task."]] * (len(said) - 1)
    assert said[-1] == ["Saved. That was the last task for now."]


def test_question_check_answers_as_the_worker_types(client_for, newsqa_project, workers):
    client = client_for(workers["questioner"])
    task = engine.task_claim(worker=workers["questioner"], project=newsqa_project)
    url = reverse("annotation:question_check", args=[task.pk])
    highlights = task.item.document.highlights[0]
    refused = client.post(url, {"question": highlights + "?"}, HTTP_HX_REQUEST="true")
    assert "come from the highlights" in refused.content.decode()
    fine = client.post(url, {"question": "Who paid for the new deck?"}, HTTP_HX_REQUEST="true")
    assert "Fine" in fine.content.decode()
    other = client_for(workers["ann1"]).post(url, {"question": "x"})
    assert other.status_code == 403


def test_answer_page_never_shows_other_answers(client_for, newsqa_project, workers, committed):
    item = _questions_written(newsqa_project, workers, committed)
    first = claim_item(workers["ann1"], newsqa_project, item)
    with committed():
        engine.task_submit(assignment_id=first.pk, worker=workers["ann1"],
                           payload={"spans": [[_at(item, "Dario Weiss"),
                                               _at(item, "Dario Weiss") + 11]]})
    second = claim_item(workers["ann2"], newsqa_project, item)
    client = client_for(workers["ann2"])
    page = client.get(reverse("annotation:task_detail", args=[second.pk])).content.decode()
    assert 'data-s="' in page and "Who opposed the plan?" in page
    assert "ann1" not in page and "sourcerAnswers" not in page
    api = APIClient()
    api.force_authenticate(workers["ann2"])
    data = api.get(reverse("api_task_detail", args=[second.pk])).json()
    assert set(data["task"]) == {"question", "headline", "lead", "tokens"}
    assert "Dario" in json.dumps(data["task"]["tokens"])  # the article, but no answers
    # Another worker's task is not reachable by page or API.
    assert client.get(reverse("annotation:task_detail", args=[first.pk])).status_code == 403
    assert api.get(reverse("api_task_detail", args=[first.pk])).status_code == 403
    # The questioner is never offered this article's questions.
    offered = engine.task_claim(worker=workers["questioner"], project=newsqa_project)
    assert offered is None or offered.item.document_id != item.document_id


def _at(item, phrase):
    return item.document.body.index(phrase)


def test_api_round_trip_with_validation_errors(newsqa_project, workers, committed):
    item = _questions_written(newsqa_project, workers, committed)
    api = APIClient()
    api.force_authenticate(workers["ann1"])
    task = api.post(reverse("api_task_next"), {"project": newsqa_project.pk}, format="json")
    assert task.status_code == 200
    while task.json()["kind"] != "newsqa_answer":
        api.post(reverse("api_task_release", args=[task.json()["id"]]))
        task = api.post(reverse("api_task_next"), format="json")
    pk = task.json()["id"]
    bad = api.post(reverse("api_task_submit", args=[pk]),
                   {"payload": {"spans": [[0, 10**6]]}}, format="json")
    assert bad.status_code == 400
    assert "outside the article" in bad.json()["errors"][0]
    start = _at(item, "Dario Weiss")
    ok = api.post(reverse("api_task_submit", args=[pk]),
                  {"payload": {"spans": [[start, start + 11]]}, "active_time_s": 3},
                  format="json")
    assert ok.status_code == 201 and "next" not in ok.json()  # not asked for: not claimed
    assert not Assignment.objects.filter(worker=workers["ann1"], status="active").exists()
    again = api.post(reverse("api_task_submit", args=[pk]),
                     {"payload": {"no_answer": True}}, format="json")
    assert again.status_code == 409
    # Another worker's task: 403; no such task: a JSON 404; nothing written either way.
    other = APIClient()
    other.force_authenticate(workers["ann2"])
    theirs = other.post(reverse("api_task_submit", args=[pk]),
                        {"payload": {"no_answer": True}}, format="json")
    assert theirs.status_code == 403 and "not yours" in theirs.json()["detail"]
    missing = other.post(reverse("api_task_submit", args=[pk + 10**6]),
                         {"payload": {"no_answer": True}}, format="json")
    assert missing.status_code == 404 and "does not exist" in missing.json()["detail"]
    assert Submission.objects.filter(assignment_id=pk).count() == 1


def test_an_api_submit_retried_after_its_answer_was_lost_gets_the_first_ones_answer(
        newsqa_project, workers):
    """A script whose submit timed out after the server recorded it sends it again: the
    same payload is answered 200 with the submission the first made (and with ``next`` the
    task the first claimed, not a second one); nothing is recorded twice. Another payload
    for the submitted task is still a 409."""
    api = APIClient()
    api.force_authenticate(workers["questioner"])
    payload = {"questions": [" Who opposed the plan? "]}
    pk = api.post(reverse("api_task_next"), {"project": newsqa_project.pk},
                  format="json").json()["id"]
    first = api.post(reverse("api_task_submit", args=[pk]), {"payload": payload, "next": True},
                     format="json")
    assert first.status_code == 201, first.content
    held = first.json()["next"]["id"]
    for _ in range(2):
        retry = api.post(reverse("api_task_submit", args=[pk]),
                         {"payload": payload, "next": True}, format="json")
        assert retry.status_code == 200, retry.content
        assert retry.json()["submission"] == first.json()["submission"]
        assert retry.json()["payload"] == {"questions": ["Who opposed the plan?"]}
        assert retry.json()["next"]["id"] == held
    plain = api.post(reverse("api_task_submit", args=[pk]), {"payload": payload},
                     format="json")
    assert plain.status_code == 200 and "next" not in plain.json()
    other = api.post(reverse("api_task_submit", args=[pk]),
                     {"payload": {"questions": ["Who backed the plan?"]}}, format="json")
    assert other.status_code == 409 and "already submitted" in other.json()["errors"][0]
    assert Submission.objects.filter(assignment_id=pk).count() == 1
    assert list(Assignment.objects.filter(worker=workers["questioner"], status="active")
                .values_list("pk", flat=True)) == [held]
    # Someone else sending the same answer to that task is still refused.
    ann = APIClient()
    ann.force_authenticate(workers["ann1"])
    assert ann.post(reverse("api_task_submit", args=[pk]), {"payload": payload},
                    format="json").status_code == 403


def test_an_api_submit_in_a_form_takes_its_payload_as_json_text(newsqa_project, workers):
    """The schema offers the submit as a form too: ``payload`` is then the JSON text of
    the answer, as the task pages post it (it was read as an empty object, refused with the
    kind's message about a field the client had sent); text that is not a JSON object is a
    400 naming ``payload``."""
    api = APIClient()
    api.force_authenticate(workers["questioner"])
    pk = api.post(reverse("api_task_next"), {"project": newsqa_project.pk},
                  format="json").json()["id"]
    url = reverse("api_task_submit", args=[pk])
    for bad in ("Who opposed the plan?", '{"questions": NaN}', '["Who?"]'):
        refused = api.post(url, {"payload": bad})
        assert refused.status_code == 400 and list(refused.json()) == ["payload"], bad
    for encoding in ("multipart", "urlencoded"):  # the first is refused as already in
        body = {"payload": json.dumps({"questions": ["Who opposed the plan?"]}),
                "active_time_s": "0"}
        if encoding == "urlencoded":
            sent = api.post(url, urlencode(body),
                            content_type="application/x-www-form-urlencoded")
            assert sent.status_code == 200, sent.content  # the same answer again
        else:
            sent = api.post(url, body, format="multipart")
            assert sent.status_code == 201, sent.content
        assert sent.json()["payload"] == {"questions": ["Who opposed the plan?"]}
    assert Submission.objects.filter(assignment_id=pk).count() == 1


def test_api_submit_with_next_claims_the_next_task_in_the_same_request(newsqa_project,
                                                                       workers):
    api = APIClient()
    api.force_authenticate(workers["questioner"])
    questions = Item.objects.filter(stage__project=newsqa_project, stage__kind="newsqa_question")
    assert questions.count() >= 2
    payload = {"questions": ["Who opposed the plan?"]}

    def active():
        return list(Assignment.objects.filter(worker=workers["questioner"],
                                              status=Assignment.Status.ACTIVE))

    # An invalid answer leaves the task held.
    task = api.post(reverse("api_task_next"), {"project": newsqa_project.pk}, format="json")
    pk = task.json()["id"]
    bad = api.post(reverse("api_task_submit", args=[pk]),
                   {"payload": {"questions": []}, "next": True}, format="json")
    assert bad.status_code == 400
    assert [a.pk for a in active()] == [pk]
    # A refused submit claims nothing, whatever it asked for. (Checked with no task held: a
    # worker holding one would get that one back from a claim, which could not be seen.)
    ok = api.post(reverse("api_task_submit", args=[pk]), {"payload": payload}, format="json")
    assert ok.status_code == 201 and active() == []
    again = api.post(reverse("api_task_submit", args=[pk]),
                     {"payload": {"questions": ["Who backed the plan?"]}, "next": True},
                     format="json")
    assert again.status_code == 409
    assert active() == []  # questions are left, so a claim would have held one

    # With `next`: each answer brings the next question task of the project, claimed for
    # this worker as /tasks/next/ would, until none is left: then null.
    task = api.post(reverse("api_task_next"), {"project": newsqa_project.pk}, format="json")
    pk = task.json()["id"]
    done = 1  # the question answered above, without `next`
    while True:
        ok = api.post(reverse("api_task_submit", args=[pk]),
                      {"payload": payload, "next": True}, format="json")
        assert ok.status_code == 201, ok.content
        done += 1
        body = ok.json()
        assert body["payload"] == payload and "submission" in body
        assert Submission.objects.get(pk=body["submission"]).assignment_id == pk
        if body["next"] is None:
            break
        assert body["next"]["project"] == newsqa_project.name
        assert body["next"]["kind"] == "newsqa_question" and body["next"]["task"]
        pk = body["next"]["id"]
        assert [a.pk for a in active()] == [pk]
    assert done == questions.count() and active() == []
    assert api.post(reverse("api_task_next"), {"project": newsqa_project.pk},
                    format="json").status_code == 204


@pytest.mark.parametrize("name", ["api_task_next"])
def test_checkers_and_anonymous_cannot_take_tasks(checker, name):
    api = APIClient()
    assert api.post(reverse(name)).status_code == 401
    api.force_authenticate(checker)
    refused = api.post(reverse(name))
    assert refused.status_code == 403
    assert refused.json() == {
        "detail": "Your account does not have the role this endpoint needs."}
    refused = api.post(reverse(name), HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert refused.json() == {"detail": "您的账号没有此接口所需的角色。"}


def test_project_pages_are_admin_only_and_show_the_dashboard(
    client_for, newsqa_project, workers, admin_user, checker
):
    url = reverse("annotation:project_detail", args=[newsqa_project.pk])
    assert client_for(workers["ann1"]).get(url).status_code == 403
    assert client_for(checker).get(url).status_code == 403
    page = client_for(admin_user).get(url).content.decode()
    assert 'data-testid="plot-stages"' in page and "<rect" in page
    assert "paper: 43.2%" in page and "paper: 86.0%" in page
    api = APIClient()
    api.force_authenticate(admin_user)
    data = api.get(reverse("api_project_detail", args=[newsqa_project.pk])).json()
    assert [s["kind"] for s in data["stages"]][:2] == ["newsqa_articles", "newsqa_split"]
    api.force_authenticate(workers["ann1"])
    assert api.get(reverse("api_project_detail", args=[newsqa_project.pk])).status_code == 403


def test_admin_creates_a_project_and_edits_parameters_before_start(
    client_for, admin_user, news_corpus
):
    client = client_for(admin_user)
    response = client.post(reverse("annotation:project_create"), {
        "name": "Fresh", "recipe": "newsqa", "corpus": news_corpus.pk,
    })
    assert response.status_code == 302
    from annotation.models import Project

    project = Project.objects.get(name="Fresh")
    stage = project.stages.get(kind="newsqa_answer")
    from tests.annotation.test_stage_params import posted_form

    action = reverse("annotation:project_action", args=[project.pk])
    client.post(action, posted_form(stage, {"answers_per_question": "3"}))
    stage.refresh_from_db()
    assert stage.params["answers_per_question"] == 3
    client.post(action, posted_form(stage, {"answers_per_question": '"x"'}))
    stage.refresh_from_db()
    assert stage.params["answers_per_question"] == 3


def test_article_tokens_are_the_words_and_punctuation_with_offsets_made_once():
    """``article_tokens`` reads as the list of token dicts (index, start, end, text, the
    text up to the next token), holds its JSON for the API, and is made once per article."""
    import re

    from annotation.stages.newsqa import article_tokens

    body = ('  Costs rose 12,345 dollars in 2026 & "prices" <b>doubled</b>\n\n'
            "O'Neil said: été \U0001F600 -- a record.\u2028Tabs\there. ")
    matches = list(re.finditer(r"\w+|[^\w\s]", body))
    expected = [{"i": n, "s": m.start(), "e": m.end(), "t": m.group(),
                 "after": body[m.end():matches[n + 1].start() if n + 1 < len(matches)
                               else len(body)]}
                for n, m in enumerate(matches)]
    tokens = article_tokens(body)
    assert len(tokens) == len(expected) == 35
    assert list(tokens) == expected and tokens == expected and tokens.tolist() == expected
    assert tokens[0] == expected[0] and tokens[-1] == expected[-1] and tokens[-1]["after"] == " "
    assert tokens[3:7] == expected[3:7] and tokens[::10] == expected[::10]
    for beyond in (len(expected), -len(expected) - 1):
        with pytest.raises(IndexError):
            tokens[beyond]
    assert json.loads(tokens.json) == expected
    assert body.lstrip() == "".join(t["t"] + t["after"] for t in tokens)
    assert article_tokens(body) is tokens
    assert tokens != expected[:-1] and article_tokens(body + "x") != tokens


def test_article_spans_are_the_template_loops_output_and_give_the_body_back():
    """``token_spans`` renders what the template loop did (escaping, no localized numbers),
    and the page's text is the article verbatim."""
    import html as html_module
    import re

    from django.template import Context, Template

    from annotation.stages.newsqa import article_tokens
    from annotation.templatetags.crowdqa_tasks import token_spans

    body = ('Costs rose 12,345 dollars in 2026 & "prices" <b>doubled</b>\n\n'
            "O'Neil said: it's 1000000 -- a record.  Tabs\there.")
    tokens = article_tokens(body)
    loop = Template(
        "{% load l10n %}{% localize off %}{% for t in tokens %}<span class=\"tok\" "
        'data-i="{{ t.i }}" data-s="{{ t.s }}" data-e="{{ t.e }}">{{ t.t }}</span>'
        "{{ t.after }}{% endfor %}{% endlocalize %}").render(Context({"tokens": tokens}))
    assert token_spans(tokens) == loop
    rendered = Template("{% load crowdqa_tasks %}{{ tokens|token_spans }}").render(
        Context({"tokens": tokens}))
    assert rendered == loop
    assert "<b>" not in rendered and "&lt;" in rendered and "&quot;" in rendered
    assert html_module.unescape(re.sub(r"<[^>]+>", "", rendered)) == body


def test_a_second_click_on_submit_goes_to_the_next_task_the_first_one_gave(
    client_for, newsqa_project, workers, committed
):
    """A double click (or a resend) posted the form twice: the second post found the task
    submitted and sent the worker home with an error, away from the task the first post
    had claimed for them."""
    client = client_for(workers["questioner"])
    location = client.post(reverse("annotation:task_next"))["Location"]
    with committed():
        first = client.post(location, {"question": ["Who opposed the plan?"]})
    assert first.status_code == 302 and first["Location"] != location
    again = client.post(location, {"question": ["Who opposed the plan?"]}, follow=True)
    assert again.redirect_chain[0] == (first["Location"], 302)
    assert [str(m) for m in again.context["messages"]][-1] == "Saved. Here is your next task."
    assert again.status_code == 200 and 'id="task-form"' in again.content.decode()
    assert workers["questioner"].submissions.count() == 1
    assert Assignment.objects.filter(worker=workers["questioner"], status="active").count() == 1


def test_a_second_click_on_the_last_tasks_submit_says_it_was_saved(
    client_for, newsqa_project, workers, committed
):
    """A double tap on the last task's Submit: the first post saved it and no task
    followed, and the second told the worker "this task is already submitted" as an error,
    as if the answer were lost. It says it was saved (and, when the resent answer differs,
    that the first one is kept and where to correct it)."""
    client = client_for(workers["questioner"])
    location = client.post(reverse("annotation:task_next"))["Location"]
    home = reverse("annotation:annotator_home")
    while True:
        with committed():
            done = client.post(location, {"question": ["Who opposed the plan?"]})
        if done["Location"] == home:
            break
        location = done["Location"]
    submitted = workers["questioner"].submissions.count()
    again = client.post(location, {"question": ["Who opposed the plan?"]}, follow=True)
    assert again.redirect_chain[0] == (home, 302)
    said = [str(m) for m in again.context["messages"]]
    assert said[-1] == "Saved. That was the last task for now.", said
    other = client.post(location, {"question": ["Who argued for the roads?"]}, follow=True)
    assert [str(m) for m in other.context["messages"]][-1] == (
        "This task was already submitted with a different answer, which is kept. Correct it "
        "under “Your recent answers” while its item waits for others.")
    assert workers["questioner"].submissions.count() == submitted


def test_giving_back_a_task_no_longer_held_says_so_instead_of_403(
    client_for, newsqa_project, workers, committed
):
    """"I can't do this task" clicked twice, or after the back button from a submitted task,
    was a 403 page (and a 403 in the API, where a submit says 409)."""
    client = client_for(workers["questioner"])
    location = client.post(reverse("annotation:task_next"))["Location"]
    task = Assignment.objects.get(worker=workers["questioner"], status="active")
    release = reverse("annotation:task_release", args=[task.pk])
    assert client.post(release).status_code == 302
    twice = client.post(release, follow=True)
    assert twice.status_code == 200
    assert twice.redirect_chain[0] == (reverse("annotation:annotator_home"), 302)
    assert [str(m) for m in twice.context["messages"]][-1] == "this task is already released"
    location = client.post(reverse("annotation:task_next"))["Location"]
    with committed():
        client.post(location, {"question": ["Who opposed the plan?"]})
    submitted = Assignment.objects.get(worker=workers["questioner"], status="submitted")
    back = client.post(reverse("annotation:task_release", args=[submitted.pk]))
    assert back.status_code == 302
    # Someone else's task is still forbidden.
    other = client_for(workers["ann1"]).post(
        reverse("annotation:task_release", args=[submitted.pk]))
    assert other.status_code == 403
    api = APIClient()
    api.force_authenticate(workers["questioner"])
    said = api.post(reverse("api_task_release", args=[submitted.pk]))
    assert said.status_code == 409
    assert said.json() == {"errors": ["this task is already submitted"]}
    api.force_authenticate(workers["ann1"])
    assert api.post(reverse("api_task_release", args=[submitted.pk])).status_code == 403


def test_taking_a_task_in_a_project_one_is_not_in_does_not_name_the_project(
    client_for, newsqa_project, workers
):
    """The claim's "no task in <project>" message named any project whose id was posted:
    an annotator of no project learned the names of all of them, one id after another."""
    from tests.factories import user_with_roles

    outsider = user_with_roles("outsider", Role.ANNOTATOR)
    client = client_for(outsider)
    response = client.post(reverse("annotation:task_next"), {"project": newsqa_project.pk})
    assert response.status_code == 404
    assert "NewsQA test" not in client.get(reverse("annotation:annotator_home")).content.decode()
    # A member is still told there is nothing for them there, by the project's name.
    member = client_for(workers["ann1"])
    response = member.post(reverse("annotation:task_next"), {"project": newsqa_project.pk})
    assert response.status_code == 302


def test_a_worker_at_work_keeps_the_task_past_its_first_lease(
    client_for, newsqa_project, workers, committed
):
    """A task page open longer than the lease (30 min: a long article, a ReCO batch item)
    lost the answer: the submit was refused as late and the page had said nothing. The
    page now renews the lease while the worker is at work (static/js/task.js); a lease that
    ran out, another's task or a submitted one is not renewed."""
    from datetime import timedelta

    from django.utils import timezone

    client = client_for(workers["questioner"])
    location = client.post(reverse("annotation:task_next"))["Location"]
    task = Assignment.objects.get(worker=workers["questioner"], status="active")
    renew = reverse("annotation:task_renew", args=[task.pk])
    page = client.get(location).content.decode()
    assert f'data-renew-url="{renew}"' in page and 'data-renew-s="600"' in page
    # 29 minutes later, still typing: the page renews, and the submit after the first
    # lease's end is saved.
    almost = timezone.now() + timedelta(seconds=60)
    Assignment.objects.filter(pk=task.pk).update(lease_expires_at=almost)
    renewed = client.post(renew)
    assert renewed.status_code == 200
    task.refresh_from_db()
    assert task.lease_expires_at > almost + timedelta(minutes=25)
    with committed():
        done = client.post(location, {"question": ["Who opposed the plan?"]})
    assert done.status_code == 302
    assert workers["questioner"].submissions.count() == 1
    # submitted: nothing to renew, and the page is told why
    said = client.post(renew)
    assert said.status_code == 409
    assert said.json() == {"error": "this task is already submitted"}
    # a lease that ran out is not revived
    late = Assignment.objects.get(worker=workers["questioner"], status="active")
    Assignment.objects.filter(pk=late.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1))
    said = client.post(reverse("annotation:task_renew", args=[late.pk]))
    assert said.status_code == 409
    assert said.json() == {"error": "your time for this task ran out; take the next task"}
    assert client.get(reverse("annotation:task_renew", args=[late.pk])).status_code == 405
    # someone else cannot keep a task for its worker
    assert client_for(workers["ann1"]).post(renew).status_code == 403


def test_an_answer_sent_after_the_session_ended_comes_back_after_logging_in(
    client, newsqa_project, workers, committed
):
    """The worker logged out in another tab (or their session ended) with a task open: the
    submit went to the login page, and the task page after logging in was empty. Their
    answer now comes back filled in, once, on that task's page only."""
    from tests.factories import PASSWORD

    client.force_login(workers["questioner"])
    location = client.post(reverse("annotation:task_next"))["Location"]
    client.logout()
    sent = client.post(location, {"question": ["Who opposed the library plan?", ""],
                                  "active_time_s": "40"})
    assert sent.status_code == 302 and sent["Location"].startswith(reverse("login"))
    assert not Submission.objects.exists()
    back = client.post(sent["Location"], {"username": workers["questioner"].username,
                                          "password": PASSWORD}, follow=True)
    assert back.redirect_chain[-1][0] == location
    page = back.content.decode()
    assert 'value="Who opposed the library plan?"' in page
    assert "You had been logged out, so your answer was not saved." in page
    # once only
    assert "Who opposed the library plan?" not in client.get(location).content.decode()
    with committed():
        assert client.post(location, {"question": ["Who opposed the library plan?"]}
                           ).status_code == 302
    assert Submission.objects.get().payload == {"questions": ["Who opposed the library plan?"]}


def test_the_language_switch_on_a_task_page_keeps_the_answer_written_so_far(
    client, newsqa_project, workers
):
    """Switching to Chinese halfway through a question reloaded an empty task page: the
    switch now carries the form's values (static/js/crowdqa.js puts them in), and the page
    in the other language shows them again, once, with no word of a logout."""
    client.force_login(workers["questioner"])
    location = client.post(reverse("annotation:task_next"))["Location"]
    switched = client.post(reverse("set_language"), {
        "language": "zh-hans", "next": location,
        "unsent_answer": json.dumps({"question": ["Who opposed the library plan?", ""]}),
    })
    assert switched.status_code == 302 and switched["Location"] == location
    page = client.get(location).content.decode()
    assert 'value="Who opposed the library plan?"' in page
    assert '<html lang="zh-hans"' in page
    assert "logged out" not in page and "登出" not in page
    assert "Who opposed the library plan?" not in client.get(location).content.decode()
    assert not Submission.objects.exists()


@pytest.mark.parametrize("carried", [
    "not json", None, "[1, 2]", '{"question": "not a list"}',
    '{"question": [1]}',
])
def test_the_language_switch_ignores_what_is_not_a_form_s_values(
    client, newsqa_project, workers, carried
):
    client.force_login(workers["questioner"])
    location = client.post(reverse("annotation:task_next"))["Location"]
    posted = {"language": "zh-hans", "next": location}
    if carried is not None:
        posted["unsent_answer"] = carried
    assert client.post(reverse("set_language"), posted).status_code == 302
    assert client.get(location).status_code == 200
    assert "crowdqa_unsent_answer" not in client.session
