"""Build a crowd-sized NewsQA project through the product's services (not a bench; the
state crowd_pages.py measures). DATABASE_URL must name the database."""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=500)
    ap.add_argument("--tasks", type=int, default=20000)
    ap.add_argument("--golds", type=int, default=20)
    ap.add_argument("--docs", type=int, default=200)
    args = ap.parse_args()

    import django
    django.setup()
    from arrivals import article
    from benchdb import news_answer_project
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from annotation import engine, invites, pay, studies
    from annotation.eligibility import GOLD_PRIORITY
    from annotation.models import Item, ProjectMember
    from annotation.roles import Role
    from annotation.studies import Arrival

    rng = random.Random(7)
    User = get_user_model()
    admin = User.objects.filter(username="admin").first() or User.objects.create_superuser(
        "admin", "admin@example.org", "demo-pass-123")
    checker = User.objects.filter(username="checker").first()
    t0 = time.perf_counter()
    project, stage = news_answer_project(
        name="crowd", docs=args.docs, items=args.tasks // 2 + 500, rng=rng, article=article,
        title=lambda n: f"Story {n}", question=lambda k: f"Who did thing number {k}?")
    from annotation.models import Stage
    Stage.objects.filter(pk=stage.pk).update(params={
        **stage.params, "gold_rate": 0.1, "gold_min_items": 2, "gold_min_accuracy": 0.7,
        "pay_model": "submission", "pay_rate": "0.12"})
    stage.refresh_from_db()
    if checker:
        engine.project_member_add(project=project, user=checker, role=Role.CHECKER)
    docs = list(Item.objects.filter(stage=stage).values_list("document_id", flat=True)[:5])
    from collector.models import Document
    golds = []
    for n in range(args.golds):
        doc = Document.objects.get(pk=docs[n % len(docs)])
        item = Item.objects.create(
            project=project, stage=stage, key=f"gold:{n}", document=doc, gold="check",
            data={"question": f"Gold question {n}?"}, status=Item.Status.OPEN,
            priority=GOLD_PRIORITY, overlap=args.workers,
            result={"expected": {"spans": [[0, 20]]}, "reason": "the first words"})
        engine.slots_add(item=item, n=args.workers)
        golds.append(item)
    print(f"project {project.pk} built in {time.perf_counter() - t0:.1f}s")

    # The crowd: 60% Prolific arrivals over 3 studies, 40% through two invite links.
    t0 = time.perf_counter()
    study_list = [studies.study_create(project=project, platform="prolific",
                                       completion_code=f"CODE{n}", actor=admin, name=f"S{n}")
                  for n in range(3)]
    links = [invites.invite_create(project=project, role="annotator", actor=admin)
             for _ in range(2)]
    workers = []
    imported = {n for n in range(args.workers) if n % 5 >= 3 and n % 10 != 3}
    invites.members_import(
        text="username,email,role\n" + "".join(
            f"m{project.pk}-{n},m{project.pk}-{n}@example.org,annotator\n" for n in imported),
        name="members.csv", project=project, actor=admin)
    for n in range(args.workers):
        if n in imported:
            workers.append(User.objects.get(username=f"m{project.pk}-{n}"))
            continue
        if n % 5 < 3:
            user, member, _ = studies.study_arrive(
                study=study_list[n % 3], arrival=Arrival(
                    platform="prolific", external_id=f"{project.pk:04x}{n:020x}",
                    session_key=f"S{project.pk}-{n}",
                    external_study=f"STUDY{n % 3}"))
        else:
            member = invites.invite_accept(
                invite_id=links[n % 2].pk, username=f"i{project.pk}-{n}",
                email=f"i{project.pk}-{n}@example.org",
                password="a-long-pass-123")  # noqa: S106 (bench accounts)
            user = member.user
        workers.append(user)
    print(f"{len(workers)} workers in {time.perf_counter() - t0:.1f}s")

    t0 = time.perf_counter()
    bad = set(rng.sample(range(len(workers)), len(workers) // 10))
    done = 0
    while done < args.tasks:
        progressed = False
        for n, worker in enumerate(workers):
            if done >= args.tasks:
                break
            task = engine.task_claim(worker=worker, project=project)
            if task is None:
                continue
            item = task.item
            if item.stage.kind == "newsqa_validate":
                payload = {"choice": 0}
            elif item.gold:
                payload = ({"no_answer": True} if n in bad else {"spans": [[0, 20]]})
            elif rng.random() < 0.1:
                payload = {"no_answer": True}
            else:
                s = rng.randrange(0, 300)
                payload = {"spans": [[s, s + rng.randint(5, 40)]]}
            engine.task_submit(assignment_id=task.pk, worker=worker, payload=payload,
                               active_time_s=rng.uniform(5, 120))
            done += 1
            progressed = True
            if done % 2000 == 0:
                print(f"  {done} submitted, {time.perf_counter() - t0:.0f}s", flush=True)
        if not progressed:
            break
    print(f"{done} submissions in {time.perf_counter() - t0:.1f}s")

    # Admin decisions: some paused, some blocked.
    for n, worker in enumerate(workers[:40]):
        member = ProjectMember.objects.get(project=project, user=worker, role="annotator")
        engine.member_status_set(member=member, status="paused" if n % 2 else "blocked",
                                 actor=admin, reason="bench")
    with transaction.atomic():
        for worker in workers[40:60]:
            pay.bonus_add(project=project, worker=worker, amount="1.50", reason="good work",
                          actor=admin)
    t0 = time.perf_counter()
    export = pay.payments_export(project=project, actor=admin, reason="bench")
    print(f"payments export {export.pk}: {export.lines.count()} lines in "
          f"{time.perf_counter() - t0:.1f}s")
    print(f"PROJECT {project.pk}")


if __name__ == "__main__":
    main()
