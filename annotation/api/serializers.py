from __future__ import annotations

from typing import Any

from rest_framework import serializers

from annotation.models import Assignment, Project, Release


class TaskOutputSerializer(serializers.ModelSerializer):
    """A worker's task: what the stage shows them, nothing about other workers."""

    project = serializers.CharField(source="stage.project.name")
    stage = serializers.CharField(source="stage.name")
    kind = serializers.CharField(source="stage.kind")
    task = serializers.SerializerMethodField()

    class Meta:
        model = Assignment
        fields = ("id", "project", "stage", "kind", "status", "claimed_at", "lease_expires_at",
                  "task")

    def get_task(self, assignment: Assignment) -> dict[str, Any]:
        return assignment.stage.kind_spec.context(assignment.item)


class TaskNextInputSerializer(serializers.Serializer):
    project = serializers.PrimaryKeyRelatedField(
        queryset=Project.objects.all(), required=False, allow_null=True
    )


class TaskSubmitInputSerializer(serializers.Serializer):
    payload = serializers.DictField()
    active_time_s = serializers.FloatField(required=False, allow_null=True, min_value=0)


class ProjectOutputSerializer(serializers.ModelSerializer):
    corpus = serializers.CharField(source="corpus.name", default=None)

    class Meta:
        model = Project
        fields = ("id", "name", "recipe", "corpus", "language", "status", "created_at")


class ReleaseFileOutputSerializer(serializers.Serializer):
    format = serializers.CharField()
    split = serializers.CharField()
    path = serializers.CharField()
    records = serializers.IntegerField()
    sha256 = serializers.CharField()
    bytes = serializers.IntegerField()
    url = serializers.SerializerMethodField()

    def get_url(self, f) -> str:
        from django.urls import reverse

        return reverse("annotation:release_file", args=[f.release_id, f.path])


class ReleaseOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    project = serializers.CharField(source="project.name")
    version = serializers.CharField()
    status = serializers.CharField()
    formats = serializers.ListField(child=serializers.CharField())
    split_counts = serializers.DictField()
    created_at = serializers.DateTimeField()
    published_at = serializers.DateTimeField()
    error = serializers.CharField()
    files = ReleaseFileOutputSerializer(many=True)


class ReleaseCreateInputSerializer(serializers.Serializer):
    version = serializers.CharField(max_length=40)
    formats = serializers.ListField(child=serializers.CharField(), min_length=1)
    omit_workers = serializers.BooleanField(default=False)
    unagreed_questions = serializers.ChoiceField(
        choices=Release.UnagreedQuestions.values, default="unanswerable",
        help_text="NewsQA: how SQuAD and Hugging Face get questions without agreement after "
                  "validation (annotation.release_records.UNAGREED_CHOICES).")
