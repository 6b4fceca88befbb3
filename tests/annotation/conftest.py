"""Fixtures for the engine: a small English news corpus and a NewsQA project built through
the real services (project_create, project_start, the stage jobs)."""

from __future__ import annotations

import pytest

from annotation import engine
from annotation.models import Project
from annotation.roles import Role
from tests.factories import user_with_roles

ARTICLES = [
    {
        "external_id": "portvale-library",
        "title": "Portvale approves harbor library",
        "body": (
            "PORTVALE (CNN) -- The city council of Portvale voted 7-2 on Tuesday to build a "
            "public library on the site of the old harbor warehouse.\n\n"
            "Mayor Lena Ortiz said construction would begin in March and cost about $4 "
            "million. Council member Dario Weiss, who voted against the plan, said the town "
            "should repair its roads first.\n\n"
            "The library will hold 80,000 books, a children's reading room and a makerspace."
        ),
        "highlights": [
            "Portvale council votes 7-2 to build a library on the old harbor site",
            "Construction is expected to start in March and cost about $4 million",
        ],
    },
    {
        "external_id": "riverton-bridge",
        "title": "Riverton bridge reopens",
        "body": (
            "RIVERTON (CNN) -- The Elm Street bridge reopened on Friday after eighteen months "
            "of repairs that cost the county $12 million.\n\n"
            "Engineers replaced the steel deck and added a protected bicycle lane, said county "
            "engineer Priya Nand."
        ),
        "highlights": ["Elm Street bridge reopens after 18 months of repairs"],
    },
]


@pytest.fixture
def news_corpus(db):
    from collector.models import Corpus, Document

    corpus = Corpus.objects.create(name="test-news", language="en")
    for article in ARTICLES:
        Document.objects.create(corpus=corpus, source_type="news", **article)
    return corpus


@pytest.fixture
def workers(db):
    return {name: user_with_roles(name, Role.ANNOTATOR)
            for name in ("questioner", "ann1", "ann2", "ann3", "val1", "val2")}


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """``with committed():`` runs what the block enqueues on commit (jobs, emitted stages),
    including callbacks those add, as a real commit would."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def newsqa_project(news_corpus, workers, admin_user, settings, committed):
    """An active NewsQA project whose automatic stages have run: question items are open."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    project = engine.project_create(name="NewsQA test", recipe="newsqa", corpus=news_corpus,
                                    user=admin_user)
    for user in workers.values():
        engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
    with committed():
        engine.project_start(project=project, actor=admin_user)
    project.refresh_from_db()
    assert project.status == Project.Status.ACTIVE
    return project


@pytest.fixture
def run_reports():
    """``run_reports(project)``: the last run of each automatic stage, by stage kind, as
    the project page reads it: (received, passed, {reason: dropped}, notes)."""
    from annotation import selectors

    def read(project: Project) -> dict[str, tuple]:
        stages = list(project.stages.order_by("order"))
        reports = selectors.stage_run_reports(stages=stages)
        return {stage.kind: (report["received"], report["passed"], dict(report["dropped"]),
                             report["notes"])
                for stage in stages if (report := reports.get(stage.pk)) is not None}

    return read
