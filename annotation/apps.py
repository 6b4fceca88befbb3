from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation: projects, stages, assignments and reviews"

    def ready(self) -> None:
        from django.urls import register_converter

        from annotation.http import IdConverter

        register_converter(IdConverter, "id")  # <id:pk> in every app's URLs
        # Registers the engine's job kinds (stage runs, lease expiry) and the invalidation
        # signals of the user and token cache (annotation.auth), and the app's system checks.
        from annotation import auth, checks, engine, releases  # noqa: F401
        from config import i18n  # noqa: F401  (the signed-in user's language, at login)
