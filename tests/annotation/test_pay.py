"""Pay: earnings per submission and per active hour, bonuses, wages, payment exports (never
paying twice), the payments CSV, its command, and who may see the pay pages."""

from __future__ import annotations

import csv
import html
import io
import re
import threading
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.db.models import F, Sum
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import engine, pay, studies
from annotation.models import (
    Assignment,
    Bonus,
    ExternalAccount,
    Item,
    PaymentExport,
    PaymentLine,
    Project,
    Stage,
    Study,
    Submission,
)
from annotation.roles import Role
from annotation.studies import Arrival
from tests.annotation.test_newsqa_flow import claim_item, phrase_span
from tests.factories import held_since, user_with_roles
from tests.reads import reads

PROLIFIC_ID = "5f3a9c0d1e2b4a0012345678"
QUESTION = "Who opposed the plan?"
ZERO = Decimal("0.00")


@pytest.fixture
def paid_project(news_corpus, workers, admin_user, committed):
    """A NewsQA project paying 0.50 per question task, 12.00 per active hour of answering
    and 0.25 per validation; questions go to validation as soon as two answers disagree."""
    project = engine.project_create(name="Paid NewsQA", recipe="newsqa", corpus=news_corpus,
                                    user=admin_user)
    stages = {stage.kind: stage for stage in project.stages.all()}
    engine.stage_params_update(stage=stages["newsqa_question"],
                               params={"pay_model": "submission", "pay_rate": 0.5})
    engine.stage_params_update(stage=stages["newsqa_answer"],
                               params={"pay_model": "hourly", "pay_rate": 12.0,
                                       "max_extra_answers": 0})
    engine.stage_params_update(stage=stages["newsqa_validate"],
                               params={"pay_model": "submission", "pay_rate": 0.25,
                                       "validators_per_question": 1})
    for user in workers.values():
        engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
    with committed():
        engine.project_start(project=project, actor=admin_user)
    project.refresh_from_db()
    return project


@pytest.fixture
def prolific_worker(paid_project):
    """A Prolific worker who arrived through a study of the project."""
    study = studies.study_create(project=paid_project, platform="prolific",
                                 completion_code="C0DE42")
    user, _, _ = studies.study_arrive(study=study, arrival=Arrival(
        platform="prolific", external_id=PROLIFIC_ID, session_key="SESSION1"))
    return user


def _ask(project, worker, committed) -> Item:
    """The worker writes one question; returns its answer item."""
    task = engine.task_claim(worker=worker, project=project)
    assert task.stage.kind == "newsqa_question"
    with committed():
        engine.task_submit(assignment_id=task.pk, worker=worker,
                           payload={"questions": [QUESTION]})
    return Item.objects.get(stage__kind="newsqa_answer", parent=task.item)


def _work(project, worker, item, payload, committed, *, minutes: float = 0,
          active_s: float | None = None):
    """Claim ``item``, spend ``minutes`` on it (from claim to submit), submit ``payload``
    with the active time the page measured (None: it measured nothing)."""
    task = claim_item(worker, project, item)
    if minutes:
        held_since(task, minutes=minutes)
    with committed():
        return engine.task_submit(assignment_id=task.pk, worker=worker, payload=payload,
                                  active_time_s=active_s)


@pytest.fixture
def worked(paid_project, workers, prolific_worker, committed):
    """The questioner asks (0.50); the Prolific worker answers in 30 minutes with no active
    time measured (6.00 at 12.00 an hour); ann2 answers in 60 minutes of which the page
    measured 15 active (3.00). The answers disagree, so a validation item opens."""
    item = _ask(paid_project, workers["questioner"], committed)
    _work(paid_project, prolific_worker, item,
          {"spans": [phrase_span(item, "Dario Weiss")]}, committed, minutes=30)
    _work(paid_project, workers["ann2"], item, {"no_answer": True}, committed,
          minutes=60, active_s=900)
    return item


def _validate(project, worker, committed):
    validation = Item.objects.get(project=project, stage__kind="newsqa_validate")
    return _work(project, worker, validation, {"choice": 0}, committed)


def _rows(export: PaymentExport) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(export.content)))


# Earnings ----------------------------------------------------------------------------------

def test_per_submission_and_hourly_pay_use_active_time_or_time_on_task(
    paid_project, workers, prolific_worker, worked, committed
):
    assert pay.worker_earnings(worker=workers["questioner"]) == {
        "today": {"GBP": Decimal("0.50")}, "total": {"GBP": Decimal("0.50")},
        "rows": [{"currency": "GBP", "today": Decimal("0.50"), "total": Decimal("0.50")}],
        "done_today": engine.worker_done_today(worker=workers["questioner"]),
    }
    assert pay.worker_earnings(worker=workers["questioner"])["done_today"] == 1
    # No active time measured: the 30 minutes from claim to submit count.
    assert pay.worker_earnings(worker=prolific_worker)["total"] == {"GBP": Decimal("6.00")}
    # Active time measured: 15 of the 60 minutes count.
    assert pay.worker_earnings(worker=workers["ann2"],
                               project=paid_project)["today"] == {"GBP": Decimal("3.00")}
    assert pay.worker_earnings(worker=workers["val1"])["rows"] == []

    summary = pay.project_pay(project=paid_project)
    stages = {row["stage"].kind: row for row in summary["stage_rows"]}
    assert list(stages) == ["newsqa_question", "newsqa_answer", "newsqa_validate"]
    assert (stages["newsqa_question"]["submissions"], stages["newsqa_question"]["amount"]) \
        == (1, Decimal("0.50"))
    answer = stages["newsqa_answer"]
    assert (answer["submissions"], answer["active_hours"], answer["amount"]) \
        == (2, 0.75, Decimal("9.00"))
    assert summary["total"] == Decimal("9.50")
    # No validation is finished yet: no cost per finished item.
    assert summary["items_done"] == 0 and summary["cost_per_item"] is None

    _validate(paid_project, workers["val1"], committed)
    summary = pay.project_pay(project=paid_project)
    assert summary["total"] == Decimal("9.75")
    assert summary["items_done"] == 1 and summary["cost_per_item"] == Decimal("9.75")
    assert summary["last_stage"].kind == "newsqa_consolidate"
    assert sum(p["submissions"] for p in summary["series"]["points"]) == 4
    assert sum(p["cost"] for p in summary["series"]["points"]) == Decimal("9.75")
    assert summary["series"]["unit"] == "hour"


def test_cost_per_finished_item_counts_the_records_agreed_without_validation(
        paid_project, workers, committed, client_for, admin_user):
    """NewsQA's finished item is the consolidated question, whether agreed at answer
    sourcing or after validation: validation, the last stage people work, sees only the
    questions without agreement (none here), so counting its items showed no cost per
    finished item for a finished dataset (or many times the cost where few needed it)."""
    item = _ask(paid_project, workers["questioner"], committed)
    weiss = {"spans": [phrase_span(item, "Dario Weiss")]}
    for name in ("ann1", "ann2"):
        _work(paid_project, workers[name], item, weiss, committed, minutes=30, active_s=900)
    assert not Item.objects.filter(project=paid_project, stage__kind="newsqa_validate").exists()
    assert Item.objects.get(project=paid_project, stage__kind="newsqa_consolidate").status \
        == "done"
    summary = pay.project_pay(project=paid_project)
    assert summary["total"] == Decimal("6.50")  # 0.50 + 2 x 15 active minutes at 12.00
    assert summary["items_done"] == 1 and summary["cost_per_item"] == Decimal("6.50")
    page = client_for(admin_user).get(reverse("annotation:project_pay",
                                              args=[paid_project.pk])).content.decode()
    assert 'data-testid="cost-per-item">6.50<' in page
    assert "1 done in Cleanup and consolidation" in page


# Active time: what hourly pay is paid on -------------------------------------------------

def test_active_time_is_held_to_the_time_the_worker_held_the_task(
    paid_project, workers, committed
):
    """The page's measure comes from the worker's browser: hours claimed for a task held a
    minute are paid as that minute (12.00 an hour: 0.20), on the page and through the API."""
    item = _ask(paid_project, workers["questioner"], committed)
    task = claim_item(workers["ann1"], paid_project, item)
    held_since(task, seconds=60)
    with committed():
        submission = engine.task_submit(assignment_id=task.pk, worker=workers["ann1"],
                                        payload={"no_answer": True}, active_time_s=36_000)
    assert 60 <= submission.active_time_s < 70
    assert Submission.objects.get(pk=submission.pk).active_time_s == submission.active_time_s
    assert pay.worker_earnings(worker=workers["ann1"])["total"] == {"GBP": Decimal("0.20")}
    # Through the API, with an honest measure (kept) and an inflated one (cut).
    api = APIClient()
    api.force_authenticate(workers["ann2"])
    task = claim_item(workers["ann2"], paid_project, item)
    held_since(task, seconds=120)
    with committed():
        done = api.post(reverse("api_task_submit", args=[task.pk]),
                        {"payload": {"no_answer": True}, "active_time_s": 45.5}, format="json")
    assert done.status_code == 201, done.content
    assert Submission.objects.get(pk=done.json()["submission"]).active_time_s == 45.5


@pytest.mark.parametrize("sent", ["abc", "-5", "inf", "nan", "1e400", float("-inf"), -0.5])
def test_an_active_time_that_is_no_time_is_refused_and_nothing_is_written(
    paid_project, workers, committed, client_for, sent
):
    item = _ask(paid_project, workers["questioner"], committed)
    task = claim_item(workers["ann1"], paid_project, item)
    with pytest.raises(ValidationError) as refused:
        engine.task_submit(assignment_id=task.pk, worker=workers["ann1"],
                           payload={"no_answer": True}, active_time_s=sent)
    [message] = refused.value.messages
    assert message.startswith("active_time_s: ") and str(sent)[:3] in message
    # The task page's form: the same message, 400, the task still the worker's.
    page = client_for(workers["ann1"]).post(
        reverse("annotation:task_detail", args=[task.pk]),
        {"flag": "no_answer", "active_time_s": str(sent)})
    assert page.status_code == 400 and message in html.unescape(page.content.decode())
    assert not Submission.objects.filter(item=item, worker=workers["ann1"]).exists()
    assert Assignment.objects.get(pk=task.pk).status == "active"


def test_active_times_stored_before_the_check_are_held_by_the_migration(
    paid_project, workers, prolific_worker, worked, committed, settings
):
    """``0013_submission_active_time_held`` on rows as the old code could store them."""
    import importlib
    from types import SimpleNamespace

    from django.apps import apps

    held = importlib.import_module("annotation.migrations.0013_submission_active_time_held")
    answers = list(Submission.objects.filter(stage__kind="newsqa_answer").order_by("id"))
    question = Submission.objects.get(stage__kind="newsqa_question")
    Submission.objects.filter(pk=answers[0].pk).update(time_on_task_s=60,
                                                       active_time_s=float("inf"))
    Submission.objects.filter(pk=answers[1].pk).update(time_on_task_s=60, active_time_s=-5)
    Submission.objects.filter(pk=question.pk).update(time_on_task_s=0, active_time_s=1e9)
    settings.CROWDQA_LEASE_MINUTES = 30
    held.hold(apps, SimpleNamespace(connection=connection))
    assert [Submission.objects.get(pk=s.pk).active_time_s
            for s in (answers[0], answers[1], question)] == [60.0, None, 1800.0]
    assert pay.worker_earnings(worker=prolific_worker)["total"] == {"GBP": Decimal("0.20")}


def test_earnings_today_and_in_total_with_yesterdays_work_and_bonuses(
    paid_project, workers, prolific_worker, worked, committed
):
    """The task page's figures from one statement: yesterday's submissions and bonuses
    count in the total, not today; today's in both; a project's bonuses only for it."""
    from datetime import timedelta

    from django.utils import timezone

    ann2 = workers["ann2"]
    yesterday = timezone.now() - timedelta(days=1, hours=1)
    Submission.objects.filter(worker=prolific_worker).update(created_at=yesterday)
    assert pay.worker_earnings(worker=prolific_worker) == {
        "today": {"GBP": Decimal("0.00")}, "total": {"GBP": Decimal("6.00")},
        "rows": [{"currency": "GBP", "today": Decimal("0.00"), "total": Decimal("6.00")}],
        "done_today": 0,
    }
    old = Bonus.objects.create(project=paid_project, user=ann2, amount=Decimal("1.25"),
                               reason="yesterday")
    Bonus.objects.filter(pk=old.pk).update(created_at=yesterday)
    Bonus.objects.create(project=paid_project, user=ann2, amount=Decimal("0.10"),
                         reason="today")
    other = Project.objects.create(name="Other paid project", recipe=paid_project.recipe,
                                   currency="USD")
    Bonus.objects.create(project=other, user=ann2, amount=Decimal("2.00"), reason="other")
    everywhere = pay.worker_earnings(worker=ann2)
    assert everywhere["total"] == {"GBP": Decimal("4.35"), "USD": Decimal("2.00")}
    assert everywhere["today"] == {"GBP": Decimal("3.10"), "USD": Decimal("2.00")}
    assert everywhere["done_today"] == 1
    here = pay.worker_earnings(worker=ann2, project=paid_project)
    assert here["total"] == {"GBP": Decimal("4.35")} and here["today"] == {"GBP": Decimal("3.10")}
    assert pay.worker_earnings(worker=ann2, project=other)["total"] == {"USD": Decimal("2.00")}



def test_cost_over_time_is_per_day_when_the_work_spans_days(paid_project, workers, worked):

    # The question was written three weeks ago (as if the project had run since then).
    Submission.objects.filter(worker=workers["questioner"]).update(
        created_at=F("created_at") - timedelta(days=21))
    series = pay.project_pay(project=paid_project)["series"]
    assert series["unit"] == "day"
    assert len(series["points"]) == 22  # every day, the quiet ones included
    first, *quiet, last = series["points"]
    assert (first["cost"], first["submissions"]) == (Decimal("0.50"), 1)
    assert all(p["submissions"] == 0 and p["cost"] == Decimal("0.00") for p in quiet)
    assert (last["cost"], last["submissions"]) == (Decimal("9.00"), 2)
    plot = series["plots"]["cost"]
    [line] = [line for line in plot.lines if line["title"]]  # the series, not the axes
    assert line["points"].count(",") == 22
    assert {t["text"] for t in plot.texts} >= {first["label"], last["label"]}


# Rounding: the parts add up to the totals -----------------------------------------------

def test_apportion_shares_whole_cents_by_largest_remainder():
    thirds = {"a": Decimal(1) / 3, "b": Decimal(1) / 3, "c": Decimal(1) / 3}
    assert pay.apportion(Decimal("1.00"), thirds) == {
        "a": Decimal("0.34"), "b": Decimal("0.33"), "c": Decimal("0.33")}
    assert pay.apportion(Decimal("0.67"), {"x": Decimal("0.3333"), "y": Decimal("0.3334")}) \
        == {"x": Decimal("0.33"), "y": Decimal("0.34")}  # the larger remainder first
    assert pay.apportion(Decimal("0.50"), {"q": Decimal("0.5")}) == {"q": Decimal("0.50")}
    assert pay.apportion(Decimal("0.00"), {}) == {}
    # More than the total (work read after it): the smallest remainders give back.
    assert pay.apportion(Decimal("0.50"), {"h1": Decimal("0.50"), "h2": Decimal("0.01")}) \
        == {"h1": Decimal("0.50"), "h2": Decimal("0.00")}


def _answered(project, workers, committed, *, by, active_s=100.0):
    """The questioner asks; each worker in ``by`` answers in ``active_s`` active seconds
    (100 s at 12.00 an hour: 0.3333, paid 0.33)."""
    item = _ask(project, workers["questioner"], committed)
    for name in by:
        _work(project, workers[name], item, {"no_answer": True}, committed, minutes=5,
              active_s=active_s)
    return item


def test_stage_costs_and_cost_over_time_add_up_to_the_total_the_csv_pays(
    client_for, paid_project, workers, admin_user, committed
):
    """Two answerers each earn 0.3333 (paid 0.33): the answer stage cost 0.66, not the
    0.67 its exact sum rounds to, so the stages add up to the 1.16 of work; the cost over
    time too (it showed 1.17), and the CSV pays those 1.16."""
    _answered(paid_project, workers, committed, by=("ann1", "ann2"))
    summary = pay.project_pay(project=paid_project)
    assert summary["work_total"] == summary["total"] == Decimal("1.16")
    stages = {row["stage"].kind: row["amount"] for row in summary["stage_rows"]}
    assert stages == {"newsqa_question": Decimal("0.50"), "newsqa_answer": Decimal("0.66"),
                      "newsqa_validate": Decimal("0.00")}
    assert sum(stages.values()) == summary["work_total"]
    assert sum(p["cost"] for p in summary["series"]["points"]) == summary["total"]
    assert pay.payments_export(project=paid_project).total == summary["total"]

    page = client_for(admin_user).get(
        reverse("annotation:project_pay", args=[paid_project.pk])).content.decode()
    assert 'data-testid="total-cost">1.16<' in page and "work 1.16 · bonuses 0.00" in page
    costs = page.split('data-testid="stage-costs"')[1].split("</table>")[0]
    assert [row.split("<td>")[-1].split("</td>")[0] for row in costs.split("</tr>")[1:-1]] \
        == ["0.50", "0.66", "0.00"]


def test_a_workers_pay_shared_over_days_adds_up_to_what_they_are_paid(
    paid_project, workers, committed
):
    """ann1 answers two questions 0.3333 each, three days apart: paid 0.67 once, so one
    of the two days shows 0.34 (each day's own rounding made 0.33 twice: 0.66)."""
    first = _answered(paid_project, workers, committed, by=("ann1",))
    _answered(paid_project, workers, committed, by=("ann1",))
    Submission.objects.filter(item__in=[first, first.parent]).update(
        created_at=F("created_at") - timedelta(days=3))
    assert pay.worker_earnings(worker=workers["ann1"])["total"] == {"GBP": Decimal("0.67")}
    summary = pay.project_pay(project=paid_project)
    assert summary["series"]["unit"] == "day"
    busy = [p["cost"] for p in summary["series"]["points"] if p["submissions"]]
    assert sorted(busy) == [Decimal("0.83"), Decimal("0.84")]  # 0.50 + 0.33 and + 0.34
    assert sum(p["cost"] for p in summary["series"]["points"]) == summary["total"] \
        == Decimal("1.67")
    assert {r["stage"].kind: r["amount"] for r in summary["stage_rows"]}["newsqa_answer"] \
        == Decimal("0.67")


def test_earnings_over_projects_are_what_each_projects_csv_pays(
    paid_project, news_corpus, workers, admin_user, committed
):
    """0.3333 in each of two projects is paid 0.33 by each project's export: the worker's
    pages say 0.66 in total, not the 0.67 the sum of both rounds to."""
    other = engine.project_create(name="Paid NewsQA 2", recipe="newsqa", corpus=news_corpus,
                                  user=admin_user)
    answer = other.stages.get(kind="newsqa_answer")
    engine.stage_params_update(stage=answer, params={"pay_model": "hourly", "pay_rate": 12.0})
    for user in workers.values():
        engine.project_member_add(project=other, user=user, role=Role.ANNOTATOR)
    with committed():
        engine.project_start(project=other, actor=admin_user)
    for project in (paid_project, other):
        _answered(project, workers, committed, by=("ann1",))
    everywhere = pay.worker_earnings(worker=workers["ann1"])
    assert everywhere["total"] == everywhere["today"] == {"GBP": Decimal("0.66")}
    paid = [{r["username"]: r["amount"] for r in _rows(pay.payments_export(project=project))}
            for project in (paid_project, other)]
    assert [by_worker["ann1"] for by_worker in paid] == ["0.33", "0.33"]


def test_stages_without_pay_parameters_pay_nothing(paid_project, workers, committed):
    question = paid_project.stages.get(kind="newsqa_question")
    params = {k: v for k, v in question.params.items() if not k.startswith("pay_")}
    type(question).objects.filter(pk=question.pk).update(params=params)  # an older stage
    _ask(paid_project, workers["questioner"], committed)
    assert pay.worker_earnings(worker=workers["questioner"])["rows"] == []
    rows = {r["stage"].kind: r for r in pay.project_pay(project=paid_project)["stage_rows"]}
    assert rows["newsqa_question"]["submissions"] == 1
    assert rows["newsqa_question"]["amount"] == Decimal("0.00")


def test_bonuses_add_to_earnings_and_need_amount_reason_and_membership(
    paid_project, workers, worked, admin_user, checker
):
    bonus = pay.bonus_add(project=paid_project, worker=workers["ann2"], amount="2.50",
                          reason="Careful answers", actor=admin_user)
    assert (bonus.amount, bonus.created_by) == (Decimal("2.50"), admin_user)
    assert pay.worker_earnings(worker=workers["ann2"])["total"] == {"GBP": Decimal("5.50")}
    row = next(w for w in pay.project_pay(project=paid_project)["workers"]
               if w["username"] == "ann2")
    assert (row["earned"], row["bonuses"], row["total"], row["owed"]) == (
        Decimal("3.00"), Decimal("2.50"), Decimal("5.50"), Decimal("5.50"))

    for kwargs, field in (
        ({"worker": workers["ann2"], "amount": "0", "reason": "x"}, "amount"),
        ({"worker": workers["ann2"], "amount": "-1", "reason": "x"}, "amount"),
        ({"worker": workers["ann2"], "amount": "lots", "reason": "x"}, "amount"),
        ({"worker": workers["ann2"], "amount": "1.234", "reason": "x"}, "amount"),
        ({"worker": workers["ann2"], "amount": "1", "reason": "  "}, "reason"),
        ({"worker": checker, "amount": "1", "reason": "not a member"}, "worker"),
        ({"worker": None, "amount": "1", "reason": "nobody"}, "worker"),
    ):
        with pytest.raises(ValidationError) as caught:
            pay.bonus_add(project=paid_project, actor=admin_user, **kwargs)
        assert list(caught.value.message_dict) == [field]
        assert caught.value.messages[0].startswith(f"{field}:")
    # A bonus too large is refused saying what the limit is (it said only "more than 0").
    with pytest.raises(ValidationError) as caught:
        pay.bonus_add(project=paid_project, worker=workers["ann2"], amount="100000000",
                      reason="a typo", actor=admin_user)
    assert "below 100,000,000" in caught.value.messages[0]
    assert Bonus.objects.count() == 1


def test_wages_below_the_minimum_are_flagged_on_the_page(
    client_for, paid_project, workers, prolific_worker, worked, admin_user
):
    pay.project_pay_settings_update(project=paid_project, currency="gbp", min_hourly_wage="15")
    paid_project.refresh_from_db()
    assert (paid_project.currency, paid_project.min_hourly_wage) == ("GBP", Decimal("15.00"))
    # ann2 earns 3.00 in 0.25 active hours (12.00 an hour); a bonus lifts it to 16.00.
    pay.bonus_add(project=paid_project, worker=workers["ann2"], amount="1",
                  reason="Late-night shift", actor=admin_user)
    rows = {w["username"]: w for w in pay.project_pay(project=paid_project)["workers"]}
    assert rows[prolific_worker.username]["hourly_wage"] == Decimal("12.00")
    assert rows[prolific_worker.username]["below_minimum"] is True
    assert (rows["ann2"]["hourly_wage"], rows["ann2"]["below_minimum"]) == (
        Decimal("16.00"), False)
    assert rows["questioner"]["below_minimum"] is False  # seconds for 0.50: far above

    page = client_for(admin_user).get(
        reverse("annotation:project_pay", args=[paid_project.pk])).content.decode()
    flagged = page.split(f'data-testid="pay-worker-{prolific_worker.username}"')[1]
    assert 'data-testid="wage-warning"' in flagged.split("</tr>")[0]
    assert 'data-testid="wage-warning"' not in page.split('data-testid="pay-worker-ann2"')[1] \
        .split("</tr>")[0]
    assert 'data-testid="wage-alert"' in page and "1 worker earns less" in page
    # No minimum, no flag.
    pay.project_pay_settings_update(project=paid_project, currency="GBP", min_hourly_wage="0")
    assert not any(w["below_minimum"] for w in pay.project_pay(project=paid_project)["workers"])


def test_pay_settings_are_validated(paid_project, workers, worked):
    with pytest.raises(ValidationError, match="currency: 'EURO'"):
        pay.project_pay_settings_update(project=paid_project, currency="EURO",
                                        min_hourly_wage="0")
    with pytest.raises(ValidationError, match="min_hourly_wage"):
        pay.project_pay_settings_update(project=paid_project, currency="EUR",
                                        min_hourly_wage="-2")
    pay.project_pay_settings_update(project=paid_project, currency="eur", min_hourly_wage="9.5")
    assert pay.worker_earnings(worker=workers["ann2"])["total"] == {"EUR": Decimal("3.00")}
    pay.payments_export(project=paid_project)
    with pytest.raises(ValidationError, match="already exported in EUR"):
        pay.project_pay_settings_update(project=paid_project, currency="USD",
                                        min_hourly_wage="0")


@pytest.mark.parametrize(("given", "plain"), [
    ("1e2", "100.00"), ("100", "100.00"), ("2.5", "2.50"), ("0.010", "0.01"), ("1E-2", "0.01"),
])
def test_amounts_are_kept_and_shown_as_plain_money(paid_project, workers, admin_user,
                                                   client_for, given, plain):
    """``1e2`` is a hundred, written 100.00 (it was stored right but announced as
    "1E+2"), for bonuses and the minimum hourly wage, in the service and on the page."""
    bonus = pay.bonus_add(project=paid_project, worker=workers["ann2"], amount=given,
                          reason="Careful answers", actor=admin_user)
    assert str(bonus.amount) == plain
    updated = pay.project_pay_settings_update(project=paid_project, currency="GBP",
                                              min_hourly_wage=given)
    assert str(updated.min_hourly_wage) == plain

    client = client_for(admin_user)
    url = reverse("annotation:project_pay", args=[paid_project.pk])
    page = client.post(url, {"action": "bonus", "username": "ann2", "amount": given,
                             "reason": "Thorough"}, follow=True).content.decode()
    assert f"Bonus of {plain} GBP added for ann2." in page
    page = client.post(url, {"action": "settings", "currency": "GBP", "min_hourly_wage": given},
                       follow=True).content.decode()
    assert f"Pay settings saved: GBP, minimum hourly wage {plain}." in page
    assert "E+" not in page and "E-" not in page


def test_a_minimum_wage_of_minus_zero_is_zero(paid_project):
    updated = pay.project_pay_settings_update(project=paid_project, currency="GBP",
                                              min_hourly_wage="-0")
    assert str(updated.min_hourly_wage) == "0.00"


def test_rates_are_shown_plainly():
    assert [pay.Rate("submission", Decimal(v)).shown for v in ("0.5", "0.125", "1e2", "1e-7")] \
        == ["0.50", "0.125", "100.00", "0.0000001"]


# Exports -----------------------------------------------------------------------------------

def test_exports_never_pay_twice_and_later_work_is_paid_in_the_next(
    paid_project, workers, prolific_worker, worked, admin_user, committed
):
    first = pay.payments_export(project=paid_project, actor=admin_user)
    assert first.period_start is None and first.created_by == admin_user
    assert {r["username"]: r["amount"] for r in _rows(first)} == {
        "questioner": "0.50", prolific_worker.username: "6.00", "ann2": "3.00"}
    assert first.total == Decimal("9.50") and first.lines.count() == 3
    assert "Nothing was sent" in first.note

    second = pay.payments_export(project=paid_project, actor=admin_user)
    assert second.content.splitlines() == [",".join(pay.CSV_COLUMNS)]
    assert second.total == Decimal("0") and second.lines.count() == 0
    assert second.period_start == first.period_end
    assert "only its header" in second.note

    # New work and a bonus after the first export: exactly that difference is paid.
    _validate(paid_project, workers["val1"], committed)
    pay.bonus_add(project=paid_project, worker=prolific_worker, amount="1.10",
                  reason="Quick and accurate", actor=admin_user)
    third = pay.payments_export(project=paid_project, actor=admin_user)
    assert {r["username"]: r["amount"] for r in _rows(third)} == {
        "val1": "0.25", prolific_worker.username: "1.10"}
    assert third.total == Decimal("1.35")
    assert third.period_start == second.period_end
    paid = dict(PaymentLine.objects.filter(export__project=paid_project).values("user__username")
                .annotate(total=Sum("amount")).values_list("user__username", "total"))
    assert paid == {"questioner": Decimal("0.50"), prolific_worker.username: Decimal("7.10"),
                    "ann2": Decimal("3.00"), "val1": Decimal("0.25")}
    summary = pay.project_pay(project=paid_project)
    assert summary["owed_total"] == Decimal("0") and summary["paid_total"] == Decimal("10.85")
    assert [e.rows for e in summary["exports"]] == [2, 0, 3]


def test_an_export_up_to_a_moment_pays_only_work_done_by_then(
    paid_project, workers, worked, committed
):
    cut = datetime.now(tz=paid_project.created_at.tzinfo)
    time.sleep(0.01)
    _validate(paid_project, workers["val1"], committed)
    early = pay.payments_export(project=paid_project, period_end=cut)
    assert "val1" not in {r["username"] for r in _rows(early)}
    assert pay.payments_export(project=paid_project).total == Decimal("0.25")
    with pytest.raises(ValidationError, match="period_end: before the end"):
        pay.payments_export(project=paid_project, period_end=cut)
    with pytest.raises(ValidationError, match="period_end: must not be in the future"):
        pay.payments_export(project=paid_project, period_end=cut + timedelta(days=1))


def test_the_csv_shows_marketplace_accounts_and_stable_pseudonyms(
    paid_project, workers, prolific_worker, worked
):
    export = pay.payments_export(project=paid_project)
    reader = csv.reader(io.StringIO(export.content))
    header = next(reader)
    assert header[:5] == ["platform", "external_id", "pseudonym", "amount", "currency"]
    # Columns are only added at the end: the earlier ones keep their place and meaning.
    assert header == ["platform", "external_id", "pseudonym", "amount", "currency",
                      "username", "period_start", "period_end",
                      "assignment_id", "external_study", "reason", "request_token"]
    rows = {r["username"]: r for r in _rows(export)}
    marketplace, local = rows[prolific_worker.username], rows["ann2"]
    assert (marketplace["platform"], marketplace["external_id"]) == ("prolific", PROLIFIC_ID)
    assert (local["platform"], local["external_id"]) == ("", "")
    assert local["amount"] == "3.00" and local["currency"] == "GBP"
    assert local["period_start"] == ""
    assert datetime.fromisoformat(local["period_end"]) == export.period_end
    pseudonyms = {r["pseudonym"] for r in rows.values()}
    assert len(pseudonyms) == 3
    assert all(p.startswith("W") and len(p) == 11 and int(p[1:], 16) >= 0 for p in pseudonyms)
    assert local["pseudonym"] == pay.worker_pseudonym(project=paid_project, user=workers["ann2"])
    assert PROLIFIC_ID not in local["pseudonym"] and "ann2" not in local["pseudonym"]


class RecordingBackend:
    """A payment backend that keeps what it was asked to pay."""

    name = "recording"
    calls: list[tuple[int, list[dict]]] = []

    def pay(self, export, rows):
        RecordingBackend.calls.append((export.pk, rows))
        return f"{len(rows)} recorded"


def test_the_payment_backend_is_chosen_by_setting(paid_project, worked, settings):
    settings.CROWDQA_PAYMENT_BACKEND = "tests.annotation.test_pay.RecordingBackend"
    RecordingBackend.calls.clear()
    export = pay.payments_export(project=paid_project)
    assert export.backend == "recording" and export.note == "3 recorded"
    (pk, rows), = RecordingBackend.calls
    assert pk == export.pk
    assert sum(row["amount"] for row in rows) == Decimal("9.50")


@pytest.mark.django_db(transaction=True)
def test_two_exports_at_once_never_pay_the_same_work_twice(monkeypatch):
    """PostgreSQL: the second export waits for the first's lock, then finds it paid."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no row locks: concurrency is tested on PostgreSQL")
    admin = user_with_roles("adm", Role.ADMIN)
    worker = user_with_roles("ann", Role.ANNOTATOR)
    project = engine.project_create(name="Concurrent pay", recipe="newsqa", user=admin)
    engine.project_member_add(project=project, user=worker, role=Role.ANNOTATOR)
    pay.bonus_add(project=project, worker=worker, amount="4.00", reason="Pilot", actor=admin)
    slow = pay._paid_by_worker

    def paid_slowly(project):
        found = slow(project)
        time.sleep(0.3)  # both exports would read "nothing paid" without the lock
        return found

    monkeypatch.setattr(pay, "_paid_by_worker", paid_slowly)
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def export():
        try:
            start.wait()
            pay.payments_export(project=project)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=export) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert errors == []
    assert PaymentExport.objects.filter(project=project).count() == 2
    assert list(PaymentLine.objects.filter(export__project=project)
                .values_list("amount", flat=True)) == [Decimal("4.00")]


def test_the_command_writes_the_csv_and_records_the_export(paid_project, worked, tmp_path,
                                                           workers):
    out = tmp_path / "payments.csv"
    stdout = io.StringIO()
    call_command("payments_export", "--project", "Paid NewsQA", "--out", str(out),
                 stdout=stdout)
    export = PaymentExport.objects.get(project=paid_project)
    assert out.read_text(encoding="utf-8") == export.content
    assert out.read_text(encoding="utf-8").startswith(
        "platform,external_id,pseudonym,amount,currency")
    assert len(_rows(export)) == 3
    summary = stdout.getvalue().strip()
    assert len(summary.splitlines()) == 1
    assert "3 row(s)" in summary and "9.50 GBP" in summary and str(out) in summary
    # Again: nothing owed, header only, recorded too.
    call_command("payments_export", "--project", "Paid NewsQA", "--out", str(out),
                 stdout=io.StringIO())
    assert out.read_text(encoding="utf-8").count("\n") == 1
    assert PaymentExport.objects.filter(project=paid_project).count() == 2
    with pytest.raises(CommandError, match="no project named 'No such project'"):
        call_command("payments_export", "--project", "No such project", "--out", str(out))
    # A file that cannot be written: said before anything is recorded (it was recorded,
    # then the write failed with a traceback, and the next export skipped those lines).
    pay.bonus_add(project=paid_project, worker=workers["ann2"], amount="1.00", reason="late")
    with pytest.raises(CommandError, match="--out: cannot write /proc/x.csv"):
        call_command("payments_export", "--project", "Paid NewsQA", "--out", "/proc/x.csv")
    assert PaymentExport.objects.filter(project=paid_project).count() == 2
    # The reason the workers are shown: the admin's, or refused before anything is recorded.
    fresh = tmp_path / "fresh.csv"
    with pytest.raises(CommandError, match=r"^--reason: at most 300 characters \(301 given\)"):
        call_command("payments_export", "--project", "Paid NewsQA", "--out", str(fresh),
                     "--reason", "x" * 301)
    assert not fresh.exists() and PaymentExport.objects.filter(project=paid_project).count() == 2
    call_command("payments_export", "--project", "Paid NewsQA", "--out", str(fresh),
                 "--reason", "Thank you!", stdout=io.StringIO())
    [row] = csv.DictReader(io.StringIO(fresh.read_text(encoding="utf-8")))
    assert (row["username"], row["amount"], row["reason"]) == ("ann2", "1.00", "Thank you!")


# Marketplaces: what MTurk's SendBonus and Prolific's bulk bonus need ------------------------

def _mturk(study, worker_id, assignment_id, hit_id="HIT1", outcome="quota"):
    """An MTurk worker accepting a HIT of ``study`` (a new assignment each time) and ending
    the session with ``outcome`` (None: still working): "quota" and "no_work" give them
    MTurk's form, so the assignment is submitted."""
    user, _, session = studies.study_arrive(study=study, arrival=Arrival(
        platform="mturk", external_id=worker_id, session_key=assignment_id,
        external_study=hit_id, submit_to="https://www.mturk.com"))
    if outcome is not None:
        studies.session_finish(session=session, outcome=outcome)
    return user


def _set_currency(project, currency):
    pay.project_pay_settings_update(project=project, currency=currency, min_hourly_wage="0")


@pytest.fixture
def other_project(news_corpus, admin_user):
    return engine.project_create(name="Another NewsQA", recipe="newsqa", corpus=news_corpus,
                                 user=admin_user)


def test_mturk_rows_carry_an_assignment_a_reason_and_a_request_token(
    paid_project, other_project, workers, prolific_worker, admin_user, committed
):
    """SendBonus needs WorkerId, AssignmentId, BonusAmount in US dollars and Reason: each
    MTurk row names the worker's latest assignment in the project (else their latest
    anywhere), the reason, and a token that makes a retried SendBonus pay once."""
    _set_currency(paid_project, "USD")
    hit = studies.study_create(project=paid_project, platform="mturk", completion_code="DONE")
    elsewhere = studies.study_create(project=other_project, platform="mturk",
                                     completion_code="DONE")
    worker = _mturk(hit, "A1WORKER", "ASSIGN1", hit_id="HITA")
    assert _mturk(hit, "A1WORKER", "ASSIGN2", hit_id="HITB") == worker
    assert _mturk(elsewhere, "A1WORKER", "ELSEWHERE") == worker  # later, another project
    item = _ask(paid_project, workers["questioner"], committed)
    _work(paid_project, worker, item, {"no_answer": True}, committed, minutes=30)  # 6.00
    # Another MTurk worker, a member here without a HIT of this project: their latest.
    visitor = _mturk(elsewhere, "A2VISITOR", "VISIT1")
    engine.project_member_add(project=paid_project, user=visitor, role=Role.ANNOTATOR)
    pay.bonus_add(project=paid_project, worker=visitor, amount="1e0", reason="Pilot")
    pay.bonus_add(project=paid_project, worker=prolific_worker, amount="2", reason="Pilot")

    export = pay.payments_export(project=paid_project, actor=admin_user)
    rows = {r["external_id"]: r for r in _rows(export) if r["platform"]}
    mturk = rows["A1WORKER"]
    assert (mturk["platform"], mturk["amount"], mturk["currency"]) == ("mturk", "6.00", "USD")
    assert (mturk["assignment_id"], mturk["external_study"]) == ("ASSIGN2", "HITB")
    assert mturk["reason"] == ("Payment for your work on Paid NewsQA up to "
                               f"{export.period_end.astimezone(UTC):%Y-%m-%d %H:%M} UTC")
    assert mturk["request_token"] == f"crowdqa-{export.pk}-{mturk['pseudonym']}"
    assert len(mturk["request_token"]) <= 64  # SendBonus's UniqueRequestToken
    assert (rows["A2VISITOR"]["assignment_id"], rows["A2VISITOR"]["amount"]) \
        == ("VISIT1", "1.00")
    assert len({r["request_token"] for r in rows.values() if r["platform"] == "mturk"}) == 2
    # Prolific rows: no assignment or token, their study; the same reason for everybody.
    prolific = rows[PROLIFIC_ID]
    assert (prolific["assignment_id"], prolific["request_token"]) == ("", "")
    assert prolific["reason"] == mturk["reason"]
    assert export.warnings == []

    # The admin's reason, on one line; a reason too long is refused before anything.
    pay.bonus_add(project=paid_project, worker=worker, amount="0.50", reason="Extra")
    with pytest.raises(ValidationError, match=r"reason: at most 300 characters \(301 given\)"):
        pay.payments_export(project=paid_project, reason="x" * 301)
    again = pay.payments_export(project=paid_project, reason="  Thanks for the\n answers ")
    [row] = _rows(again)
    assert (row["reason"], row["amount"], row["assignment_id"]) == (
        "Thanks for the answers", "0.50", "ASSIGN2")
    assert row["request_token"] != mturk["request_token"]


def test_an_mturk_worker_with_no_assignment_is_left_out_with_a_warning(paid_project, workers,
                                                                        tmp_path):
    """A row with no AssignmentId is one SendBonus refuses: the worker is left out, still
    owed, and the export says so."""
    _set_currency(paid_project, "USD")
    user = workers["ann3"]  # an MTurk account whose sessions are gone (its study deleted)
    ExternalAccount.objects.create(user=user, platform="mturk", external_id="A3GONE")
    pay.bonus_add(project=paid_project, worker=user, amount="3", reason="Pilot")
    export = pay.payments_export(project=paid_project)
    assert _rows(export) == [] and export.lines.count() == 0
    [warning] = export.warnings
    assert warning.startswith("1 MTurk worker(s) owed 3.00 USD have no submitted assignment "
                              "to attach a bonus to (none of their sessions reached its "
                              "completion: ann3): SendBonus would refuse them, so they were "
                              "left out of this export and are still owed."), warning
    owed = {w["username"]: w["owed"] for w in pay.project_pay(project=paid_project)["workers"]}
    assert owed == {"ann3": Decimal("3.00")}


def test_mturk_bonuses_go_on_an_assignment_the_worker_submitted(
    paid_project, other_project, admin_user, tmp_path
):
    """SendBonus takes an assignment the worker submitted: not their latest when they were
    screened out of it (told to return the HIT) or never finished it. Their latest
    submitted one is used, here in the project, else elsewhere; with none they are left
    out, still owed, until they submit one."""
    _set_currency(paid_project, "USD")
    hit = studies.study_create(project=paid_project, platform="mturk", completion_code="DONE")
    elsewhere = studies.study_create(project=other_project, platform="mturk",
                                     completion_code="DONE")
    done = _mturk(hit, "A1DONE", "SUBMITTED1", hit_id="HITA")
    assert _mturk(hit, "A1DONE", "NO_WORK1", hit_id="HITB", outcome="no_work") == done
    assert _mturk(hit, "A1DONE", "RETURNED1", hit_id="HITC", outcome="screened_out") == done
    assert _mturk(hit, "A1DONE", "ABANDONED1", hit_id="HITD", outcome=None) == done
    away = _mturk(elsewhere, "A2AWAY", "ELSEWHERE2", hit_id="HITE")
    assert _mturk(hit, "A2AWAY", "RETURNED2", outcome="screened_out") == away
    never = _mturk(hit, "A3NEVER", "RETURNED3", outcome="screened_out")
    assert _mturk(hit, "A3NEVER", "WORKING3", outcome=None) == never
    for worker in (done, away, never):
        pay.bonus_add(project=paid_project, worker=worker, amount="2", reason="Pilot")

    out = tmp_path / "payments.csv"
    stderr = io.StringIO()
    call_command("payments_export", "--project", "Paid NewsQA", "--out", str(out),
                 stdout=io.StringIO(), stderr=stderr)
    rows = {r["external_id"]: r for r in csv.DictReader(io.StringIO(out.read_text()))}
    assert {key: (r["assignment_id"], r["external_study"], r["amount"])
            for key, r in rows.items()} == {"A1DONE": ("NO_WORK1", "HITB", "2.00"),
                                            "A2AWAY": ("ELSEWHERE2", "HITE", "2.00")}
    [warning] = stderr.getvalue().strip().splitlines()
    assert warning.startswith(f"warning: 1 MTurk worker(s) owed 2.00 USD have no submitted "
                              f"assignment to attach a bonus to (none of their sessions "
                              f"reached its completion: {never.username})"), warning
    owed = {w["username"]: w["owed"] for w in pay.project_pay(project=paid_project)["workers"]}
    assert owed == {done.username: ZERO, away.username: ZERO, never.username: Decimal("2.00")}

    # Once they submit an assignment, the next export pays what they are owed on it.
    _mturk(hit, "A3NEVER", "SUBMITTED3", outcome="quota")
    later = pay.payments_export(project=paid_project)
    [row] = _rows(later)
    assert (row["external_id"], row["assignment_id"], row["amount"]) \
        == ("A3NEVER", "SUBMITTED3", "2.00")
    assert later.warnings == []


def test_mturk_workers_are_left_out_of_an_export_not_in_us_dollars(
    paid_project, workers, admin_user, tmp_path
):
    """A bonus sent in US dollars of an amount worked out in pounds would pay the wrong
    sum: the export leaves MTurk workers out and says so, they stay owed, and once the
    currency is USD the next export pays them."""
    study = studies.study_create(project=paid_project, platform="mturk", completion_code="D")
    worker = _mturk(study, "A1WORKER", "ASSIGN1")
    pay.bonus_add(project=paid_project, worker=worker, amount="5", reason="Pilot")
    out = tmp_path / "payments.csv"
    stderr = io.StringIO()
    call_command("payments_export", "--project", "Paid NewsQA", "--out", str(out),
                 stdout=io.StringIO(), stderr=stderr)
    export = PaymentExport.objects.get()
    assert _rows(export) == [] and export.total == Decimal("0")
    assert export.lines.count() == 0
    [warning] = export_warnings = stderr.getvalue().strip().splitlines()
    assert warning.startswith("warning: MTurk pays bonuses in US dollars only and this "
                              "project pays in GBP: 1 MTurk worker(s) owed 5.00 GBP were left "
                              f"out of this export and are still owed ({worker.username}).")
    assert "Set the project's currency to USD" in warning, export_warnings
    owed = {w["username"]: w["owed"] for w in pay.project_pay(project=paid_project)["workers"]}
    assert owed == {worker.username: Decimal("5.00")}

    _set_currency(paid_project, "USD")  # nothing was paid yet: it may still change
    paid = pay.payments_export(project=paid_project)
    [row] = _rows(paid)
    assert (row["external_id"], row["amount"], row["currency"], row["assignment_id"]) == (
        "A1WORKER", "5.00", "USD", "ASSIGN1")
    assert paid.warnings == []


def test_once_paid_in_another_currency_mturk_workers_are_paid_by_other_means(
    client_for, paid_project, workers, prolific_worker, worked, admin_user
):
    """Others were paid in pounds, so the currency is fixed: the page says the MTurk
    workers are left out and must be paid by other means, and keeps saying so."""
    study = studies.study_create(project=paid_project, platform="mturk", completion_code="D")
    worker = _mturk(study, "A1WORKER", "ASSIGN1")
    pay.bonus_add(project=paid_project, worker=worker, amount="5", reason="Pilot")
    client = client_for(admin_user)
    url = reverse("annotation:project_pay", args=[paid_project.pk])
    page = html.unescape(client.get(url).content.decode())
    alert = page.split('data-testid="mturk-currency-alert"')[1].split("</p>")[0]
    assert "US dollars only" in alert and "Set the currency to USD" in alert
    assert "1 MTurk worker is owed money now." in alert

    done = html.unescape(client.post(url, {"action": "export"}, follow=True).content.decode())
    assert "Payments exported: 3 row(s), total 9.50 GBP." in done
    assert ('class="message warning">MTurk pays bonuses in US dollars only and this project '
            "pays in GBP: 1 MTurk worker(s) owed 5.00 GBP were left out") in done
    assert "Payments were already exported in GBP, so the currency can no longer change: " \
           "pay them by other means." in done
    assert "A1WORKER" not in PaymentExport.objects.get().content
    alert = done.split('data-testid="mturk-currency-alert"')[1].split("</p>")[0]
    assert "pay MTurk workers by other means" in alert
    with pytest.raises(ValidationError, match="already exported in GBP"):
        _set_currency(paid_project, "USD")


def test_no_mturk_study_once_paid_in_another_currency(client_for, paid_project, workers,
                                                     worked, admin_user):
    """Once payments went out in pounds the currency is fixed, so an MTurk study opened
    then could never pay its workers: it is refused, saying why. Before any payment it is
    opened with a warning to set USD first."""
    url = reverse("annotation:study_action", args=[paid_project.pk])
    client = client_for(admin_user)
    page = html.unescape(client.post(url, {"action": "create", "platform": "mturk",
                                           "completion_code": "EARLY"}, follow=True)
                         .content.decode())
    assert "Study created" in page
    assert ("MTurk pays bonuses in US dollars only and this project pays in GBP: set its "
            "currency to USD on the pay page before the first payment export") in page
    Study.objects.filter(platform="mturk").delete()
    pay.payments_export(project=paid_project)
    with pytest.raises(ValidationError) as refused:
        studies.study_create(project=paid_project, platform="mturk", completion_code="LATE")
    assert refused.value.messages == [
        "platform: MTurk pays bonuses in US dollars only, and this project's payments were "
        "already exported in GBP: its MTurk workers could not be paid"]
    page = html.unescape(client.post(url, {"action": "create", "platform": "mturk",
                                           "completion_code": "LATE"}, follow=True)
                         .content.decode())
    assert "its MTurk workers could not be paid" in page
    assert not Study.objects.filter(platform="mturk").exists()
    studies.study_create(project=paid_project, platform="prolific", completion_code="P")


def test_a_project_with_an_mturk_study_keeps_to_us_dollars(client_for, paid_project,
                                                            admin_user):
    studies.study_create(project=paid_project, platform="mturk", completion_code="D")
    _set_currency(paid_project, "GBP")  # unchanged: saving the minimum wage still works
    _set_currency(paid_project, "usd")
    with pytest.raises(ValidationError) as refused:
        _set_currency(paid_project, "EUR")
    assert refused.value.messages == [
        "currency: EUR is not USD, and the project has an MTurk study: MTurk pays bonuses "
        "in US dollars only"]
    page = client_for(admin_user).get(
        reverse("annotation:project_pay", args=[paid_project.pk])).content.decode()
    assert 'data-testid="mturk-currency-alert"' not in page


def test_prolific_bulk_bonus_lines_per_study(
    client_for, paid_project, workers, prolific_worker, worked, admin_user, checker
):
    """Prolific takes ``participant_id,amount`` lines per study: each export offers its
    participants' lines for each study they took part in, to paste as they are."""
    other = studies.study_create(project=paid_project, platform="prolific",
                                 completion_code="C0DE43")
    second, _, _ = studies.study_arrive(study=other, arrival=Arrival(
        platform="prolific", external_id="6a0b1c2d3e4f5a6b7c8d9e0f", session_key="S2",
        external_study="STUDYB"))
    _, _, _ = studies.study_arrive(study=other, arrival=Arrival(
        platform="prolific", external_id=PROLIFIC_ID, session_key="S3",
        external_study="STUDYA"))  # the first participant's latest session
    pay.bonus_add(project=paid_project, worker=second, amount="1.5", reason="Pilot")
    export = pay.payments_export(project=paid_project)
    assert pay.prolific_bonuses(export) == {"STUDYA": [(PROLIFIC_ID, "6.00")],
                                            "STUDYB": [("6a0b1c2d3e4f5a6b7c8d9e0f", "1.50")]}
    assert PaymentExport.objects.get().prolific_studies == ["STUDYA", "STUDYB"]
    client = client_for(admin_user)
    page = client.get(reverse("annotation:project_pay", args=[paid_project.pk])).content.decode()
    base = reverse("annotation:payment_export_prolific", args=[export.pk])
    assert base == f"/manage/payments/{export.pk}/prolific.txt"
    for study, lines in (("STUDYA", f"{PROLIFIC_ID},6.00\n"),
                         ("STUDYB", "6a0b1c2d3e4f5a6b7c8d9e0f,1.50\n")):
        assert f'href="{base}?study={study}"' in page
        response = client.get(base, {"study": study})
        assert response.status_code == 200
        assert response["Content-Type"] == "text/plain; charset=utf-8"
        assert response.content.decode() == lines
    assert client.get(base, {"study": "NOSUCHSTUDY"}).status_code == 404
    assert client.get(base).status_code == 404  # every participant's study is known
    # An export from before the study column: one group, its lines under no study.
    PaymentExport.objects.filter(pk=export.pk).update(content="\n".join(
        ",".join(line.split(",")[:8]) for line in export.content.splitlines()) + "\n")
    assert sorted(client.get(base).content.decode().splitlines()) == sorted(
        [f"{PROLIFIC_ID},6.00", "6a0b1c2d3e4f5a6b7c8d9e0f,1.50"])
    assert client_for(checker).get(base).status_code == 403


def test_exports_made_before_are_given_their_prolific_studies_by_the_migration(
    client_for, paid_project, workers, prolific_worker, worked, admin_user
):
    """The pay page lists each export's Prolific studies from the export row, not its CSV;
    ``0016_payment_export_prolific_studies`` reads them once from the CSVs of exports
    made before it."""
    import importlib

    from django.apps import apps

    migration = importlib.import_module(
        "annotation.migrations.0016_payment_export_prolific_studies")
    export = pay.payments_export(project=paid_project)
    assert export.prolific_studies == [""]  # the worker's session named no study
    rows = list(csv.DictReader(io.StringIO(export.content)))
    [participant] = [row for row in rows if row["platform"] == "prolific"]
    participant["external_study"] = "STUDYZ"
    content = io.StringIO()
    writer = csv.DictWriter(content, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    PaymentExport.objects.filter(pk=export.pk).update(prolific_studies=[],
                                                      content=content.getvalue())
    page = client_for(admin_user).get(
        reverse("annotation:project_pay", args=[paid_project.pk])).content.decode()
    assert "?study=STUDYZ" not in page  # only what the row says
    migration.studies_of_earlier_exports(apps, None)
    assert PaymentExport.objects.get().prolific_studies == ["STUDYZ"]
    page = client_for(admin_user).get(
        reverse("annotation:project_pay", args=[paid_project.pk])).content.decode()
    assert "?study=STUDYZ" in page


# Pages -------------------------------------------------------------------------------------

def test_pay_pages_need_the_admin_role(client, client_for, paid_project, workers, worked,
                                       checker, admin_user):
    page = reverse("annotation:project_pay", args=[paid_project.pk])
    export = pay.payments_export(project=paid_project)
    download = reverse("annotation:payment_export_file", args=[export.pk])
    assert download == f"/manage/payments/{export.pk}.csv"
    assert client.get(page).status_code == 302  # anonymous: to the login page
    for user in (workers["ann2"], checker):
        other = client_for(user)
        assert other.get(page).status_code == 403
        assert other.get(f"{page}?page=2").status_code == 403
        assert other.post(page, {"action": "export"}).status_code == 403
        assert other.post(page, {"action": "bonus", "username": user.username, "amount": "5",
                                 "reason": "me"}).status_code == 403
        assert other.get(download).status_code == 403
    assert PaymentExport.objects.count() == 1 and Bonus.objects.count() == 0
    admin = client_for(admin_user)
    assert admin.get(page).status_code == 200
    response = admin.get(download)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith("attachment;")
    assert response.content.decode() == export.content


def test_the_admin_page_shows_costs_and_takes_bonuses_settings_and_exports(
    client_for, paid_project, workers, prolific_worker, worked, admin_user,
    django_assert_max_num_queries
):
    client = client_for(admin_user)
    url = reverse("annotation:project_pay", args=[paid_project.pk])
    page = client.get(url).content.decode()
    for testid in ("stage-costs", "pay-workers", "plot-pay-cost", "plot-pay-submissions",
                   "bonus-form", "pay-settings-form", "export-payments"):
        assert f'data-testid="{testid}"' in page
    assert 'data-testid="total-cost">9.50<' in page
    assert f"prolific: <code>{PROLIFIC_ID}</code>" in page
    assert 'name="csrfmiddlewaretoken"' in page
    assert '<input type="text" id="bonus-worker" name="username"' in page

    response = client.post(url, {"action": "bonus", "username": "ann2",
                                 "amount": "2.00", "reason": "Thorough"}, follow=True)
    assert response.redirect_chain == [(url, 302)]
    assert "Bonus of 2.00 GBP added for ann2." in response.content.decode()
    refused = client.post(url, {"action": "bonus", "username": "ann2",
                                "amount": "-3", "reason": "Thorough"}, follow=True)
    assert "amount: more than 0" in refused.content.decode()
    nobody = client.post(url, {"action": "bonus", "username": "ann9", "amount": "2.00",
                               "reason": "Thorough"}, follow=True).content.decode()
    assert "worker: nobody is named &#x27;ann9&#x27;." in nobody
    assert Bonus.objects.count() == 1

    client.post(url, {"action": "settings", "currency": "eur", "min_hourly_wage": "13.50"})
    paid_project.refresh_from_db()
    assert (paid_project.currency, paid_project.min_hourly_wage) == ("EUR", Decimal("13.50"))

    done = client.post(url, {"action": "export"}, follow=True).content.decode()
    assert "Payments exported: 3 row(s), total 11.50 EUR." in done
    assert 'data-testid="payment-exports"' in done and 'data-testid="download-export"' in done
    assert PaymentExport.objects.get().currency == "EUR"
    assert "Unknown action" in client.post(url, {"action": "pay-everyone"},
                                           follow=True).content.decode()

    # A fixed number of queries, however many workers and exports (the last two: the
    # MTurk workers and whether the project has an MTurk study, which needs USD; the page
    # of workers takes two, its count and its rows).
    with django_assert_max_num_queries(12):
        pay.project_pay(project=paid_project)


def _page_queries(client, url: str) -> tuple[str, int]:
    with CaptureQueriesContext(connection) as seen:
        response = client.get(url)
    assert response.status_code == 200
    return response.content.decode(), len(seen)


def test_the_pay_page_pages_its_workers_with_totals_and_exports_over_all_of_them(
    client_for, paid_project, workers, prolific_worker, worked, admin_user, monkeypatch
):
    """Four workers, two a page: each page shows its two, by username, with the pager;
    the totals, the alerts and the export are over all four, whichever page the admin is
    on; and a crowd three times as big costs the page no more queries."""
    monkeypatch.setattr(pay, "PAY_WORKERS_PER_PAGE", 2, raising=False)
    pay.project_pay_settings_update(project=paid_project, currency="GBP",
                                    min_hourly_wage="15")
    pay.bonus_add(project=paid_project, worker=workers["val2"], amount="1.25",
                  reason="Helpful", actor=admin_user)
    client = client_for(admin_user)
    url = reverse("annotation:project_pay", args=[paid_project.pk])
    names = sorted(["questioner", "ann2", prolific_worker.username, "val2"])
    first, _ = _page_queries(client, url)
    second, queries = _page_queries(client, f"{url}?page=2")
    for page, shown in ((first, names[:2]), (second, names[2:])):
        rows = re.findall(r'data-testid="pay-worker-([^"]+)"', page)
        assert rows == shown
        # 0.50 + 6.00 + 3.00 of work and 1.25 of bonus, owed by nobody paid yet
        assert 'data-testid="total-cost">10.75<' in page
        assert 'data-testid="owed-total">10.75<' in page
        assert "Workers (4)" in page and "Page 1 of 2 (4 in all)" not in second
        # ann2 (3.00 for 0.25 h) earns 12.00 an hour, the Prolific worker 6.00 for 0.5 h
        assert "2 workers earn less" in html.unescape(page)
    assert 'href="?page=2" rel="next"' in first and "Page 1 of 2 (4 in all)" in first
    assert 'href="?page=1" rel="prev"' in second and "Page 2 of 2 (4 in all)" in second

    client.post(f"{url}?page=2", {"action": "export"})
    export = PaymentExport.objects.get(project=paid_project)
    assert sorted(row["username"] for row in _rows(export)) == names
    assert export.total == Decimal("10.75")
    assert client.get(reverse("annotation:payment_export_file", args=[export.pk])
                      ).content.decode() == export.content

    for n in range(8):  # eight more people with a bonus: twelve workers, six pages
        extra = user_with_roles(f"extra{n}", Role.ANNOTATOR)
        engine.project_member_add(project=paid_project, user=extra, role=Role.ANNOTATOR)
        pay.bonus_add(project=paid_project, worker=extra, amount="1.00", reason="Welcome",
                      actor=admin_user)
    crowd, crowd_queries = _page_queries(client, f"{url}?page=2")
    assert crowd_queries == queries
    assert len(re.findall(r'data-testid="pay-worker-', crowd)) == 2
    assert 'data-testid="total-cost">18.75<' in crowd and "Page 2 of 6 (12 in all)" in crowd
    assert 'data-testid="owed-total">8.00<' in crowd


def test_workers_see_what_they_earned_on_their_pages(
    client_for, paid_project, workers, worked, admin_user
):
    pay.bonus_add(project=paid_project, worker=workers["ann2"], amount="0.50",
                  reason="Welcome", actor=admin_user)
    client = client_for(workers["ann2"])
    home = client.get(reverse("annotation:annotator_home")).content.decode()
    assert 'data-testid="earned-today-GBP">3.50 GBP<' in home
    assert 'data-testid="earned-total-GBP">3.50 GBP<' in home
    # Nothing earned yet: nothing shown.
    idle = client_for(workers["val2"]).get(reverse("annotation:annotator_home"))
    assert 'data-testid="earned"' not in idle.content.decode()
    # The task page's crumbs show the project's earnings.
    client = client_for(workers["ann2"])
    task = engine.task_claim(worker=workers["ann2"], project=paid_project)
    assert task is not None
    page = client.get(reverse("annotation:task_detail", args=[task.pk])).content.decode()
    crumbs = page.split('class="crumbs"')[1].split("</p>")[0]
    assert "earned today" in crumbs and "3.50 GBP" in crumbs
    assert Project.objects.get(pk=paid_project.pk).currency == "GBP"


def test_a_chinese_admin_reads_the_exports_warnings_note_and_plots_in_chinese(
    client_for, paid_project, workers, prolific_worker, worked, admin_user, monkeypatch
):
    """The export's note and warnings (MTurk workers left out of a GBP project) and the pay
    page's plot titles were English f-strings on the Chinese pay page: they go through the
    catalogue (here holding this change's msgids, as the catalogue will)."""
    from django.utils.translation import trans_real

    catalogue = trans_real.translation("zh-hans")._catalog._catalogs[0]
    wanted = {
        "Cost per hour (%(currency)s)": "每小时成本（%(currency)s）",
        "Submissions per hour": "每小时提交数",
        "Nothing was sent: download the CSV and pay its %(rows)s row(s) (%(total)s "
        "%(currency)s) on the platform or by other means.":
            "未发送任何款项：请下载 CSV，在平台上或通过其他方式支付其中的 %(rows)s 行"
            "（%(total)s %(currency)s）。",
        "MTurk pays bonuses in US dollars only and this project pays in %(currency)s: "
        "%(n)s MTurk worker(s) owed %(amount)s %(currency)s were left out of this export "
        "and are still owed (%(names)s).":
            "MTurk 只以美元支付奖金，而本项目以 %(currency)s 支付：%(n)s 名 MTurk 工作者"
            "（应付 %(amount)s %(currency)s）未包含在本次导出中，仍为待付（%(names)s）。",
        "Payments were already exported in %(currency)s, so the currency can no longer "
        "change: pay them by other means.":
            "已经以 %(currency)s 导出过付款，币种不能再更改：请通过其他方式支付他们。",
    }
    for msgid, text in wanted.items():
        monkeypatch.setitem(catalogue, msgid, text)
    study = studies.study_create(project=paid_project, platform="mturk", completion_code="D")
    worker = _mturk(study, "A1WORKER", "ASSIGN1")
    pay.payments_export(project=paid_project)  # the currency is fixed in GBP from now on
    pay.bonus_add(project=paid_project, worker=worker, amount="5", reason="Pilot")
    pay.bonus_add(project=paid_project, worker=workers["ann2"], amount="1", reason="Pilot")
    client = client_for(admin_user)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-CN"
    url = reverse("annotation:project_pay", args=[paid_project.pk])
    done = html.unescape(client.post(url, {"action": "export"}, follow=True).content.decode())
    assert ("未发送任何款项：请下载 CSV，在平台上或通过其他方式支付其中的 1 行（1.00 GBP）"
            in done)
    assert (f"MTurk 只以美元支付奖金，而本项目以 GBP 支付：1 名 MTurk 工作者（应付 5.00 GBP）"
            f"未包含在本次导出中，仍为待付（{worker.username}）。 已经以 GBP 导出过付款") in done
    assert 'aria-label="每小时成本（GBP）"' in done and 'aria-label="每小时提交数"' in done
    assert "Nothing was sent" not in done and "Cost per hour" not in done


# The crowd's figures: computed by the database, the same as over every worker's rows ------

def _reference(project) -> dict:
    """The pay page's crowd-wide figures worked out in Python over every worker's rows (how
    the page computed them before the database did)."""
    stages = list(project.stages.order_by("order"))
    rates = {stage.pk: pay.Rate.of(stage.params) for stage in stages}
    work = pay._work_by_worker(project, stages)
    bonuses = pay._bonuses_by_worker(project)
    paid = pay._paid_by_worker(project)
    per_stage, per_worker = pay._tally(work, rates)
    shares = pay._shares(work, rates, per_worker)
    minimum = pay._money(project.min_hourly_wage)
    figures = {w: pay._worker_pay(per_worker[w], pay._money(bonuses.get(w, {}).get("summed")),
                                  paid.get(w, pay.ZERO), minimum)
               for w in set(per_worker) | set(bonuses) | set(paid)}
    by_stage = {}
    for (_, stage_id), amount in shares.items():
        by_stage[stage_id] = by_stage.get(stage_id, pay.ZERO) + amount
    return {
        "work_total": sum((f["earned"] for f in figures.values()), pay.ZERO),
        "bonus_total": sum((f["bonuses"] for f in figures.values()), pay.ZERO),
        "paid_total": sum(paid.values(), pay.ZERO),
        "owed_total": sum((max(f["owed"], pay.ZERO) for f in figures.values()), pay.ZERO),
        "below_minimum": sum(1 for f in figures.values() if f["below_minimum"]),
        "stages": {s.pk: (by_stage.get(s.pk, pay.ZERO), per_stage[s.pk]["submissions"])
                   for s in pay._human_stages(stages)},
        "figures": figures,
    }


def _crowd_of_paid_project(project, workers, prolific_worker, admin_user, committed):
    """Worked: questioner 0.50, Prolific worker 6.00 (0.5 h), ann2 3.00 (0.25 h); val2 a
    bonus of 1.25 and no answers; all that exported (10.75). Then: the questioner asks again
    (0.50), ann1 and ann3 answer it in 100 active seconds each (0.3333, paid 0.33 each),
    val1 validates (0.25), ann2 gets a bonus of 2.00 and is blocked, an MTurk worker a
    bonus of 5.00 (left out of a GBP export, still owed); ann1 also works another project
    (not counted here)."""
    study = studies.study_create(project=project, platform="mturk", completion_code="D")
    mturk = _mturk(study, "A1WORKER", "ASSIGN1")
    item = _ask(project, workers["questioner"], committed)
    _work(project, prolific_worker, item, {"spans": [phrase_span(item, "Dario Weiss")]},
          committed, minutes=30)
    _work(project, workers["ann2"], item, {"no_answer": True}, committed, minutes=60,
          active_s=900)
    pay.bonus_add(project=project, worker=workers["val2"], amount="1.25", reason="Helpful",
                  actor=admin_user)
    pay.payments_export(project=project, actor=admin_user)
    _answered(project, workers, committed, by=("ann1", "ann3"))
    _validate(project, workers["val1"], committed)
    pay.bonus_add(project=project, worker=workers["ann2"], amount="2.00", reason="Thorough",
                  actor=admin_user)
    member = project.members.get(user=workers["ann2"], role=Role.ANNOTATOR)
    engine.member_status_set(member=member, status="blocked", actor=admin_user,
                             reason="Spam")
    pay.bonus_add(project=project, worker=mturk, amount="5", reason="Pilot", actor=admin_user)


def test_the_crowds_totals_are_the_hand_computed_sums_and_the_same_as_over_every_row(
    client_for, paid_project, news_corpus, workers, prolific_worker, admin_user, committed
):
    """Every crowd-wide figure of the pay page, worked out by hand for a crowd with each
    edge: a worker with a bonus and no answers, one blocked, one from MTurk owed in another
    currency, work before and after an export, pay rounded per worker (0.3333 paid 0.33),
    a member who did nothing (not listed), and a worker of two projects."""
    other = engine.project_create(name="Other NewsQA", recipe="newsqa", corpus=news_corpus,
                                  user=admin_user)
    engine.stage_params_update(stage=other.stages.get(kind="newsqa_answer"),
                               params={"pay_model": "hourly", "pay_rate": 12.0})
    for user in workers.values():
        engine.project_member_add(project=other, user=user, role=Role.ANNOTATOR)
    with committed():
        engine.project_start(project=other, actor=admin_user)
    _answered(other, workers, committed, by=("ann1",), active_s=1800)  # 0.50 + 6.00 there
    _crowd_of_paid_project(paid_project, workers, prolific_worker, admin_user, committed)
    pay.project_pay_settings_update(project=paid_project, currency="GBP",
                                    min_hourly_wage="15")
    paid_project.refresh_from_db()

    summary = pay.project_pay(project=paid_project)
    # work: questioner 1.00, Prolific 6.00, ann2 3.00, ann1 0.33, ann3 0.33, val1 0.25
    assert summary["work_total"] == Decimal("10.91")
    assert summary["bonus_total"] == Decimal("8.25")  # val2 1.25, ann2 2.00, MTurk 5.00
    assert summary["total"] == Decimal("19.16")
    assert summary["paid_total"] == Decimal("10.75")
    # owed: questioner 0.50, ann1 0.33, ann3 0.33, val1 0.25, ann2 2.00, MTurk 5.00
    assert summary["owed_total"] == Decimal("8.41")
    # below 15.00 an hour: Prolific 12.00, ann1 and ann3 11.88; ann2 earns 20.00
    assert summary["below_minimum"] == 3
    assert summary["mturk_other_currency"] is True and summary["mturk_owed"] == 1
    assert summary["currency_fixed"] is True
    stages = {row["stage"].kind: (row["amount"], row["submissions"])
              for row in summary["stage_rows"]}
    assert stages == {"newsqa_question": (Decimal("1.00"), 2),
                      "newsqa_answer": (Decimal("9.66"), 4),
                      "newsqa_validate": (Decimal("0.25"), 1)}
    assert sum(p["cost"] for p in summary["series"]["points"]) == summary["total"]
    assert sum(p["submissions"] for p in summary["series"]["points"]) == 7
    assert summary["workers"].paginator.count == 8  # the payees; ann4, idle, is not

    reference = _reference(paid_project)
    for key in ("work_total", "bonus_total", "paid_total", "owed_total", "below_minimum"):
        assert summary[key] == reference[key], key
    assert {row["stage"].pk: (row["amount"], row["submissions"])
            for row in summary["stage_rows"]} == reference["stages"]
    shown = {row["user"].pk: row for row in summary["workers"]}
    for user_id, figures in reference["figures"].items():
        assert {k: shown[user_id][k] for k in figures} == figures

    page = client_for(admin_user).get(
        reverse("annotation:project_pay", args=[paid_project.pk])).content.decode()
    assert 'data-testid="total-cost">19.16<' in page
    assert 'data-testid="owed-total">8.41<' in page
    assert "3 workers earn less" in html.unescape(page)


def test_odd_rates_round_per_worker_and_share_out_as_over_every_row(
    paid_project, workers, prolific_worker, admin_user, committed
):
    """Rates with more decimals than cents (0.125 a question, 7.77 an hour, 0.0333 a
    validation): the database's totals, stage costs and cost per hour are those of the
    rows worked out one by one, to the cent."""
    rates = {"newsqa_question": ("submission", "0.125"), "newsqa_answer": ("hourly", "7.77"),
             "newsqa_validate": ("submission", "0.0333")}
    for stage in paid_project.stages.filter(kind__in=rates):  # a started project's rates
        model, rate = rates[stage.kind]
        Stage.objects.filter(pk=stage.pk).update(
            params={**stage.params, "pay_model": model, "pay_rate": rate})
    _crowd_of_paid_project(paid_project, workers, prolific_worker, admin_user, committed)
    asked = Submission.objects.filter(worker=workers["questioner"]).order_by("id").first()
    Submission.objects.filter(pk=asked.pk).update(  # the questioner's work over two hours
        created_at=F("created_at") - timedelta(hours=5))
    summary = pay.project_pay(project=paid_project)
    reference = _reference(paid_project)
    for key in ("work_total", "bonus_total", "paid_total", "owed_total", "below_minimum"):
        assert summary[key] == reference[key], key
    assert {row["stage"].pk: (row["amount"], row["submissions"])
            for row in summary["stage_rows"]} == reference["stages"]
    # questioner 2 x 0.125 = 0.25; Prolific 7.77 / 2 = 3.885 -> 3.89; ann2 7.77 / 4 =
    # 1.9425 -> 1.94; ann1, ann3 7.77 x 100 / 3600 = 0.2158 -> 0.22; val1 0.0333 -> 0.03
    assert summary["work_total"] == Decimal("6.55")
    assert sum(p["cost"] for p in summary["series"]["points"]) == summary["total"]
    assert summary["series"]["unit"] == "hour"


def _pay_reads(project, monkeypatch) -> tuple[int, int]:
    """The statements a view of the pay page's second page runs and the rows they return."""
    return reads(monkeypatch, lambda: pay.project_pay(project=project, page=2), warm_up=2)


def test_the_pay_page_reads_the_same_queries_and_rows_for_a_crowd_four_times_as_big(
    paid_project, workers, prolific_worker, worked, admin_user, committed, monkeypatch
):
    """Sixteen payees (work, bonuses, paid by an export), then fifty-two: a page of the pay page
    runs the same queries and reads the same number of rows (its own workers', and one
    per stage and per hour), with the totals over all of them."""
    monkeypatch.setattr(pay, "PAY_WORKERS_PER_PAGE", 5, raising=False)
    _validate(paid_project, workers["val1"], committed)

    def grow(upto: int) -> None:
        for n in range(Bonus.objects.filter(project=paid_project).count(), upto):
            extra = user_with_roles(f"crowd{n:03d}", Role.ANNOTATOR)
            engine.project_member_add(project=paid_project, user=extra, role=Role.ANNOTATOR)
            pay.bonus_add(project=paid_project, worker=extra, amount="1.10", reason="Welcome",
                          actor=admin_user)

    grow(12)
    pay.payments_export(project=paid_project, actor=admin_user)  # the page lists exports
    queries, rows = _pay_reads(paid_project, monkeypatch)
    grow(48)
    assert _pay_reads(paid_project, monkeypatch) == (queries, rows)
    assert queries <= 12
    summary = pay.project_pay(project=paid_project, page=2)
    assert summary["bonus_total"] == Decimal("52.80")
    assert summary["owed_total"] == Decimal("39.60")  # the 36 bonuses since the export
    assert summary["workers"].paginator.count == 52


#: The pay service's refusals as the Chinese catalogue gets them (this change's msgids).
PAY_REFUSALS_ZH = {
    '%(field)s: %(value)s is not a number':
        '%(field)s：%(value)s 不是数字',
    '%(field)s: %(refusal)s':
        '%(field)s：%(refusal)s',
    'currency: %(value)s is not a three-letter code such as GBP, EUR or USD':
        '货币：%(value)s 不是三个字母的代码（例如 GBP、EUR 或 USD）',
    'currency: payments were already exported in %(currency)s; it can no longer change':
        '货币：已经以 %(currency)s 导出过付款，货币不能再更改',
    'currency: %(currency)s is not USD, and the project has an MTurk study: MTurk pays '
    'bonuses in US dollars only':
        '货币：%(currency)s 不是 USD，而项目有 MTurk 研究：MTurk 只以美元支付奖金',
    'an amount of at least 0 and below 1,000,000, with at most two decimals':
        '须为不小于 0 且小于 1,000,000 的金额，最多两位小数',
    'more than 0 and below 100,000,000, with at most two decimals':
        '须大于 0 且小于 100,000,000，最多两位小数',
    'reason: say why the bonus is given':
        '理由：请说明发放奖金的原因',
    'reason: at most %(most)s characters':
        '理由：最多 %(most)s 个字符',
    'worker: not a member of this project':
        '工作者：不是本项目的成员',
    'reason: at most %(most)s characters (%(given)s given)':
        '理由：最多 %(most)s 个字符（给出了 %(given)s 个）',
    'period_end: must not be in the future':
        'period_end：不能是将来的时间',
    'period_end: before the end of the previous export (%(end)s)':
        'period_end：早于上一次导出的结束时间（%(end)s）',
}


def test_the_pay_services_refusals_are_in_the_interface_language(
    paid_project, workers, worked, monkeypatch, tmp_path
):
    """The refusals of the currency, wage, bonus and export options were English f-strings:
    they go through the catalogue, their values filled in after translation."""
    from django.utils import translation
    from django.utils.translation import trans_real

    catalogue = trans_real.translation("zh-hans")._catalog._catalogs[0]
    for msgid, text in PAY_REFUSALS_ZH.items():
        monkeypatch.setitem(catalogue, msgid, text)

    def refusal(call, **kwargs) -> str:
        with pytest.raises(ValidationError) as caught:
            call(**kwargs)
        return caught.value.messages[0]

    settings_update = pay.project_pay_settings_update
    with translation.override("zh-hans"):
        assert refusal(settings_update, project=paid_project, currency="EURO",
                       min_hourly_wage="0") \
            == "货币：'EURO' 不是三个字母的代码（例如 GBP、EUR 或 USD）"
        assert refusal(settings_update, project=paid_project, currency="EUR",
                       min_hourly_wage="ten") == "min_hourly_wage：'ten' 不是数字"
        assert refusal(settings_update, project=paid_project, currency="EUR",
                       min_hourly_wage="-2") \
            == "min_hourly_wage：须为不小于 0 且小于 1,000,000 的金额，最多两位小数"
        bonus = {"project": paid_project, "worker": workers["ann2"]}
        assert refusal(pay.bonus_add, **bonus, amount="0", reason="x") \
            == "amount：须大于 0 且小于 100,000,000，最多两位小数"
        assert refusal(pay.bonus_add, **bonus, amount="1", reason=" ") \
            == "理由：请说明发放奖金的原因"
        assert refusal(pay.bonus_add, **bonus, amount="1", reason="x" * 301) \
            == "理由：最多 300 个字符"
        outsider = user_with_roles("outsider", Role.ANNOTATOR)
        assert refusal(pay.bonus_add, project=paid_project, worker=outsider, amount="1",
                       reason="x") == "工作者：不是本项目的成员"
        assert refusal(pay.payments_export, project=paid_project, reason="x" * 301) \
            == "理由：最多 300 个字符（给出了 301 个）"
        assert refusal(pay.payments_export, project=paid_project,
                       period_end=datetime.now(UTC) + timedelta(hours=1)) \
            == "period_end：不能是将来的时间"
        first = pay.payments_export(project=paid_project)
        assert refusal(pay.payments_export, project=paid_project,
                       period_end=first.period_end - timedelta(hours=1)) \
            == f"period_end：早于上一次导出的结束时间（{first.period_end.isoformat()}）"
        assert refusal(settings_update, project=paid_project, currency="USD",
                       min_hourly_wage="0") == "货币：已经以 GBP 导出过付款，货币不能再更改"
        # The command still names its --reason option, whatever the language.
        with pytest.raises(CommandError, match=r"^--理由：最多 300 个字符"):
            call_command("payments_export", "--project", "Paid NewsQA", "--out",
                         str(tmp_path / "p.csv"), "--reason", "x" * 301)
    assert refusal(settings_update, project=paid_project, currency="EURO",
                   min_hourly_wage="0") \
        == "currency: 'EURO' is not a three-letter code such as GBP, EUR or USD"


# An export whose paying failed: marked not paid --------------------------------------------

def _owed(project) -> dict[str, Decimal]:
    return {w["username"]: w["owed"] for w in pay.project_pay(project=project)["workers"]}


def test_an_export_marked_not_paid_is_paid_by_the_next_and_never_twice(
    paid_project, workers, prolific_worker, worked, admin_user, committed
):
    """Paying the first export failed on Prolific (its bulk bonus refused), but ann2 was
    paid by other means; a later export was made already. Marked not paid, its unpaid
    amounts are owed again, the next export pays exactly them, once; nothing is deleted."""
    first = pay.payments_export(project=paid_project, actor=admin_user)
    assert {r["username"]: r["amount"] for r in _rows(first)} == {
        "questioner": "0.50", prolific_worker.username: "6.00", "ann2": "3.00"}
    _validate(paid_project, workers["val1"], committed)
    later = pay.payments_export(project=paid_project, actor=admin_user)  # made since
    assert {r["username"]: r["amount"] for r in _rows(later)} == {"val1": "0.25"}
    assert set(_owed(paid_project).values()) == {ZERO}

    # Refused: no reason, a name the export does not pay, everybody named as paid.
    mark = pay.payment_export_mark_unpaid
    with pytest.raises(ValidationError, match=r"reason: say why the export was not paid"):
        mark(export=first, actor=admin_user, reason=" ")
    with pytest.raises(ValidationError,
                       match=r"still_paid: this export pays no worker named nobody, val1'\]"):
        mark(export=first, actor=admin_user, reason="Refused", still_paid="ann2, val1 nobody")
    with pytest.raises(ValidationError, match=r"still_paid: every worker of this export"):
        mark(export=first, actor=admin_user, reason="Refused",
             still_paid=["ann2", "questioner", prolific_worker.username])
    with pytest.raises(ValidationError, match=r"export: it pays nobody"):
        mark(export=pay.payments_export(project=paid_project), actor=admin_user, reason="x")
    first.refresh_from_db()
    assert first.unpaid_at is None and not PaymentLine.objects.filter(
        returned_at__isnull=False).exists()

    marked = mark(export=first, actor=admin_user, reason="Prolific refused the bulk bonus",
                  still_paid="ann2")
    assert (marked.unpaid_by, marked.unpaid_reason) == (admin_user,
                                                       "Prolific refused the bulk bonus")
    assert marked.unpaid_at is not None
    assert _owed(paid_project) == {"questioner": Decimal("0.50"),
                                   prolific_worker.username: Decimal("6.00"),
                                   "ann2": ZERO, "val1": ZERO}
    summary = pay.project_pay(project=paid_project)
    assert (summary["paid_total"], summary["owed_total"]) == (Decimal("3.25"), Decimal("6.50"))
    # Marked once: a second admin's mark is refused, saying by whom.
    by = admin_user.username
    with pytest.raises(ValidationError, match=rf"export: already marked not paid by {by} at "):
        mark(export=first, actor=admin_user, reason="Again")

    again = pay.payments_export(project=paid_project, actor=admin_user)
    assert {r["username"]: r["amount"] for r in _rows(again)} == {
        "questioner": "0.50", prolific_worker.username: "6.00"}
    assert set(_owed(paid_project).values()) == {ZERO}
    assert pay.payments_export(project=paid_project).lines.count() == 0
    # The record: every export and line stays; the first's returned lines are marked.
    assert PaymentExport.objects.filter(project=paid_project).count() == 5
    assert {(line.user.username, line.amount, line.returned_at is not None)
            for line in first.lines.all()} == {
        ("questioner", Decimal("0.50"), True), (prolific_worker.username, Decimal("6.00"), True),
        ("ann2", Decimal("3.00"), False)}
    paid = dict(PaymentLine.objects.filter(export__project=paid_project, returned_at=None)
                .values("user__username").annotate(total=Sum("amount"))
                .values_list("user__username", "total"))
    assert paid == {"questioner": Decimal("0.50"), prolific_worker.username: Decimal("6.00"),
                    "ann2": Decimal("3.00"), "val1": Decimal("0.25")}


def test_the_admin_marks_an_export_not_paid_on_the_pay_page(
    client_for, paid_project, workers, prolific_worker, worked, admin_user, other_project
):
    """A POST of the pay page (admins only, with CSRF and a ticked confirmation): the
    export is marked, its CSV and Prolific lines are no longer offered for paying."""
    from django.test import Client

    export = pay.payments_export(project=paid_project, actor=admin_user)
    elsewhere = pay.payments_export(project=other_project, actor=admin_user)
    url = reverse("annotation:project_pay", args=[paid_project.pk])
    csv_url = reverse("annotation:payment_export_file", args=[export.pk])
    lines_url = reverse("annotation:payment_export_prolific", args=[export.pk])
    form = {"action": "unpaid", "export": export.pk, "reason": "SendBonus: insufficient funds",
            "still_paid": "", "confirm": "yes"}
    client = client_for(admin_user)
    page = html.unescape(client.get(url).content.decode())
    assert f'data-testid="mark-unpaid-{export.pk}"' in page

    # Not an admin; no CSRF token; not confirmed; another project's export: nothing marked.
    other = Client()  # (client_for logs its one client in)
    other.force_login(user_with_roles("chk", Role.CHECKER))
    assert other.post(url, form).status_code == 403
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(admin_user)
    assert strict.post(url, form).status_code == 403
    page = html.unescape(client.post(url, {**form, "confirm": ""}, follow=True)
                         .content.decode())
    assert f"Export {export.pk} was not marked: tick the box to confirm" in page
    page = html.unescape(client.post(url, {**form, "export": elsewhere.pk}, follow=True)
                         .content.decode())
    assert f"export: no export '{elsewhere.pk}' of this project." in page
    assert not PaymentExport.objects.filter(unpaid_at__isnull=False).exists()
    assert client.get(csv_url).status_code == 200 and client.get(lines_url).status_code == 200

    page = html.unescape(client.post(url, form, follow=True).content.decode())
    assert (f"Export {export.pk} marked not paid: 3 row(s), 9.50 GBP, are owed again and "
            "will be paid by the next export.") in page
    row = page.split(f'data-testid="payment-export-{export.pk}"')[1].split("</tr>")[0]
    assert f"Marked not paid by {admin_user.username}" in row
    assert "SendBonus: insufficient funds" in row
    assert "9.50 GBP, owed again" in row and "The other rows were paid" not in row
    assert "download-export" not in row and "mark-unpaid" not in row
    for refused in (client.get(csv_url), client.get(lines_url)):
        assert refused.status_code == 410
        assert (f"Export {export.pk} was marked not paid by {admin_user.username}"
                in refused.content.decode())
    page = html.unescape(client.post(url, form, follow=True).content.decode())
    assert f"export: already marked not paid by {admin_user.username}" in page
    assert pay.project_pay(project=paid_project)["owed_total"] == Decimal("9.50")


@pytest.mark.django_db(transaction=True)
def test_two_admins_marking_an_export_and_an_export_at_once_never_pay_twice():
    """PostgreSQL: two admins mark the same export not paid while a third exports. They
    queue on the project's lock (held here until all three wait): one mark is recorded,
    the other refused, and whatever the order, the worker is paid what they earned once."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no row locks: concurrency is tested on PostgreSQL")
    from tests.polling import wait_until

    admins = [user_with_roles(f"adm{i}", Role.ADMIN) for i in (1, 2)]
    worker = user_with_roles("ann", Role.ANNOTATOR)
    project = engine.project_create(name="Concurrent unpaid", recipe="newsqa", user=admins[0])
    engine.project_member_add(project=project, user=worker, role=Role.ANNOTATOR)
    pay.bonus_add(project=project, worker=worker, amount="4.00", reason="Pilot")
    failed = pay.payments_export(project=project)
    pay.bonus_add(project=project, worker=worker, amount="1.00", reason="More")
    outcomes: dict[str, object] = {}

    def run(name, call):
        try:
            outcomes[name] = call()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            outcomes[name] = exc
        finally:
            connection.close()

    threads = [
        threading.Thread(target=run, args=(f"mark{i}", lambda admin=admin: (
            pay.payment_export_mark_unpaid(export=failed, actor=admin, reason="Refused"))))
        for i, admin in enumerate(admins)
    ] + [threading.Thread(target=run, args=("export", lambda: pay.payments_export(
        project=project)))]
    with transaction.atomic():
        Project.objects.select_for_update().get(pk=project.pk)
        for thread in threads:
            thread.start()

        def waiting():
            with connection.cursor() as cursor:  # (the statistics are kept per transaction)
                cursor.execute("SELECT pg_stat_clear_snapshot()")
                cursor.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE datname ="
                               " current_database() AND wait_event_type = 'Lock'"
                               " AND pid <> pg_backend_pid()")
                return cursor.fetchone()[0] == 3

        def seen():
            with connection.cursor() as cursor:
                cursor.execute("SELECT datname, state, wait_event_type, wait_event, query"
                               " FROM pg_stat_activity WHERE pid <> pg_backend_pid()")
                return f"{cursor.fetchall()}\n{outcomes}"

        wait_until(waiting, timeout=20, what="the marks and the export to wait for the lock",
                   detail=seen)
    for thread in threads:
        thread.join(20)
    marks = [outcomes["mark0"], outcomes["mark1"]]
    assert sum(isinstance(m, PaymentExport) for m in marks) == 1, outcomes
    [refused] = [m for m in marks if isinstance(m, ValidationError)]
    assert "already marked not paid by adm" in refused.messages[0]
    assert isinstance(outcomes["export"], PaymentExport), outcomes
    pay.payments_export(project=project)  # whatever is still owed
    assert PaymentLine.objects.filter(export__project=project, returned_at=None).aggregate(
        paid=Sum("amount"))["paid"] == Decimal("5.00")
    assert PaymentLine.objects.filter(export=failed, returned_at__isnull=False).count() == 1
