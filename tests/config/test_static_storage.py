"""The production static storage keeps each name's URL (config/static_storage.py): the same
URLs as whitenoise's storage, one manifest lookup per name per process, none kept under
DEBUG, and a new collectstatic's names replacing the old ones."""

from __future__ import annotations

import pytest
from django.contrib.staticfiles.storage import staticfiles_storage
from django.core.management import call_command
from django.test import override_settings
from whitenoise.storage import CompressedManifestStaticFilesStorage

from config.static_storage import StaticStorage

NAMES = ["css/site.css", "js/task.js", "vendor/lib.min.js"]


@pytest.fixture
def source(tmp_path_factory):
    """A few static files like the project's own (a stylesheet, scripts)."""
    root = tmp_path_factory.mktemp("static-src")
    for name, text in [("css/site.css", "body { color: #222; }\n"),
                       ("js/task.js", "document.body.dataset.ready = '1';\n"),
                       ("js/keys.js", "window.keys = [];\n"),
                       ("vendor/lib.min.js", "var lib = 1;\n")]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture
def collected(tmp_path, source, settings):
    """Those files collected into tmp_path through StaticStorage, as production does."""
    settings.STATIC_ROOT = str(tmp_path)
    settings.STATICFILES_DIRS = [str(source)]
    # Only these files: the apps' own (admin, DRF) would take a minute to compress.
    settings.STATICFILES_FINDERS = ["django.contrib.staticfiles.finders.FileSystemFinder"]
    settings.DEBUG = False
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {
        "BACKEND": "config.static_storage.StaticStorage"}}
    call_command("collectstatic", "--noinput", verbosity=0)
    return tmp_path


def test_same_urls_as_whitenoise_and_hashed(collected):
    ours, theirs = StaticStorage(), CompressedManifestStaticFilesStorage()
    for name in NAMES:
        url = ours.url(name)
        assert url == theirs.url(name)
        assert url != f"/static/{name}"  # the hashed name
        assert (collected / url.removeprefix("/static/")).is_file()


def test_each_name_looked_up_once(collected, monkeypatch):
    storage = StaticStorage()
    first = [storage.url(name) for name in NAMES]
    lookups = []
    original = StaticStorage.stored_name
    monkeypatch.setattr(StaticStorage, "stored_name",
                        lambda self, name: lookups.append(name) or original(self, name))
    assert [storage.url(name) for name in NAMES] == first
    assert lookups == []
    storage.url("js/keys.js")
    assert lookups == ["js/keys.js"]


def test_a_name_missing_from_the_manifest_still_raises(collected):
    storage = StaticStorage()
    for _ in range(2):  # the failure is not kept as an answer
        with pytest.raises(ValueError, match="Missing staticfiles manifest entry"):
            storage.url("js/no-such-file.js")


def test_debug_serves_unhashed_names_and_keeps_nothing(collected):
    storage = StaticStorage()
    with override_settings(DEBUG=True):
        assert storage.url("js/task.js") == "/static/js/task.js"
    assert storage.url("js/task.js") == CompressedManifestStaticFilesStorage().url("js/task.js")
    assert storage.url("js/task.js") != "/static/js/task.js"


def test_collectstatic_replaces_what_was_kept(collected, source):
    # The storage the {% static %} tag and collectstatic share (one per process).
    old = staticfiles_storage.url("js/task.js")
    assert isinstance(staticfiles_storage._wrapped, StaticStorage)
    (source / "js/task.js").write_text("document.body.dataset.ready = '2';\n")
    call_command("collectstatic", "--noinput", verbosity=0)
    new = staticfiles_storage.url("js/task.js")
    assert new != old
    assert "'2'" in (collected / new.removeprefix("/static/")).read_text()


def test_scripts_are_compressed_and_their_source_maps_are_not(tmp_path, source, settings):
    """Brotli spent half of collectstatic's minute of CPU on the vendored scripts' source
    maps, which only a developer's browser tools read; a test's collectstatic timed out on
    a loaded machine. Scripts still get their gzip and Brotli copies."""
    # big enough to be worth compressing (whitenoise keeps a copy only when it is smaller)
    (source / "js" / "task.js").write_text("document.body.dataset.ready = '1';\n" * 50)
    (source / "js" / "task.js.map").write_text('{"version": 3, "sources": []}\n' * 50)
    settings.STATIC_ROOT = str(tmp_path)
    settings.STATICFILES_DIRS = [str(source)]
    settings.STATICFILES_FINDERS = ["django.contrib.staticfiles.finders.FileSystemFinder"]
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {
        "BACKEND": "config.static_storage.StaticStorage"}}
    call_command("collectstatic", "--noinput", verbosity=0)
    written = {path.name for path in (tmp_path / "js").iterdir()}
    assert {"task.js.gz", "task.js.br"} <= written
    assert "task.js.map" in written
    assert not [name for name in written if ".map" in name and name.endswith((".gz", ".br"))]
