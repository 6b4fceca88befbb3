"""What a worker may take, counted with the claim's own rules, and why not when nothing."""

from __future__ import annotations

from pathlib import Path

from django.urls import reverse

from annotation import engine, selectors
from annotation.models import Item, ProjectMember, Stage
from tests.annotation.test_newsqa_flow import _write_questions, claim_item


def _row(worker, project):
    rows = {row["project"].pk: row for row in selectors.worker_projects(worker=worker)}
    return rows.get(project.pk)


def _hold_other_question(worker, project, article):
    other = Item.objects.get(stage__project=project, stage__kind="newsqa_question",
                             status="open")
    assert other.pk != article.pk
    return claim_item(worker, project, other)


def test_open_tasks_count_what_the_worker_may_take(newsqa_project, workers, committed,
                                                   django_assert_max_num_queries):
    ann1, questioner = workers["ann1"], workers["questioner"]
    with django_assert_max_num_queries(2):  # one availability query, one of projects
        row = _row(ann1, newsqa_project)
    assert row["open_slots"] == "2"  # two articles to write questions on
    answer = next(s for s in row["available"].stages if s.kind == "newsqa_answer")
    assert (answer.count, answer.rule) == (0, "upstream")
    assert answer.reason == "waiting for an earlier stage to send it work"

    # The questioner writes on one article; ann1 holds the other question task.
    article = _write_questions(newsqa_project, questioner, committed)
    _hold_other_question(workers["ann1"], newsqa_project, article)
    row = _row(questioner, newsqa_project)
    # Four answer slots are open, but the questioner may not answer their own questions,
    # and the last question task is ann1's: nothing for them, and the list says why.
    assert row["open_slots"] == "0"
    assert row["available"].reasons == [
        "Question sourcing: all its tasks are being worked on by others right now",
        "Answer sourcing: its open tasks are ones you already did or may not do",
        "Validation: waiting for an earlier stage to send it work",
    ]
    assert engine.task_claim(worker=questioner, project=newsqa_project) is None
    why = selectors.availability_why(worker=questioner, project=newsqa_project)
    assert why == [
        "Question sourcing: all its tasks are being worked on by others right now.",
        "Answer sourcing: none of its 4 open task(s) is for you: "
        "4 you may not do (wrote questions on this article).",
        "Validation: waiting for an earlier stage to send it work.",
    ]
    # ann2 may take one of the four answer slots of each of the two items: two tasks.
    row = _row(workers["ann2"], newsqa_project)
    assert row["open_slots"] == "2"


def test_a_limit_and_a_pause_are_named(newsqa_project, workers, committed):
    questioner, ann2 = workers["questioner"], workers["ann2"]
    _write_questions(newsqa_project, questioner, committed)
    answer_stage = Stage.objects.get(project=newsqa_project, kind="newsqa_answer")
    Stage.objects.filter(pk=answer_stage.pk).update(
        params={**answer_stage.params, "max_items_per_worker": 1})
    Stage.objects.filter(project=newsqa_project, kind="newsqa_question").update(
        params={**Stage.objects.get(project=newsqa_project, kind="newsqa_question").params,
                "max_items_per_worker": 0})
    task = engine.task_claim(worker=ann2, project=newsqa_project)
    while task.stage_id != answer_stage.pk:
        engine.task_release(assignment_id=task.pk, worker=ann2)
        task = engine.task_claim(worker=ann2, project=newsqa_project)
    stages = {s.kind: s for s in _row(ann2, newsqa_project)["available"].stages}
    assert stages["newsqa_answer"].rule == "under_limit"
    assert stages["newsqa_answer"].reason == ("you took the most tasks of this stage one "
                                              "worker may take")
    ProjectMember.objects.filter(project=newsqa_project, user=ann2).update(status="paused")
    assert _row(ann2, newsqa_project)["available"].count == 0
    assert selectors.availability_why(worker=ann2, project=newsqa_project) == [
        "Your membership of this project is paused."]


def test_work_on_this_project_says_why_nothing_is_available(client, newsqa_project, workers,
                                                            committed):
    questioner = workers["questioner"]
    article = _write_questions(newsqa_project, questioner, committed)
    _hold_other_question(workers["ann1"], newsqa_project, article)
    client.force_login(questioner)
    response = client.post(reverse("annotation:task_next"), {"project": newsqa_project.pk},
                           follow=True)
    assert response.redirect_chain[-1][0] == (
        f"{reverse('annotation:annotator_home')}?project={newsqa_project.pk}")
    page = response.content.decode()
    assert "Why nothing is waiting for you in NewsQA test" in page
    assert "4 you may not do (wrote questions on this article)" in page
    assert "all its tasks are being worked on by others right now" in page



def test_why_is_only_told_about_ones_own_projects(client, newsqa_project, db):
    from annotation.roles import Role
    from tests.factories import user_with_roles

    stranger = user_with_roles("stranger", Role.ANNOTATOR)
    client.force_login(stranger)
    response = client.get(reverse("annotation:annotator_home"), {"project": newsqa_project.pk})
    assert response.status_code == 404


def test_exclusion_reasons_are_marked_and_shown_in_the_interface_language(
        newsqa_project, workers, committed, settings, tmp_path):
    """The reasons a stage stores with its exclusions are msgids (marked with gettext_noop,
    so makemessages collects them) and the "why no task" list translates them."""
    import subprocess

    import polib
    from django.utils import translation

    questioner = workers["questioner"]
    article = _write_questions(newsqa_project, questioner, committed)
    _hold_other_question(workers["ann1"], newsqa_project, article)
    reason = "wrote questions on this article"
    # Marked where it is set: xgettext (as makemessages runs it) collects it.
    stages = Path(settings.BASE_DIR) / "annotation" / "stages"
    found = subprocess.run(
        ["xgettext", "-L", "Python", "--keyword=gettext_noop", "-o", "-",
         *sorted(str(p) for p in stages.glob("*.py"))],
        capture_output=True, text=True, check=True).stdout
    for msgid in (reason, "wrote questions on this article or answered this question",
                  "labelled this query", "wrote an answer for this query",
                  "curated the passages of this query"):
        assert f'msgid "{msgid}"' in found.replace('"\n"', ""), msgid
    # Translated where it is shown (a catalogue holding it, as the lead's merge will).
    messages = tmp_path / "zh_Hans" / "LC_MESSAGES"
    messages.mkdir(parents=True)
    catalogue = polib.POFile()
    catalogue.metadata = {"Content-Type": "text/plain; charset=UTF-8"}
    catalogue.append(polib.POEntry(msgid=reason, msgstr="为这篇文章写过问题"))
    catalogue.save_as_mofile(str(messages / "django.mo"))
    settings.LOCALE_PATHS = [str(tmp_path), *settings.LOCALE_PATHS]
    with translation.override("zh-hans"):
        why = selectors.availability_why(worker=questioner, project=newsqa_project)
    assert any("(为这篇文章写过问题)" in line for line in why), why
