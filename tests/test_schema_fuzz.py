"""Schemathesis against the OpenAPI schema, over HTTP on a live server, for every role.

Every operation of the schema gets ``EXAMPLES`` generated requests per role (anonymous,
annotator, checker, admin; token authentication) on a database with a real corpus, its
search index and an active NewsQA project: no answer may be a server error, and every
answer must match the schema (status code, content type, headers such as a 401's
``WWW-Authenticate``, and body).

It runs once in CI, in the PostgreSQL stage (production's database; about a minute): on
SQLite it skips to keep the first stage short, and ``CROWDQA_REQUIRE_FUZZ=1`` (set in that
stage) turns the skip into a failure. ``CROWDQA_FUZZ_EXAMPLES`` changes the bound.
"""
# ruff: noqa: F811 (fixtures imported from tests/annotation/conftest.py are arguments here)

from __future__ import annotations

import os
from typing import Any

import pytest
import schemathesis
from django.db import connection
from hypothesis import HealthCheck, Phase, given, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from annotation import engine
from annotation.roles import Role
from collector.services import corpus_import
from tests.annotation.conftest import (  # noqa: F401 - fixtures, used as arguments
    committed,
    news_corpus,
    newsqa_project,
    workers,
)
from tests.collector.corpus_support import SQUAD_V1, isolated_storage  # noqa: F401
from tests.conftest import skip_or_fail
from tests.factories import user_with_roles

#: Generated requests per operation and role (explicit examples come on top).
EXAMPLES = int(os.environ.get("CROWDQA_FUZZ_EXAMPLES", "12"))
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_headers_conformance, response_schema_conformance]
ROLES = ("anonymous", "annotator", "checker", "admin")

pytestmark = pytest.mark.usefixtures("isolated_storage")


@pytest.fixture
def postgres_only() -> None:
    if connection.vendor != "postgresql":
        skip_or_fail("the schemathesis run needs DATABASE_URL=postgres://... (CI's PostgreSQL "
                     "stage runs it)", required_by="CROWDQA_REQUIRE_FUZZ")


@pytest.fixture
def fuzz_world(postgres_only, transactional_db, newsqa_project, workers,
               admin_user) -> dict[str, Any]:
    """Users per role with API tokens, over a searchable corpus and a running project."""
    corpus_import(path=SQUAD_V1, corpus="squad", language="en", format="squad")
    users = {"annotator": workers["questioner"],  # a member of the NewsQA project
             "checker": user_with_roles("fuzz-chk", Role.CHECKER),
             "admin": admin_user}
    headers = {role: {"Authorization": f"Token {Token.objects.create(user=user).key}"}
               for role, user in users.items()}
    headers["anonymous"] = {}
    task = engine.task_claim(worker=users["annotator"], project=newsqa_project)
    # Path values of real objects, so requests reach more than "not found".
    known = {"/api/v1/corpora/": {"name": "squad"},
             "/api/v1/projects/": {"id": newsqa_project.pk},
             "/api/v1/tasks/": {"id": task.pk}}
    return {"headers": headers, "known": known}


def _fuzz(strategy: Any, *, base_url: str, headers: dict[str, str]) -> None:
    """EXAMPLES generated cases of one operation; raises on the first failing one."""

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(case=strategy)
    def run(case) -> None:
        case.call_and_validate(base_url=base_url, headers=headers, checks=CHECKS)

    run()


def test_the_api_keeps_to_its_schema_for_every_role(fuzz_world, live_server):
    schema = schemathesis.openapi.from_url(f"{live_server.url}/api/v1/schema/?format=json",
                                           headers=fuzz_world["headers"]["admin"])
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 16
    failures: list[str] = []
    for role in ROLES:  # one world for all roles: building it is the slow part
        for operation in operations:
            strategy = operation.as_strategy()
            for prefix, values in fuzz_world["known"].items():
                if operation.path.startswith(prefix) and operation.path != prefix:
                    strategy = strategy | operation.as_strategy(path_parameters=values)
            try:
                _fuzz(strategy, base_url=live_server.url, headers=fuzz_world["headers"][role])
            except (Exception, BaseExceptionGroup) as exc:  # noqa: BLE001 - all reported
                failures.append(f"{operation.label} as {role}:\n{exc}")
    assert not failures, "\n\n".join(failures)
