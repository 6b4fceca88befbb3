from __future__ import annotations

import json
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from annotation.recipes import RECIPES


class ProjectCreateForm(forms.Form):
    name = forms.CharField(max_length=200)
    recipe = forms.ChoiceField(choices=[(r, r) for r in sorted(RECIPES)])
    corpus = forms.ModelChoiceField(queryset=None)
    description = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), required=False,
        help_text="Copied verbatim into the datasheet and dataset card of every release: "
                  "describe the work, not who did it.")
    keep_names = forms.BooleanField(
        required=False, label="Keep these usernames in the description (they will be "
                              "published with every release)")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from collector.models import Corpus

        self.fields["corpus"].queryset = Corpus.objects.order_by("name")
        self.names_in_description: list[str] = []

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        corpus = data.get("corpus")
        if corpus is not None:
            data["language"] = corpus.language
        from annotation.selectors import role_holder_names, usernames_in_text

        self.names_in_description = usernames_in_text(data.get("description", ""),
                                                      role_holder_names())
        if self.names_in_description and not data.get("keep_names"):
            self.add_error("description", ValidationError(
                "The description names %(names)s: it is copied verbatim into the datasheet "
                "and dataset card of every release. Remove the usernames, or tick the box "
                "below to keep them.",
                params={"names": ", ".join(self.names_in_description)},
                code="names_in_description"))
        data.pop("keep_names", None)
        return data

    def clean_name(self) -> str:
        from annotation.models import Project

        name = self.cleaned_data["name"].strip()
        if Project.objects.filter(name=name).exists():
            raise ValidationError("A project with this name exists already.")
        return name


def parse_stage_params(data: Any) -> dict[str, Any]:
    """Stage parameters posted as ``param:<name>`` fields holding JSON values."""
    params = {}
    for key, raw in data.items():
        if not key.startswith("param:"):
            continue
        name = key.split(":", 1)[1]
        try:
            params[name] = json.loads(raw)
        except ValueError as exc:
            raise ValidationError(f"parameter {name!r}: {raw!r} is not a valid value") from exc
    return params
