from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.utils.translation import gettext, gettext_lazy, pgettext, pgettext_lazy

from annotation.recipes import RECIPES
from annotation.stages import Param

if TYPE_CHECKING:
    from annotation.models import Stage


class LoginForm(AuthenticationForm):
    """Django's login form. An account signed up through an invite link restricted to
    e-mail domains cannot log in until its address is confirmed: with the right password
    the page says so (``pending``, an ``invites.PendingSignup``) instead of "did not
    match", and, once the links mailed to it have expired, offers a new one."""

    pending = None

    def clean(self) -> dict[str, Any]:
        try:
            return super().clean()
        except ValidationError:
            from annotation.invites import signup_pending

            self.pending = signup_pending(username=self.cleaned_data.get("username", ""),
                                          password=self.cleaned_data.get("password", ""))
            raise


class ProjectCreateForm(forms.Form):
    name = forms.CharField(max_length=200, label=gettext_lazy("Name"))
    recipe = forms.ChoiceField(choices=[(r, r) for r in sorted(RECIPES)],
                               label=gettext_lazy("Recipe"))
    corpus = forms.ModelChoiceField(
        queryset=None, required=False, label=gettext_lazy("Corpus"),
        help_text=gettext_lazy("The corpus the recipe works on; a judgment study needs none."))
    language = forms.ChoiceField(
        required=False, label=gettext_lazy("Language"),
        help_text=gettext_lazy("A judgment study's: the language of the answers it rates "
                               "(Chinese ones are scored by characters). Other recipes take "
                               "their corpus's."))
    description = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), required=False,
        label=gettext_lazy("Description"),
        help_text=gettext_lazy("Copied verbatim into the datasheet and dataset card of every "
                               "release: describe the work, not who did it."))
    keep_names = forms.BooleanField(
        required=False, label=gettext_lazy("Keep these usernames in the description (they "
                                           "will be published with every release)"))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from collector.models import Corpus, Language

        self.fields["corpus"].queryset = Corpus.objects.order_by("name")
        self.fields["language"].choices = [("", "---------"), *Language.choices]
        self.names_in_description: list[str] = []

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        corpus, recipe = data.get("corpus"), data.get("recipe")
        # A judgment study rates answers it imports: its language is the answers', which
        # sets how its metrics tokenise (characters for Chinese); it was the language of a
        # corpus it never reads, which the form made the admin choose.
        if recipe == "judgment":
            if not data.get("language"):
                if corpus is None:
                    self.add_error("language", gettext(
                        "Choose the language of the answers the study rates."))
                else:
                    data["language"] = corpus.language
        elif recipe:
            if corpus is None:
                self.add_error("corpus", gettext("Choose the corpus the %(recipe)s recipe "
                                                 "works on.") % {"recipe": recipe})
            else:
                data["language"] = corpus.language
        from annotation.selectors import role_holder_names, usernames_in_text

        self.names_in_description = usernames_in_text(data.get("description", ""),
                                                      role_holder_names())
        if self.names_in_description and not data.get("keep_names"):
            self.add_error("description", ValidationError(
                gettext("The description names %(names)s: it is copied verbatim into the "
                        "datasheet and dataset card of every release. Remove the usernames, "
                        "or tick the box below to keep them."),
                params={"names": ", ".join(self.names_in_description)},
                code="names_in_description"))
        data.pop("keep_names", None)
        return data

    def clean_name(self) -> str:
        from annotation.models import Project

        name = self.cleaned_data["name"].strip()
        if Project.objects.filter(name=name).exists():
            raise ValidationError(gettext("A project with this name exists already."))
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
    """A parameter's value in words; on, off, none and empty in the interface language."""
    if isinstance(value, bool):
        return pgettext("parameter value", "on") if value else pgettext("parameter value", "off")
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value)) or pgettext("parameter value", "none")
    if isinstance(value, dict):
        return (json.dumps(value, ensure_ascii=False) if value
                else pgettext("parameter value", "none"))
    if isinstance(value, float):
        return f"{value:g}"
    return str(value) or pgettext("parameter value", "empty")


#: Each stage parameter's label: its name in words ("max_items_per_worker": "Max items per
#: worker"), translated per name, the same whichever kind declares it (the context keeps the
#: split's "Train" apart from the button). tests/annotation/test_stage_params.py checks that
#: every declared parameter has one and that its English is its name in words.
PARAM_LABELS: dict[str, Any] = {
    "all_steps": pgettext_lazy("stage parameter", "All steps"),
    "alpha": pgettext_lazy("stage parameter", "Alpha"),
    "answers_per_question": pgettext_lazy("stage parameter", "Answers per question"),
    "batch_size": pgettext_lazy("stage parameter", "Batch size"),
    "beta": pgettext_lazy("stage parameter", "Beta"),
    "blocklists": pgettext_lazy("stage parameter", "Blocklists"),
    "description": pgettext_lazy("stage parameter", "Description"),
    "dev": pgettext_lazy("stage parameter", "Dev"),
    "editors_per_query": pgettext_lazy("stage parameter", "Editors per query"),
    "entity": pgettext_lazy("stage parameter", "Entity"),
    "forbid_how_why": pgettext_lazy("stage parameter", "Forbid how why"),
    "gamma": pgettext_lazy("stage parameter", "Gamma"),
    "gold_min_accuracy": pgettext_lazy("stage parameter", "Gold min accuracy"),
    "gold_min_items": pgettext_lazy("stage parameter", "Gold min items"),
    "gold_rate": pgettext_lazy("stage parameter", "Gold rate"),
    "gold_set_aside": pgettext_lazy("stage parameter", "Gold set aside"),
    "inspect_fraction": pgettext_lazy("stage parameter", "Inspect fraction"),
    "inspect_seed": pgettext_lazy("stage parameter", "Inspect seed"),
    "intent_mode": pgettext_lazy("stage parameter", "Intent mode"),
    "intent_models": pgettext_lazy("stage parameter", "Intent models"),
    "judges_per_query": pgettext_lazy("stage parameter", "Judges per query"),
    "k": pgettext_lazy("stage parameter", "K"),
    "label_sample": pgettext_lazy("stage parameter", "Label sample"),
    "label_seed": pgettext_lazy("stage parameter", "Label seed"),
    "language": pgettext_lazy("stage parameter", "Language"),
    "max_alternative_chars": pgettext_lazy("stage parameter", "Max alternative chars"),
    "max_answer_chars": pgettext_lazy("stage parameter", "Max answer chars"),
    "max_articles": pgettext_lazy("stage parameter", "Max articles"),
    "max_doc_chars": pgettext_lazy("stage parameter", "Max doc chars"),
    "max_extra_answers": pgettext_lazy("stage parameter", "Max extra answers"),
    "max_gap_words": pgettext_lazy("stage parameter", "Max gap words"),
    "max_items_per_worker": pgettext_lazy("stage parameter", "Max items per worker"),
    "max_overlap": pgettext_lazy("stage parameter", "Max overlap"),
    "max_queries": pgettext_lazy("stage parameter", "Max queries"),
    "max_questions": pgettext_lazy("stage parameter", "Max questions"),
    "max_selected": pgettext_lazy("stage parameter", "Max selected"),
    "min_agree": pgettext_lazy("stage parameter", "Min agree"),
    "min_answers": pgettext_lazy("stage parameter", "Min answers"),
    "ngram_n_en": pgettext_lazy("stage parameter", "Ngram n en"),
    "ngram_n_zh": pgettext_lazy("stage parameter", "Ngram n zh"),
    "ngram_threshold": pgettext_lazy("stage parameter", "Ngram threshold"),
    "outlier_ratio": pgettext_lazy("stage parameter", "Outlier ratio"),
    "pass_threshold": pgettext_lazy("stage parameter", "Pass threshold"),
    "pay_model": pgettext_lazy("stage parameter", "Pay model"),
    "pay_rate": pgettext_lazy("stage parameter", "Pay rate"),
    "qualification_items": pgettext_lazy("stage parameter", "Qualification items"),
    "qualification_threshold": pgettext_lazy("stage parameter", "Qualification threshold"),
    "qualification_tries": pgettext_lazy("stage parameter", "Qualification tries"),
    "questioners_per_article": pgettext_lazy("stage parameter", "Questioners per article"),
    "raters_per_candidate": pgettext_lazy("stage parameter", "Raters per candidate"),
    "require_highlights": pgettext_lazy("stage parameter", "Require highlights"),
    "resamples": pgettext_lazy("stage parameter", "Resamples"),
    "rules": pgettext_lazy("stage parameter", "Rules"),
    "sample": pgettext_lazy("stage parameter", "Sample"),
    "seed": pgettext_lazy("stage parameter", "Seed"),
    "steps": pgettext_lazy("stage parameter", "Steps"),
    "strip_question": pgettext_lazy("stage parameter", "Strip question"),
    "test": pgettext_lazy("stage parameter", "Test"),
    "test_double_annotation": pgettext_lazy("stage parameter", "Test double annotation"),
    "train": pgettext_lazy("stage parameter", "Train"),
    "validators_per_question": pgettext_lazy("stage parameter", "Validators per question"),
    "weight_by_competence": pgettext_lazy("stage parameter", "Weight by competence"),
    "window_factor": pgettext_lazy("stage parameter", "Window factor"),
    "window_threshold": pgettext_lazy("stage parameter", "Window threshold"),
    "yes_no": pgettext_lazy("stage parameter", "Yes no"),
    "yesno_features": pgettext_lazy("stage parameter", "Yesno features"),
    "yesno_threshold": pgettext_lazy("stage parameter", "Yesno threshold"),
}


def param_label(name: str) -> str:
    """The label of the stage parameter ``name`` in the interface language."""
    label = PARAM_LABELS.get(name)
    return str(label) if label is not None else name.replace("_", " ").capitalize()


def param_field(spec: Param, *, initial: Any, label: str) -> forms.Field:
    """The form field of one declared stage parameter: its type, bounds, choices and help,
    with the paper's default (the parameter's declared default) shown. Built in a request:
    the help and the default are in its language."""
    default = gettext("Paper's default: %(value)s.") % {"value": _shown(spec.default)}
    help_text = f"{spec.help} {default}"
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
                label=param_label(name))

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
