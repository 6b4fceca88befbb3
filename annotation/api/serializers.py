"""Serializers of the people-and-work API: one input and one output shape per operation."""

from __future__ import annotations

from typing import Any

import orjson
from django.contrib.auth import get_user_model
from django.urls import reverse
from rest_framework import serializers
from rest_framework.utils import html

from annotation.models import Assignment, Project, Release
from annotation.roles import user_roles

User = get_user_model()


class UserOutputSerializer(serializers.ModelSerializer):
    roles = serializers.SerializerMethodField()

    class Meta:
        model = User
        fields = ("id", "username", "roles", "is_active", "last_login", "date_joined")

    def get_roles(self, user) -> list[str]:
        return sorted(role.value for role in user_roles(user))


class WorkerOutputSerializer(serializers.ModelSerializer):
    """A worker as a checker sees them: the id and the username the pages name them by,
    no personal data (checkers review batches; their quality figures are on the workers
    pages)."""

    class Meta:
        model = User
        fields = ("id", "username")


class WorkerAdminOutputSerializer(WorkerOutputSerializer):
    """A worker in the workers list as an admin sees them: also when they last signed in
    (the shape the schema documents; a checker's rows have no ``last_login``)."""

    class Meta(WorkerOutputSerializer.Meta):
        fields = (*WorkerOutputSerializer.Meta.fields, "last_login")
        extra_kwargs = {"last_login": {
            "help_text": "When the worker last signed in (null: never). Admins only: "
                         "checkers get the id and username alone."}}


class TaskOutputSerializer(serializers.Serializer):
    """A worker's task: what the stage shows them, nothing about other workers."""

    # Every field declared: a ModelSerializer builds its fields from the model again for
    # each task it writes (a fifth of the claim's serializing).
    id = serializers.IntegerField(read_only=True)
    project = serializers.CharField(source="stage.project.name")
    stage = serializers.CharField(source="stage.name")  # as stored: for programs
    # The stage's name for people, in the request's language (a recipe's stage names are in
    # the catalogue; a name an admin wrote is as written).
    stage_label = serializers.CharField(source="stage.display_name", read_only=True)
    kind = serializers.CharField(source="stage.kind")
    status = serializers.ChoiceField(choices=Assignment.Status.choices, required=False)
    claimed_at = serializers.DateTimeField(allow_null=True, required=False)
    lease_expires_at = serializers.DateTimeField(allow_null=True, required=False)
    task = serializers.SerializerMethodField()

    def get_task(self, assignment: Assignment) -> dict[str, Any]:
        return assignment.stage.kind_spec.context(assignment.item)


class ProjectRefField(serializers.PrimaryKeyRelatedField):
    """A project's id checked for its type only, as an unsaved ``Project`` holding the pk:
    the claim scopes its one statement by the id and loads the project with the slot, so
    the claim's hot path reads no project first. The view checks that the project exists,
    among the worker's, when the claim comes back empty (``project_exists``), with this
    field's message."""

    def to_internal_value(self, data: Any) -> Project:
        if isinstance(data, bool) or not isinstance(data, int | str):
            self.fail("incorrect_type", data_type=type(data).__name__)
        try:
            pk = int(data)
        except ValueError:
            self.fail("incorrect_type", data_type=type(data).__name__)
        if pk < 1 or pk > 2**63 - 1:
            self.fail("does_not_exist", pk_value=data)
        return Project(pk=pk)

    def project_exists(self, project: Project, *, user: Any) -> None:
        """A 400 unless the project exists and ``user`` is a member: another project's id
        is answered as a missing one, so that a worker learns nothing of projects they are
        not in (as the pages answer 404)."""
        if not Project.objects.filter(pk=project.pk, members__user=user).exists():
            raise serializers.ValidationError(
                {self.field_name: [self.error_messages["does_not_exist"].format(
                    pk_value=project.pk)]})


class TaskNextInputSerializer(serializers.Serializer):
    project = ProjectRefField(queryset=Project.objects.all(), required=False, allow_null=True)


class PayloadField(serializers.DictField):
    """The answer: a JSON object; in a form (``application/x-www-form-urlencoded``,
    multipart) the ``payload`` field holds it as JSON text, as the task pages post it (a
    form's text was taken for an empty object, and the kind's refusal named fields the
    client had sent). ``payload.<name>`` fields still give a flat object."""

    def get_value(self, dictionary: Any) -> Any:
        if html.is_html_input(dictionary) and isinstance(dictionary.get(self.field_name), str):
            text = dictionary[self.field_name]
            try:
                return orjson.loads(text)  # refuses what the JSON body's parser refuses
            except orjson.JSONDecodeError:
                return text  # refused as text, not an object
        return super().get_value(dictionary)


class TaskSubmitInputSerializer(serializers.Serializer):
    payload = PayloadField()
    active_time_s = serializers.FloatField(required=False, allow_null=True, min_value=0)
    next = serializers.BooleanField(
        required=False, default=False,
        help_text="Also claim the next task of the task's project, as POST /tasks/next/ "
                  "with that project would, and return it as `next` (null when none "
                  "waits): one request a task, as the task pages do.")


class TaskSubmitOutputSerializer(serializers.Serializer):
    submission = serializers.IntegerField()
    payload = serializers.DictField()
    next = TaskOutputSerializer(
        required=False, allow_null=True,
        help_text="Only when the submit asked for it: the next task, or null.")

    def to_representation(self, instance: dict[str, Any]) -> dict[str, Any]:
        data = super().to_representation(instance)
        if "next" not in instance:  # not asked for: absent, not null ("none waits")
            del data["next"]
        return data


class ErrorsOutputSerializer(serializers.Serializer):
    """An action the service refused, with its reasons."""

    errors = serializers.ListField(child=serializers.CharField())


class ProjectOutputSerializer(serializers.ModelSerializer):
    corpus = serializers.CharField(source="corpus.name", default=None, allow_null=True)

    class Meta:
        model = Project
        fields = ("id", "name", "recipe", "corpus", "language", "status", "created_at")


class StageSummaryOutputSerializer(serializers.Serializer):
    order = serializers.IntegerField()
    kind = serializers.CharField()
    name = serializers.CharField()  # as stored
    label = serializers.CharField()  # the name for people, in the request's language
    params = serializers.DictField()
    counts = serializers.DictField(child=serializers.IntegerField())
    median_time_s = serializers.FloatField(allow_null=True)


class WorkerSubmissionsOutputSerializer(serializers.Serializer):
    username = serializers.CharField()
    submissions = serializers.IntegerField()


class ProjectDetailOutputSerializer(ProjectOutputSerializer):
    """A project with its dashboard: the paper's figures, stage progress, submissions
    (the view sets ``figures``, ``stages_summary`` and ``workers_summary`` on the project)."""

    figures = serializers.DictField()
    stages = StageSummaryOutputSerializer(many=True, source="stages_summary")
    workers = WorkerSubmissionsOutputSerializer(many=True, source="workers_summary")

    class Meta(ProjectOutputSerializer.Meta):
        fields = (*ProjectOutputSerializer.Meta.fields, "figures", "stages", "workers")


class ProjectRecordOutputSerializer(serializers.Serializer):
    """One consolidated record of a project's final stage."""

    item = serializers.IntegerField(source="pk")
    document = serializers.CharField(source="document.external_id", default=None,
                                     allow_null=True)
    split = serializers.CharField()
    record = serializers.JSONField(source="result")


class ReleaseFileOutputSerializer(serializers.Serializer):
    format = serializers.CharField()
    split = serializers.CharField(
        help_text="The split the file holds (train, dev, test); empty for a file of every "
                  "split (NewsQA's combined files, a dataset card, the datasheet).")
    path = serializers.CharField()
    records = serializers.IntegerField()
    sha256 = serializers.CharField()
    bytes = serializers.IntegerField()
    url = serializers.SerializerMethodField(
        help_text="Where to download the file: GET it with the same session or token.")

    def get_url(self, f) -> str:
        return reverse("api_release_file", args=[f.release_id, f.path])


class ReleaseOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    project = serializers.CharField(source="project.name")
    version = serializers.CharField()
    status = serializers.CharField()
    formats = serializers.ListField(child=serializers.CharField())
    split_counts = serializers.DictField()
    created_at = serializers.DateTimeField()
    published_at = serializers.DateTimeField(allow_null=True)
    error = serializers.CharField(allow_blank=True)
    files = ReleaseFileOutputSerializer(many=True)


class ReleaseCreateInputSerializer(serializers.Serializer):
    version = serializers.CharField(max_length=40)
    formats = serializers.ListField(child=serializers.CharField(), min_length=1)
    omit_workers = serializers.BooleanField(default=False)
    unagreed_questions = serializers.ChoiceField(
        choices=Release.UnagreedQuestions.values, default="unanswerable",
        help_text="NewsQA: how SQuAD and Hugging Face get questions without agreement after "
                  "validation (annotation.release_records.UNAGREED_CHOICES).")


class ReleaseScoreInputSerializer(serializers.Serializer):
    predictions = serializers.FileField(help_text="The predictions file to score.")
    format = serializers.CharField(allow_blank=True, default="",
                                   help_text="The release format the predictions are for.")
    split = serializers.CharField(
        allow_blank=True, default="", max_length=16,
        help_text="The split whose file is the gold data (train, dev, test); by default dev, "
                  "else test, else the release's only split. The scores name the split and "
                  "file scored.")
    strict = serializers.BooleanField(
        default=False, help_text="Refuse predictions whose ids do not match the release "
                                 "instead of scoring as the official scripts do, with warnings.")


class ReleaseScoreOutputSerializer(serializers.Serializer):
    """The official scores of the predictions against the release's file of one split:
    metric names to values, as the format's scorer reports them (keys differ by format;
    its schema is config.api_schema.ReleaseScoresSchema), then ``split`` and ``file``,
    the split and file scored."""

    def to_representation(self, instance: dict[str, Any]) -> dict[str, Any]:
        return dict(instance)
