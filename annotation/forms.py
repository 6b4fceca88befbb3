from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from django import forms
from django.core.exceptions import ValidationError

from annotation.recipes import RECIPES
from annotation.stages import Param

if TYPE_CHECKING:
    from annotation.models import Stage


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


class WordListField(forms.CharField):
    """A list of words typed as ``a, b, c`` (list parameters such as filter steps)."""

    def prepare_value(self, value: Any) -> Any:
        return ", ".join(map(str, value)) if isinstance(value, list | tuple) else value

    def to_python(self, value: Any) -> list[str]:
        if isinstance(value, list):
            return value
        return [part.strip() for part in (value or "").split(",") if part.strip()]


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value)) or "none"
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False) if value else "none"
    return f"{value:g}" if isinstance(value, float) else str(value) or "empty"


def param_field(spec: Param, *, initial: Any, label: str) -> forms.Field:
    """The form field of one declared stage parameter: its type, bounds, choices and help,
    with the paper's default (the parameter's declared default) shown."""
    help_text = f"{spec.help} Paper's default: {_shown(spec.default)}."
    common = {"label": label, "help_text": help_text, "initial": initial}
    kind = type(spec.default)
    if spec.choices:
        return forms.TypedChoiceField(choices=[(c, _shown(c)) for c in spec.choices],
                                      coerce=kind, **common)
    if kind is bool:
        return forms.BooleanField(required=False, **common)
    if kind is int:
        return forms.IntegerField(min_value=spec.minimum, max_value=spec.maximum, **common)
    if kind is float:
        return forms.FloatField(min_value=spec.minimum, max_value=spec.maximum,
                                widget=forms.NumberInput(attrs={"step": "any"}), **common)
    if kind is list:
        return WordListField(required=False, **common)
    if kind is dict:
        return forms.JSONField(required=False, widget=forms.Textarea(attrs={"rows": 2}),
                               **common)
    return forms.CharField(required=False, strip=True, **common)


class StageParamsForm(forms.Form):
    """A stage's parameters, a field per declared parameter of its kind (prefixed with the
    stage, so several stages' forms share a page)."""

    def __init__(self, *args: Any, stage: Stage, **kwargs: Any) -> None:
        kwargs.setdefault("prefix", f"stage{stage.pk}")
        super().__init__(*args, **kwargs)
        self.stage = stage
        for name, spec in stage.kind_spec.all_params().items():
            self.fields[name] = param_field(
                spec, initial=stage.params.get(name, spec.default),
                label=name.replace("_", " ").capitalize())

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        for name, value in data.items():
            if value is None and type(self.stage.kind_spec.all_params()[name].default) is dict:
                data[name] = {}
        return data

    def save(self) -> bool:
        """The cleaned parameters through ``engine.stage_params_update`` (which checks them
        against the kind again): True when saved; a refusal becomes an error on the form."""
        from annotation import engine

        try:
            engine.stage_params_update(stage=self.stage, params=self.cleaned_data)
        except ValidationError as exc:
            self.add_error(None, exc)
            return False
        return True
