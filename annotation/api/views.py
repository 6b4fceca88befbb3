"""People API: who am I, the workers (checkers), the users and their roles (admins)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from rest_framework import generics, serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.roles import IsAdmin, IsChecker, Role, user_roles

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
