"""Forms of the collector pages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django import forms
from django.conf import settings
from django.core.validators import RegexValidator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from collector.importers import FORMATS, mapping_parse
from collector.models import Corpus, Language
from collector.services.uploads import QUERIES

FORMAT_CHOICES = [("", gettext_lazy("Detect it from the file"))] + [
    (fmt.name, fmt.label) for fmt in FORMATS.values()] + [
    (QUERIES, gettext_lazy("Query list (one query a line, or JSON Lines)")),
]
CORPUS_NAME = RegexValidator(r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
                             gettext_lazy("Use letters, digits, '.', '_' and '-'."))


class ImportForm(forms.Form):
    """An upload to import. The page first previews it (``action=preview``: format detected
    when not chosen, first records read); the preview's form carries the stored upload as
    a signed ``upload`` token instead of the file."""

    file = forms.FileField(required=False, label=gettext_lazy("File"),
                           help_text=gettext_lazy(
                               "UTF-8 text: JSON, JSONL, CSV, TSV or a .story file; "
                               "it may be gzipped (.gz) or alone in a .zip."))
    upload = forms.CharField(required=False, widget=forms.HiddenInput)
    corpus = forms.CharField(
        max_length=100, validators=[CORPUS_NAME], label=gettext_lazy("Corpus"),
        help_text=gettext_lazy("An existing corpus, or the name of a new one."))
    language = forms.ChoiceField(choices=Language.choices, label=gettext_lazy("Language"))
    format = forms.ChoiceField(choices=FORMAT_CHOICES, required=False,
                               label=gettext_lazy("Format"))
    mapping = forms.CharField(
        required=False, label=gettext_lazy("Field mapping"),
        help_text=gettext_lazy("JSONL/CSV/TSV only: field=column,… (fields: id, body, title, "
                               "url, source_type, highlights). Empty: columns named like the "
                               "fields."),
    )
    split_mode = forms.ChoiceField(
        required=False, label=gettext_lazy("Passage splitting (new corpus)"),
        choices=[("", gettext_lazy("Default (by paragraph)")), *Corpus.SplitMode.choices],
    )
    window_tokens = forms.IntegerField(required=False, min_value=1,
                                       label=gettext_lazy("Window (tokens)"))
    window_overlap = forms.IntegerField(required=False, min_value=0,
                                        label=gettext_lazy("Overlap (tokens)"))
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}),
                                  label=gettext_lazy("Description (new corpus)"))

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        if upload is None:
            return None
        limit = settings.CROWDQA_IMPORT_MAX_BYTES
        if upload.size == 0:
            raise forms.ValidationError(_("%(name)s is empty.") % {"name": upload.name})
        if upload.size > limit:
            raise forms.ValidationError(
                _("%(name)s is %(size)s bytes, over the import limit of %(limit)s.")
                % {"name": upload.name, "size": f"{upload.size:,}", "limit": f"{limit:,}"}
            )
        return upload

    def clean_upload(self) -> tuple[str, str] | None:
        from collector.services.uploads import upload_from_token

        token = self.cleaned_data["upload"]
        return upload_from_token(token) if token else None

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("file") and not data.get("upload") and "file" not in self.errors:
            self.add_error("file", _("Choose a file to import."))
        fmt = data.get("format")
        mapping = data.get("mapping", "").strip()
        if mapping:
            if fmt == QUERIES or (fmt in FORMATS and not FORMATS[fmt].takes_mapping):
                self.add_error("mapping",
                               _("Only the jsonl, csv and tsv formats take a mapping."))
            else:
                try:
                    mapping_parse(mapping)
                except ValueError as exc:
                    self.add_error("mapping", str(exc))
        name, language = data.get("corpus"), data.get("language")
        existing = Corpus.objects.filter(name=name).first() if name else None
        if existing is not None and language and existing.language != language:
            self.add_error("language", _("Corpus %(name)s is in %(language)s.")
                           % {"name": name, "language": existing.get_language_display()})
        # A value left empty is the corpus's own (a new corpus: the default), as the import
        # will take it: compared only when both were given, 5 tokens passed the preview
        # and failed the import against the default overlap of 20.
        tokens, overlap = data.get("window_tokens"), data.get("window_overlap")
        settled = existing or Corpus()
        tokens_used = settled.window_tokens if tokens is None else tokens
        overlap_used = settled.window_overlap if overlap is None else overlap
        if (tokens is not None or overlap is not None) and overlap_used >= tokens_used:
            self.add_error("window_overlap" if overlap is not None else "window_tokens",
                           self._window_error(overlap_used, overlap is None,
                                              tokens_used, tokens is None))
        return data

    @staticmethod
    def _window_error(overlap: int, overlap_kept: bool, tokens: int, tokens_kept: bool) -> str:
        """The overlap is not smaller than the window; either may be the corpus's own value
        (a field left empty), said as such."""
        values = {"overlap": overlap, "tokens": tokens}
        if overlap_kept:
            return _("The overlap (%(overlap)s, left as it is) must be smaller than the "
                     "window (%(tokens)s tokens).") % values
        if tokens_kept:
            return _("The overlap (%(overlap)s) must be smaller than the window "
                     "(%(tokens)s tokens, left as it is).") % values
        return _("The overlap (%(overlap)s) must be smaller than the window "
                 "(%(tokens)s tokens).") % values

    @property
    def upload_name(self) -> str:
        """The name of the file to import: a new upload, or the one stored for a preview."""
        data = getattr(self, "cleaned_data", {})
        if data.get("file"):
            return Path(data["file"].name).name
        return data["upload"][1] if data.get("upload") else ""


class SearchForm(forms.Form):
    corpus = forms.ChoiceField(choices=())
    q = forms.CharField(required=False, max_length=500, label=gettext_lazy("Query"))
    page = forms.IntegerField(required=False, min_value=1)

    def __init__(self, *args: Any, corpora: list[Corpus], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["corpus"].choices = [
            (c.name, f"{c.name} ({c.get_language_display()})") for c in corpora
        ]
