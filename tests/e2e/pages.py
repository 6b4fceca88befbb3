"""Steps the browser tests share."""

from __future__ import annotations

import time
from typing import Any, TypeVar

import pytest
from django.db.models import Model, QuerySet

M = TypeVar("M", bound=Model)


def task_next(page: Any, ready: str | None = None) -> None:
    """Press "n" for the next task and wait until its page has loaded (and ``ready`` is
    there). Task pages bind their keys in deferred scripts: a key pressed before the load
    event can be lost (CI lost two arrow presses that way)."""
    with page.expect_navigation(wait_until="load"):
        page.keyboard.press("n")
    if ready:
        page.wait_for_selector(ready)


def invite_sign_up(page: Any, *, username: str, email: str) -> None:
    """On an invite link's page: fill in the sign-up form, agree and send it (waits for the
    next page)."""
    page.fill("#id_username", username)
    page.fill("#id_email", email)
    page.fill("#id_password1", "a-long-enough-passphrase")
    page.fill("#id_password2", "a-long-enough-passphrase")
    page.check('[data-testid="agree"]')
    submit(page, '[data-testid="join"]')


def submit(page: Any, target: str | None = None, *, key: str | None = None) -> None:
    """Click ``target`` (or press ``key``) to submit the page's form, and wait until the
    next page has loaded. Waiting for "networkidle" after the click is a race: it can
    return before the browser has even sent the form (it did, on a loaded machine)."""
    with page.expect_navigation(wait_until="load"):
        if key is not None:
            page.keyboard.press(key)
        else:
            page.click(target)


def text_under(page: Any, px: float = 12) -> list[str]:
    """The visible elements of ``page`` whose own text is smaller than ``px`` (a phone's
    reader cannot read them), as "tag size text"."""
    return page.evaluate("""px => [...document.querySelectorAll('body *')].filter(el => {
        const style = getComputedStyle(el), box = el.getBoundingClientRect();
        return style.visibility !== 'hidden' && box.width > 0 && box.height > 0
            && parseFloat(style.fontSize) < px
            && [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    }).map(el => `${el.tagName} ${getComputedStyle(el).fontSize} ${el.textContent.trim()}`)""",
                         px)


# Waiting for what the server did in the background. A page that has loaded says its own
# request is done, not that the jobs it started are: a stage run, an import or a release
# build runs as a job (on a thread in the embedded mode, on a worker otherwise). The tests
# read the product's own rows: the job table says when background work has settled.
POLL_S = 0.05


def jobs_settled(*, what: str, timeout: float = 60.0) -> None:
    """Wait until no job is queued or running; fail at once, with the job's error, if a job
    failed, and at the deadline naming ``what`` and the jobs still busy."""
    from collector.models import Job

    deadline = time.monotonic() + timeout
    while True:
        failed = Job.objects.filter(status=Job.Status.FAILED).first()
        if failed is not None:
            pytest.fail(f"waiting for {what}: job {failed.pk} ({failed.kind}, "
                        f"{failed.params}) failed: {failed.error}")
        busy = list(Job.objects.filter(status__in=[Job.Status.QUEUED, Job.Status.RUNNING])
                    .values_list("pk", "kind", "status"))
        if not busy:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"waiting for {what}: jobs still busy after {timeout:.0f} s: {busy}")
        time.sleep(POLL_S)  # the poll interval, not a guess at how long the work takes


def row(queryset: QuerySet[M], *, what: str, timeout: float = 60.0) -> M:
    """The one row of ``queryset`` once the background work that makes it has settled
    (fails, naming ``what``, if it never appears or is not one row)."""
    deadline = time.monotonic() + timeout
    while True:
        jobs_settled(what=what, timeout=max(0.0, deadline - time.monotonic()))
        found = list(queryset.all()[:2])
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            pytest.fail(f"{what}: more than one row of {queryset.query}")
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not there after {timeout:.0f} s, and no job is running")
        time.sleep(POLL_S)


def reco_batch_project(monkeypatch: Any, *, name: str, query: str, documents: list[dict],
                       annotator: str) -> tuple[Any, Any]:
    """An active ReCO project over one query whose search finds ``documents``, its train
    batches one item each, and ``annotator`` a member: (project, annotator)."""
    from annotation import engine
    from annotation.roles import Role
    from annotation.stages import reco
    from tests.annotation.test_reco import rows
    from tests.factories import user_with_roles

    monkeypatch.setattr(reco.QueriesKind, "queries", lambda self, project: rows([query]))
    monkeypatch.setattr(reco, "_retrieve_documents",
                        lambda project, text, k, max_chars=0: documents[:k])
    admin = user_with_roles("boss", Role.ADMIN)
    project = engine.project_create(
        name=name, recipe="reco", user=admin,
        params={5: {"train": 1.0, "dev": 0.0, "test": 0.0}, 6: {"batch_size": 1}})
    worker = user_with_roles(annotator, Role.ANNOTATOR)
    engine.project_member_add(project=project, user=worker, role=Role.ANNOTATOR)
    engine.project_start(project=project, actor=admin)
    return project, worker


def marco_query_project(monkeypatch: Any, *, name: str, editors: int = 3) -> tuple[Any, dict]:
    """An active MS MARCO project whose retrieval answers with ten fixed passages, the
    annotators "judge", "curator" and "ed1".."ed<editors>" and the checker "chk" its
    members, and one query (``QUERY``, key "q1") waiting for its judgment:
    (project, {name: annotator})."""
    from annotation import engine
    from annotation.roles import Role
    from annotation.stages import Emit
    from annotation.stages import marco as marco_stages
    from tests.annotation.test_marco import QUERY, make_passages
    from tests.factories import user_with_roles

    # Queries and the search service come with the corpus issue: no queries to import, and
    # retrieval answers with ten fixed passages (the live server runs in this process).
    monkeypatch.setattr(marco_stages.QueriesKind, "queries", lambda self, project: iter(()))
    monkeypatch.setattr(marco_stages, "_retrieve_passages",
                        lambda project, text, k: make_passages(k))
    admin = user_with_roles("boss", Role.ADMIN)
    project = engine.project_create(name=name, recipe="marco", user=admin,
                                    params={5: {"editors_per_query": editors}})
    people = {who: user_with_roles(who, Role.ANNOTATOR) for who in
              ("judge", "curator", *(f"ed{n}" for n in range(1, editors + 1)))}
    for user in people.values():
        engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
    engine.project_member_add(project=project, user=user_with_roles("chk", Role.CHECKER),
                              role=Role.CHECKER)
    engine.project_start(project=project, actor=admin)
    jobs_settled(what="the first stage run")
    engine.items_emit(source_stage=project.stages.get(kind="marco_queries"), emits=[
        Emit(kind="marco_judge", key="q1", data={"query": QUERY, "query_id": "q1"})])
    return project, people
