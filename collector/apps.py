from django.apps import AppConfig


class CollectorConfig(AppConfig):
    name = "collector"
    verbose_name = "Collector: corpora, search, metrics and releases"

    def ready(self) -> None:
        # Job kinds and system checks register themselves on import.
        from collector import checks, job_handlers, jobs  # noqa: F401
