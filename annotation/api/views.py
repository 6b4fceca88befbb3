"""People and work API: who am I, workers, users (admins), tasks (annotators), projects."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.http.response import HttpResponseBase
from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import engine, releases, selectors
from annotation.api.serializers import (
    ErrorsOutputSerializer,
    ProjectDetailOutputSerializer,
    ProjectOutputSerializer,
    ProjectRecordOutputSerializer,
    ReleaseCreateInputSerializer,
    ReleaseOutputSerializer,
    ReleaseScoreInputSerializer,
    ReleaseScoreOutputSerializer,
    TaskNextInputSerializer,
    TaskOutputSerializer,
    TaskSubmitInputSerializer,
    TaskSubmitOutputSerializer,
    UserOutputSerializer,
    WorkerAdminOutputSerializer,
    WorkerOutputSerializer,
)
from annotation.models import Assignment, MemberStatus, Project, ProjectMember, Submission
from annotation.roles import IsAdmin, IsAnnotator, IsAnyRole, IsChecker, Role, has_role
from annotation.scoring import release_score
from collector.metrics import MetricsInputError
from config.api_json import object_or_404

User = get_user_model()


class MeApi(APIView):
    permission_classes = (IsAuthenticated,)

    @extend_schema(responses=UserOutputSerializer)
    def get(self, request: Request) -> Response:
        return Response(UserOutputSerializer(request.user).data)


class WorkerListApi(generics.ListAPIView):
    """Annotators, for checkers assigning and reviewing batches: a checker sees the
    annotators of the projects they check (as the workers pages do), an admin all. A
    checker gets each worker's id and username; an admin also their last sign-in
    (`last_login`)."""

    permission_classes = (IsChecker,)

    def get_serializer_class(self):
        # Personal data for admins only: whoever else asks gets the checker's shape.
        if self.request is not None and has_role(self.request.user, Role.ADMIN):
            return WorkerAdminOutputSerializer
        return WorkerOutputSerializer

    @extend_schema(responses=WorkerAdminOutputSerializer(many=True))
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        workers = User.objects.filter(groups__name=Role.ANNOTATOR, is_active=True)
        if not has_role(self.request.user, Role.ADMIN):
            checked = ProjectMember.objects.filter(
                user=self.request.user, role=Role.CHECKER.value,
                status=MemberStatus.ACTIVE).values("project_id")
            workers = workers.filter(pk__in=ProjectMember.objects.filter(
                project_id__in=checked, role=Role.ANNOTATOR.value).values("user_id"))
        return workers.order_by("id")


class UserListApi(generics.ListAPIView):
    permission_classes = (IsAdmin,)
    serializer_class = UserOutputSerializer

    def get_queryset(self):
        return User.objects.prefetch_related("groups").order_by("id")


def _claim(request: Request, project: Project | None):
    """The API's claim: the slot comes with what the task shows (item, document, stage,
    project), loaded by the claim itself."""
    return engine.task_claim(worker=request.user, project=project, related=True)


def _own_assignment(request: Request, pk: int):
    try:
        return engine.assignment_for_worker(assignment_id=pk, worker=request.user)
    except engine.TaskError as exc:
        raise PermissionDenied(str(exc)) from exc


class TaskNextApi(APIView):
    """Claim the next task (or get the current one); 204 when nothing waits."""

    permission_classes = (IsAnnotator,)

    @extend_schema(request=TaskNextInputSerializer, responses={
        200: TaskOutputSerializer,
        204: OpenApiResponse(description="No task waits for this worker."),
    })
    def post(self, request: Request) -> Response:
        data = TaskNextInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        project = data.validated_data.get("project")
        assignment = _claim(request, project)
        if assignment is None:
            if project is not None:  # no task, or no such project of theirs (400)
                data.fields["project"].project_exists(project, user=request.user)
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(TaskOutputSerializer(assignment).data)


class TaskDetailApi(APIView):
    permission_classes = (IsAnnotator,)

    @extend_schema(responses=TaskOutputSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return Response(TaskOutputSerializer(_own_assignment(request, pk)).data)


def _submitted_already(request: Request, pk: int, payload: dict) -> Submission | None:
    """The worker's submission of task ``pk`` when the task is submitted and ``payload`` is
    what it recorded (once cleaned): a submit retried after its answer was lost (a timeout,
    a dropped connection) gets the first one's answer instead of a 409."""
    submission = (Submission.objects.filter(assignment_id=pk, worker=request.user,
                                            assignment__status=Assignment.Status.SUBMITTED)
                  .select_related("item__stage", "item__document").order_by("pk").first())
    if submission is None:
        return None
    try:
        cleaned = submission.item.stage.kind_spec.payload_checked(submission.item, payload)
    except ValidationError:
        return None
    # As stored: JSON has lists, not tuples.
    return submission if json.loads(json.dumps(cleaned)) == submission.payload else None


class TaskSubmitApi(APIView):
    permission_classes = (IsAnnotator,)

    @extend_schema(request=TaskSubmitInputSerializer, responses={
        201: TaskSubmitOutputSerializer,
        200: OpenApiResponse(TaskSubmitOutputSerializer,
                             description="A retry of a submit already recorded (the same "
                                         "payload): the submission it made, and with "
                                         "`next` the task the worker now holds."),
        409: OpenApiResponse(ErrorsOutputSerializer,
                             description="The task can no longer be submitted."),
    })
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
            submission = _submitted_already(request, pk, data.validated_data["payload"])
            if submission is None:
                return Response({"errors": [str(exc)]}, status=status.HTTP_409_CONFLICT)
            answer = status.HTTP_200_OK  # a retry: what the first submit recorded
        else:
            answer = status.HTTP_201_CREATED
        result = {"submission": submission.pk, "payload": submission.payload}
        if data.validated_data["next"]:
            # Committed already: the claim is a transaction of its own, as from /tasks/next/.
            result["next"] = _claim(request, Project(pk=submission.item.stage.project_id))
        return Response(TaskSubmitOutputSerializer(result).data, status=answer)


class TaskReleaseApi(APIView):
    permission_classes = (IsAnnotator,)

    @extend_schema(request=None, responses={
        204: OpenApiResponse(description="The task went back to the pool."),
        409: OpenApiResponse(ErrorsOutputSerializer,
                             description="The task is no longer held (submitted, given "
                                         "back, or its time ran out)."),
    })
    def post(self, request: Request, pk: int) -> Response:
        try:
            engine.task_release(assignment_id=pk, worker=request.user)
        except engine.TaskNotFound as exc:
            raise NotFound(str(exc)) from exc
        except engine.TaskNotYours as exc:
            raise PermissionDenied(str(exc)) from exc
        except engine.TaskError as exc:  # theirs, no longer held: as a submit says it
            return Response({"errors": [str(exc)]}, status=status.HTTP_409_CONFLICT)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ProjectListApi(generics.ListAPIView):
    permission_classes = (IsAdmin,)
    serializer_class = ProjectOutputSerializer

    def get_queryset(self):
        return Project.objects.select_related("corpus").order_by("-created_at")


class ProjectDetailApi(APIView):
    permission_classes = (IsAdmin,)

    @extend_schema(responses=ProjectDetailOutputSerializer)
    def get(self, request: Request, pk: int) -> Response:
        project = object_or_404(Project.objects.select_related("corpus"), pk=pk)
        board = selectors.project_dashboard(project=project)
        project.figures = board["figures"]
        project.stages_summary = [{
            "order": row["stage"].order, "kind": row["stage"].kind,
            "name": row["stage"].name, "label": row["stage"].display_name,
            "params": row["stage"].params,
            "counts": row["counts"], "median_time_s": row["median_time_s"],
        } for row in board["stage_rows"]]
        project.workers_summary = [{"username": name, "submissions": n}
                                   for name, n in board["workers"]]
        return Response(ProjectDetailOutputSerializer(project).data)


class ProjectRecordsApi(generics.GenericAPIView):
    """Consolidated records of a project's final stage (admins)."""

    permission_classes = (IsAdmin,)
    serializer_class = ProjectRecordOutputSerializer

    @extend_schema(responses=ProjectRecordOutputSerializer(many=True))
    def get(self, request: Request, pk: int) -> Response:
        project = object_or_404(Project, pk=pk)
        page = self.paginate_queryset(selectors.consolidated_items(project=project))
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


class ProjectReleasesApi(generics.GenericAPIView):
    """A project's releases: admins see all and create them; others see published ones."""

    permission_classes = (IsAnyRole,)

    def get_serializer_class(self):
        if self.request is not None and self.request.method == "POST":
            return ReleaseCreateInputSerializer
        return ReleaseOutputSerializer

    @extend_schema(responses=ReleaseOutputSerializer(many=True))
    def get(self, request: Request, pk: int) -> Response:
        project = object_or_404(Project, pk=pk)
        page = self.paginate_queryset(
            selectors.releases_visible(user=request.user, project=project))
        return self.get_paginated_response(ReleaseOutputSerializer(page, many=True).data)

    @extend_schema(request=ReleaseCreateInputSerializer, responses={
        201: ReleaseOutputSerializer,
        200: OpenApiResponse(ReleaseOutputSerializer,
                             description="A retry of a create already recorded (the same "
                                         "version, formats and options): that release."),
    })
    def post(self, request: Request, pk: int) -> Response:
        if not IsAdmin().has_permission(request, self):
            raise PermissionDenied(gettext("Only admins create releases."))
        project = object_or_404(Project, pk=pk)
        data = ReleaseCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        asked = data.validated_data
        try:
            release = releases.release_create(project=project, user=request.user, **asked)
        except ValidationError as exc:
            # A create retried after its answer was lost (a timeout): the release it made,
            # when it is the one asked for; another release under the version stays a 400.
            same = selectors.releases_visible(user=request.user, project=project).filter(
                version=asked["version"], formats=list(dict.fromkeys(asked["formats"])),
                omit_workers=asked["omit_workers"],
                unagreed_questions=asked["unagreed_questions"]).first()
            if same is None:
                return Response({"errors": exc.messages}, status=status.HTTP_400_BAD_REQUEST)
            return Response(ReleaseOutputSerializer(same).data)
        return Response(ReleaseOutputSerializer(release).data, status=status.HTTP_201_CREATED)


class ReleasePublishApi(APIView):
    """Publish a ready release (admins): workers then see it and may download and score
    against it. A release still building, failed or published already is a 409."""

    permission_classes = (IsAdmin,)

    @extend_schema(request=None, responses={
        200: ReleaseOutputSerializer,
        409: OpenApiResponse(ErrorsOutputSerializer,
                             description="The release is not ready (building, failed) or "
                                         "is published already."),
    })
    def post(self, request: Request, pk: int) -> Response:
        release = object_or_404(selectors.releases_visible(user=request.user), pk=pk)
        try:
            releases.release_publish(release=release, actor=request.user)
        except ValidationError as exc:
            return Response({"errors": exc.messages}, status=status.HTTP_409_CONFLICT)
        release.refresh_from_db()
        return Response(ReleaseOutputSerializer(release).data)


class AnyAcceptNegotiation(BaseContentNegotiation):
    """A download answers whatever the client accepts (``Accept: application/octet-stream``
    or the file's own type would otherwise be a 406); its errors are JSON."""

    def select_parser(self, request: Request, parsers: list) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(self, request: Request, renderers: list,
                        format_suffix: str | None = None) -> tuple[Any, str]:
        return renderers[0], renderers[0].media_type


class ReleaseFileApi(APIView):
    """Download one file of a release, as its ``url`` in a release's ``files`` names it:
    the release page's download, for token clients too. Published releases for every
    role, unpublished ones for admins."""

    permission_classes = (IsAnyRole,)
    content_negotiation_class = AnyAcceptNegotiation

    @extend_schema(responses={(200, "*/*"): OpenApiResponse(
        OpenApiTypes.BINARY, description="The file, as an attachment, with its own content "
                                          "type (text files in UTF-8).")})
    def get(self, request: Request, pk: int, path: str) -> HttpResponseBase:
        return releases.release_download(user=request.user, release_id=pk, path=path)


class ReleaseScoreApi(APIView):
    """POST a predictions file (multipart ``predictions``), a ``format`` and optionally
    ``split`` (default: dev, else test) and ``strict``: the official scores against the
    release's file of that split, naming the ``split`` and ``file``, with ``warnings``
    (ignored unknown ids, unanswered questions) when there are any. Anyone who may see
    the release may score against it."""

    permission_classes = (IsAnyRole,)
    parser_classes = (MultiPartParser, FormParser)

    @extend_schema(request=ReleaseScoreInputSerializer, responses={
        200: ReleaseScoreOutputSerializer,
    })
    def post(self, request: Request, pk: int) -> Response:
        release = object_or_404(selectors.releases_visible(user=request.user), pk=pk)
        data = ReleaseScoreInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["predictions"]
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / Path(upload.name).name
            with path.open("wb") as out:
                for chunk in upload.chunks():
                    out.write(chunk)
            try:
                scores, warnings = release_score(
                    release=release, format=data.validated_data["format"], predictions=path,
                    strict=data.validated_data["strict"],
                    split=data.validated_data["split"] or None)
            except MetricsInputError as exc:
                # The file as the client named it, not the server's temporary folder.
                said = str(exc).replace(f"{folder}/", "")
                return Response({"errors": [said]}, status=status.HTTP_400_BAD_REQUEST)
        return Response(ReleaseScoreOutputSerializer(
            {**scores, "warnings": warnings} if warnings else scores).data)
