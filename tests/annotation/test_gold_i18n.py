"""A worker whose interface is in Simplified Chinese is told why a qualification try cannot
start in their language, the stage by the name they see."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.utils.translation import override

from annotation import gold
from tests.annotation.test_gold import qualifying  # noqa: F401


def test_why_a_try_cannot_start_names_the_stage_in_chinese(qualifying, workers):  # noqa: F811
    project, answer = qualifying
    worker = workers["ann3"]
    for _ in range(2):
        standing = gold.qualification_start(stage=answer, worker=worker)
        while (item := gold.qualification_item(standing=standing)) is not None:
            gold.qualification_answer(standing=standing, item=item,
                                      payload={"bad_question": True})
            standing.refresh_from_db()
    with override("zh-hans"), pytest.raises(ValidationError) as refused:
        gold.qualification_start(stage=answer, worker=worker)
    assert refused.value.messages[0] == "“答案收集”已没有剩余的资格测试机会（已用 2 次）"
    assert "Answer sourcing" not in refused.value.messages[0]
