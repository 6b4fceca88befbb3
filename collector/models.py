"""Collector models: background jobs, corpora with their documents and passages, queries."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from collector.querysets import DocumentQuerySet
from collector.stored_text import stored_text_render


class Job(models.Model):
    """One piece of long work run by a Celery worker: an import, an index build, an export.

    The status lives here; live progress lives in the cache (see ``collector.jobs``), so it
    stays visible while the job holds a long database transaction.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    token = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    kind = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    params = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    # The error as a stored text (``collector.stored_text``): its msgid and parameters, so
    # that its page shows it in its reader's language; empty for an error kept in words only.
    error_text = models.JSONField(default=dict, blank=True)
    progress_done = models.BigIntegerField(default=0)
    progress_total = models.BigIntegerField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    # Who runs it now ("host:pid"), the claim that run holds, and its heartbeat: a running
    # job whose heartbeat stops is found by the periodic check (``collector.jobs``).
    worker = models.CharField(max_length=200, blank=True)
    claim = models.UUIDField(null=True, blank=True, editable=False)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # What happened to the job besides its result: re-queued after a lost worker, retried.
    history = models.JSONField(default=list, blank=True)
    # When it was last sent to the workers, and when the periodic check found it still
    # queued long after that without being able to tell whether the broker holds its message
    # (why: in ``error``); a stalled job stays queued, with a Retry on its page.
    queued_at = models.DateTimeField(null=True, blank=True, default=timezone.now)
    stalled_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at", "-id")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=["queued", "running", "done", "failed"]),
                name="collector_job_status_valid",
            ),
        ]
        indexes = [
            # "Is a run of this already queued?", asked after every finished item.
            models.Index(fields=("kind",), name="collector_job_queued",
                         condition=models.Q(status="queued")),
            # The periodic check's scan for running jobs whose worker stopped.
            models.Index(fields=("heartbeat_at",), name="collector_job_running",
                         condition=models.Q(status="running")),
        ]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)

    @property
    def error_shown(self) -> str:
        """The error in the active language (an error kept in words only: as it is)."""
        return stored_text_render(self.error_text, self.error)

    @property
    def kind_label(self) -> str:
        """The job's kind as its pages name it, in the interface language."""
        from collector.jobs import job_kind_label

        return job_kind_label(self.kind)


class Language(models.TextChoices):
    EN = "en", _("English")
    ZH = "zh", _("Chinese")


class Corpus(models.Model):
    """A named collection of documents in one language, with its own search index."""

    class SplitMode(models.TextChoices):
        PARAGRAPH = "paragraph", _("By paragraph")
        WINDOW = "window", _("Token windows with overlap")

    name = models.CharField(
        max_length=100, unique=True,
        validators=[RegexValidator(r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
                                   "Use letters, digits, '.', '_' and '-'.")],
    )
    language = models.CharField(max_length=2, choices=Language.choices)
    description = models.TextField(blank=True)
    licence = models.TextField(blank=True)
    split_mode = models.CharField(max_length=16, choices=SplitMode.choices,
                                  default=SplitMode.PARAGRAPH)
    window_tokens = models.PositiveIntegerField(default=100)
    window_overlap = models.PositiveIntegerField(default=20)
    open_to_annotators = models.BooleanField(
        default=False,
        help_text="Annotators may browse and search its documents (they never see its "
                  "source questions and their answers). Otherwise only checkers and admins.")
    # Names the index directory; a fresh key per corpus, so an index is never reused by
    # another corpus that happens to get the same primary key.
    index_key = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("name",)
        verbose_name_plural = "corpora"
        constraints = [
            models.CheckConstraint(condition=models.Q(language__in=["en", "zh"]),
                                   name="collector_corpus_language_valid"),
            models.CheckConstraint(condition=models.Q(split_mode__in=["paragraph", "window"]),
                                   name="collector_corpus_split_mode_valid"),
            models.CheckConstraint(
                condition=models.Q(window_tokens__gte=1)
                & models.Q(window_overlap__lt=models.F("window_tokens")),
                name="collector_corpus_window_valid",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class ImportRun(models.Model):
    """One import of one file into a corpus: what it created, and whether it is indexed.

    Exists only for imports that committed; a failed import leaves nothing, this row
    included. ``indexed_at`` stays empty until the run's passages are in the index.
    """

    class Kind(models.TextChoices):
        DOCUMENTS = "documents", _("Documents")
        QUERIES = "queries", _("Queries")

    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="import_runs")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.DOCUMENTS)
    format = models.CharField(max_length=32)
    source_name = models.CharField(max_length=500)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    documents_created = models.PositiveIntegerField(default=0)
    documents_skipped = models.PositiveIntegerField(default=0)
    passages_created = models.PositiveIntegerField(default=0)
    questions_created = models.PositiveIntegerField(default=0)
    questions_skipped = models.PositiveIntegerField(default=0)
    queries_created = models.PositiveIntegerField(default=0)
    queries_skipped = models.PositiveIntegerField(default=0)
    indexed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at", "-id")

    def __str__(self) -> str:
        return f"{self.format} import of {self.source_name} into {self.corpus_id}"


class Document(models.Model):
    """One source text. ``body`` is large: list pages load documents with ``.listing()``."""

    class SourceType(models.TextChoices):
        NEWS = "news", _("News")
        FORUM = "forum", _("Forum")
        VERTICAL = "vertical", _("Vertical site")
        ENCYCLOPEDIA = "encyclopedia", _("Encyclopedia")
        WEB = "web", _("Web page")
        OTHER = "other", _("Other")

    # The unique (corpus, external_id) index serves corpus lookups: no separate index.
    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="documents",
                               db_index=False)
    # Bookkeeping (which import created the row, for incremental indexing): indexed, but
    # without a database constraint, so bulk loads skip one foreign-key check per row;
    # Django applies on_delete=SET_NULL itself.
    import_run = models.ForeignKey(ImportRun, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="documents", db_constraint=False)
    external_id = models.CharField(max_length=255)
    title = models.TextField(blank=True, help_text="Title or headline.")
    url = models.TextField(blank=True)
    source_type = models.CharField(max_length=16, choices=SourceType.choices, blank=True)
    body = models.TextField()
    highlights = models.JSONField(default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    objects = DocumentQuerySet.as_manager()

    class Meta:
        ordering = ("corpus", "id")
        constraints = [
            models.UniqueConstraint(fields=["corpus", "external_id"],
                                    name="collector_document_external_id_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.external_id} ({self.corpus_id})"


class Passage(models.Model):
    """A span of a document body: ``document.body[start:end] == text``, always."""

    # The unique (document, ordinal) index serves document lookups.
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="passages",
                                 db_index=False)
    ordinal = models.PositiveIntegerField()
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    text = models.TextField()

    class Meta:
        ordering = ("document", "ordinal")
        constraints = [
            models.UniqueConstraint(fields=["document", "ordinal"],
                                    name="collector_passage_ordinal_unique"),
            models.CheckConstraint(condition=models.Q(end__gt=models.F("start")),
                                   name="collector_passage_span_valid"),
        ]

    def __str__(self) -> str:
        return f"passage {self.ordinal} of document {self.document_id} [{self.start}:{self.end}]"


class SourceQuestion(models.Model):
    """A question that came with the corpus (SQuAD, NewsQA, MS MARCO, DuReader, ReCO).

    ``answers`` follows one shape for every dataset (see ``collector.importers.records``);
    span offsets point into ``document.body``. Dataset-specific annotations (plausible
    answers, validator choices, yes/no labels, evidence...) are in ``metadata``.
    """

    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="questions",
                               db_index=False)
    document = models.ForeignKey(Document, null=True, blank=True, on_delete=models.CASCADE,
                                 related_name="questions")
    import_run = models.ForeignKey(ImportRun, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="questions", db_index=False, db_constraint=False)
    external_id = models.CharField(max_length=255)
    text = models.TextField()
    answers = models.JSONField(default=list, blank=True)
    is_impossible = models.BooleanField(default=False)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ("corpus", "id")
        constraints = [
            models.UniqueConstraint(fields=["corpus", "external_id"],
                                    name="collector_sourcequestion_external_id_unique"),
        ]

    def __str__(self) -> str:
        return self.text[:80]


class Query(models.Model):
    """A raw search query to be filtered, retrieved for and answered.

    ``verdicts`` records what automatic or human filters decided, by filter name:
    ``{"intent": {"verdict": "keep", "reason": "...", "at": "2025-..."}}``.
    """

    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="queries",
                               db_index=False)
    import_run = models.ForeignKey(ImportRun, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="queries", db_index=False)
    external_id = models.CharField(max_length=255)
    text = models.TextField()
    language = models.CharField(max_length=2, choices=Language.choices)
    source = models.CharField(max_length=500, blank=True,
                              help_text="Where the query came from (file name).")
    metadata = models.JSONField(default=dict, blank=True)
    verdicts = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("corpus", "id")
        verbose_name_plural = "queries"
        constraints = [
            models.UniqueConstraint(fields=["corpus", "external_id"],
                                    name="collector_query_external_id_unique"),
            models.CheckConstraint(condition=models.Q(language__in=["en", "zh"]),
                                   name="collector_query_language_valid"),
        ]

    def __str__(self) -> str:
        return self.text[:80]


class SearchIndex(models.Model):
    """One logical index of the PostgreSQL search backend
    (``collector.search.postgres_backend``), named by its key (a corpus's ``index_key``).

    Entries, terms and postings carry a generation; searches read only ``generation``. A
    rebuild writes the next generation and switches to it in the transaction that deletes
    the old one, so searches see the old index until the new one is complete.
    """

    key = models.CharField(max_length=64, unique=True)
    language = models.CharField(max_length=2, choices=Language.choices)
    generation = models.PositiveIntegerField(default=1)
    # Statistics of the live generation: BM25's N and average field lengths.
    doc_count = models.BigIntegerField(default=0)
    body_length = models.BigIntegerField(default=0)
    title_length = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(language__in=["en", "zh"]),
                                   name="collector_searchindex_language_valid"),
        ]

    def __str__(self) -> str:
        return f"search index {self.key} (generation {self.generation})"


class SearchEntry(models.Model):
    """One passage in a search index: what a hit returns, and its field lengths."""

    id = models.BigAutoField(primary_key=True)
    index = models.ForeignKey(SearchIndex, on_delete=models.CASCADE, db_index=False,
                              related_name="+")
    generation = models.PositiveIntegerField()
    passage_id = models.BigIntegerField()
    document_id = models.BigIntegerField()
    external_id = models.TextField()
    start = models.IntegerField()
    end = models.IntegerField()
    run_id = models.BigIntegerField(null=True)
    body_length = models.IntegerField()
    title_length = models.IntegerField()

    class Meta:
        indexes = [
            models.Index(fields=("index", "generation", "run_id"),
                         name="collector_searchentry_run"),
        ]

    def __str__(self) -> str:
        return f"passage {self.passage_id} in index {self.index_id}"


class SearchTerm(models.Model):
    """A term of one generation of a search index, with its document frequency."""

    index = models.ForeignKey(SearchIndex, on_delete=models.CASCADE, db_index=False,
                              related_name="+")
    generation = models.PositiveIntegerField()
    term = models.TextField()
    df = models.IntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("index", "generation", "term"),
                                    name="collector_searchterm_unique"),
        ]

    def __str__(self) -> str:
        return self.term


class SearchPosting(models.Model):
    """A term in an entry, with its precomputed BM25F term weight (the impact, without the
    idf, which is applied at query time from the term's current ``df``).

    Written by COPY, so the ids are plain columns (no foreign-key triggers). The primary
    key (entry, term) serves deletion by entry and the scoring of candidates; the impact
    index lists a term's postings best first (early termination) and covers the entry id
    (index-only scans).

    A rebuild writes its generation's postings into a child table of this one
    (``collector_searchposting_<index>_<generation>``, PostgreSQL inheritance, with the
    same two indexes), attached at its commit: queries of this table read the children
    too. A migration that drops this table must drop them (``CASCADE``).
    """

    pk = models.CompositePrimaryKey("entry_id", "term_id")
    entry_id = models.BigIntegerField()
    term_id = models.BigIntegerField()
    weight = models.FloatField()

    class Meta:
        indexes = [
            models.Index(fields=("term_id", "-weight"), include=("entry_id",),
                         name="collector_searchposting_impact"),
        ]

    def __str__(self) -> str:
        return f"term {self.term_id} in entry {self.entry_id}: {self.weight:.3f}"
