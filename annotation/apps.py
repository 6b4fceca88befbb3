from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation: projects, stages, assignments and reviews"

    def ready(self) -> None:
        # Registers the engine's job kinds (stage runs, lease expiry).
        from annotation import engine, releases  # noqa: F401
