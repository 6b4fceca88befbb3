from django.contrib import admin

from collector.models import Corpus, Document, ImportRun, Job, Passage, Query, SourceQuestion


class SystemWrittenAdmin(admin.ModelAdmin):
    """Rows only the system writes: shown, never added by hand (an empty one is invalid)."""

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(Job)
class JobAdmin(SystemWrittenAdmin):
    list_display = ("id", "kind", "status", "created_by", "created_at", "finished_at")
    list_filter = ("kind", "status")
    readonly_fields = [f.name for f in Job._meta.fields]


@admin.register(Corpus)
class CorpusAdmin(admin.ModelAdmin):
    list_display = ("name", "language", "split_mode", "open_to_annotators", "created_at")
    list_filter = ("language", "open_to_annotators")
    search_fields = ("name", "description")
    readonly_fields = ("index_key", "created_at")

    def delete_model(self, request, obj):
        from collector.services import corpus_delete

        corpus_delete(corpus=obj)

    def delete_queryset(self, request, queryset):
        from collector.services import corpus_delete

        for corpus in queryset:
            corpus_delete(corpus=corpus)


@admin.register(ImportRun)
class ImportRunAdmin(SystemWrittenAdmin):
    list_display = ("id", "corpus", "kind", "format", "source_name", "documents_created",
                    "documents_skipped", "queries_created", "indexed_at", "created_at")
    list_filter = ("kind", "format", "corpus")
    readonly_fields = [f.name for f in ImportRun._meta.fields]


class ImportedAdmin(SystemWrittenAdmin):
    """Imported text: the passages, the search index, the items' spans and the releases
    point into it by offset, so it is shown, not changed or deleted one row at a time
    (deleting a document left its passages in the search index). It changes by import,
    and goes with its corpus (``CorpusAdmin``) or its import run."""

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Document)
class DocumentAdmin(ImportedAdmin):
    list_display = ("external_id", "corpus", "title", "source_type")
    list_filter = ("corpus", "source_type")
    search_fields = ("external_id", "title")
    raw_id_fields = ("import_run",)
    list_select_related = ("corpus",)

    def get_queryset(self, request):
        # The change list must not load bodies.
        queryset = super().get_queryset(request)
        return queryset if request.resolver_match.url_name.endswith("_change") else (
            queryset.defer("body", "metadata", "highlights"))


@admin.register(Passage)
class PassageAdmin(ImportedAdmin):
    list_display = ("id", "document", "ordinal", "start", "end")
    raw_id_fields = ("document",)
    list_select_related = ("document",)

    def get_queryset(self, request):
        return super().get_queryset(request).defer("document__body", "document__metadata")


@admin.register(SourceQuestion)
class SourceQuestionAdmin(admin.ModelAdmin):
    list_display = ("external_id", "corpus", "text", "is_impossible")
    list_filter = ("corpus", "is_impossible")
    search_fields = ("external_id", "text")
    raw_id_fields = ("document", "import_run")


@admin.register(Query)
class QueryAdmin(admin.ModelAdmin):
    list_display = ("external_id", "corpus", "language", "text", "source")
    list_filter = ("corpus", "language")
    search_fields = ("external_id", "text")
    raw_id_fields = ("import_run",)
