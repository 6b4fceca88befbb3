"""What the benchmarks share on the database side (import after ``django.setup()``)."""

from __future__ import annotations


def project_drop(project) -> None:
    """Delete a bench project and everything it made: history rows first, since they
    protect what they point at (submissions their slots and items, items their parents)."""
    from annotation.models import Assignment, Item, Project, Submission, TransitionLog

    slots = Assignment.objects.filter(stage__project=project).values_list("id", flat=True)
    TransitionLog.objects.filter(model="Assignment", object_id__in=list(slots)).delete()
    Submission.objects.filter(stage__project=project).delete()
    Item.objects.filter(project=project).update(parent=None)
    Project.objects.filter(pk=project.pk).delete()


def news_answer_project(*, name: str, docs: int, items: int, rng, article, title,
                        question) -> tuple:
    """An active NewsQA project over ``docs`` generated articles (``article(rng, words)``,
    ``title(n)``; kept across runs in corpus ``name``) whose answer stage has ``items``
    open items (``question(k)``) of two slots each: (project, answer stage)."""
    import time

    from annotation import engine
    from annotation.models import Project
    from collector.models import Corpus, Document

    corpus, _ = Corpus.objects.get_or_create(name=name, defaults={"language": "en"})
    articles = [Document.objects.get_or_create(
        corpus=corpus, external_id=f"{name}-{n}",
        defaults={"title": title(n), "body": article(rng, rng.randint(550, 750)),
                  "highlights": ["A highlight of the story."]})[0] for n in range(docs)]
    project = engine.project_create(name=f"{name}-{time.strftime('%Y%m%d%H%M%S')}",
                                    recipe="newsqa", corpus=corpus)
    Project.objects.filter(pk=project.pk).update(status=Project.Status.ACTIVE)
    stage = project.stages.get(kind="newsqa_answer")
    open_items_copy(stage=stage, documents=[a.pk for a in articles], items=items,
                    question=question)
    project.refresh_from_db()
    return project, stage


def open_items_copy(*, stage, documents: list[int], items: int, question, overlap: int = 2,
                    priority: int = 0) -> None:
    """``items`` open items of ``stage`` (keys ``q0``, ``q1``...; item k asks
    ``question(k)`` about ``documents[k % len(documents)]``) with ``overlap`` open slots
    each, written by COPY and one INSERT … SELECT (PostgreSQL; a million slots in seconds
    where ``bulk_create`` takes minutes), in one transaction."""
    import io
    import json

    from django.db import connection, transaction
    from django.utils import timezone

    from collector.search.postgres_backend import _copy_text

    now = timezone.now().isoformat()
    project = stage.project_id
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(max(id), 0) FROM annotation_item")
        (after,) = cursor.fetchone()
        for start in range(0, items, 100_000):
            rows = io.StringIO("".join(
                f"{project}\t{stage.pk}\topen\t{documents[k % len(documents)]}\tq{k}\t"
                f"{_copy_text(json.dumps({'question': question(k)}))}\t{{}}\t{overlap}\t"
                f"{priority}\t\t\t{now}\n"
                for k in range(start, min(items, start + 100_000))))
            cursor.copy_expert(
                "COPY annotation_item (project_id, stage_id, status, document_id, key, data,"
                " result, overlap, priority, split, gold, created_at) FROM STDIN", rows, 1 << 20)
        cursor.execute(
            "INSERT INTO annotation_assignment (item_id, stage_id, status, priority, round)"
            " SELECT i.id, i.stage_id, 'open', i.priority, 1 FROM annotation_item i"
            " CROSS JOIN generate_series(1, i.overlap) WHERE i.stage_id = %s AND i.id > %s"
            " ORDER BY i.id", [stage.pk, after])
