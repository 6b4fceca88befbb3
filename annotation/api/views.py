"""People and work API: who am I, workers, users (admins), tasks (annotators), projects."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from rest_framework import generics, serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import engine, selectors
from annotation.api.serializers import (
    ProjectOutputSerializer,
    TaskNextInputSerializer,
    TaskOutputSerializer,
    TaskSubmitInputSerializer,
)
from annotation.models import Project
from annotation.roles import IsAdmin, IsAnnotator, IsAnyRole, IsChecker, Role, user_roles

User = get_user_model()


class UserOutputSerializer(serializers.ModelSerializer):
    roles = serializers.SerializerMethodField()

    class Meta:
        model = User
        fields = ("id", "username", "roles", "is_active", "last_login", "date_joined")

    def get_roles(self, user) -> list[str]:
        return sorted(role.value for role in user_roles(user))


class WorkerOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = User
        fields = ("id", "username", "last_login")


class MeApi(APIView):
    permission_classes = (IsAuthenticated,)

    def get(self, request: Request) -> Response:
        return Response(UserOutputSerializer(request.user).data)


class WorkerListApi(generics.ListAPIView):
    """Annotators, for checkers assigning and reviewing batches."""

    permission_classes = (IsChecker,)
    serializer_class = WorkerOutputSerializer

    def get_queryset(self):
        return User.objects.filter(groups__name=Role.ANNOTATOR, is_active=True).order_by("id")


class UserListApi(generics.ListAPIView):
    permission_classes = (IsAdmin,)
    serializer_class = UserOutputSerializer

    def get_queryset(self):
        return User.objects.prefetch_related("groups").order_by("id")


def _own_assignment(request: Request, pk: int):
    try:
        return engine.assignment_for_worker(assignment_id=pk, worker=request.user)
    except engine.TaskError as exc:
        raise PermissionDenied(str(exc)) from exc


class TaskNextApi(APIView):
    """Claim the next task (or get the current one); 204 when nothing waits."""

    permission_classes = (IsAnnotator,)

    def post(self, request: Request) -> Response:
        data = TaskNextInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        # The claim loads what the task shows (item, document, stage, project) itself.
        assignment = engine.task_claim(worker=request.user,
                                       project=data.validated_data.get("project"),
                                       related=True)
        if assignment is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(TaskOutputSerializer(assignment).data)


class TaskDetailApi(APIView):
    permission_classes = (IsAnnotator,)

    def get(self, request: Request, pk: int) -> Response:
        return Response(TaskOutputSerializer(_own_assignment(request, pk)).data)


class TaskSubmitApi(APIView):
    permission_classes = (IsAnnotator,)

    def post(self, request: Request, pk: int) -> Response:
        # The engine reads, locks and checks the slot (it is the worker's, live): no read
        # of it here before.
        data = TaskSubmitInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            submission = engine.task_submit(
                assignment_id=pk, worker=request.user, payload=data.validated_data["payload"],
                active_time_s=data.validated_data.get("active_time_s"),
            )
        except ValidationError as exc:
            return Response({"errors": exc.messages}, status=status.HTTP_400_BAD_REQUEST)
        except engine.TaskNotFound as exc:
            raise NotFound(str(exc)) from exc
        except engine.TaskNotYours as exc:
            raise PermissionDenied(str(exc)) from exc
        except engine.TaskError as exc:
            return Response({"errors": [str(exc)]}, status=status.HTTP_409_CONFLICT)
        return Response({"submission": submission.pk, "payload": submission.payload},
                        status=status.HTTP_201_CREATED)


class TaskReleaseApi(APIView):
    permission_classes = (IsAnnotator,)

    def post(self, request: Request, pk: int) -> Response:
        try:
            engine.task_release(assignment_id=pk, worker=request.user)
        except engine.TaskError as exc:
            raise PermissionDenied(str(exc)) from exc
        return Response(status=status.HTTP_204_NO_CONTENT)


class ProjectListApi(generics.ListAPIView):
    permission_classes = (IsAdmin,)
    serializer_class = ProjectOutputSerializer

    def get_queryset(self):
        return Project.objects.select_related("corpus").order_by("-created_at")


class ProjectDetailApi(APIView):
    permission_classes = (IsAdmin,)

    def get(self, request: Request, pk: int) -> Response:
        project = get_object_or_404(Project.objects.select_related("corpus"), pk=pk)
        board = selectors.project_dashboard(project=project)
        return Response({
            **ProjectOutputSerializer(project).data,
            "figures": board["figures"],
            "stages": [{
                "order": row["stage"].order, "kind": row["stage"].kind,
                "name": row["stage"].name, "params": row["stage"].params,
                "counts": row["counts"], "median_time_s": row["median_time_s"],
            } for row in board["stage_rows"]],
            "workers": [{"username": name, "submissions": n} for name, n in board["workers"]],
        })


class ProjectRecordsApi(generics.GenericAPIView):
    """Consolidated records of a project's final stage (admins)."""

    permission_classes = (IsAdmin,)

    def get(self, request: Request, pk: int) -> Response:
        project = get_object_or_404(Project, pk=pk)
        items = selectors.consolidated_items(project=project)
        page = self.paginate_queryset(items)
        return self.get_paginated_response([
            {"item": item.pk, "document": item.document.external_id if item.document else None,
             "split": item.split, "record": item.result} for item in page
        ])


class ProjectReleasesApi(generics.GenericAPIView):
    """A project's releases: admins see all and create them; others see published ones."""

    permission_classes = (IsAnyRole,)

    def get(self, request: Request, pk: int) -> Response:
        from annotation.api.serializers import ReleaseOutputSerializer
        from annotation.selectors import releases_visible

        project = get_object_or_404(Project, pk=pk)
        page = self.paginate_queryset(releases_visible(user=request.user, project=project))
        return self.get_paginated_response(ReleaseOutputSerializer(page, many=True).data)

    def post(self, request: Request, pk: int) -> Response:
        from annotation import releases
        from annotation.api.serializers import (
            ReleaseCreateInputSerializer,
            ReleaseOutputSerializer,
        )

        if not IsAdmin().has_permission(request, self):
            raise PermissionDenied("only admins create releases")
        project = get_object_or_404(Project, pk=pk)
        data = ReleaseCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            release = releases.release_create(project=project, user=request.user,
                                              **data.validated_data)
        except ValidationError as exc:
            return Response({"errors": exc.messages}, status=status.HTTP_400_BAD_REQUEST)
        return Response(ReleaseOutputSerializer(release).data, status=status.HTTP_201_CREATED)


class ReleaseScoreApi(APIView):
    """POST a predictions file (multipart ``predictions``), a ``format`` and optionally
    ``strict``: the official scores against the release, with ``warnings`` (ignored unknown
    ids, unanswered questions) when there are any. Anyone who may see the release may
    score against it."""

    permission_classes = (IsAnyRole,)

    def post(self, request: Request, pk: int) -> Response:
        import tempfile
        from pathlib import Path

        from annotation.scoring import release_score
        from annotation.selectors import releases_visible
        from collector.metrics import MetricsInputError

        release = get_object_or_404(releases_visible(user=request.user), pk=pk)
        upload = request.FILES.get("predictions")
        if upload is None:
            return Response({"errors": ["predictions: attach the predictions file"]},
                            status=status.HTTP_400_BAD_REQUEST)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / Path(upload.name).name
            with path.open("wb") as out:
                for chunk in upload.chunks():
                    out.write(chunk)
            try:
                scores, warnings = release_score(
                    release=release, format=request.data.get("format", ""), predictions=path,
                    strict=str(request.data.get("strict", "")).lower() in ("1", "true"))
            except MetricsInputError as exc:
                return Response({"errors": [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
        return Response({**scores, "warnings": warnings} if warnings else scores)
