"""Pay: what crowd workers earn, what a project costs, bonuses, and payment exports.

Every stage worked by people carries ``pay_model`` ("submission" or "hourly") and
``pay_rate`` (per submission, or per active hour, in the project's currency) in its
parameters; a stage without them pays nothing. Hourly work counts the active time measured
in the page, or the time from claim to submit when the page measured nothing. Amounts are
``Decimal`` throughout and rounded to cents once per worker and project (what the payments
CSV pays); bonuses add to earnings. Figures that split a worker's pay (per stage, per hour
or day) share out those rounded cents, so the parts always add up to the totals shown.

A payment export pays each worker what they earned up to its ``period_end`` minus what
every earlier export of the project paid them, so nothing is paid twice and work that
arrives late is paid by the next export. The export is a CSV kept with its lines; a
payment backend (``CROWDQA_PAYMENT_BACKEND``) is then handed the rows. The default backend
sends nothing: the admin pays from the CSV (Prolific bulk bonus, MTurk's SendBonus, or
otherwise). MTurk pays in US dollars only, so a project with MTurk workers pays in USD.
"""

from __future__ import annotations

import csv
import hmac
import io
import json
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal, InvalidOperation
from hashlib import sha256
from typing import Any, Protocol, TypeVar

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import Count, Exists, Max, Min, OuterRef, Q, QuerySet, Sum
from django.db.models.functions import Coalesce, TruncDay, TruncHour
from django.utils import timezone
from django.utils.module_loading import import_string
from django.utils.translation import gettext

from annotation import sql
from annotation.models import (
    Bonus,
    Item,
    PaymentExport,
    PaymentLine,
    Platform,
    Project,
    ProjectMember,
    Stage,
    Study,
    StudySession,
    Submission,
)
from annotation.plots import Plot, line_plot, vbar

User = get_user_model()

CENT = Decimal("0.01")
ZERO = Decimal("0.00")
SECONDS_PER_HOUR = Decimal(3600)
#: The payments CSV's columns. The first five are a contract scripts rely on; new columns
#: are only ever added at the end. README.md ("Payments") says what each holds.
CSV_COLUMNS = ("platform", "external_id", "pseudonym", "amount", "currency",
               "username", "period_start", "period_end",
               "assignment_id", "external_study", "reason", "request_token")
#: MTurk pays bonuses (SendBonus's BonusAmount) in US dollars only.
MTURK_CURRENCY = "USD"
#: The longest reason a bonus or an export gives the workers.
REASON_MAX: int = Bonus._meta.get_field("reason").max_length
DEFAULT_BACKEND = "annotation.pay.CsvPayments"
#: Series over time are hourly when the project's work spans less than this.
HOURLY_SPAN = timedelta(days=2)
#: Up to this many points a series is drawn as bars, beyond it as a line.
BARS_UP_TO = 14
#: Workers on a page of the pay page.
PAY_WORKERS_PER_PAGE = 50


K = TypeVar("K", bound=Hashable)


def cents(amount: Decimal) -> Decimal:
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def apportion(total: Decimal, exact: Mapping[K, Decimal]) -> dict[K, Decimal]:
    """``total`` (whole cents) shared out over the keys of ``exact`` so that the parts add
    up to it: each part its exact amount rounded down to the cent, then the cents left over
    one each to the parts with the largest remainders, the earlier key first on a tie
    (Hamilton's largest-remainder method). When ``total`` is the exact amounts' sum rounded,
    every part is its own amount rounded up or down."""
    parts = {key: amount.quantize(CENT, rounding=ROUND_FLOOR) for key, amount in exact.items()}
    if not parts:
        return parts
    left = int((total - sum(parts.values(), ZERO)) / CENT)
    order = sorted(parts, key=lambda key: parts[key] - exact[key])  # largest remainder first
    if left < 0:  # more than the total (work read after it): smallest remainders give back
        order.reverse()
    for i in range(abs(left)):
        parts[order[i % len(order)]] += CENT if left > 0 else -CENT
    return parts


def _decimal(value: Any) -> Decimal:
    """A database sum (Decimal, float or None) as a Decimal."""
    if value is None:
        return ZERO
    return value if isinstance(value, Decimal) else Decimal(str(value))


def _money(value: Any) -> Decimal:
    """A database sum of amounts (None for none) in cents."""
    return cents(_decimal(value))


@dataclass(frozen=True)
class Rate:
    """How one stage pays: ``model`` "submission" or "hourly", ``amount`` per unit."""

    model: str
    amount: Decimal

    @classmethod
    def of(cls, params: dict[str, Any]) -> Rate:
        return cls(model=params.get("pay_model") or "submission",
                   amount=Decimal(str(params.get("pay_rate") or 0)))

    @property
    def shown(self) -> str:
        """The rate written plainly with at least two decimals (0.50, 0.125, 100.00 for
        ``1e2``, 0.0000001 rather than ``1E-7``)."""
        if self.amount == cents(self.amount):
            return f"{cents(self.amount):f}"
        return f"{self.amount.normalize():f}"

    def pay(self, *, submissions: int, seconds: float | None) -> Decimal:
        """Unrounded pay for ``submissions`` submissions of ``seconds`` active time."""
        if self.model == "hourly":
            return self.amount * _decimal(seconds) / SECONDS_PER_HOUR
        return self.amount * submissions


def _active_s() -> Coalesce:
    """A submission's active time: measured in the page, else from claim to submit."""
    return Coalesce("active_time_s", "time_on_task_s")


def _hours(seconds: float) -> float:
    return round(seconds / 3600, 2)


def _today_start() -> datetime:
    return timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)


#: A submission a worker corrected (``Submission.superseded_by``) is paid once: the
#: correction counts, the answer it replaced does not (its active time still does).
COUNTS = Q(superseded_by__isnull=True)


# Earnings of one worker --------------------------------------------------------------------

_EARNINGS_ALL = (
    # The worker's submissions per stage (counted ones: not superseded), with the stage's
    # rate and the project's currency; then their bonuses per currency. On the task page
    # at every view: one statement, prepared on PostgreSQL (annotation.sql).
    "SELECT 'w', st.project_id, CAST(st.params AS text), p.currency, w.n, w.seconds,"
    " w.n_today, w.seconds_today, w.all_today, CAST(NULL AS numeric), CAST(NULL AS numeric)"
    " FROM (SELECT s.stage_id,"
    " SUM(CASE WHEN s.superseded_by_id IS NULL THEN 1 ELSE 0 END) AS n,"
    " SUM(COALESCE(s.active_time_s, s.time_on_task_s)) AS seconds,"
    " SUM(CASE WHEN s.created_at >= %s AND s.superseded_by_id IS NULL THEN 1 ELSE 0 END)"
    " AS n_today,"
    " SUM(CASE WHEN s.created_at >= %s THEN COALESCE(s.active_time_s, s.time_on_task_s)"
    " END) AS seconds_today,"
    " SUM(CASE WHEN s.created_at >= %s THEN 1 ELSE 0 END) AS all_today"
    " FROM annotation_submission s WHERE s.worker_id = %s GROUP BY s.stage_id) w"
    " JOIN annotation_stage st ON st.id = w.stage_id"
    " JOIN annotation_project p ON p.id = st.project_id"
    " UNION ALL"
    " SELECT 'b', NULL, NULL, p.currency, NULL, NULL, NULL, NULL, NULL, SUM(b.amount),"
    " SUM(CASE WHEN b.created_at >= %s THEN b.amount END)"
    " FROM annotation_bonus b JOIN annotation_project p ON p.id = b.project_id"
    " WHERE b.user_id = %s GROUP BY p.currency"
)
_EARNINGS_OF_PROJECT = _EARNINGS_ALL.replace(
    "WHERE b.user_id = %s", "WHERE b.user_id = %s AND b.project_id = %s")


def worker_earnings(*, worker: Any, project: Project | None = None) -> dict[str, Any]:
    """What ``worker`` earned today and in total, per currency (of ``project`` only when
    given): ``{"today": {cur: amount}, "total": {cur: amount}, "rows": [{"currency",
    "today", "total"}], "done_today": n}``, currencies with nothing earned left out;
    ``done_today``: their submissions today in every project (what the task pages show
    beside it). One statement: the worker's submissions per stage, with the stage's rate
    and currency, and their bonuses."""
    conn = sql.db()
    today = conn.ops.adapt_datetimefield_value(_today_start())
    params: list[Any] = [today, today, today, worker.pk, today, worker.pk]
    if project is not None:
        params.append(project.pk)
    with conn.cursor() as cursor:
        sql.execute(cursor, _EARNINGS_ALL if project is None else _EARNINGS_OF_PROJECT,
                    params)
        rows = cursor.fetchall()
    total: dict[str, Decimal] = defaultdict(Decimal)
    on_day: dict[str, Decimal] = defaultdict(Decimal)
    # Work is rounded to cents once per project, as each project's payments CSV pays it.
    work: dict[tuple[str, int], Decimal] = defaultdict(Decimal)
    work_today: dict[tuple[str, int], Decimal] = defaultdict(Decimal)
    done_today = 0
    for (kind, project_id, stage_params, currency, n, seconds, n_today, seconds_today,
         all_today, bonus, bonus_today) in rows:
        if kind == "b":
            total[currency] += _money(bonus)
            on_day[currency] += _money(bonus_today)
            continue
        done_today += int(all_today or 0)
        if project is not None and project_id != project.pk:
            continue
        rate = Rate.of(json.loads(stage_params) if stage_params else {})
        work[currency, project_id] += rate.pay(submissions=int(n or 0), seconds=seconds)
        work_today[currency, project_id] += rate.pay(submissions=int(n_today or 0),
                                                     seconds=seconds_today)
    for (currency, _), amount in work.items():
        total[currency] += cents(amount)
    for (currency, _), amount in work_today.items():
        on_day[currency] += cents(amount)
    rows_out = [{"currency": currency, "today": on_day[currency] + ZERO,
                 "total": amount + ZERO} for currency, amount in sorted(total.items())
                if amount != ZERO]
    return {"today": {r["currency"]: r["today"] for r in rows_out},
            "total": {r["currency"]: r["total"] for r in rows_out}, "rows": rows_out,
            "done_today": done_today}


# A project's pay ---------------------------------------------------------------------------

def _human_stages(stages: Iterable[Stage]) -> list[Stage]:
    return [stage for stage in stages if not stage.kind_spec.automatic]


def _work_by_worker(project: Project, stages: list[Stage], *,
                    until: datetime | None = None,
                    workers: list[int] | None = None) -> list[dict[str, Any]]:
    """Submissions of the project per (stage, worker): count, active seconds, first, last
    (of the users ``workers`` only, when given)."""
    submissions = Submission.objects.filter(stage__in=[s.pk for s in stages])
    if until is not None:
        submissions = submissions.filter(created_at__lte=until)
    if workers is not None:
        submissions = submissions.filter(worker_id__in=workers)
    return list(submissions.order_by().values("stage_id", "worker_id").annotate(
        n=Count("id", filter=COUNTS), seconds=Sum(_active_s()), first=Min("created_at"),
        last=Max("created_at"),
    ))


def _bonuses_by_worker(project: Project, *, until: datetime | None = None,
                       workers: list[int] | None = None) -> dict[int, dict[str, Any]]:
    bonuses = Bonus.objects.filter(project=project)
    if until is not None:
        bonuses = bonuses.filter(created_at__lte=until)
    if workers is not None:
        bonuses = bonuses.filter(user_id__in=workers)
    return {row["user_id"]: row for row in bonuses.order_by().values("user_id").annotate(
        summed=Sum("amount"), n=Count("id"), first=Min("created_at"), last=Max("created_at"))}


def _paid_by_worker(project: Project, *,
                    workers: list[int] | None = None) -> dict[int, Decimal]:
    """What earlier exports of the project paid each worker (of ``workers``, when given):
    their lines, but for those returned to owed when an export was marked not paid."""
    lines = PaymentLine.objects.filter(export__project=project, returned_at__isnull=True)
    if workers is not None:
        lines = lines.filter(user_id__in=workers)
    return {user_id: _money(amount) for user_id, amount in lines.order_by()
            .values("user_id").annotate(summed=Sum("amount")).values_list("user_id", "summed")}


def _external(user: Any) -> tuple[str, str]:
    """(platform, external id) of a marketplace worker, empty strings for anybody else."""
    account = getattr(user, "external_account", None)
    return (account.platform, account.external_id) if account is not None else ("", "")


def _tally(work: list[dict[str, Any]], rates: dict[int, Rate]) -> tuple[
        dict[int, dict[str, Any]], dict[int, dict[str, Any]]]:
    """Submissions, active seconds and unrounded pay per stage and per worker."""
    per_stage: dict[int, dict[str, Any]] = defaultdict(
        lambda: {"submissions": 0, "seconds": 0.0, "amount": ZERO})
    per_worker: dict[int, dict[str, Any]] = defaultdict(
        lambda: {"submissions": 0, "seconds": 0.0, "amount": ZERO})
    for row in work:
        amount = rates[row["stage_id"]].pay(submissions=row["n"], seconds=row["seconds"])
        for acc in (per_stage[row["stage_id"]], per_worker[row["worker_id"]]):
            acc["submissions"] += row["n"]
            acc["seconds"] += row["seconds"] or 0.0
            acc["amount"] += amount
    return per_stage, per_worker


def _shares(work: list[dict[str, Any]], rates: dict[int, Rate],
            per_worker: dict[int, dict[str, Any]]) -> dict[tuple[int, int], Decimal]:
    """Each worker's pay (their exact earnings rounded once, as the CSV pays them) shared
    out over the stages they worked: ``{(worker id, stage id): amount}``, each the exact
    amount rounded up or down, the worker's adding up to their pay."""
    exact: dict[int, dict[int, Decimal]] = defaultdict(dict)
    for row in work:
        exact[row["worker_id"]][row["stage_id"]] = rates[row["stage_id"]].pay(
            submissions=row["n"], seconds=row["seconds"])
    return {(worker_id, stage_id): amount for worker_id, by_stage in exact.items()
            for stage_id, amount in apportion(cents(per_worker[worker_id]["amount"]),
                                              by_stage).items()}


def payees(*, project: Project) -> QuerySet[Any]:
    """The people the pay page lists, by username: whoever submitted work to the project,
    got one of its bonuses or was paid by one of its exports."""
    return User.objects.filter(
        Exists(Submission.objects.filter(worker=OuterRef("pk"), stage__project=project))
        | Exists(Bonus.objects.filter(user=OuterRef("pk"), project=project))
        | Exists(PaymentLine.objects.filter(user=OuterRef("pk"), export__project=project))
    ).order_by("username", "pk")


def _worker_pay(acc: dict[str, Any], bonus: Decimal, paid: Decimal,
                minimum: Decimal) -> dict[str, Any]:
    """One worker's pay from their tally (``_tally``), bonuses and payments: work rounded
    once (as the CSV pays it), earned, owed and effective hourly wage."""
    work_pay = cents(acc["amount"])
    earned = work_pay + bonus
    wage = (cents(earned * SECONDS_PER_HOUR / Decimal(str(acc["seconds"])))
            if acc["seconds"] > 0 else None)
    return {"submissions": acc["submissions"], "active_hours": _hours(acc["seconds"]),
            "earned": work_pay, "bonuses": bonus, "total": earned, "paid": paid,
            "owed": earned - paid, "hourly_wage": wage,
            "below_minimum": minimum > 0 and wage is not None and wage < minimum}


def project_pay(*, project: Project, page: Any = 1,
                per_page: int | None = None) -> dict[str, Any]:
    """Everything the pay page shows: cost per stage and per finished item, one page of
    the workers (``workers``, a Paginator page of ``payees``, ``per_page`` a page) with
    their earnings, bonuses, payments, owed amount and effective hourly wage (flagged below
    the project's minimum), cost and submissions over time, the export history (with each
    export's Prolific studies) and whether MTurk workers are paid in a currency MTurk does
    not pay. Totals, counts, stage costs and the cost over time are over every worker,
    computed by the database (``_crowd_totals``, ``_crowd_shares``); only the workers of
    the page are read row by row. A fixed number of queries and of rows read, whatever the
    number of workers."""
    stages = list(project.stages.order_by("order"))
    human = _human_stages(stages)
    rates = {stage.pk: Rate.of(stage.params) for stage in stages}
    minimum = _money(project.min_hourly_wage)
    crowd = _crowd_totals(project, stages, rates, minimum)
    series, by_stage = _series(project, stages, rates, crowd["moments"])

    everyone = payees(project=project)
    shown = Paginator(everyone.select_related("external_account"),
                      per_page or PAY_WORKERS_PER_PAGE).get_page(page)
    users = list(shown.object_list)
    ids = [user.pk for user in users]
    work = _work_by_worker(project, stages, workers=ids) if ids else []
    per_stage, per_worker = _tally(work, rates)
    bonuses = _bonuses_by_worker(project, workers=ids) if ids else {}
    paid = _paid_by_worker(project, workers=ids) if ids else {}
    rows = []
    for user in users:
        platform, external_id = _external(user)
        rows.append({"user": user, "username": user.get_username(), "platform": platform,
                     "external_id": external_id,
                     **_worker_pay(per_worker[user.pk],
                                   _money(bonuses.get(user.pk, {}).get("summed")),
                                   paid.get(user.pk, ZERO), minimum)})
    shown.object_list = rows

    stage_rows = []
    for stage in human:
        acc = by_stage.get(stage.pk, {})
        stage_rows.append({
            "stage": stage, "pay_model": rates[stage.pk].model,
            "pay_rate": rates[stage.pk].shown,
            "submissions": acc.get("submissions", 0),
            "active_hours": _hours(acc.get("seconds") or 0.0),
            "amount": acc.get("amount", ZERO) + ZERO,
        })
    work_total, bonus_total = crowd["work_total"], crowd["bonus_total"]
    total = work_total + bonus_total
    # A finished item is a record: an item the pipeline's last stage finished (NewsQA's
    # consolidated question), not one of the last stage people work, which may see only
    # some of them (NewsQA's validation, the questions without agreement).
    final = stages[-1] if stages else None
    done = Item.objects.filter(stage=final, status=Item.Status.DONE).count() if final else 0
    # Prolific takes a bulk bonus per study: each export lists its studies, so the CSVs
    # themselves are not read here.
    returned = Q(lines__returned_at__isnull=False)
    exports = list(PaymentExport.objects.filter(project=project)
                   .select_related("created_by", "unpaid_by").defer("content")
                   .annotate(rows=Count("lines"), returned_rows=Count("lines", filter=returned),
                             returned_total=Sum("lines__amount", filter=returned))
                   .order_by("-created_at", "-id"))
    for export in exports:  # (SQLite sums decimals as floats)
        export.returned_total = _money(export.returned_total)
    return {
        "currency": project.currency,
        "stage_rows": stage_rows,
        "work_total": work_total, "bonus_total": bonus_total, "total": total,
        "paid_total": crowd["paid_total"],
        "owed_total": crowd["owed_total"],
        "items_done": done, "last_stage": final,
        "cost_per_item": cents(total / done) if done else None,
        "workers": shown,
        "below_minimum": crowd["below_minimum"],
        "series": series,
        "exports": exports,
        # MTurk pays in US dollars only: exports leave MTurk workers out in another currency.
        "mturk_other_currency": project.currency != MTURK_CURRENCY and (
            crowd["mturk"] > 0 or Study.objects.filter(project=project,
                                                       platform=Platform.MTURK).exists()),
        "mturk_owed": crowd["mturk_owed"],
        "currency_fixed": crowd["paid_any"],
        # What an export now tells the workers when the admin gives no reason.
        "export_reason": _export_reason("", project=project, period_end=timezone.now()),
    }


def _series(project: Project, stages: list[Stage], rates: dict[int, Rate],
            moments: list[datetime]) -> tuple[dict[str, Any], dict[int, dict[str, Any]]]:
    """Cost (work and bonuses) and submissions per day, or per hour when the project's
    work and bonuses (from the first to the last of ``moments``) span under two days, with
    their plots; and each stage's cost, submissions and active seconds. Each worker's pay
    is shared out over their stages, and each share over the hours or days they worked on
    it, so the stages and the points add up to the total cost (``_crowd_shares``)."""
    if not moments:
        return {"unit": None, "points": [], "plots": {}}, {}
    first, last = min(moments), max(moments)
    hourly = last - first < HOURLY_SPAN
    trunc = TruncHour if hourly else TruncDay

    def key(moment: datetime) -> str:
        local = timezone.localtime(moment)
        return local.strftime("%Y-%m-%d %H:00") if hourly else local.date().isoformat()

    by_stage, buckets = _crowd_shares(project, stages, rates, trunc=trunc)
    cost: dict[str, Decimal] = defaultdict(Decimal)
    submissions: dict[str, int] = defaultdict(int)
    for bucket, kind, value, n in buckets:
        if kind == "w":
            cost[key(bucket)] += _cents(value)
            submissions[key(bucket)] += int(n or 0)
        else:
            cost[key(bucket)] += _money(value)
    step = timedelta(hours=1) if hourly else timedelta(days=1)
    labels: list[str] = []
    moment = first
    while moment <= last + step:  # every bucket from the first to the last, gaps included
        label = key(moment)
        if not labels or labels[-1] != label:
            labels.append(label)
        moment += step
    labels = [label for label in labels if label <= key(last)]
    points = [{"label": label, "cost": cost.get(label, ZERO) + ZERO,
               "submissions": submissions.get(label, 0)} for label in labels]
    unit = "hour" if hourly else "day"
    short = (lambda label: label[11:]) if hourly else (lambda label: label[5:])
    cost_label = (gettext("Cost per hour (%(currency)s)") if hourly
                  else gettext("Cost per day (%(currency)s)")) % {"currency": project.currency}
    return {
        "unit": unit, "points": points,
        "plots": {
            "cost": _series_plot([(short(p["label"]), float(p["cost"])) for p in points],
                                 label=cost_label, name=project.currency,
                                 span=(labels[0], labels[-1])),
            "submissions": _series_plot([(short(p["label"]), p["submissions"]) for p in points],
                                        label=submissions_per(hourly), name="submissions",
                                        span=(labels[0], labels[-1])),
        },
    }, by_stage


def submissions_per(hourly: bool) -> str:
    """The title of a plot of submissions per hour or per day, in the reader's language."""
    return gettext("Submissions per hour") if hourly else gettext("Submissions per day")


def _series_plot(points: list[tuple[str, float]], *, label: str, name: str,
                 span: tuple[str, str]) -> Plot:
    """Bars for a few points, a line with its first and last label for many."""
    if len(points) <= BARS_UP_TO:
        return vbar(points, label=label)
    peak = max(value for _, value in points) or 1
    return line_plot({name: [value for _, value in points]}, label=label, lo=0, hi=peak,
                     x_span=span)


# The crowd's figures, in the database --------------------------------------------------------
#
# The pay page's totals, alerts, cost per stage and cost over time are over every worker,
# but each is one figure: the database computes them (grouped sums, then window functions
# for the largest-remainder shares), so a page view reads a fixed number of rows, however
# big the crowd. The arithmetic is ``pay``'s own: each stage's exact pay in units of
# 10**-scale of the currency (integers for pay per submission, exact on both databases;
# hourly pay divides the active seconds, numeric on PostgreSQL, floating point on SQLite),
# each worker's work rounded half up to cents once, shares of it rounded down to cents and
# the cents left over to the largest remainders (``apportion``), ties to the earlier stage
# or hour.

def _scale(rates: Iterable[Rate]) -> int:
    """The decimals of the finest rate (at least 2: cents)."""
    return max([2, *(max(0, -int(rate.amount.normalize().as_tuple().exponent))
                     for rate in rates if rate.amount.is_finite() and rate.amount)])


class _Dialect:
    """The few expressions that differ: exact numbers and rounding down (of values >= 0)."""

    def __init__(self) -> None:
        from django.db import connection

        self.postgres = connection.vendor == "postgresql"

    def num(self, expr: str) -> str:
        """A number computed exactly: numeric on PostgreSQL; on SQLite integers stay
        integers, the rest is floating point."""
        return f"CAST({expr} AS numeric)" if self.postgres else f"({expr})"

    def floor_div(self, a: str, b: str) -> str:
        """floor(a / b) for a >= 0, b > 0 (integer division on SQLite for integers)."""
        if self.postgres:
            return f"FLOOR(CAST({a} AS numeric) / ({b}))"
        return f"CAST(({a}) / ({b}) AS INTEGER)"


def _units(rates: dict[int, Rate], scale: int, d: _Dialect, *, stage: str, n: str,
           seconds: str) -> str:
    """A stage's exact pay in units of 10**-scale for ``n`` counted submissions of
    ``seconds`` active time (SQL expressions)."""
    whens = []
    for stage_id, rate in rates.items():
        unit = int(rate.amount.scaleb(scale))  # exact: scale covers every rate's decimals
        if not unit:
            continue
        if rate.model == "hourly":
            whens.append(f"WHEN {int(stage_id)} THEN {unit} * "
                         f"{d.num(f'COALESCE({seconds}, 0)')} / 3600.0")
        else:
            whens.append(f"WHEN {int(stage_id)} THEN {d.num(f'{unit} * {n}')}")
    return f"(CASE {stage} {' '.join(whens)} ELSE 0 END)" if whens else "0"


def _work_cte(stage_ids: list[int], rates: dict[int, Rate], scale: int, d: _Dialect) -> str:
    """``ws``: each worker's submissions per stage (counted ones, active seconds) and their
    exact pay ``u``; ``wk``: each worker's work in cents ``c`` and active seconds."""
    div = 10 ** (scale - 2)
    ids = ", ".join(str(int(pk)) for pk in stage_ids) or "NULL"
    units = _units(rates, scale, d, stage="s.stage_id", n="COUNT(s.id) - COUNT("
                   "s.superseded_by_id)", seconds="SUM(COALESCE(s.active_time_s, "
                   "s.time_on_task_s))")
    return (
        "ws AS (SELECT s.worker_id AS w, s.stage_id AS st,"  # noqa: S608 (ids, numbers)
        " COUNT(s.id) - COUNT(s.superseded_by_id) AS n,"
        " SUM(COALESCE(s.active_time_s, s.time_on_task_s)) AS sec,"
        f" {units} AS u"
        f" FROM annotation_submission s WHERE s.stage_id IN ({ids})"
        " GROUP BY s.worker_id, s.stage_id),"
        f" wk AS (SELECT w, {d.floor_div('2 * SUM(u) + ' + str(div), str(2 * div))} AS c,"
        " SUM(COALESCE(sec, 0)) AS sec FROM ws GROUP BY w)"
    )


def _cents(value: Any) -> Decimal:
    """A database's whole number of cents as an amount."""
    return (Decimal(int(value or 0)) * CENT) + ZERO


def _crowd_totals(project: Project, stages: list[Stage], rates: dict[int, Rate],
                  minimum: Decimal) -> dict[str, Any]:
    """Over every worker, in one statement: work, bonuses, paid and owed (each worker's
    rounded once, as ``_worker_pay``), how many earn below ``minimum`` an hour, how many
    MTurk workers there are and are owed, whether any export paid, and the first and last
    moments of work and bonuses."""
    from django.db import connection

    d = _Dialect()
    scale = _scale(rates.values())
    min_c = int(minimum / CENT)
    earned = "(per.work_c + per.bonus_c)"
    owed = f"({earned} - per.paid_c)"
    sec = d.num("per.sec")
    wage_c = d.floor_div(f"2 * {earned} * 3600 + {sec}", f"2 * {sec}")  # cents, half up
    wage_below = f"per.sec > 0 AND {wage_c} < {min_c}" if min_c > 0 else "1 = 0"
    statement = (
        "WITH " + _work_cte([s.pk for s in stages], rates, scale, d) + ","  # noqa: S608
        " bon AS (SELECT b.user_id AS w, SUM(b.amount) AS b, MIN(b.created_at) AS b_first,"
        " MAX(b.created_at) AS b_last FROM annotation_bonus b WHERE b.project_id = %s"
        " GROUP BY b.user_id),"
        # Lines returned to owed (their export marked not paid) pay nothing; their
        # worker still counts as one an export was made for (the currency stays fixed).
        " pd AS (SELECT l.user_id AS w,"
        " SUM(CASE WHEN l.returned_at IS NULL THEN l.amount ELSE 0 END) AS p"
        " FROM annotation_paymentline l"
        " JOIN annotation_paymentexport e ON e.id = l.export_id WHERE e.project_id = %s"
        " GROUP BY l.user_id),"
        " ids AS (SELECT w FROM wk UNION SELECT w FROM bon UNION SELECT w FROM pd),"
        " per AS (SELECT ids.w, COALESCE(wk.c, 0) AS work_c,"
        " COALESCE(CAST(ROUND(bon.b * 100) AS BIGINT), 0) AS bonus_c,"
        " COALESCE(CAST(ROUND(pd.p * 100) AS BIGINT), 0) AS paid_c,"
        " COALESCE(wk.sec, 0) AS sec, pd.w AS paid,"
        " CASE WHEN EXISTS (SELECT 1 FROM annotation_externalaccount a"
        " WHERE a.user_id = ids.w AND a.platform = %s) THEN 1 ELSE 0 END AS mturk"
        " FROM ids LEFT JOIN wk ON wk.w = ids.w LEFT JOIN bon ON bon.w = ids.w"
        " LEFT JOIN pd ON pd.w = ids.w)"
        " SELECT COALESCE(SUM(per.work_c), 0), COALESCE(SUM(per.bonus_c), 0),"
        " COALESCE(SUM(per.paid_c), 0),"
        f" COALESCE(SUM(CASE WHEN {owed} > 0 THEN {owed} ELSE 0 END), 0),"
        f" COALESCE(SUM(CASE WHEN {wage_below} THEN 1 ELSE 0 END), 0),"
        " COALESCE(SUM(per.mturk), 0),"
        f" COALESCE(SUM(CASE WHEN per.mturk = 1 AND {owed} > 0 THEN 1 ELSE 0 END), 0),"
        " COUNT(per.paid),"
        " (SELECT MIN(s.created_at) FROM annotation_submission s JOIN annotation_stage t"
        " ON t.id = s.stage_id WHERE t.project_id = %s),"
        " (SELECT MAX(s.created_at) FROM annotation_submission s JOIN annotation_stage t"
        " ON t.id = s.stage_id WHERE t.project_id = %s),"
        " (SELECT MIN(b_first) FROM bon), (SELECT MAX(b_last) FROM bon)"
        " FROM per"
    )
    with connection.cursor() as cursor:
        cursor.execute(statement, [project.pk, project.pk, Platform.MTURK.value,
                                   project.pk, project.pk])
        (work_c, bonus_c, paid_c, owed_c, below, mturk, mturk_owed, paid_rows,
         *moments) = cursor.fetchone()
    return {"work_total": _cents(work_c), "bonus_total": _cents(bonus_c),
            "paid_total": _cents(paid_c), "owed_total": _cents(owed_c),
            "below_minimum": int(below or 0), "mturk": int(mturk or 0),
            "mturk_owed": int(mturk_owed or 0), "paid_any": bool(paid_rows),
            "moments": [m for m in map(_moment, moments) if m is not None]}


def _moment(value: Any) -> datetime | None:
    """A timestamp as the database returns it (a string on SQLite) as an aware datetime."""
    if value is None:
        return None
    if isinstance(value, str):
        from django.utils.dateparse import parse_datetime

        value = parse_datetime(value)
    if timezone.is_naive(value):
        value = timezone.make_aware(value, UTC)
    return value


def _crowd_shares(project: Project, stages: list[Stage], rates: dict[int, Rate], *,
                  trunc: Any) -> tuple[dict[int, dict[str, Any]],
                                       list[tuple[datetime, str, Any, Any]]]:
    """Cost per stage (each worker's pay shared out over the stages they worked) and, per
    hour or day (``trunc``), the cost of work (each worker's share of a stage shared out over
    the hours or days they worked on it), the submissions and the bonuses: one statement.
    Returns ``({stage id: {"amount", "submissions", "seconds"}}, [(bucket, kind, value,
    submissions)])`` with kind "w" (cost of work in cents) or "b" (bonuses, summed)."""
    from django.db import connection

    d = _Dialect()
    scale = _scale(rates.values())
    div = 10 ** (scale - 2)
    ids = [s.pk for s in stages]
    buckets = (Submission.objects.filter(stage__in=ids).order_by()
               .annotate(bucket=trunc("created_at")).values("bucket", "stage_id", "worker_id")
               .annotate(n=Count("id", filter=COUNTS), seconds=Sum(_active_s())))
    bucket_sql, bucket_params = buckets.query.sql_with_params()
    bonuses = (Bonus.objects.filter(project=project).order_by()
               .annotate(bucket=trunc("created_at")).values("bucket")
               .annotate(summed=Sum("amount")))
    bonus_sql, bonus_params = bonuses.query.sql_with_params()
    bucket_units = _units(rates, scale, d, stage="x.stage_id", n="x.n", seconds="x.seconds")
    floor_ws = d.floor_div("ws.u", str(div))
    floor_b = d.floor_div("x.u", str(div))
    statement = (
        "WITH " + _work_cte(ids, rates, scale, d) + ","  # noqa: S608 (ids, numbers)
        # Each worker's pay shared out over their stages: cents rounded down, then the
        # cents left over one each to the largest remainders.
        f" wsf AS (SELECT ws.w, ws.st, ws.n, ws.sec, {floor_ws} AS f,"
        f" ws.u - {floor_ws} * {div} AS r FROM ws),"
        " wsr AS (SELECT wsf.w, wsf.st, wsf.n, wsf.sec, wsf.f,"
        " wk.c - SUM(wsf.f) OVER (PARTITION BY wsf.w) AS lft,"
        " ROW_NUMBER() OVER (PARTITION BY wsf.w ORDER BY wsf.r DESC, wsf.st) AS k"
        " FROM wsf JOIN wk ON wk.w = wsf.w),"
        " share AS (SELECT w, st, n, sec, f + CASE WHEN k <= lft THEN 1 ELSE 0 END AS c"
        " FROM wsr),"
        # Each worker's share of a stage shared out over the hours or days they worked it.
        f" xb AS (SELECT x.worker_id AS w, x.stage_id AS st, x.bucket AS bucket, x.n AS n,"
        f" {bucket_units} AS u FROM ({bucket_sql}) x),"
        f" xf AS (SELECT x.w, x.st, x.bucket, x.n, {floor_b} AS f, x.u - {floor_b} * {div}"
        " AS r FROM xb x),"
        " xr AS (SELECT xf.bucket, xf.n, xf.f, share.c - SUM(xf.f) OVER (PARTITION BY"
        " xf.w, xf.st) AS lft,"
        " ROW_NUMBER() OVER (PARTITION BY xf.w, xf.st ORDER BY xf.r DESC, xf.bucket) AS k,"
        " ROW_NUMBER() OVER (PARTITION BY xf.w, xf.st ORDER BY xf.r, xf.bucket DESC) AS k2"
        " FROM xf JOIN share ON share.w = xf.w AND share.st = xf.st)"
        " SELECT 's', st, NULL, SUM(c), SUM(n), SUM(COALESCE(sec, 0)) FROM share GROUP BY st"
        " UNION ALL"
        " SELECT 'w', NULL, bucket, SUM(f + CASE WHEN lft >= 0 AND k <= lft THEN 1"
        " WHEN lft < 0 AND k2 <= -lft THEN -1 ELSE 0 END), SUM(n), NULL FROM xr"
        " GROUP BY bucket"
        " UNION ALL"
        f" SELECT 'b', NULL, y.bucket, y.summed, NULL, NULL FROM ({bonus_sql}) y"
    )
    bucket_expr = buckets.query.annotations["bucket"]
    converters = [*connection.ops.get_db_converters(bucket_expr),
                  *bucket_expr.get_db_converters(connection)]

    def when(value: Any) -> datetime:
        for convert in converters:
            value = convert(value, bucket_expr, connection)
        return value

    by_stage: dict[int, dict[str, Any]] = {}
    series: list[tuple[datetime, str, Any, Any]] = []
    with connection.cursor() as cursor:
        cursor.execute(statement, [*bucket_params, *bonus_params])
        for kind, stage_id, bucket, value, n, seconds in cursor.fetchall():
            if kind == "s":
                by_stage[int(stage_id)] = {"amount": _cents(value), "submissions": int(n or 0),
                                           "seconds": float(seconds or 0)}
            else:
                series.append((when(bucket), kind, value, n))
    return by_stage, series


# Writes: settings and bonuses --------------------------------------------------------------

def _amount(value: Any, *, field: str) -> Decimal:
    """A form's or a caller's amount as a Decimal, as given (``1e2`` stays ``1E+2``)."""
    try:
        amount = Decimal(str(value).strip())
    except InvalidOperation:
        raise ValidationError({field: gettext("%(field)s: %(value)s is not a number")
                               % {"field": field, "value": repr(value)}}) from None
    if not amount.is_finite():
        raise ValidationError({field: gettext("%(field)s: %(value)s is not a number")
                               % {"field": field, "value": repr(value)}})
    return amount


def _money_amount(value: Any, *, field: str, positive: bool, below: Decimal,
                  refusal: str) -> Decimal:
    """``value`` as money: a number of at least 0 (more than 0 when ``positive``) and below
    ``below`` with at most two decimals, written plainly with two (``1e2`` is 100.00,
    ``-0`` is 0.00); else ``refusal`` for ``field``."""
    amount = _amount(value, field=field)
    if (amount < 0 or (positive and amount == 0) or amount >= below
            or amount != cents(amount)):  # the range first: cents() of 1E+400 overflows
        raise ValidationError({field: gettext("%(field)s: %(refusal)s")
                               % {"field": field, "refusal": refusal}})
    return cents(amount) + ZERO  # + 0.00: a plain 0.00 rather than -0.00


@transaction.atomic
def project_pay_settings_update(*, project: Project, currency: str,
                                min_hourly_wage: Decimal | str) -> Project:
    """Set the project's currency (three letters; fixed once a payment was exported; USD
    when the project has an MTurk study, as MTurk pays in US dollars only) and the minimum
    effective hourly wage below which workers are flagged (0: none)."""
    locked = Project.objects.select_for_update().get(pk=project.pk)
    code = (currency or "").strip().upper()
    if len(code) != 3 or not code.isascii() or not code.isalpha():
        raise ValidationError({"currency": gettext(
            "currency: %(value)s is not a three-letter code such as GBP, EUR or USD")
            % {"value": repr(currency)}})
    if code != locked.currency and PaymentLine.objects.filter(export__project=locked).exists():
        raise ValidationError({"currency": gettext(
            "currency: payments were already exported in %(currency)s; it can no longer "
            "change") % {"currency": locked.currency}})
    if (code != locked.currency and code != MTURK_CURRENCY
            and Study.objects.filter(project=locked, platform=Platform.MTURK).exists()):
        raise ValidationError({"currency": gettext(
            "currency: %(currency)s is not USD, and the project has an MTurk study: MTurk "
            "pays bonuses in US dollars only") % {"currency": code}})
    wage = _money_amount(min_hourly_wage, field="min_hourly_wage", positive=False,
                         below=Decimal("1000000"),
                         refusal=gettext("an amount of at least 0 and below 1,000,000, with "
                                         "at most two decimals"))
    locked.currency, locked.min_hourly_wage = code, wage
    locked.save(update_fields=["currency", "min_hourly_wage"])
    project.currency, project.min_hourly_wage = code, wage  # the caller's copy too
    return project


def bonus_add(*, project: Project, worker: Any, amount: Decimal | str, reason: str,
              actor: Any = None) -> Bonus:
    """Add a bonus of ``amount`` (in the project's currency) to a member's earnings."""
    value = _money_amount(amount, field="amount", positive=True, below=Decimal("100000000"),
                          refusal=gettext("more than 0 and below 100,000,000, with at most "
                                          "two decimals"))
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError({"reason": gettext("reason: say why the bonus is given")})
    if len(reason) > REASON_MAX:
        raise ValidationError({"reason": gettext("reason: at most %(most)s characters")
                                         % {"most": REASON_MAX}})
    if worker is None or not ProjectMember.objects.filter(project=project,
                                                          user_id=worker.pk).exists():
        raise ValidationError({"worker": gettext("worker: not a member of this project")})
    return Bonus.objects.create(project=project, user=worker, amount=value, reason=reason,
                                created_by=actor if getattr(actor, "pk", None) else None)


# Payment exports ---------------------------------------------------------------------------

class PaymentBackend(Protocol):
    """Pays the rows of a recorded export (or prepares them to be paid); returns a note
    for the admin. Called after the export's transaction (committed, unless the caller
    holds a transaction of its own), so a backend that fails half-way never makes work
    paid twice: the export stands and its CSV shows what remains to pay by other means."""

    name: str

    def pay(self, export: PaymentExport, rows: list[dict[str, Any]]) -> str: ...


class CsvPayments:
    """Sends nothing: the CSV is the product. The admin pays Prolific workers with a bulk
    bonus (``participant_id,amount`` lines per study: ``prolific_bonus_lines``), MTurk
    workers with SendBonus (``external_id`` as WorkerId, ``assignment_id``, ``amount`` in
    USD, ``reason``, ``request_token`` as UniqueRequestToken), and anybody else by other
    means (username and pseudonym)."""

    name = "csv"

    def pay(self, export: PaymentExport, rows: list[dict[str, Any]]) -> str:
        if not rows:
            return gettext("Nothing to pay in this export: the CSV has only its header.")
        return gettext("Nothing was sent: download the CSV and pay its %(rows)s row(s) "
                       "(%(total)s %(currency)s) on the platform or by other means.") % {
            "rows": len(rows), "total": export.total, "currency": export.currency}


def payment_backend() -> PaymentBackend:
    """The backend named by ``CROWDQA_PAYMENT_BACKEND`` (a dotted path to a class)."""
    return import_string(getattr(settings, "CROWDQA_PAYMENT_BACKEND", DEFAULT_BACKEND))()


def worker_pseudonym(*, project: Project, user: Any) -> str:
    """A stable per-project pseudonym of a worker (not reversible without the secret key)."""
    digest = hmac.new(settings.SECRET_KEY.encode(), f"{project.pk}:{user.pk}".encode(),
                      sha256).hexdigest()
    return "W" + digest[:10]


def _csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        writer.writerow([f"{row[col]:.2f}" if col == "amount" else row[col]
                         for col in CSV_COLUMNS])
    return out.getvalue()


def _export_reason(reason: str, *, project: Project, period_end: datetime) -> str:
    """The reason the workers are shown with their bonus (MTurk e-mails it to them): the
    admin's, on one line, or a default naming the project and the period's end."""
    text = " ".join((reason or "").split())
    if not text:
        return (f"Payment for your work on {project.name} up to "
                f"{period_end.astimezone(UTC):%Y-%m-%d %H:%M} UTC")
    if len(text) > REASON_MAX:
        raise ValidationError({"reason": gettext(
            "reason: at most %(most)s characters (%(given)s given)")
            % {"most": REASON_MAX, "given": len(text)}})
    return text


#: The outcomes of an MTurk session whose assignment the worker submitted: it reached its
#: completion (its quota done, or no work left) and the worker was given MTurk's form. A
#: session still working was never submitted (or was returned), and a worker screened out
#: is told to return the HIT: SendBonus refuses an assignment that was not submitted.
SUBMITTED_OUTCOMES = (StudySession.Outcome.QUOTA, StudySession.Outcome.NO_WORK)


def _latest_sessions(project: Project, user_ids: Iterable[int]) -> dict[int, tuple[str, str]]:
    """Each marketplace worker's session to pay a bonus on: ``{user id: (session key,
    external study)}``, their latest in ``project``, else their latest in any project (MTurk
    takes a bonus on any of the requester's assignments of the worker; Prolific on any
    study the participant took part in). The session key of an MTurk session is its
    assignmentId, the external study its hitId; a Prolific session's is its STUDY_ID. An
    MTurk session counts only when its assignment was submitted (``SUBMITTED_OUTCOMES``):
    a worker with none is left out of the result."""
    found: dict[int, tuple[int, str, str]] = {}
    for user_id, project_id, key, study in (
            StudySession.objects.filter(member__user_id__in=list(user_ids))
            .filter(~Q(study__platform=Platform.MTURK) | Q(outcome__in=SUBMITTED_OUTCOMES))
            .order_by("-started_at", "-id")
            .values_list("member__user_id", "member__project_id", "session_key",
                         "external_study")):
        if user_id not in found or (project_id == project.pk
                                    and found[user_id][0] != project.pk):
            found[user_id] = (project_id, key, study)
    return {user_id: (key, study) for user_id, (_, key, study) in found.items()}


def _named(users: list[Any], *, most: int = 10) -> str:
    names = sorted(user.get_username() for user in users)
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def payments_export(*, project: Project, actor: Any = None,
                    period_end: datetime | None = None, reason: str = "") -> PaymentExport:
    """Record what each worker is owed up to ``period_end`` (now by default) and not paid
    by an earlier export, as a CSV with one row per worker owed more than 0, then hand the
    rows to the payment backend. The project row is locked, so two exports at once never
    pay the same work twice. The returned export carries the backend's ``note`` and
    ``warnings`` for the admin.

    MTurk workers' rows carry an assignment of theirs to attach the bonus to, the
    ``reason`` shown to them (a default when blank) and a request token that makes a
    retried SendBonus pay once. MTurk pays bonuses in US dollars only: a project paying in
    another currency leaves its MTurk workers out of the export (they stay owed) and says
    so in ``warnings`` rather than have an amount in one currency paid in another."""
    backend = payment_backend()
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        now = timezone.now()
        period_end = period_end or now
        previous = (PaymentExport.objects.filter(project=project)
                    .order_by("-period_end", "-id").only("period_end").first())
        if period_end > now:
            raise ValidationError({"period_end": gettext(
                "period_end: must not be in the future")})
        if previous is not None and period_end < previous.period_end:
            raise ValidationError({"period_end": gettext(
                "period_end: before the end of the previous export (%(end)s)")
                % {"end": previous.period_end.isoformat()}})
        reason = _export_reason(reason, project=project, period_end=period_end)
        stages = list(project.stages.all())
        rates = {stage.pk: Rate.of(stage.params) for stage in stages}
        _, workers = _tally(_work_by_worker(project, stages, until=period_end), rates)
        bonuses = _bonuses_by_worker(project, until=period_end)
        paid = _paid_by_worker(project)
        owed: dict[int, Decimal] = {}
        for user_id in set(workers) | set(bonuses):
            earned = (cents(workers[user_id]["amount"]) if user_id in workers else ZERO) \
                + _money(bonuses.get(user_id, {}).get("summed"))
            if earned - paid.get(user_id, ZERO) > 0:
                owed[user_id] = earned - paid.get(user_id, ZERO)
        users = sorted(User.objects.filter(pk__in=owed).select_related("external_account"),
                       key=lambda u: u.get_username())
        left_out = ([user for user in users if _external(user)[0] == Platform.MTURK]
                    if project.currency != MTURK_CURRENCY else [])
        users = [user for user in users if user not in left_out]
        sessions = _latest_sessions(project, [user.pk for user in users if _external(user)[0]])
        # SendBonus needs an assignment the worker submitted: MTurk workers with none are
        # left out (still owed) rather than given a row MTurk refuses.
        unattached = [user for user in users if _external(user)[0] == Platform.MTURK
                      and user.pk not in sessions]
        users = [user for user in users if user not in unattached]
        period_start = previous.period_end if previous is not None else None
        rows = []
        for user in users:
            platform, external_id = _external(user)
            session_key, external_study = sessions.get(user.pk, ("", ""))
            rows.append({
                "platform": platform, "external_id": external_id,
                "pseudonym": worker_pseudonym(project=project, user=user),
                "amount": owed[user.pk], "currency": project.currency,
                "username": user.get_username(),
                "period_start": period_start.isoformat() if period_start else "",
                "period_end": period_end.isoformat(),
                "assignment_id": session_key if platform == Platform.MTURK else "",
                "external_study": external_study, "reason": reason, "request_token": "",
                "user_id": user.pk,
            })
        export = PaymentExport.objects.create(
            project=project, backend=str(backend.name)[:32], currency=project.currency,
            period_start=period_start, period_end=period_end,
            total=sum((row["amount"] for row in rows), ZERO), content="",
            created_by=actor if getattr(actor, "pk", None) else None,
        )
        for row in rows:
            if row["platform"] == Platform.MTURK:  # SendBonus's UniqueRequestToken
                row["request_token"] = f"crowdqa-{export.pk}-{row['pseudonym']}"
        export.content = _csv(rows)
        export.prolific_studies = sorted({row["external_study"] for row in rows
                                          if row["platform"] == Platform.PROLIFIC})
        export.save(update_fields=["content", "prolific_studies"])
        PaymentLine.objects.bulk_create([
            PaymentLine(export=export, user_id=row["user_id"], amount=row["amount"])
            for row in rows
        ])
        export.warnings = _export_warnings(
            project=project, left_out=left_out, owed=owed, unattached=unattached,
            currency_fixed=bool(rows) or bool(paid))
    export.note = backend.pay(export, rows)
    return export


def payment_export_mark_unpaid(*, export: PaymentExport, actor: Any, reason: str,
                               still_paid: Iterable[str] | str = ()) -> PaymentExport:
    """Mark ``export`` as not paid (paying it on the platform failed: a Prolific bulk bonus
    refused, an MTurk SendBonus error): its amounts go back to owed, so the next export
    pays them, but for the workers named in ``still_paid`` (usernames, a list or one text
    of names apart by commas or spaces), whose part was paid by other means. Nothing is
    deleted: the export keeps its lines, and records who marked it, when and why.

    Never pays twice: an export is marked once (the project row is locked, as exports
    lock it, so a mark and an export, or two admins' marks, happen one after the other,
    and the second mark is refused); exports made after it are untouched, as they paid
    only what it had not, and its CSV and Prolific lines are no longer offered for paying.
    """
    reason = " ".join((reason or "").split())
    if not reason:
        raise ValidationError({"reason": gettext(
            "reason: say why the export was not paid (what the platform answered)")})
    if len(reason) > REASON_MAX:
        raise ValidationError({"reason": gettext(
            "reason: at most %(most)s characters (%(given)s given)")
            % {"most": REASON_MAX, "given": len(reason)}})
    names = still_paid.replace(",", " ").split() if isinstance(still_paid, str) \
        else [name.strip() for name in still_paid if name.strip()]
    with transaction.atomic():
        Project.objects.select_for_update().only("pk").get(pk=export.project_id)
        locked = PaymentExport.objects.select_related("unpaid_by").get(pk=export.pk)
        if locked.unpaid_at is not None:
            raise ValidationError({"export": gettext(
                "export: already marked not paid by %(user)s at %(when)s")
                % {"user": locked.unpaid_by or "—",
                   "when": f"{locked.unpaid_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"}})
        lines = {line.user.get_username(): line
                 for line in locked.lines.select_related("user").order_by("id")}
        if not lines:
            raise ValidationError({"export": gettext(
                "export: it pays nobody, so there is nothing to mark as not paid")})
        unknown = sorted({name for name in names if name not in lines})
        if unknown:
            raise ValidationError({"still_paid": gettext(
                "still_paid: this export pays no worker named %(names)s") % {
                    "names": ", ".join(unknown)}})
        returned = [line.pk for name, line in lines.items() if name not in names]
        if not returned:
            raise ValidationError({"still_paid": gettext(
                "still_paid: every worker of this export is named as paid: nothing would "
                "be owed again")})
        now = timezone.now()
        by = actor if getattr(actor, "pk", None) else None
        # Conditional: only an export not marked yet (the lock makes a second mark wait
        # and then find it marked; this keeps it so should the lock ever be missed).
        if not PaymentExport.objects.filter(pk=locked.pk, unpaid_at__isnull=True).update(
                unpaid_at=now, unpaid_by=by, unpaid_reason=reason):
            raise ValidationError({"export": gettext("export: already marked not paid")})
        PaymentLine.objects.filter(pk__in=returned, returned_at__isnull=True).update(
            returned_at=now)
    locked.refresh_from_db()
    return locked


def payment_export_paying_refused(export: PaymentExport) -> str | None:
    """Why ``export`` must no longer be paid from (None while it may): marked not paid,
    its amounts are owed again and the next export pays them."""
    if export.unpaid_at is None:
        return None
    return gettext("Export %(export)s was marked not paid by %(user)s at %(when)s: what it "
                   "did not pay is owed again and paid by the next export. Do not pay "
                   "from it.") % {
        "export": export.pk, "user": export.unpaid_by or "—",
        "when": f"{export.unpaid_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"}


def _export_warnings(*, project: Project, left_out: list[Any], owed: dict[int, Decimal],
                     unattached: list[Any], currency_fixed: bool) -> list[str]:
    """What the admin must know before paying an export: MTurk workers left out, as the
    project's currency is not USD, or as they submitted no assignment to pay on."""
    warnings = []
    if left_out:
        amount = sum((owed[user.pk] for user in left_out), ZERO)
        then = (gettext("Payments were already exported in %(currency)s, so the currency "
                        "can no longer change: pay them by other means.")
                % {"currency": project.currency} if currency_fixed else
                gettext("Set the project's currency to USD (its rates are then in US "
                        "dollars) and export again."))
        warnings.append(gettext(
            "MTurk pays bonuses in US dollars only and this project pays in %(currency)s: "
            "%(n)s MTurk worker(s) owed %(amount)s %(currency)s were left out of this export "
            "and are still owed (%(names)s).") % {
                "currency": project.currency, "n": len(left_out), "amount": amount,
                "names": _named(left_out)} + " " + then)
    if unattached:
        warnings.append(gettext(
            "%(n)s MTurk worker(s) owed %(amount)s %(currency)s have no submitted assignment "
            "to attach a bonus to (none of their sessions reached its completion: "
            "%(names)s): SendBonus would refuse them, so they were left out of this export "
            "and are still owed. A later export pays them once they submit an assignment "
            "(a HIT made for them, for instance).") % {
                "n": len(unattached), "names": _named(unattached),
                "amount": sum((owed[user.pk] for user in unattached), ZERO),
                "currency": project.currency})
    return warnings


def prolific_bonuses(export: PaymentExport) -> dict[str, list[tuple[str, str]]]:
    """The Prolific rows of an export, per Prolific study (its STUDY_ID; "" when unknown,
    as in exports made before the column existed): ``{study: [(participant id, amount)]}``.
    Prolific takes a bulk bonus per study, each participant having taken part in it."""
    by_study: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for row in csv.DictReader(io.StringIO(export.content)):
        if row["platform"] == Platform.PROLIFIC:
            by_study[row.get("external_study") or ""].append((row["external_id"],
                                                              row["amount"]))
    return dict(by_study)


def prolific_bonus_lines(export: PaymentExport, *, study: str) -> str | None:
    """Prolific's bulk bonus lines (``participant_id,amount``, in the study's currency,
    which must be the export's) of the export's participants in ``study``; None when the
    export pays nobody in that study."""
    rows = prolific_bonuses(export).get(study)
    if not rows:
        return None
    return "".join(f"{participant},{amount}\n" for participant, amount in rows)
