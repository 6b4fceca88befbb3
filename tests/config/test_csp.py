"""Content-Security-Policy: every page carries it, and no template needs more than it allows
(the browser tests fail on any violation a page reports)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TEMPLATE_DIRS = [REPO / "templates", REPO / "annotation" / "templates",
                 REPO / "collector" / "templates"]

# What a policy without 'unsafe-inline' / 'unsafe-eval' blocks.
FORBIDDEN = {
    "inline script": re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>",
                                re.I),
    "inline style block": re.compile(r"<style\b", re.I),
    "style attribute": re.compile(r"\sstyle\s*=", re.I),
    "event handler attribute": re.compile(r"\son[a-z]+\s*=", re.I),
    "javascript: URL": re.compile(r"javascript:", re.I),
    "htmx eval (hx-on, js: values)": re.compile(r"hx-on|hx-vals\s*=\s*['\"]\s*js:", re.I),
}


def _templates() -> list[Path]:
    return sorted(p for d in TEMPLATE_DIRS for p in d.rglob("*.html"))


def test_templates_need_no_inline_script_style_or_eval():
    found = []
    for path in _templates():
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            for what, pattern in FORBIDDEN.items():
                if pattern.search(line):
                    found.append(f"{path.relative_to(REPO)}:{lineno}: {what}: {line.strip()}")
    assert _templates(), "no templates found"
    assert not found, "\n".join(found)


def test_the_scan_catches_what_the_policy_blocks():
    samples = {
        "inline script": "<script>alert(1)</script>",
        "inline style block": "<style>p{}</style>",
        "style attribute": '<p style="color:red">',
        "event handler attribute": '<input onclick="this.select()">',
        "htmx eval (hx-on, js: values)": "<input hx-vals='js:{a: 1}'>",
    }
    for what, sample in samples.items():
        assert FORBIDDEN[what].search(sample), what
    assert not FORBIDDEN["inline script"].search('<script src="/static/js/task.js" defer>')


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/accounts/login/", "/healthz"])
def test_pages_carry_the_policy(client, path):
    response = client.get(path)
    policy = response["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";") if d.strip())
    assert directives["default-src"] == "'self'"
    assert directives["script-src"] == "'self'"
    assert directives["style-src"] == "'self'"
    assert directives["object-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    assert "unsafe" not in policy


@pytest.mark.django_db
def test_signed_in_pages_carry_the_policy(client_for, admin_user):
    client = client_for(admin_user)
    for path in ("/manage/", "/collector/corpora/", "/admin/"):
        response = client.get(path)
        assert response.status_code == 200, path
        assert "script-src 'self'" in response["Content-Security-Policy"], path
