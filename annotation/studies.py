"""Marketplace studies: a project opened to Prolific or MTurk.

A worker arrives at ``/study/<token>/`` with the platform's URL parameters (Prolific:
``PROLIFIC_PID``, ``STUDY_ID``, ``SESSION_ID``; MTurk: ``workerId``, ``assignmentId``,
``hitId``, ``turkSubmitTo``), reads the project's consent text and agrees. That makes (or
finds) one account per (platform, external id), without a password, an annotator
membership of the project, and a session whose quota (the study's tasks per session) the
claim statement enforces (``annotation.eligibility``). When the quota is done, or nothing
is left for them, the worker gets the study's completion code: Prolific's completion link,
or MTurk's form that posts to the external submit URL. MTurk's preview
(``assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE``) shows a sample task and claims nothing.

The marketplaces' own APIs are not called (they cannot be reached from the machines this
runs on): approving submissions and paying go through the payments CSV (``annotation.pay``).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext

from annotation import gold
from annotation.models import (
    Assignment,
    ExternalAccount,
    Item,
    PaymentLine,
    Platform,
    Project,
    ProjectMember,
    Study,
    StudySession,
    Submission,
    WorkerStage,
)
from annotation.pay import MTURK_CURRENCY
from annotation.ratelimit import client_network, hour_count
from annotation.roles import Role

User = get_user_model()

PREVIEW_ASSIGNMENT = "ASSIGNMENT_ID_NOT_AVAILABLE"
PROLIFIC_COMPLETE = "https://app.prolific.com/submissions/complete"

#: (external id, session, study) parameter names of each platform, and MTurk's submit URL.
PARAMS: dict[str, tuple[str, str, str]] = {
    Platform.PROLIFIC: ("PROLIFIC_PID", "SESSION_ID", "STUDY_ID"),
    Platform.MTURK: ("workerId", "assignmentId", "hitId"),
}
MTURK_SUBMIT_TO = "turkSubmitTo"

# Prolific ids are 24 hex digits and MTurk's are upper-case letters and digits; both are
# accepted by one safe pattern so that sandbox and test ids work too.
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,63}$")
_CODE = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")


@dataclass(frozen=True)
class Arrival:
    """What a worker's study URL says about them."""

    platform: str
    external_id: str
    session_key: str
    external_study: str = ""
    submit_to: str = ""

    @property
    def preview(self) -> bool:
        return self.platform == Platform.MTURK and self.session_key == PREVIEW_ASSIGNMENT

    def query(self) -> str:
        """The URL parameters this arrival came with (for the consent form's action)."""
        external, session, study = PARAMS[self.platform]
        values = {external: self.external_id, session: self.session_key,
                  study: self.external_study}
        if self.platform == Platform.MTURK:
            values[MTURK_SUBMIT_TO] = self.submit_to
        return urlencode({k: v for k, v in values.items() if v})


def _one(params: Mapping[str, Any], name: str, *, required: bool) -> str:
    value = (params.get(name) or "").strip()
    if not value:
        if required:
            raise ValidationError(gettext("%(name)s: missing from the study link")
                                  % {"name": name})
        return ""
    if "%" in value or "{" in value:
        raise ValidationError(gettext(
            "%(name)s: %(value)r is a placeholder the platform did not fill in; open the "
            "study from the platform, not from its template") % {"name": name, "value": value})
    if not _ID.match(value):
        raise ValidationError(gettext(
            "%(name)s: %(value)r is not a valid id (letters, digits, '_' and '-', at most "
            "64)") % {"name": name, "value": value[:80]})
    return value


def _submit_to(value: str) -> str:
    """MTurk's turkSubmitTo: only MTurk's own hosts, over https (the completion form posts
    there)."""
    value = (value or "").strip().rstrip("/")
    if not value:
        raise ValidationError(gettext("%(name)s: missing from the HIT link")
                              % {"name": MTURK_SUBMIT_TO})
    parts = urlsplit(value)
    host = (parts.hostname or "").lower()
    if parts.scheme != "https" or not (host == "mturk.com" or host.endswith(".mturk.com")):
        raise ValidationError(gettext(
            "%(name)s: %(value)r is not an MTurk address (https://www.mturk.com or "
            "https://workersandbox.mturk.com)") % {"name": MTURK_SUBMIT_TO,
                                                  "value": value[:120]})
    return f"{parts.scheme}://{host}"


def arrival_parse(*, study: Study, params: Mapping[str, Any]) -> Arrival:
    """The worker's identity and session from their study URL; ValidationError naming the
    parameter that is missing or malformed."""
    external, session, study_param = PARAMS[study.platform]
    if study.platform == Platform.MTURK:
        session_key = _one(params, session, required=True)
        if session_key == PREVIEW_ASSIGNMENT:
            return Arrival(study.platform, "", session_key,
                           _one(params, study_param, required=False))
        return Arrival(study.platform, _one(params, external, required=True), session_key,
                       _one(params, study_param, required=False),
                       _submit_to(params.get(MTURK_SUBMIT_TO, "")))
    return Arrival(study.platform, _one(params, external, required=True),
                   _one(params, session, required=True),
                   _one(params, study_param, required=False))


QUOTA_MOST = 2**31 - 1  # what the session's limit column holds


def study_create(
    *, project: Project, platform: str, completion_code: str, quota: int | None = None,
    no_work_code: str = "", no_work_completes: bool = True, name: str = "", actor: Any = None,
) -> Study:
    """Open ``project`` to a marketplace: a study with its entry link and codes."""
    if platform not in PARAMS:
        raise ValidationError(gettext("platform: %(platform)s is not one of %(choices)s")
                              % {"platform": repr(platform), "choices": ", ".join(PARAMS)})
    for field, code in (("completion_code", completion_code), ("no_work_code", no_work_code)):
        if (code or field == "completion_code") and not _CODE.match(code or ""):
            raise ValidationError(gettext("%(field)s: %(code)s is not a code (letters, digits, "
                                          "'_' and '-', at most 64)")
                                  % {"field": field, "code": repr(code)})
    if quota is not None and quota < 1:
        raise ValidationError(gettext("quota: %(quota)s tasks per session; give at least 1 "
                                      "(or none for no limit)") % {"quota": quota})
    if quota is not None and quota > QUOTA_MOST:
        raise ValidationError(gettext("quota: %(quota)s tasks per session is more than "
                                      "%(most)s; give none for no limit")
                              % {"quota": quota, "most": f"{QUOTA_MOST:,}"})
    if platform == Platform.MTURK and project.currency != MTURK_CURRENCY and (
            PaymentLine.objects.filter(export__project=project).exists()):
        # Before any payment the currency may still become USD (the pay page says so);
        # after one, MTurk's workers could never be paid through the exports.
        raise ValidationError(gettext("platform: MTurk pays bonuses in US dollars only, and "
                                      "this project's payments were already exported in "
                                      "%(currency)s: its MTurk workers could not be paid")
                              % {"currency": project.currency})
    if len(name) > Study._meta.get_field("name").max_length:
        raise ValidationError(gettext("name: at most %(most)s characters (%(given)s given)")
                              % {"most": Study._meta.get_field("name").max_length,
                                 "given": len(name)})
    return Study.objects.create(
        project=project, platform=platform, token=secrets.token_urlsafe(12),
        completion_code=completion_code, no_work_code=no_work_code,
        no_work_completes=no_work_completes, quota=quota, name=name,
        created_by=actor if getattr(actor, "pk", None) else None,
    )


def study_path(study: Study) -> str:
    return f"/study/{study.token}/"


def study_close(*, study: Study, closed: bool = True) -> Study:
    study.status = Study.Status.CLOSED if closed else Study.Status.OPEN
    study.save(update_fields=["status"])
    return study


def _account(arrival: Arrival) -> Any:
    """The worker's account: one per (platform, external id). Two arrivals of the same id
    at once make one account: the second insert waits for the first and finds it."""
    found = (ExternalAccount.objects.select_related("user")
             .filter(platform=arrival.platform, external_id=arrival.external_id).first())
    if found is not None:
        return found.user
    try:
        with transaction.atomic():
            user = User(username=f"{arrival.platform}-{secrets.token_hex(5)}")
            user.set_unusable_password()
            user.save()
            ExternalAccount.objects.create(platform=arrival.platform,
                                           external_id=arrival.external_id, user=user)
    except IntegrityError:
        return ExternalAccount.objects.select_related("user").get(
            platform=arrival.platform, external_id=arrival.external_id).user
    user.groups.add(Group.objects.get_or_create(name=Role.ANNOTATOR.value)[0])
    return user


@transaction.atomic
def study_arrive(*, study: Study, arrival: Arrival,
                 browser_user_id: int | None = None) -> tuple[Any, ProjectMember, StudySession]:
    """The worker agreed to the consent text: their account, their membership of the
    study's project and their session (all found again when they come back).

    A new session starts the study's quota afresh; the same session arriving again (a
    second tab, a reload) changes nothing. ``browser_user_id`` is who the browser is signed
    in as: a new session from another browser is refused while the worker holds a live
    task (the study URL is all that names a worker). History (exclusions, stage limits, earnings)
    belongs to the account and stays.
    """
    if arrival.preview:
        raise ValidationError(gettext("a preview cannot start a session: accept the HIT "
                                      "first"))
    # The session this arrival started before, if any: read once for the checks below.
    known = StudySession.objects.filter(study=study, session_key=arrival.session_key).first()
    if study.status != Study.Status.OPEN and known is None:
        raise ValidationError(gettext("this study is closed"))
    user = _account(arrival)
    if not user.is_active:
        # Deactivated by an admin: signing in would not hold (the session refuses an
        # inactive account), so no session, no membership change and no claim either.
        raise ValidationError(gettext(
            "Your account is closed here, so this study cannot start a session for it. "
            "Return the study on %(platform)s.") % {"platform": study.get_platform_display()})
    if (browser_user_id != user.pk and known is None
            and Assignment.objects.filter(worker=user, status=Assignment.Status.ACTIVE,
                                          lease_expires_at__gt=timezone.now()).exists()):
        # The URL names the worker, and anyone can type another worker's id: a new session
        # from another browser does not take over a task that worker is working on.
        raise ValidationError(gettext(
            "This %(platform)s id is working on a task in another browser. Finish or give "
            "back that task there first, or come back when its time runs out.")
            % {"platform": study.get_platform_display()})
    member, _ = ProjectMember.objects.get_or_create(
        project=study.project, user=user, role=Role.ANNOTATOR.value,
        defaults={"source": study.platform, "consented_at": timezone.now()},
    )
    if member.status != ProjectMember.Status.ACTIVE and (known is None
                                                         or known.member_id != member.pk):
        # A blocked worker, or one paused by the gold checks, starts no new session (its
        # quota and its completion code); a session they have goes on to say so.
        raise ValidationError(gettext(
            "You cannot start a new session in this study: your work in this project is "
            "paused or stopped. Return the study on %(platform)s.")
            % {"platform": study.get_platform_display()})
    session, created = StudySession.objects.get_or_create(
        study=study, session_key=arrival.session_key,
        defaults={"member": member, "external_study": arrival.external_study,
                  "submit_to": arrival.submit_to},
    )
    if session.member_id != member.pk:
        raise ValidationError(gettext("this session belongs to another worker"))
    member = ProjectMember.objects.select_for_update().get(pk=member.pk)
    if member.session_id != session.pk:
        member.session = session
        member.session_limit = study.quota
        member.session_taken = 0
        member.session_started_at = session.started_at
        member.consented_at = timezone.now()
        member.save(update_fields=["session", "session_limit", "session_taken",
                                   "session_started_at", "consented_at"])
    return user, member, session


def new_worker_allowed(*, arrival: Arrival, address: str | None) -> bool:
    """Whether ``arrival`` may go on: a worker seen before always may; a new one (an
    account to make) counts against ``CROWDQA_STUDY_NEW_WORKERS_PER_HOUR`` for its client
    address (an IPv6 one by its /64: ``ratelimit.client_network``) in the current clock
    hour (in the shared cache, so every web process counts together)."""
    limit = settings.CROWDQA_STUDY_NEW_WORKERS_PER_HOUR
    if limit <= 0 or ExternalAccount.objects.filter(
            platform=arrival.platform, external_id=arrival.external_id).exists():
        return True
    return hour_count(f"study-new-workers:{client_network(address)}") <= limit


def session_known(*, study: Study, arrival: Arrival) -> bool:
    """Whether ``arrival``'s session started already: a closed study takes no new session,
    but one that started goes on to its end (and its code)."""
    return StudySession.objects.filter(study=study, session_key=arrival.session_key).exists()


def session_of(*, study: Study, arrival: Arrival, user: Any) -> StudySession | None:
    """The session ``arrival`` started, when ``user`` (signed in) is the worker it
    belongs to."""
    if not getattr(user, "is_authenticated", False):
        return None
    return StudySession.objects.filter(study=study, session_key=arrival.session_key,
                                       member__user=user).first()


def session_current(*, worker: Any, session_id: Any = None) -> StudySession | None:
    """The marketplace session the worker is in now, with study and member: ``session_id``
    (the study the browser came in by, ``study_views.STUDY_SESSION``) when it is still the
    worker's session in its project, else their latest. A worker in two studies has one
    current session in each project."""
    current = (StudySession.objects.select_related("study", "study__project", "member")
               .filter(member__user=worker, member__session_id=F("id")))
    if isinstance(session_id, int):
        chosen = current.filter(pk=session_id).first()
        if chosen is not None:
            return chosen
    return current.order_by("-started_at", "-id").first()


def member_stopped(*, member: ProjectMember) -> bool:
    """Whether the member may take no more work as a whole (blocked or paused by an admin)
    or on a stage: paused by the gold checks there, or paused or blocked there by an admin
    (their standing, ``WorkerStage``). A session that ends with no work left for a member
    stopped on a stage is screened out, not given the no-work code: the work left is what
    they were stopped from."""
    if member.status != ProjectMember.Status.ACTIVE:
        return True
    return WorkerStage.objects.filter(
        member=member, status__in=(WorkerStage.Status.PAUSED, WorkerStage.Status.BLOCKED),
    ).exists()


#: Why a session ends screened out (``screened_out_why``): the member was stopped (blocked
#: or paused, in the project or on a stage), failed a stage's qualification for good, or
#: gave back the work that is left (``gave_back_the_work``).
STOPPED = "stopped"
NOT_QUALIFIED = "not_qualified"
GAVE_BACK = "gave_back"


def gave_back_the_work(*, member: ProjectMember, project: Project) -> bool:
    """Whether the work the member gave back (tasks released, or whose time ran out) that
    is still open outnumbers the answers they gave in the project. A claim never brings
    back an item its worker had, so giving back each task until none comes empties their
    queue: that is no work left *for them*, not "no work left", and earns no code. A worker
    who answered at least as many tasks as they gave back still gets the no-work code."""
    given_back = (Assignment.objects.filter(
        worker_id=member.user_id, stage__project_id=project.pk,
        status__in=(Assignment.Status.RELEASED, Assignment.Status.EXPIRED),
        item__status=Item.Status.OPEN).values("item_id").distinct().count())
    if not given_back:
        return False
    answered = Submission.objects.filter(worker_id=member.user_id,
                                         stage__project_id=project.pk).count()
    return given_back > answered


def screened_out_why(*, member: ProjectMember, project: Project,
                     qualifications: list[dict[str, Any]] | None = None) -> str:
    """Why a session of ``member`` that has no work left is screened out (no code) instead
    of getting the no-work code, or "" when it is not: ``STOPPED`` (``member_stopped``),
    ``NOT_QUALIFIED``: they failed a stage's qualification with no try left, so that
    stage's work is closed to them, as a stopped worker's is, or ``GAVE_BACK``
    (``gave_back_the_work``): what is left is the work they gave back. ``qualifications`` are their
    rows of ``gold.qualifications_for`` in ``project`` (read when not given)."""
    if member_stopped(member=member):
        return STOPPED
    if qualifications is None:
        qualifications = gold.qualifications_for(worker=member.user_id, project=project)
    if any(row["state"] == "failed_final" for row in qualifications):
        return NOT_QUALIFIED
    if gave_back_the_work(member=member, project=project):
        return GAVE_BACK
    return ""


def session_submitted(session: StudySession) -> int:
    """Tasks the worker submitted in the study's project since the session started (an
    answer they corrected is one task: the correction counts, not the answer it replaced,
    as the session's quota and pay count them)."""
    return Submission.objects.filter(
        worker_id=session.member.user_id, created_at__gte=session.started_at,
        stage__project_id=session.study.project_id, superseded_by__isnull=True,
    ).count()


def session_finish(*, session: StudySession, outcome: str) -> StudySession:
    """Record why the session ended (idempotent: the first outcome stays, except that a
    quota done replaces "no work left": work came back and the worker finished it; so does
    being screened out: a worker blocked or paused after none was left gets no code)."""
    Outcome = StudySession.Outcome
    before = [Outcome.WORKING] + ([Outcome.NO_WORK] if outcome in (Outcome.QUOTA,
                                                                  Outcome.SCREENED_OUT) else [])
    if session.outcome in before:
        StudySession.objects.filter(pk=session.pk, outcome__in=before).update(
            outcome=outcome, finished_at=timezone.now())
        session.refresh_from_db(fields=["outcome", "finished_at"])
    return session


def session_resume(*, session: StudySession) -> StudySession:
    """Work came back for a session that ended with none left (or the admin resumed the
    worker it screened out): it is working again, so that the outcome it ends with next
    (its quota done, or none left again) is recorded and decides the code it is shown."""
    stopped = (StudySession.Outcome.NO_WORK, StudySession.Outcome.SCREENED_OUT)
    if session.outcome in stopped:
        StudySession.objects.filter(pk=session.pk, outcome__in=stopped).update(
            outcome=StudySession.Outcome.WORKING, finished_at=None)
        session.refresh_from_db(fields=["outcome", "finished_at"])
    return session


def completion(*, session: StudySession) -> dict[str, Any]:
    """What the worker needs to finish on the platform: the code, and Prolific's link or
    MTurk's form; a worker screened out (blocked, paused by the gold checks, or failed a
    qualification for good: ``why``) gets no code: they return the study, and are paid for
    their work through the payments."""
    study = session.study
    if session.outcome == StudySession.Outcome.SCREENED_OUT:
        # A session stays screened out until work comes back (``session_resume``): one
        # whose worker is no longer stopped says the researcher's reason.
        why = screened_out_why(member=session.member, project=study.project) or STOPPED
        return {"screened_out": True, "why": why, "platform": study.platform,
                "platform_name": study.get_platform_display()}
    no_work = session.outcome == StudySession.Outcome.NO_WORK
    code = (study.no_work_code or study.completion_code) if no_work else study.completion_code
    done = {"code": code, "platform": study.platform, "no_work": no_work,
            "counts_complete": not no_work or study.no_work_completes}
    if study.platform == Platform.PROLIFIC:
        done["link"] = f"{PROLIFIC_COMPLETE}?{urlencode({'cc': code})}"
    elif session.submit_to:
        done["form_action"] = f"{session.submit_to}/mturk/externalSubmit"
        done["assignment_id"] = session.session_key
    return done


def sample_item(*, study: Study) -> Item | None:
    """For MTurk's preview, an open item of the latest stage that has one (workers are
    given the latest stages first), of a kind an annotator works and whose task shows no
    other worker's answers: the previewer has not joined, and a checker's task (an outlier
    review) or a validation would show them what other workers wrote."""
    from annotation.stages import stage_kinds

    kinds = [key for key, kind in stage_kinds().items()
             if not kind.automatic and kind.role == Role.ANNOTATOR
             and not kind.shows_others_work]
    return (Item.objects.select_related("stage", "document")
            .filter(project=study.project, status=Item.Status.OPEN, gold="",
                    stage__kind__in=kinds)
            .order_by("-stage__order", "priority", "id").first())
