"""URLs of the invite pages (included by annotation.urls)."""

from django.urls import path

from annotation import invite_views

urlpatterns = [
    path("join/<str:token>/", invite_views.invite_join, name="invite_join"),
    path("join/confirm/<str:token>/", invite_views.invite_confirm, name="invite_confirm"),
    path("join-again/", invite_views.invite_confirm_resend, name="invite_confirm_resend"),
    path("manage/projects/<id:pk>/members/", invite_views.project_members,
         name="project_members"),
    path("manage/projects/<id:pk>/members/import/", invite_views.members_import,
         name="members_import"),
    path("manage/projects/<id:pk>/invites/", invite_views.project_invite_create,
         name="project_invite_create"),
    path("manage/members/<id:pk>/status/", invite_views.member_status,
         name="member_status"),
    path("manage/invites/<id:pk>/revoke/", invite_views.invite_revoke, name="invite_revoke"),
]
