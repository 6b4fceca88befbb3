"""Stage parameters: a form per stage kind from its declared parameters."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest
from django.urls import reverse
from django.utils.translation import override

from annotation import engine
from annotation.forms import StageParamsForm
from annotation.models import Stage
from annotation.stages import stage_kinds

pytestmark = pytest.mark.django_db


def posted_form(stage: Stage, changes: dict[str, Any]) -> dict[str, Any]:
    """What the page's form posts for ``stage``: every field as rendered, then ``changes``
    (parameter name -> posted text; None leaves the field out)."""
    form = StageParamsForm(stage=stage)
    data: dict[str, Any] = {"action": "params", "stage": stage.pk}
    for bound in form:
        value = bound.value()
        if isinstance(value, bool):
            if value:
                data[bound.html_name] = "on"
            continue
        data[bound.html_name] = bound.field.widget.format_value(value) or ""
    data.update({form.add_prefix(name): value for name, value in changes.items()})
    return {k: v for k, v in data.items() if v is not None}


def test_every_kind_gets_a_typed_field_per_declared_parameter(admin_user):
    from django import forms

    for recipe in ("newsqa", "marco", "reco"):
        project = engine.project_create(name=recipe, recipe=recipe, user=admin_user)
        for stage in project.stages.all():
            form = StageParamsForm(stage=stage)
            params = stage_kinds()[stage.kind].all_params()
            assert list(form.fields) == list(params)
            for name, spec in params.items():
                field = form.fields[name]
                assert str(spec.help) in field.help_text
                assert "Paper's default:" in field.help_text
                expected = {bool: forms.BooleanField, int: forms.IntegerField,
                            float: forms.FloatField, dict: forms.JSONField}.get(
                    type(spec.default), forms.CharField)
                if spec.choices:
                    expected = forms.ChoiceField
                assert isinstance(field, expected), (stage.kind, name, field)
                if spec.minimum is not None and not spec.choices:
                    assert field.widget.attrs["min"] == spec.minimum


def test_the_page_shows_labels_help_bounds_and_the_papers_default(client_for, admin_user):
    project = engine.project_create(name="p", recipe="newsqa", user=admin_user)
    stage = project.stages.get(kind="newsqa_answer")
    page = client_for(admin_user).get(
        reverse("annotation:project_detail", args=[project.pk])).content.decode()
    name = f"stage{stage.pk}-answers_per_question"
    field_id = f"id_{name}"
    assert f'<label for="{field_id}">Answers per question</label>' in page
    assert f'type="number" name="{name}" value="2" min="1" max="10"' in page
    assert f'aria-describedby="{field_id}_helptext"' in page
    assert "Paper&#x27;s default: 2." in page or "Paper's default: 2." in page
    assert f'name="stage{stage.pk}-pay_model"' in page and '<option value="hourly"' in page
    assert f'type="checkbox" name="stage{stage.pk}-gold_set_aside"' in page


def test_saving_the_form_stores_typed_values(client_for, admin_user):
    project = engine.project_create(name="p", recipe="newsqa", user=admin_user)
    stage = project.stages.get(kind="newsqa_answer")
    client = client_for(admin_user)
    response = client.post(reverse("annotation:project_action", args=[project.pk]),
                           posted_form(stage, {"answers_per_question": "3",
                                               "pay_rate": "0.25",
                                               "pay_model": "hourly",
                                               "gold_set_aside": "on"}))
    assert response.status_code == 302
    stage.refresh_from_db()
    assert stage.params["answers_per_question"] == 3
    assert stage.params["pay_rate"] == 0.25 and stage.params["pay_model"] == "hourly"
    assert stage.params["gold_set_aside"] is True


@pytest.mark.parametrize(("field", "value", "message"), [
    ("answers_per_question", "x", "Enter a whole number."),
    ("answers_per_question", "0", "greater than or equal to 1"),
    ("gold_rate", "1.5", "less than or equal to 1"),
    ("pay_model", "weekly", "Select a valid choice."),
])
def test_a_refused_value_is_named_next_to_its_field_and_nothing_is_saved(
        client_for, admin_user, field, value, message):
    project = engine.project_create(name="p", recipe="newsqa", user=admin_user)
    stage = project.stages.get(kind="newsqa_answer")
    before = dict(stage.params)
    response = client_for(admin_user).post(
        reverse("annotation:project_action", args=[project.pk]),
        posted_form(stage, {"answers_per_question": "4", field: value}))
    assert response.status_code == 400
    page = response.content.decode()
    error = page.split(f'data-testid="param-error-{field}"', 1)[1].split("</div>", 1)[0]
    assert message in error
    assert "not saved" in page
    stage.refresh_from_db()
    assert stage.params == before  # nothing half-written: 4 was not saved either


def test_after_the_start_the_fields_are_disabled_and_a_post_is_refused(client_for, admin_user,
                                                                       news_corpus):
    project = engine.project_create(name="p", recipe="newsqa", user=admin_user,
                                    corpus=news_corpus)
    engine.project_start(project=project, actor=admin_user)
    stage = project.stages.get(kind="newsqa_answer")
    client = client_for(admin_user)
    page = client.get(reverse("annotation:project_detail", args=[project.pk])).content.decode()
    assert "<fieldset disabled>" in page
    response = client.post(reverse("annotation:project_action", args=[project.pk]),
                           posted_form(stage, {"answers_per_question": "5"}))
    assert response.status_code == 400
    assert "parameters can only change before the project starts" in response.content.decode()
    with override("zh-hans"):  # the refusal in the admin's language (it stayed English)
        refused = client.post(reverse("annotation:project_action", args=[project.pk]),
                              posted_form(stage, {"answers_per_question": "5"}),
                              HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "参数只能在项目开始前修改" in refused.content.decode()
    stage.refresh_from_db()
    assert stage.params["answers_per_question"] != 5


@pytest.mark.parametrize(("recipe", "kind", "changes", "message"), [
    ("newsqa", "newsqa_split", {"train": "0", "dev": "0", "test": "0"},
     "the split shares (train 0, dev 0, test 0) add up to 0, not 1"),
    ("newsqa", "newsqa_split", {"train": "0.9", "dev": "0.5", "test": "0.5"},
     "add up to 1.9, not 1"),
    ("reco", "reco_split", {"train": "0.5", "dev": "0.1", "test": "0.1"},
     "add up to 0.7, not 1"),
    ("reco", "reco_query_filter", {"blocklists": '{"en": "sex"}'},
     "blocklists[&#x27;en&#x27;] must be a list of terms"),
    ("reco", "reco_query_filter", {"yesno_threshold": "-5"},
     "yesno_threshold must be a number above 0"),
])
def test_parameters_that_make_no_sense_together_are_refused_before_the_start(
        client_for, admin_user, recipe, kind, changes, message):
    """Refused on the form, nothing saved: a split whose shares are not the whole (it
    failed at the start, or was scaled unasked), a blocklist given as one string (cut into
    characters, replacing the shipped list), a threshold that makes every query yes/no."""
    project = engine.project_create(name="p", recipe=recipe, user=admin_user)
    stage = project.stages.get(kind=kind)
    before = dict(stage.params)
    response = client_for(admin_user).post(
        reverse("annotation:project_action", args=[project.pk]), posted_form(stage, changes))
    assert response.status_code == 400
    assert message in response.content.decode()
    stage.refresh_from_db()
    assert stage.params == before


def test_split_shares_that_make_the_whole_are_saved(client_for, admin_user):
    project = engine.project_create(name="p", recipe="newsqa", user=admin_user)
    stage = project.stages.get(kind="newsqa_split")
    response = client_for(admin_user).post(
        reverse("annotation:project_action", args=[project.pk]),
        posted_form(stage, {"train": "0.8", "dev": "0.1", "test": "0.1"}))
    assert response.status_code == 302
    stage.refresh_from_db()
    assert (stage.params["train"], stage.params["dev"], stage.params["test"]) == (0.8, 0.1, 0.1)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def test_the_project_page_names_stage_kinds_and_parameters_in_the_admins_language(
        client_for, admin_user):
    """Chinese: each stage's kind, its parameters' labels and help, and the paper's default
    (a checkbox's in words); English stays English."""
    project = engine.project_create(name="p", recipe="newsqa", user=admin_user)
    answer = project.stages.get(kind="newsqa_answer")
    split = project.stages.get(kind="newsqa_split")
    url = reverse("annotation:project_detail", args=[project.pk])
    client = client_for(admin_user)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    html = client.get(url).content.decode()
    assert '<html lang="zh-hans">' in html
    assert f'data-testid="stage-kind-{answer.order}">答案收集</span>' in html
    assert f'data-testid="stage-kind-{split.order}">按文章划分</span>' in html
    assert f'<label for="id_stage{answer.pk}-answers_per_question">每个问题的答案数</label>' in html
    assert f'<label for="id_stage{split.pk}-train">训练集</label>' in html
    page = _text(html)
    for chinese in ("首先请求作答的回答者人数。 论文默认值：2。",
                    "必须达成一致的回答者人数。", "暂停时搁置答案",
                    "工作人员被暂停时，搁置其对尚未完成的条目的答案，并为这些条目另找工作人员。 "
                    "论文默认值：关闭。",
                    "训练集中文章的比例。 论文默认值：0.9。", "计酬方式"):
        assert chinese in page, chinese
    for english in ("Split by article", "Answers per question", "Answerers asked first",
                    "Paper's default", "Share of articles in train", "Gold set aside",
                    "Pay model"):
        assert english not in page, english

    client.post(reverse("set_language"), {"language": "en", "next": "/"})
    html = client.get(url).content.decode()
    assert f'data-testid="stage-kind-{answer.order}">Answer sourcing</span>' in html
    assert (f'<label for="id_stage{answer.pk}-answers_per_question">Answers per question'
            "</label>") in html
    page = _text(html)
    assert "Answerers asked first. Paper's default: 2." in page
    assert ("When a worker is paused, set aside their answers to items still open and give "
            "those items a replacement worker. Paper's default: off.") in page
    for chinese in ("答案收集", "每个问题的答案数", "论文默认值", "首先请求作答"):
        assert chinese not in page, chinese


def test_every_kind_its_parameters_labels_and_help_have_a_chinese_translation():
    """A new kind or parameter without a translation shows English on Chinese pages: each
    kind's name, each parameter's help, and each parameter's label (its name in words,
    ``PARAM_LABELS``) are translated."""
    from annotation.forms import PARAM_LABELS, param_label

    def chinese(text: str) -> bool:
        return any("\u4e00" <= c <= "\u9fff" or c in "αβγ" for c in text)

    kinds = {key: kind for key, kind in stage_kinds().items()
             if type(kind).__module__.startswith("annotation.")}  # not other tests' kinds
    assert len(kinds) >= 27
    for key, kind in kinds.items():
        with override("en"):
            english = {"kind": str(kind.label),
                       **{name: (param_label(name), str(spec.help))
                          for name, spec in kind.all_params().items()}}
        with override("zh-hans"):
            assert chinese(str(kind.label)), (key, english["kind"])
            for name, spec in kind.all_params().items():
                assert name in PARAM_LABELS, (key, name)
                assert english[name][0] == name.replace("_", " ").capitalize(), (key, name)
                assert chinese(param_label(name)), (key, name, english[name][0])
                assert chinese(str(spec.help)), (key, name, english[name][1])
