"""MS MARCO distillation over a Chinese corpus (DuReader): the consensus weighting compares
answers by character, as DuReader's scorer does; Chinese has no spaces between words."""

from __future__ import annotations

import pytest

from annotation.models import Item, Project
from collector.metrics import pairwise_bleu
from tests.annotation.test_marco import people, project, retrieval, weigh  # noqa: F401

ANSWERS = ["南宁属于广西壮族自治区，是广西的首府。", "南宁是广西壮族自治区的首府。",
           "南宁属于广西壮族自治区。", "北京是中国的首都。"]


def test_chinese_answers_are_weighed_by_character_and_the_outlier_flagged(
        project, committed):  # noqa: F811
    Project.objects.filter(pk=project.pk).update(language="zh")
    item = weigh(project, committed, ANSWERS)
    chars = [tuple("".join(a.split())) for a in ANSWERS]
    # Imp(Ref_i) = Σ_j BLEU(Ref_i, Ref_j), j = i included (pa-metrics Eq. 2), by character
    expected = [sum(pairwise_bleu(c, other) for other in chars) for c in chars]
    assert item.result["weights"] == pytest.approx(expected, abs=1e-12)
    assert item.result["tokens"] == [len(c) for c in chars]
    # the three answers that agree outweigh the one about Beijing, which goes to review
    assert min(item.result["weights"][:3]) > 1.9 and item.result["weights"][3] == 1.0
    assert item.result["flagged"] == [3]
    assert Item.objects.get(stage__kind="marco_review").data["flagged"] == [3]


def test_the_pa_command_line_weighs_chinese_by_character(tmp_path, capsys):
    import json

    from collector.metrics.cli import main

    refs, cands = tmp_path / "refs.json", tmp_path / "cands.json"
    refs.write_text(json.dumps(ANSWERS, ensure_ascii=False), encoding="utf-8")
    cands.write_text(json.dumps(["南宁是广西的首府。"], ensure_ascii=False), encoding="utf-8")
    assert main(["pa", "--metric", "bleu", "--tokens", "char", str(refs), str(cands)]) == 0
    query = json.loads(capsys.readouterr().out)["queries"][0]
    chars = [tuple("".join(a.split())) for a in ANSWERS]
    assert query["reference_weights"] == pytest.approx(
        [sum(pairwise_bleu(c, other) for other in chars) for c in chars], abs=1e-12)
    assert query["outlier_references"] == [3]


def test_the_spelling_check_leaves_chinese_words_alone():
    from annotation.stages.marco import _spell_checker, spelling_report

    if _spell_checker() is None:
        pytest.skip("no spell checker installed")
    report = spelling_report("南宁属于广西壮族自治区，是广西的首府。奶瓶 recieve",
                             known="南宁属于什么省")
    assert [w["word"] for w in report["words"]] == ["recieve"]
    assert report["words"][0]["suggestion"] == "receive"
