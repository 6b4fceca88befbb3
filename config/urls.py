from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.decorators.cache import cache_control
from django.views.i18n import JavaScriptCatalog

from annotation.forms import LoginForm
from collector.views import healthz
from config.api_schema import SchemaApi, SchemaDocsView
from config.i18n import language_set

api_patterns = [
    path("", include("annotation.api.urls")),
    path("", include("collector.api.urls")),
    # The OpenAPI 3 schema (YAML; JSON with ?format=json) and its Swagger UI, for any
    # signed-in user. The UI's script is a separate file (no inline script under the CSP).
    # The UI is a page: an anonymous visitor goes to the login page; the schema is API (401).
    path("schema/", SchemaApi.as_view(), name="api_schema"),
    path("docs/", SchemaDocsView.as_view(), name="api_docs"),
]

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("accounts/login/", auth_views.LoginView.as_view(authentication_form=LoginForm),
         name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # One-time password-set links (accounts created from a members CSV).
    path("accounts/reset/<uidb64>/<token>/", auth_views.PasswordResetConfirmView.as_view(),
         name="password_reset_confirm"),
    path("accounts/reset/done/", auth_views.PasswordResetCompleteView.as_view(),
         name="password_reset_complete"),
    # The header's language switcher, and the translated strings of static/js (a script file:
    # the CSP allows no inline script).
    path("i18n/language/", language_set, name="set_language"),
    # Pages ask for it with their language in the query (?l=zh-hans), so the browser keeps
    # one copy per language for an hour.
    path("i18n/catalog.js", cache_control(max_age=3600, private=True)(JavaScriptCatalog.as_view()),
         name="javascript_catalog"),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_patterns)),
    path("collector/", include("collector.urls")),
    path("", include("annotation.urls")),
]
