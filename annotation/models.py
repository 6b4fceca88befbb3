"""The pipeline engine's state: projects, stages, items, assignments, submissions.

Every workflow object has one ``status`` field guarded by a CheckConstraint; statuses
change only through ``annotation.workflow.transition`` (one table of allowed moves, one
conditional UPDATE, a log row). History is never deleted: a released or expired
assignment stays as it was and a fresh open slot takes its place.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from collector.stored_text import (
    StoredText,
    stored_text_english,
    stored_text_json,
    stored_text_render,
)


def _status_check(name: str, values: list[str]) -> models.CheckConstraint:
    return models.CheckConstraint(condition=Q(status__in=values), name=name)


class ProjectStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    ACTIVE = "active", _("Active")
    COMPLETED = "completed", _("Completed")  # nothing pending any more (workflow)
    CLOSED = "closed", _("Closed")


class ItemStatus(models.TextChoices):
    PENDING = "pending", _("Pending")  # waiting for an automatic stage
    OPEN = "open", _("Open")  # human stage: slots to fill
    REVIEW = "review", _("In review")  # batched stage: work in, waiting for batch inspection
    DONE = "done", _("Done")
    CANCELLED = "cancelled", _("Cancelled")


class BatchStatus(models.TextChoices):
    OPEN = "open", _("Waiting for an annotator")
    WORKING = "working", _("Being annotated")
    INSPECTION = "inspection", _("Waiting for inspection")
    RETURNED = "returned", _("Returned for relabelling")
    ACCEPTED = "accepted", _("Accepted")


class InspectionStatus(models.TextChoices):
    OPEN = "open", _("Waiting for a checker")
    ACTIVE = "active", _("Being inspected")
    DONE = "done", _("Done")


class AssignmentStatus(models.TextChoices):
    OPEN = "open", _("Open")
    ACTIVE = "active", _("Active")
    SUBMITTED = "submitted", pgettext_lazy("status", "Submitted")
    RELEASED = "released", _("Released")
    EXPIRED = "expired", _("Expired")
    CANCELLED = "cancelled", _("Cancelled")


class Project(models.Model):
    """A dataset under construction: an ordered list of stages over one corpus."""

    Status = ProjectStatus

    name = models.CharField(max_length=200, unique=True)
    recipe = models.CharField(max_length=32)
    corpus = models.ForeignKey(
        "collector.Corpus", null=True, blank=True, on_delete=models.PROTECT,
        related_name="projects",
    )
    language = models.CharField(max_length=8, default="en")
    description = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    consent = models.TextField(
        blank=True, help_text="Markdown shown to people joining through a link or a study.")
    currency = models.CharField(max_length=3, default="GBP")
    min_hourly_wage = models.DecimalField(
        max_digits=8, decimal_places=2, default=0,
        help_text="Workers whose effective hourly wage falls below it are flagged (0: none).")

    class Meta:
        ordering = ("-created_at", "-id")
        constraints = [_status_check("annotation_project_status_valid", ProjectStatus.values)]

    def __str__(self) -> str:
        return self.name


class MemberStatus(models.TextChoices):
    ACTIVE = "active", pgettext_lazy("worker status", "Active")
    PAUSED = "paused", _("Paused")
    BLOCKED = "blocked", _("Blocked")


class MemberSource(models.TextChoices):
    ADMIN = "admin", _("Added by an admin")
    CSV = "csv", _("CSV upload")
    INVITE = "invite", _("Invite link")
    PROLIFIC = "prolific", "Prolific"
    MTURK = "mturk", "MTurk"


class Platform(models.TextChoices):
    PROLIFIC = "prolific", "Prolific"
    MTURK = "mturk", "Amazon Mechanical Turk"


class ProjectMember(models.Model):
    """A person working on a project, in one of the three roles.

    However a worker arrived (added by an admin, a CSV, an invite link, a marketplace
    study), this row is their membership; ``annotation.eligibility`` reads it at every
    claim. ``stage_taken`` and ``session_taken`` count the live and submitted slots that
    count against a limit (a stage's ``max_items_per_worker``, a study's tasks per
    session): the claim statement raises them in a conditional UPDATE of this row, so
    concurrent claims of one worker never pass a limit together.
    """

    Status = MemberStatus
    Source = MemberSource

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.ADMIN)
    joined_at = models.DateTimeField(default=timezone.now)
    consented_at = models.DateTimeField(null=True, blank=True)
    stage_taken = models.JSONField(
        default=dict, blank=True,
        help_text="Stage id -> live and submitted slots of stages with a per-worker limit.")
    session = models.ForeignKey(
        "StudySession", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="The marketplace session the worker is in now.")
    session_limit = models.PositiveIntegerField(
        null=True, blank=True, help_text="Tasks the current session may take (the study's quota).")
    session_taken = models.PositiveIntegerField(default=0)
    session_started_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=("project", "user", "role"), name="annotation_member_unique"
            ),
            models.CheckConstraint(
                condition=Q(role__in=["annotator", "checker", "admin"]),
                name="annotation_member_role_valid",
            ),
            _status_check("annotation_member_status_valid", MemberStatus.values),
        ]

    def __str__(self) -> str:
        return f"{self.user} as {self.role} in {self.project}"


class Stage(models.Model):
    """One step of a project's pipeline; its kind is registered in code."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="stages")
    order = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=64)
    name = models.CharField(max_length=200)
    params = models.JSONField(default=dict, blank=True)
    guidelines = models.TextField(blank=True, help_text="Markdown shown to workers.")
    guidelines_zh_hans = models.TextField(
        blank=True, help_text="The guidelines in Simplified Chinese (Markdown), shown to workers "
        "whose interface is in Chinese; when empty they see the English ones.")

    class Meta:
        ordering = ("project", "order")
        constraints = [
            models.UniqueConstraint(fields=("project", "order"), name="annotation_stage_order"),
        ]

    def __str__(self) -> str:
        return f"{self.project} · {self.order}. {self.name}"

    @property
    def kind_spec(self):
        from annotation.stages import stage_kind

        return stage_kind(self.kind)

    @property
    def display_name(self) -> str:
        """The name in the interface's language when it is a recipe's stage name (they are in
        the catalogue), else as the admin wrote it."""
        return gettext(self.name) if self.name else self.name

    def next_stage(self) -> Stage | None:
        return self.project.stages.filter(order__gt=self.order).order_by("order").first()


class Batch(models.Model):
    """Items of a batched stage given to one annotator, inspected by a checker as a whole.

    A failed inspection returns the whole batch to the same annotator for another round;
    every round's submissions and inspection are kept.
    """

    Status = BatchStatus

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="batches")
    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="batches")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
        related_name="batches",
    )
    round = models.PositiveSmallIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("stage", "number")
        constraints = [
            _status_check("annotation_batch_status_valid", BatchStatus.values),
            # Numbered per project: "batch 3" names one batch in every list of the project.
            models.UniqueConstraint(fields=("project", "number"), name="annotation_batch_number"),
        ]

    def __str__(self) -> str:
        return f"batch {self.number} of {self.stage.name}"


class Item(models.Model):
    """One unit of work at one stage (an article to ask about, a question to answer...)."""

    Status = ItemStatus

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="items")
    # (stage, key) and (stage, status) serve lookups by stage: no index of its own, one
    # index fewer to rewrite at every status change.
    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="items",
                              db_index=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    document = models.ForeignKey(
        "collector.Document", null=True, blank=True, on_delete=models.PROTECT,
        related_name="+",
    )
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    key = models.CharField(
        max_length=200, help_text="Unique within the stage; makes emitting idempotent."
    )
    data = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)
    overlap = models.PositiveSmallIntegerField(default=1)
    priority = models.IntegerField(default=0)
    split = models.CharField(max_length=8, blank=True)
    batch = models.ForeignKey(
        Batch, null=True, blank=True, on_delete=models.PROTECT, related_name="items",
        db_index=False,  # annotation_item_batch: only items that have one
    )
    gold = models.CharField(
        max_length=16, blank=True, choices=(("", "Work"), ("check", "Gold check"),
                                            ("training", "Qualification")),
        help_text="Gold items: ``result`` holds the expected answer and the reason. They are "
                  "never finished, so they never enter agreement, consolidation or releases.")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("stage", "priority", "id")
        constraints = [
            _status_check("annotation_item_status_valid", ItemStatus.values),
            models.UniqueConstraint(fields=("stage", "key"), name="annotation_item_stage_key"),
        ]
        indexes = [
            models.Index(fields=("stage", "status"), name="annotation_item_stage_st"),
            models.Index(fields=("batch",), name="annotation_item_batch",
                         condition=Q(batch__isnull=False)),
        ]

    def __str__(self) -> str:
        return f"item {self.pk} ({self.stage.kind}, {self.status})"


class ItemExclusion(models.Model):
    """A worker who must not work on an item (the questioner of its article, ...)."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="exclusions")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    reason = models.CharField(max_length=200)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("item", "user"), name="annotation_exclusion_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.user} excluded from item {self.item_id}: {self.reason}"


class Assignment(models.Model):
    """One slot of an item: open in the pool, taken by a worker under a lease, submitted.

    An item has ``overlap`` slots that are not released or expired. A released or expired
    slot stays as history; a new open slot replaces it.
    """

    Status = AssignmentStatus

    # Every claim and submit rewrites the row into each index (a status change is never a
    # HOT update), so indexes are few: the (item, worker) index serves item lookups.
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments",
                             db_index=False)
    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    worker = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
        related_name="assignments",
    )
    priority = models.IntegerField(default=0)
    reserved_for = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
        related_name="+", help_text="Batched stages: only this annotator may claim the slot.",
        db_index=False,  # annotation_slot_reserved_any below: only rows that have one
    )
    round = models.PositiveSmallIntegerField(default=1)
    claimed_at = models.DateTimeField(null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("priority", "id")
        constraints = [
            _status_check("annotation_assignment_status_valid", AssignmentStatus.values),
            # A worker holds at most one live slot of an item per round (a returned batch's
            # annotator labels its items again in the next round). The worker first: a plan
            # that picks this index for a worker's live slot (statistics of a bulk load,
            # before autovacuum analyses) reads that worker's slots, never the whole
            # history (docs/benchmarks.md, "Claim + submit with 10k, 100k and 1M open
            # slots"); lookups by item use annotation_slot_item_worker.
            models.UniqueConstraint(
                fields=("worker", "item", "round"),
                condition=Q(status__in=["active", "submitted"]),
                name="annotation_assignment_one_per_worker",
            ),
            models.CheckConstraint(
                condition=Q(status="open", worker__isnull=True)
                | (~Q(status="open") & Q(worker__isnull=False))
                | Q(status="cancelled"),
                name="annotation_assignment_worker_set",
            ),
        ]
        indexes = [
            # The claim walks this index in order and stops at the first free slot.
            models.Index(fields=("stage", "priority", "item", "id"), name="annotation_slot_pool",
                         condition=Q(status="open", reserved_for__isnull=True)),
            models.Index(fields=("reserved_for", "stage", "priority", "item", "id"),
                         name="annotation_slot_reserved", condition=Q(status="open")),
            models.Index(fields=("item", "worker"), name="annotation_slot_item_worker"),
            models.Index(fields=("reserved_for",), name="annotation_slot_reserved_any",
                         condition=Q(reserved_for__isnull=False)),
            # Leases to expire, and a worker's live slot, looked up at every claim: only
            # active slots, not the whole history.
            models.Index(fields=("lease_expires_at",), name="annotation_slot_lease",
                         condition=Q(status="active")),
            models.Index(fields=("worker", "lease_expires_at"), name="annotation_slot_live",
                         condition=Q(status="active")),
        ]

    def __str__(self) -> str:
        return f"assignment {self.pk} of item {self.item_id} ({self.status})"


class Submission(models.Model):
    """What a worker sent for an assignment; never overwritten (a redo is a new row)."""

    assignment = models.ForeignKey(
        Assignment, on_delete=models.PROTECT, related_name="submissions"
    )
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="submissions")
    stage = models.ForeignKey(Stage, on_delete=models.PROTECT, related_name="submissions")
    worker = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="submissions",
        db_index=False,  # annotation_sub_worker (worker, created_at) serves it
    )
    payload = models.JSONField()
    time_on_task_s = models.FloatField(help_text="From claim to submit.")
    active_time_s = models.FloatField(null=True, blank=True, help_text="Measured in the page.")
    set_aside = models.BooleanField(
        default=False, db_default=False,
        help_text="Set aside after its worker failed the stage's gold checks: the item got a "
                  "replacement worker and this answer no longer counts.")
    superseded_by = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="supersedes",
        help_text="The worker's correction of this answer: a new submission that counts "
                  "instead of this one (this row is kept as it was).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("id",)
        indexes = [models.Index(fields=("worker", "created_at"), name="annotation_sub_worker")]

    def __str__(self) -> str:
        return f"submission {self.pk} to item {self.item_id}"


class TransitionLog(models.Model):
    """Every status change of a workflow object, with who and when."""

    model = models.CharField(max_length=32)
    object_id = models.BigIntegerField()
    from_status = models.CharField(max_length=16)
    to_status = models.CharField(max_length=16)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    note = models.CharField(max_length=300, blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("id",)
        indexes = [models.Index(fields=("model", "object_id"), name="annotation_log_object")]

    def __str__(self) -> str:
        return f"{self.model} {self.object_id}: {self.from_status} -> {self.to_status}"


class Inspection(models.Model):
    """A checker's inspection of one round of a batch, on a seeded random sample."""

    Status = InspectionStatus

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="inspections")
    round = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    checker = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
        related_name="inspections",
    )
    fraction = models.FloatField()
    seed = models.BigIntegerField()
    sample = models.JSONField(help_text="Item ids drawn for inspection.")
    threshold = models.FloatField()
    marks = models.JSONField(default=dict, blank=True,
                             help_text="Item id -> the rules it violates.")
    comment = models.TextField(blank=True, help_text="The checker's word on the whole batch.")
    item_comments = models.JSONField(default=dict, blank=True,
                                     help_text="Item id -> the checker's comment on it.")
    errors = models.FloatField(null=True, blank=True)
    accuracy = models.FloatField(null=True, blank=True)
    passed = models.BooleanField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("id",)
        constraints = [
            _status_check("annotation_inspection_status_valid", InspectionStatus.values),
            models.UniqueConstraint(fields=("batch", "round"), name="annotation_inspection_round"),
        ]

    def __str__(self) -> str:
        return f"inspection of {self.batch}, round {self.round}"


class ReleaseStatus(models.TextChoices):
    BUILDING = "building", _("Building")
    READY = "ready", _("Ready")
    PUBLISHED = "published", _("Published")
    FAILED = "failed", _("Failed")


class UnagreedQuestions(models.TextChoices):
    """NewsQA: what SQuAD and Hugging Face get for a question without agreement after
    validation (``release_records.UNAGREED_CHOICES`` says it in full)."""

    UNANSWERABLE = "unanswerable", "Not answerable"
    OMIT = "omit", "Left out"
    CONSENSUS = "consensus", "Answerable when the official consensus is a span"


SEMVER = r"\A(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\Z"


class Release(models.Model):
    """A frozen, versioned snapshot of a project's consolidated data, in loadable formats.

    Written once by the build job and never changed afterwards (only ``ready`` ->
    ``published``); a new version is a new release. The pseudonym salt stays here and is
    never written into a released file.
    """

    Status = ReleaseStatus
    UnagreedQuestions = UnagreedQuestions

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="releases")
    version = models.CharField(
        max_length=40,
        # \A...\Z and [0-9]: "$" also matched before a final newline, and "\d" any script's
        # digits, so "1.0.0\n" and "１.0.0" passed beside an existing 1.0.0.
        validators=[RegexValidator(SEMVER, "Use a semantic version: X.Y.Z, whole numbers "
                                           "without leading zeros (e.g. 1.0.0).")],
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.BUILDING)
    formats = models.JSONField(help_text="The formats written, e.g. ['squad-v2', 'hf'].")
    omit_workers = models.BooleanField(default=False)
    unagreed_questions = models.CharField(
        max_length=16, default="unanswerable", choices=UnagreedQuestions.choices,
        help_text="NewsQA: how SQuAD and Hugging Face get questions without agreement "
                  "after validation (annotation.release_records.UNAGREED_CHOICES).")
    pseudonym_salt = models.CharField(max_length=64, editable=False)
    stage_params = models.JSONField(default=list, help_text="The exact stage parameters.")
    split_counts = models.JSONField(default=dict)
    datasheet = models.JSONField(default=dict)
    error = models.TextField(blank=True)
    job = models.ForeignKey("collector.Job", null=True, blank=True, on_delete=models.SET_NULL,
                            related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at", "-id")
        constraints = [
            _status_check("annotation_release_status_valid", ReleaseStatus.values),
            models.UniqueConstraint(fields=("project", "version"),
                                    name="annotation_release_version_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.project} {self.version}"

    @property
    def directory(self) -> str:
        """Relative to MEDIA_ROOT."""
        return f"releases/{self.project_id}/{self.version}"


class ReleaseFile(models.Model):
    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="files")
    format = models.CharField(max_length=32)
    split = models.CharField(max_length=16, blank=True)
    path = models.CharField(max_length=300, help_text="Relative to the release directory.")
    records = models.PositiveIntegerField()
    sha256 = models.CharField(max_length=64)
    bytes = models.BigIntegerField()

    class Meta:
        ordering = ("release", "format", "path")
        constraints = [
            models.UniqueConstraint(fields=("release", "path"), name="annotation_releasefile_path"),
        ]

    def __str__(self) -> str:
        return self.path


# The crowd: marketplace accounts, studies, invite links, pay ------------------------------

class ExternalAccount(models.Model):
    """A marketplace worker: one account per (platform, external id), without a password.

    The external id is shown to admins only and never leaves the platform (releases carry
    per-release pseudonyms; payment exports are for the admin who pays)."""

    platform = models.CharField(max_length=16, choices=Platform.choices)
    external_id = models.CharField(max_length=64)
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                related_name="external_account")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("platform", "external_id"),
                                    name="annotation_external_account_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.platform} worker {self.user_id}"


class StudyStatus(models.TextChoices):
    OPEN = "open", _("Open")
    CLOSED = "closed", _("Closed")


class Study(models.Model):
    """A project opened to a marketplace: workers arrive at ``/study/<token>/`` with the
    platform's URL parameters, consent, work up to ``quota`` tasks per session and leave
    with the completion code."""

    Status = StudyStatus

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="studies")
    platform = models.CharField(max_length=16, choices=Platform.choices)
    token = models.CharField(max_length=32, unique=True)
    name = models.CharField(max_length=200, blank=True)
    completion_code = models.CharField(max_length=64)
    no_work_code = models.CharField(
        max_length=64, blank=True,
        help_text="Code for workers who leave because no work is left (blank: the "
                  "completion code).")
    no_work_completes = models.BooleanField(
        default=True, help_text="Whether leaving because no work is left counts as complete.")
    quota = models.PositiveIntegerField(null=True, blank=True, help_text="Tasks per session.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-created_at", "-id")
        constraints = [_status_check("annotation_study_status_valid", StudyStatus.values)]

    def __str__(self) -> str:
        return self.name or f"{self.get_platform_display()} study of {self.project}"


class SessionOutcome(models.TextChoices):
    WORKING = "working", _("Working")
    QUOTA = "quota", _("Quota done")
    NO_WORK = "no_work", _("No work left")
    SCREENED_OUT = "screened_out", _("Screened out")


class StudySession(models.Model):
    """One visit of a marketplace worker (Prolific SESSION_ID, MTurk assignmentId)."""

    Outcome = SessionOutcome

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="sessions")
    member = models.ForeignKey(ProjectMember, on_delete=models.CASCADE, related_name="sessions")
    session_key = models.CharField(max_length=64)
    external_study = models.CharField(max_length=64, blank=True,
                                      help_text="STUDY_ID (Prolific) or hitId (MTurk).")
    submit_to = models.URLField(blank=True, help_text="MTurk: turkSubmitTo.")
    outcome = models.CharField(max_length=16, choices=Outcome.choices, default=Outcome.WORKING)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("id",)
        constraints = [
            models.UniqueConstraint(fields=("study", "session_key"),
                                    name="annotation_study_session_unique"),
            models.CheckConstraint(condition=Q(outcome__in=SessionOutcome.values),
                                   name="annotation_session_outcome_valid"),
        ]

    def __str__(self) -> str:
        return f"session {self.pk} of {self.study}"


class Invite(models.Model):
    """A link that makes whoever opens it (and signs up) a member in ``role``."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invites")
    role = models.CharField(max_length=16)
    token = models.CharField(max_length=32, unique=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    max_uses = models.PositiveIntegerField(null=True, blank=True)
    allowed_domains = models.JSONField(default=list, blank=True,
                                       help_text="E-mail domains allowed to sign up (empty: any).")
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-created_at", "-id")
        constraints = [
            models.CheckConstraint(condition=Q(role__in=["annotator", "checker"]),
                                   name="annotation_invite_role_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.role} invite to {self.project}"


class InviteUse(models.Model):
    invite = models.ForeignKey(Invite, on_delete=models.CASCADE, related_name="uses")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("id",)
        constraints = [
            models.UniqueConstraint(fields=("invite", "user"), name="annotation_invite_use_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.user} joined through invite {self.invite_id}"


class InviteMailStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    SENDING = "sending", _("Sending")
    SENT = "sent", _("Sent")
    FAILED = "failed", _("Failed")
    DROPPED = "dropped", _("Not needed any more")


class InviteMail(models.Model):
    """One confirmation mail asked for through a link restricted to e-mail domains (a
    sign-up, a join, or "Send the link again"): the Celery task
    ``annotation.tasks.invite_mail_send_task`` reads it by id and sends it once
    (``annotation.invites.invite_mail_send``). A ``newcomer``'s rows also say when their
    account's last link was sent: the periodic purge removes unconfirmed accounts whose
    links have all expired. Rows go after ``invites.MAIL_ROWS_KEPT``."""

    Status = InviteMailStatus

    invite = models.ForeignKey(Invite, on_delete=models.CASCADE, related_name="mails")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="+")
    email = models.CharField(max_length=254)
    newcomer = models.BooleanField(default=False)
    language = models.CharField(max_length=16)
    site_root = models.CharField(max_length=500,
                                 help_text="The site's absolute root URL the link starts with.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # When its message was last given to the broker (created, a retry's countdown, sent
    # again by the periodic check): a mail queued long after this is looked for in the
    # broker (``invites.invite_mails_recover``).
    queued_at = models.DateTimeField(default=timezone.now)
    # Queued, and the broker could not tell whether it still holds the message: it waits for
    # the mail worker, the reason in ``error`` (cleared when the message turns up).
    stalled_at = models.DateTimeField(null=True, blank=True)
    attempted_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("id",)
        constraints = [
            _status_check("annotation_invitemail_status_valid", InviteMailStatus.values),
        ]
        indexes = [models.Index(fields=("user", "created_at"), name="annotation_invmail_user")]

    def __str__(self) -> str:
        return f"confirmation mail {self.pk} of invite {self.invite_id} ({self.status})"


class Bonus(models.Model):
    """Money an admin adds to a worker's earnings on a project, with the reason."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="bonuses")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    amount = models.DecimalField(max_digits=10, decimal_places=2)
    reason = models.CharField(max_length=300)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("id",)
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="annotation_bonus_positive"),
        ]

    def __str__(self) -> str:
        return f"bonus {self.amount} to {self.user_id}"


class PaymentExport(models.Model):
    """One payments CSV: what each worker was owed up to ``period_end`` and not yet paid
    by an earlier export. Kept with its content, so it can be downloaded again and nothing
    is paid twice."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="payment_exports")
    backend = models.CharField(max_length=32, default="csv")
    currency = models.CharField(max_length=3)
    period_start = models.DateTimeField(null=True, blank=True)
    period_end = models.DateTimeField()
    total = models.DecimalField(max_digits=12, decimal_places=2)
    content = models.TextField()
    # The Prolific studies its rows pay in (STUDY_IDs, "" for rows with none), sorted: the
    # pay page offers bulk-bonus lines per study without reading every export's CSV.
    prolific_studies = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    # Marked not paid (paying it on the platform failed): who, when and why. Its lines'
    # amounts went back to owed (``PaymentLine.returned_at``), except those of workers
    # paid by other means; the export and its lines stay, as the record.
    unpaid_at = models.DateTimeField(null=True, blank=True)
    unpaid_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                  on_delete=models.SET_NULL, related_name="+")
    unpaid_reason = models.TextField(blank=True)

    class Meta:
        ordering = ("-created_at", "-id")

    def __str__(self) -> str:
        return f"payments of {self.project} to {self.period_end:%Y-%m-%d %H:%M}"


class PaymentLine(models.Model):
    export = models.ForeignKey(PaymentExport, on_delete=models.CASCADE, related_name="lines")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    # When its export was marked not paid: the amount is owed again (paid by a later
    # export); the line stays as the record of what the export tried to pay.
    returned_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("id",)
        constraints = [
            models.UniqueConstraint(fields=("export", "user"), name="annotation_payline_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.amount} to {self.user_id}"


class WorkerStageStatus(models.TextChoices):
    ACTIVE = "active", pgettext_lazy("worker status", "Active")
    PAUSED = "paused", _("Paused")
    BLOCKED = "blocked", _("Blocked")


class WorkerStage(models.Model):
    """A member's standing on one stage: qualification, gold-check record, pause.

    ``annotation.eligibility`` reads it at every claim of a stage that asks for a
    qualification or mixes in gold: an unqualified, paused or blocked worker gets no slot
    of the stage."""

    Status = WorkerStageStatus

    member = models.ForeignKey(ProjectMember, on_delete=models.CASCADE,
                               related_name="stage_standings")
    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="worker_standings")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    qualified = models.BooleanField(default=False)
    qualification_tries = models.PositiveSmallIntegerField(default=0)
    qualification_score = models.FloatField(null=True, blank=True,
                                            help_text="Score of the last finished try.")
    training_items = models.JSONField(default=list, blank=True,
                                      help_text="Item ids of the current try, in order.")
    training_scores = models.JSONField(default=list, blank=True,
                                       help_text="Scores of the current try so far.")
    gold_seen = models.PositiveIntegerField(default=0)
    gold_score_sum = models.FloatField(default=0)
    status_reason = models.CharField(max_length=300, blank=True)
    # The reason as a stored text (``collector.stored_text``), shown in its reader's
    # language; empty when the reason is words only (an admin's, or an older row's).
    status_reason_text = models.JSONField(default=dict, blank=True)
    changed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("member", "stage"),
                                    name="annotation_workerstage_unique"),
            _status_check("annotation_workerstage_status_valid", WorkerStageStatus.values),
        ]

    def __str__(self) -> str:
        return f"{self.member} on {self.stage_id} ({self.status})"

    @property
    def gold_accuracy(self) -> float | None:
        return self.gold_score_sum / self.gold_seen if self.gold_seen else None

    @property
    def status_reason_shown(self) -> str:
        """Why the worker stands as they do, in the active language."""
        return stored_text_render(self.status_reason_text, self.status_reason)

    def status_reason_set(self, reason: str | StoredText) -> None:
        """Keep ``reason``: its English (cut to the field), and a stored text as it is."""
        self.status_reason = stored_text_english(reason)[:300]
        self.status_reason_text = stored_text_json(reason)


class GoldAnswer(models.Model):
    """A worker's answer to a gold item (qualification or check) and its score."""

    standing = models.ForeignKey(WorkerStage, on_delete=models.CASCADE, related_name="answers")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="gold_answers")
    purpose = models.CharField(max_length=16)  # check | training
    try_number = models.PositiveSmallIntegerField(default=0)
    payload = models.JSONField()
    score = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("id",)
        indexes = [models.Index(fields=("standing", "purpose"), name="annotation_goldans_st")]

    def __str__(self) -> str:
        return f"gold answer {self.pk} ({self.score:.2f})"


class UserPreference(models.Model):
    """What a user chose for themselves: the interface language, kept across devices."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                related_name="preference")
    language = models.CharField(max_length=16, choices=settings.LANGUAGES)

    def __str__(self) -> str:
        return f"{self.user} prefers {self.language}"


from annotation.judgment_models import JudgmentReport  # noqa: E402,F401  (judgment recipe)
