"""The Django admin lists projects, stages, items, assignments and submissions (read-mostly,
with filters and search)."""

from __future__ import annotations

from django.urls import reverse

from annotation.models import Assignment, Item, Submission
from tests.annotation.test_newsqa_flow import _write_questions


def test_admin_lists_the_pipeline_with_filters_and_search(client, admin_user, newsqa_project,
                                                          workers, committed):
    _write_questions(newsqa_project, workers["questioner"], committed)
    client.force_login(admin_user)
    for model in ("project", "stage", "item", "assignment", "submission", "projectmember"):
        response = client.get(reverse(f"admin:annotation_{model}_changelist"))
        assert response.status_code == 200, model
        assert client.get(reverse(f"admin:annotation_{model}_add")).status_code == 403
    page = client.get(reverse("admin:annotation_item_changelist"),
                      {"status__exact": "open", "stage__kind": "newsqa_answer"}).content.decode()
    answers = Item.objects.filter(stage__kind="newsqa_answer", status="open")
    assert answers.count() == 2
    for item in answers:
        assert f'href="/admin/annotation/item/{item.pk}/change/' in page
    question_item = Item.objects.get(stage__kind="newsqa_question", status="done")
    assert f'href="/admin/annotation/item/{question_item.pk}/change/' not in page
    submission = Submission.objects.get()
    page = client.get(reverse("admin:annotation_submission_changelist"),
                      {"q": "questioner"}).content.decode()
    assert f'/admin/annotation/submission/{submission.pk}/change/' in page
    listing = client.get(reverse("admin:annotation_assignment_changelist"),
                         {"q": "nobody-by-that-name"})
    assert listing.context["cl"].result_count == 0
    listing = client.get(reverse("admin:annotation_assignment_changelist"),
                         {"q": "questioner"})
    assert listing.context["cl"].result_count == 1
    # Read-mostly: a slot's page shows it, but nothing changes or goes away from here.
    slot = Assignment.objects.first()
    url = reverse("admin:annotation_assignment_change", args=[slot.pk])
    assert client.get(url).status_code == 200
    assert client.post(url, {"status": "cancelled"}).status_code == 403
    assert client.post(reverse("admin:annotation_assignment_delete", args=[slot.pk]),
                       {"post": "yes"}).status_code == 403
    slot.refresh_from_db()
    assert slot.status != "cancelled"
    # A project's words stay editable; its status does not.
    url = reverse("admin:annotation_project_change", args=[newsqa_project.pk])
    page = client.get(url).content.decode()
    assert 'name="description"' in page and 'name="status"' not in page


def test_admin_lists_confirmation_mails_read_only_without_their_addresses(client, admin_user):
    """The confirmation mails were not in the admin: a failing mail server could be seen
    only in the logs. Now they are listed (status, tries, times), read only, and their
    address shows nowhere, not even inside the mail server's refusal."""
    import smtplib
    from unittest import mock

    from annotation import engine, invites
    from annotation.models import InviteMail

    project = engine.project_create(name="Harbor news", recipe="newsqa")
    invite = invites.invite_create(project=project, role="annotator",
                                   allowed_domains=["uni.edu"])
    join = invites.invite_join_request(
        invite_id=invite.pk, site_root="http://testserver/", username="maria",
        email="Maria@uni.edu", password="lantern-orchid-47")
    refusal = smtplib.SMTPRecipientsRefused({"maria@uni.edu": (550, b"mailbox unavailable")})
    with mock.patch("annotation.invites.send_mail", side_effect=refusal):
        assert invites.invite_mail_send(mail_id=join.mail_id) == "failed"
    mail = InviteMail.objects.get()
    assert "maria@uni.edu" in mail.error

    client.force_login(admin_user)
    page = client.get(reverse("admin:annotation_invitemail_changelist")).content.decode()
    assert f'href="/admin/annotation/invitemail/{mail.pk}/change/' in page
    for shown in ("maria", "Harbor news", "Failed", 'class="field-attempts">1<'):
        assert shown in page, shown
    assert "maria@" not in page.lower()
    listing = client.get(reverse("admin:annotation_invitemail_changelist"),
                         {"status__exact": "sent"})
    assert listing.context["cl"].result_count == 0
    listing = client.get(reverse("admin:annotation_invitemail_changelist"), {"q": "maria"})
    assert listing.context["cl"].result_count == 1
    listing = client.get(reverse("admin:annotation_invitemail_changelist"),
                         {"q": "maria@uni.edu"})
    assert listing.context["cl"].result_count == 0  # no looking people up by address

    url = reverse("admin:annotation_invitemail_change", args=[mail.pk])
    detail = client.get(url)
    assert detail.status_code == 200
    html = detail.content.decode()
    assert "mailbox unavailable" in html and "&lt;address&gt;" in html
    assert "maria@" not in html.lower()
    # Read only: nothing is added, changed or deleted here.
    assert client.get(reverse("admin:annotation_invitemail_add")).status_code == 403
    assert client.post(url, {"status": "sent"}).status_code == 403
    assert client.post(reverse("admin:annotation_invitemail_delete", args=[mail.pk]),
                       {"post": "yes"}).status_code == 403
    mail.refresh_from_db()
    assert mail.status == "failed"
