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
    from annotation.models import Assignment, Item, Project
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
    made = Item.objects.bulk_create([
        Item(project=project, stage=stage, key=f"q{k}", document=articles[k % docs],
             data={"question": question(k)}, overlap=2, status=Item.Status.OPEN)
        for k in range(items)
    ], batch_size=5000)
    Assignment.objects.bulk_create([Assignment(item=item, stage=stage) for item in made
                                    for _ in range(2)], batch_size=5000)
    project.refresh_from_db()
    return project, stage
