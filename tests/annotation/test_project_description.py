"""Project descriptions go verbatim into release datasheets and dataset cards: the project
form and page warn admins when a description names a member (or possible member)."""

from __future__ import annotations

import pytest

from annotation import engine
from annotation.models import Project
from annotation.roles import Role
from annotation.selectors import project_description_names, usernames_in_text
from collector.models import Corpus
from tests.factories import user_with_roles

NEW = "/manage/projects/new/"


@pytest.mark.parametrize(("text", "names"), [
    ("ann1 wrote the questions", ["ann1"]),
    ("Questions by ANN1 and bob.smith.", ["ann1", "bob.smith"]),
    ("annotated by ann12; see ann1x and xann1", []),
    ("mail bob.smith@example.org", []),
    ("", []),
])
def test_usernames_in_text_match_whole_names_in_any_case(text, names):
    assert usernames_in_text(text, ["ann1", "bob.smith", ""]) == names


@pytest.fixture
def corpus(db):
    return Corpus.objects.create(name="news", language="en")


def _create(client, corpus, description, **extra):
    return client.post(NEW, {"name": "News QA", "recipe": "newsqa", "corpus": corpus.pk,
                             "description": description, **extra})


def test_the_form_refuses_a_description_naming_a_worker_until_told_to_keep_it(
        client_for, admin_user, corpus):
    user_with_roles("ann1", Role.ANNOTATOR)
    user_with_roles("chk1", Role.CHECKER)
    client = client_for(admin_user)
    response = _create(client, corpus, "Questions by ann1, reviewed by Chk1.")
    assert response.status_code == 200
    page = response.content.decode()
    assert ("The description names ann1, chk1: it is copied verbatim into the datasheet "
            "and dataset card of every release.") in page
    assert 'data-testid="keep-names"' in page
    assert not Project.objects.exists()

    response = _create(client, corpus, "Questions by ann1, reviewed by Chk1.", keep_names="on")
    assert response.status_code == 302
    assert Project.objects.get().description == "Questions by ann1, reviewed by Chk1."


def test_a_description_without_usernames_passes_without_the_checkbox(
        client_for, admin_user, corpus):
    user_with_roles("ann1", Role.ANNOTATOR)
    client = client_for(admin_user)
    page = client.get(NEW).content.decode()
    assert 'data-testid="keep-names"' not in page
    assert "describe the work, not who did it" in page
    response = _create(client, corpus, "Questions written from the highlights by annotators.")
    assert response.status_code == 302
    assert Project.objects.get().name == "News QA"


def test_the_project_page_warns_when_the_description_names_a_member(
        client_for, admin_user, corpus):
    ann1 = user_with_roles("ann1", Role.ANNOTATOR)
    user_with_roles("ann2", Role.ANNOTATOR)  # named, but not a member
    project = engine.project_create(name="P", recipe="newsqa", corpus=corpus,
                                    description="ann1 and ann2 wrote it", user=admin_user)
    client = client_for(admin_user)
    url = f"/manage/projects/{project.pk}/"
    assert 'data-testid="description-names"' not in client.get(url).content.decode()
    engine.project_member_add(project=project, user=ann1, role=Role.ANNOTATOR)
    assert project_description_names(project=project) == ["ann1"]
    page = client.get(url).content.decode()
    assert 'data-testid="description-names"' in page
    assert "The description names ann1, a member of this project" in page
