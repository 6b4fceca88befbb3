"""A crowd in the browser: a Prolific worker consents, works to the quota and leaves with the
completion code; a second worker joins through an invite link; an MTurk preview claims
nothing; the admin sees both on the members and pay pages and exports payments."""

from __future__ import annotations

import csv
import io
import re

import pytest

from annotation import engine, invites, studies
from annotation.models import Assignment, ExternalAccount, PaymentExport
from annotation.roles import Role
from annotation.stages import Emit
from tests.annotation.conftest import ARTICLES
from tests.e2e.conftest import watch_csp
from tests.e2e.pages import invite_sign_up, jobs_settled, task_next
from tests.factories import user_with_roles

pytestmark = pytest.mark.django_db(transaction=True)

PID = "60a1b2c3d4e5f60718293a4b"


@pytest.fixture
def project(settings):
    from collector.models import Corpus, Document

    settings.CELERY_TASK_ALWAYS_EAGER = True
    corpus = Corpus.objects.create(name="e2e-crowd", language="en")
    doc = Document.objects.create(corpus=corpus, source_type="news", **ARTICLES[0])
    admin = user_with_roles("boss", Role.ADMIN)
    project = engine.project_create(name="Crowd browser", recipe="newsqa", corpus=corpus,
                                    user=admin)
    answer = project.stages.get(kind="newsqa_answer")
    engine.stage_params_update(stage=answer, params={"pay_rate": 0.25})
    project.consent = "We keep your **answers**, never your name."
    project.save(update_fields=["consent"])
    engine.project_start(project=project, actor=admin)
    jobs_settled(what="the first stage run")
    engine.items_emit(source_stage=project.stages.get(kind="newsqa_question"), emits=[
        Emit(kind="newsqa_answer", key=f"q{n}", data={"question": question},
             document_id=doc.pk)
        for n, question in enumerate(["Who opposed the plan?", "What will the library hold?",
                                      "When does construction begin?"])])
    return project


def test_prolific_worker_invited_worker_mturk_preview_and_the_admin_pays(
        project, browser, live_server, as_user, screenshot, csp_violations):
    prolific = studies.study_create(project=project, platform="prolific",
                                    completion_code="CQ7X2KPD", quota=2)
    mturk = studies.study_create(project=project, platform="mturk", completion_code="MT9")
    invite = invites.invite_create(project=project, role="annotator", max_uses=5)

    def fresh():
        context = browser.new_context(base_url=live_server.url,
                                      viewport={"width": 1280, "height": 900})
        watch_csp(context, csp_violations)
        page = context.new_page()
        page.set_default_timeout(15_000)
        return context, page

    # 1. A Prolific worker: consent, two tasks (the quota), the completion code.
    context, worker = fresh()
    worker.goto(f"{studies.study_path(prolific)}?PROLIFIC_PID={PID}&STUDY_ID=st1"
                "&SESSION_ID=se1")
    assert "answers" in worker.inner_text('[data-testid="consent"]')
    assert worker.locator("button[type=submit]").count() == 1
    screenshot("crowd-consent", of=worker)
    with worker.expect_navigation(wait_until="load"):
        worker.click('[data-testid="agree"]')
    for _ in range(2):
        worker.wait_for_selector('[data-testid="article"]')
        with worker.expect_navigation(wait_until="load"):
            worker.click('[data-testid="no-answer"]')
    worker.wait_for_selector('[data-testid="completion"]')
    assert worker.inner_text('[data-testid="completion-code"]') == "CQ7X2KPD"
    assert (worker.get_attribute('[data-testid="completion-link"]', "href")
            == "https://app.prolific.com/submissions/complete?cc=CQ7X2KPD")
    screenshot("crowd-completion", of=worker)
    context.close()
    account = ExternalAccount.objects.get(external_id=PID)
    assert account.user.submissions.count() == 2

    # 2. An MTurk preview: a sample task, nothing claimed, nobody signed in.
    active = Assignment.objects.filter(status="active").count()
    context, preview = fresh()
    preview.goto(f"{studies.study_path(mturk)}?workerId=A2PREVIEW&hitId=3H"
                 f"&assignmentId={studies.PREVIEW_ASSIGNMENT}"
                 "&turkSubmitTo=https://workersandbox.mturk.com")
    preview.wait_for_selector('[data-testid="preview"]')
    assert preview.is_visible('[data-testid="article"]')
    assert preview.is_disabled('[data-testid="no-answer"]')
    screenshot("crowd-mturk-preview", of=preview)
    context.close()
    assert Assignment.objects.filter(status="active").count() == active
    assert not ExternalAccount.objects.filter(platform="mturk").exists()

    # 3. A worker invited by link signs up and does one task.
    context, invited = fresh()
    invited.goto(invites.invite_path(invite))
    invite_sign_up(invited, username="invitee", email="invitee@example.org")
    invited.wait_for_selector('[data-testid="next-task"]')
    task_next(invited, '[data-testid="article"]')
    with invited.expect_navigation(wait_until="load"):
        invited.click('[data-testid="no-answer"]')
    context.close()

    # 4. The admin sees both workers on the members and pay pages and exports payments.
    admin = as_user("boss")
    admin.goto(f"/manage/projects/{project.pk}/")
    admin.click('[data-testid="members-link"]')
    members = admin.inner_text('[data-testid="members"]')
    assert account.user.username in members and PID in members and "invitee" in members
    assert "1" in admin.inner_text(f'[data-testid="invite-{invite.pk}"]')  # one use
    screenshot("crowd-members", of=admin)
    admin.goto(f"/manage/projects/{project.pk}/")
    admin.click('[data-testid="pay-link"]')
    workers = admin.inner_text('[data-testid="pay-workers"]')
    assert account.user.username in workers and "invitee" in workers
    with admin.expect_navigation(wait_until="load"):
        admin.click('[data-testid="export-payments"]')
    admin.wait_for_selector('[data-testid="download-export"]')
    screenshot("crowd-pay", of=admin)
    export = PaymentExport.objects.get(project=project)
    rows = list(csv.DictReader(io.StringIO(export.content)))
    paid = {row["external_id"] or row["username"]: row for row in rows}
    assert paid[PID]["platform"] == "prolific" and paid[PID]["amount"] == "0.50"
    assert paid["invitee"]["amount"] == "0.25" and paid["invitee"]["platform"] == ""


def test_a_newcomer_joins_a_domain_link_by_the_mailed_link(project, page, mailoutbox):
    """A link restricted to uni.edu: signing up sends a mail and joins nobody; the mailed
    link's button joins, logs the newcomer in and lands on the task page."""
    invite = invites.invite_create(project=project, role="annotator",
                                   allowed_domains=["uni.edu"])
    page.goto(invites.invite_path(invite))
    assert "We will e-mail you a link" in page.inner_text('[data-testid="confirm-hint"]')
    invite_sign_up(page, username="scholar", email="scholar@uni.edu")
    sent = page.inner_text('[data-testid="invite-confirm-sent"]')
    assert "We sent a link to scholar@uni.edu; open it to join Crowd browser." in sent
    assert not invite.uses.exists()
    [mail] = mailoutbox
    [link] = re.findall(r"https?://\S+/join/confirm/\S+/", mail.body)
    page.goto(link)
    with page.expect_navigation(wait_until="load"):
        page.click('[data-testid="confirm"]')
    page.wait_for_selector('[data-testid="next-task"]')
    assert "Welcome to Crowd browser: you joined as annotator." in page.content()
    assert list(invite.uses.values_list("user__username", flat=True)) == ["scholar"]


def test_the_invite_sign_up_form_on_a_phone(project, browser, live_server, csp_violations):
    """On a 375 px phone every field of the sign-up form is as wide as the form and has
    16 px text, so that the phone does not zoom in on it (the e-mail field had the
    browser's 13.3 px and its own narrow width); the newcomer joins with taps."""
    invite = invites.invite_create(project=project, role="annotator")
    context = browser.new_context(base_url=live_server.url, is_mobile=True, has_touch=True,
                                  viewport={"width": 375, "height": 667})
    watch_csp(context, csp_violations)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(invites.invite_path(invite))
    fields = page.locator("form input:not([type=hidden]):not([type=checkbox])").evaluate_all(
        "fs => fs.map(f => [f.name, parseFloat(getComputedStyle(f).fontSize),"
        " Math.round(f.getBoundingClientRect().width)])")
    assert [name for name, _size, _width in fields] == [
        "username", "email", "password1", "password2"]
    widths = {width for _name, _size, width in fields}
    assert len(widths) == 1, fields
    assert all(size >= 16 for _name, size, _width in fields), fields
    assert page.evaluate("document.documentElement.scrollWidth") == 375
    invite_sign_up(page, username="thumbs", email="thumbs@example.org")
    page.wait_for_selector('[data-testid="next-task"]')
    assert list(invite.uses.values_list("user__username", flat=True)) == ["thumbs"]
    context.close()
