"""Search analyzers are loaded at process start (web and worker), not on the first search."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from collector.models import Corpus
from collector.search.preload import preload_languages

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_auto_preloads_the_languages_of_the_corpora(settings):
    settings.CROWDQA_SEARCH_PRELOAD = "auto"
    assert preload_languages() == []
    Corpus.objects.create(name="news", language="en")
    assert preload_languages() == ["en"]
    Corpus.objects.create(name="reco", language="zh")
    assert preload_languages() == ["en", "zh"]


@pytest.mark.parametrize(("mode", "languages"), [("all", ["en", "zh"]), ("none", [])])
def test_all_and_none(settings, mode, languages):
    settings.CROWDQA_SEARCH_PRELOAD = mode
    assert preload_languages() == languages


def test_an_unknown_mode_is_named(settings):
    settings.CROWDQA_SEARCH_PRELOAD = "yes"
    with pytest.raises(ValueError, match="CROWDQA_SEARCH_PRELOAD must be one of auto, all, "
                                         "none; got 'yes'"):
        preload_languages()


def _fresh_process(code: str, mode: str) -> str:
    """Run ``code`` in a new Python process (jieba not loaded yet) and return its output."""
    env = {**os.environ, "CROWDQA_SEARCH_PRELOAD": mode,
           "DJANGO_SETTINGS_MODULE": "config.settings"}
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


WEB = """
import jieba
import config.wsgi
from collector.search import preload
preload._started.join(timeout=100)
print(jieba.dt.initialized)
"""


@pytest.mark.parametrize(("mode", "loaded"), [("all", "True"), ("none", "False")])
def test_a_web_process_loads_jieba_at_start(mode, loaded):
    assert _fresh_process(WEB, mode) == loaded


WORKER = """
import django
django.setup()
import jieba
from celery.signals import worker_process_init
import config.celery
from collector.search import preload
assert preload._started is None and not jieba.dt.initialized
worker_process_init.send(sender="test@host")
preload._started.join(timeout=100)
print(jieba.dt.initialized)
"""


def test_a_worker_pool_process_loads_jieba_when_it_starts():
    assert _fresh_process(WORKER, "all") == "True"
