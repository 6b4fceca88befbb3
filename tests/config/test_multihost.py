"""Nothing on one host's disk: two web hosts and two workers that share only PostgreSQL,
Redis (broker and cache) and the storage.

Each "host" is a directory of its own: the working directory of its gunicorn or Celery
process, its MEDIA_ROOT, search index directory and static root. The storage both web hosts
and workers are configured with (``CROWDQA_STORAGE_BACKEND=filesystem`` on one shared
directory) stands for an object store. Through HTTP with real authentication (a session
for the admin, API tokens for annotators) the admin uploads a corpus to host A and confirms
its import on host B; a worker imports it into the PostgreSQL search backend; host B finds
it; a NewsQA project is created, given members and started across the hosts; annotators
claim on one host and submit on the other; a release is built by a worker and downloaded
from the web host that did not create it, byte for byte what the build recorded. In the
end no host's MEDIA_ROOT holds a file and the upload is gone from the storage.

CI runs it in its PostgreSQL stage (``.ci/run`` step 2). The cache is Redis database
``n + 1`` of the broker's ``redis://.../n`` unless CROWDQA_MULTIHOST_CACHE_URL says
otherwise.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from annotation.roles import Role
from tests.collector.corpus_support import SQUAD_V1
from tests.conftest import _test_database_url, _worker_environment_checked
from tests.factories import PASSWORD, user_with_roles
from tests.polling import wait_until

pytestmark = [pytest.mark.multihost, pytest.mark.celery_worker]

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "config" / "gunicorn.conf.py"  # the README's gunicorn settings
HOST = "127.0.0.1"
SECRET_KEY = "a-long-random-secret-shared-by-every-host-of-this-test-0123456789"
TIMEOUT_S = 60
QUESTIONS = ["What is the subject of this paragraph?", "Which name appears first here?"]


def _cache_url(broker: str) -> str:
    if os.environ.get("CROWDQA_MULTIHOST_CACHE_URL"):
        return os.environ["CROWDQA_MULTIHOST_CACHE_URL"]
    parts = urlsplit(broker)
    db = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{db + 1}"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def _pipeline_state() -> str:
    """The jobs and the items per stage, for a failure message."""
    from annotation.models import Item
    from collector.models import Job

    jobs = list(Job.objects.order_by("pk").values_list("kind", "status", "error"))
    items = list(Item.objects.values_list("stage__kind", "status").order_by("stage__order"))
    return f"jobs: {jobs}\nitems: {sorted(set((k, s, items.count((k, s))) for k, s in items))}"


def _until(what: str, probe: Callable[[], object], timeout: float = TIMEOUT_S) -> object:
    """Poll ``probe`` (a read of the product's own state) until it returns something true."""
    return wait_until(probe, timeout=timeout, what=what, interval=0.2, detail=_pipeline_state)


class WebHost:
    """``gunicorn config.wsgi`` started in the host's own directory."""

    def __init__(self, name: str, folder: Path, env: dict[str, str]) -> None:
        self.name = name
        self.port = _free_port()
        self.base = f"http://{HOST}:{self.port}"
        self.log = folder / "gunicorn.log"
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "-c", str(CONF), "config.wsgi:application",
                 "--bind", f"{HOST}:{self.port}", "--workers", "2", "--timeout", "120",
                 "--log-level", "warning"],
                cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_ready(self, session) -> None:
        def healthy() -> bool:
            if self.proc.poll() is not None:
                pytest.fail(f"gunicorn {self.name} exited:\n{self.log.read_text()[-3000:]}")
            with contextlib.suppress(Exception):
                return session.get(f"{self.base}/healthz", timeout=10).status_code == 200
            return False

        _until(f"gunicorn {self.name} to answer /healthz", healthy, timeout=90)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()


def _http():
    import requests

    session = requests.Session()
    session.trust_env = False  # 127.0.0.1 only, no proxy from the environment
    return session


def _csrf(session, url: str) -> str:
    page = session.get(url, timeout=30)
    assert page.status_code == 200, (url, page.status_code)
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)


def _post_form(session, url: str, data: dict, files: dict | None = None,
               page: str | None = None):
    """A form post as a browser makes it: the page with the form first (``page``, else
    ``url``; for its CSRF token), then the post."""
    token = _csrf(session, page or url)
    return session.post(url, data={**data, "csrfmiddlewaretoken": token}, files=files,
                        headers={"Referer": url}, allow_redirects=False, timeout=120)


@pytest.fixture
def cluster(celery_workers, settings, tmp_path) -> Iterator[dict]:
    """Hosts A and B (web) and workers 1 and 2, each in a directory of its own, sharing the
    test database, Redis and ``tmp_path/shared-storage``."""
    from django.db import connection

    _worker_environment_checked(settings)
    shared = tmp_path / "shared-storage"
    shared.mkdir()
    base_env = {k: v for k, v in os.environ.items()
                if k not in ("SEARCH_INDEX_DIR", "CACHE_URL", "MEDIA_ROOT", "DEBUG",
                             "CONN_MAX_AGE", "STATIC_ROOT", "DJANGO_ALLOW_ASYNC_UNSAFE")}
    base_env.update({
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "PYTHONPATH": str(REPO),
        "DATABASE_URL": _test_database_url(connection.settings_dict),
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "CACHE_URL": _cache_url(settings.CELERY_BROKER_URL),
        "CROWDQA_SEARCH_BACKEND": "postgres",
        "CROWDQA_SEARCH_PRELOAD": "none",
        "CROWDQA_STORAGE_BACKEND": "filesystem",
        "CROWDQA_STORAGE_OPTIONS": json.dumps({"location": str(shared)}),
        "SECRET_KEY": SECRET_KEY,
        "DEBUG": "false",
        "ALLOWED_HOSTS": HOST,
    })
    hosts: dict[str, Path] = {}
    for name in ("web-a", "web-b", "worker-1", "worker-2"):
        folder = tmp_path / name
        (folder / "media").mkdir(parents=True)
        hosts[name] = folder

    def host_env(name: str) -> dict[str, str]:
        folder = hosts[name]
        return {**base_env, "MEDIA_ROOT": str(folder / "media"),
                "SEARCH_INDEX_DIR": str(folder / "index"),
                "STATIC_ROOT": str(folder / "static")}

    for name in ("worker-1", "worker-2"):
        celery_workers(env=host_env(name), cwd=hosts[name])
    webs = [WebHost(name, hosts[name], host_env(name)) for name in ("web-a", "web-b")]
    try:
        probe = _http()
        for web in webs:
            web.wait_ready(probe)
        yield {"a": webs[0].base, "b": webs[1].base, "shared": shared, "hosts": hosts,
               "webs": webs}
    finally:
        for web in webs:
            web.stop()


def _job_status(session, base: str, job_url: str) -> str | None:
    page = session.get(f"{base}{job_url}", timeout=30)
    assert page.status_code == 200, page.status_code
    status = re.search(r'data-testid="job-status">([^<]+)<', page.text).group(1)
    return status if status in ("Done", "Failed") else None


def test_two_web_hosts_and_two_workers_share_only_the_database_redis_and_storage(
        cluster, transactional_db):
    from rest_framework.authtoken.models import Token

    from annotation.models import Stage

    a, b = cluster["a"], cluster["b"]
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    admin = user_with_roles("multi-admin", Role.ADMIN)
    # Hashed as the hosts' settings verify it (the test run itself hashes with MD5).
    hasher = PBKDF2PasswordHasher()
    admin.password = hasher.encode(PASSWORD, hasher.salt(), iterations=1000)
    admin.save(update_fields=["password"])
    people = {name: user_with_roles(name, Role.ANNOTATOR)
              for name in ("questioner", "ann1", "ann2")}
    tokens = {name: Token.objects.create(user=user).key for name, user in people.items()}
    admin_token = Token.objects.create(user=admin).key

    # The admin signs in on A; the session works on B too (sessions in the database).
    browser = _http()
    login = _post_form(browser, f"{a}/accounts/login/",
                       {"username": admin.username, "password": PASSWORD})
    assert login.status_code == 302, login.text[-2000:]

    # Upload and preview on A; confirm the import on B, which never saw the file.
    with SQUAD_V1.open("rb") as upload:
        preview = _post_form(browser, f"{a}/collector/import/",
                             {"corpus": "shared-squad", "language": "en", "action": "preview"},
                             files={"file": (SQUAD_V1.name, upload)})
    assert preview.status_code == 200
    assert "Detected format: <strong>squad</strong>" in preview.text
    [stored] = (cluster["shared"] / "imports").glob("*/*")
    assert stored.read_bytes() == SQUAD_V1.read_bytes()
    upload_token = re.search(r'name="upload" value="([^"]+)"', preview.text).group(1)
    confirm = _post_form(browser, f"{b}/collector/import/", {
        "upload": upload_token, "corpus": "shared-squad", "language": "en",
        "format": "squad", "action": "import"})
    assert confirm.status_code == 302, confirm.text[-2000:]
    job_url = confirm.headers["Location"]
    assert _until("the import job", lambda: _job_status(browser, a, job_url)) == "Done"
    assert not stored.exists()  # the worker removed the upload from the storage

    # B searches what a worker indexed in PostgreSQL.
    api = _http()
    search = api.get(f"{b}/api/v1/corpora/shared-squad/search/",
                     params={"q": "Warsaw Vistula river", "k": 3},
                     headers={"Authorization": f"Token {admin_token}"}, timeout=30)
    assert search.status_code == 200, search.text
    hits = search.json()["hits"]
    assert hits and hits[0]["document"].startswith("Warsaw#"), hits

    # A NewsQA project over the corpus: created on A, set up on B, started on A.
    form = _post_form(browser, f"{a}/manage/projects/new/", {
        "name": "Across hosts", "recipe": "newsqa",
        "corpus": re.search(r'<option value="(\d+)">shared-squad</option>',
                            browser.get(f"{a}/manage/projects/new/").text).group(1)})
    assert form.status_code == 302, form.text[-2000:]
    project_url = form.headers["Location"]
    project_id = int(re.search(r"/manage/projects/(\d+)/", project_url).group(1))
    # The SQuAD paragraphs have no highlights: the articles stage takes them all the same.
    articles = Stage.objects.get(project_id=project_id, kind="newsqa_articles").pk
    params = _post_form(browser, f"{b}{project_url}action/", {
        "action": "params", "stage": articles, f"stage{articles}-max_articles": "0"},
        page=f"{b}{project_url}")
    assert params.status_code == 302
    assert Stage.objects.get(pk=articles).params["require_highlights"] is False
    members = _post_form(browser, f"{b}{project_url}action/", {
        "action": "members", "user": [f"{u.pk}:{Role.ANNOTATOR.value}" for u in people.values()]},
        page=f"{b}{project_url}")
    assert members.status_code == 302
    started = _post_form(browser, f"{a}{project_url}action/", {"action": "start"},
                         page=f"{a}{project_url}")
    assert started.status_code == 302
    detail = _http().get(f"{b}/api/v1/projects/{project_id}/", timeout=30,
                         headers={"Authorization": f"Token {admin_token}"}).json()
    assert detail["status"] == "active", (detail, browser.get(f"{a}{project_url}").text)

    hosts = [a, b]
    turn = {"n": 0}

    def claim_and_submit(name: str, payload_for: Callable[[dict], dict]) -> dict:
        """Claim on one host, submit on the other; the hosts alternate from task to task."""
        claim_host, submit_host = hosts[turn["n"] % 2], hosts[(turn["n"] + 1) % 2]
        turn["n"] += 1
        headers = {"Authorization": f"Token {tokens[name]}"}

        def claimed():
            response = api.post(f"{claim_host}/api/v1/tasks/next/", json={"project": project_id},
                                headers=headers, timeout=30)
            assert response.status_code in (200, 204), response.text
            return response.json() if response.status_code == 200 else None

        task = _until(f"a task for {name}", claimed)
        submitted = api.post(f"{submit_host}/api/v1/tasks/{task['id']}/submit/",
                             json={"payload": payload_for(task["task"])}, headers=headers,
                             timeout=30)
        assert submitted.status_code == 201, (name, task["kind"], submitted.text)
        return task

    documents = 16  # paragraphs of the SQuAD v1.1 sample
    for _ in range(documents):
        task = claim_and_submit("questioner", lambda _: {"questions": QUESTIONS[:1]})
        assert task["kind"] == "newsqa_question"

    def first_words(task: dict) -> dict:
        tokens_ = task["tokens"]
        return {"spans": [[tokens_[0]["s"], tokens_[2]["e"]]]}

    for _ in range(documents):
        for name in ("ann1", "ann2"):  # the same span: they agree
            assert claim_and_submit(name, first_words)["kind"] == "newsqa_answer"
    assert turn["n"] == 3 * documents

    admin_api = {"Authorization": f"Token {admin_token}"}

    def consolidated() -> bool:
        response = api.get(f"{b}/api/v1/projects/{project_id}/records/", headers=admin_api,
                           timeout=30)
        assert response.status_code == 200, response.text
        return response.json()["count"] == documents

    _until("every question consolidated", consolidated)

    # The release: created on A, built by a worker, downloaded from B.
    created = api.post(f"{a}/api/v1/projects/{project_id}/releases/", headers=admin_api,
                       json={"version": "1.0.0", "formats": ["squad-v2"]}, timeout=30)
    assert created.status_code == 201, created.text
    release_id = created.json()["id"]

    def built() -> dict | None:
        listing = api.get(f"{b}/api/v1/projects/{project_id}/releases/", headers=admin_api,
                          timeout=30).json()["results"]
        release = next(r for r in listing if r["id"] == release_id)
        assert release["status"] != "failed", release["error"]
        return release if release["status"] == "ready" else None

    release = _until("the release build", built)
    entries = [f for f in release["files"] if f["format"] == "squad-v2"]  # one per split
    assert entries
    questions = 0
    for entry in entries:
        download = browser.get(f"{b}{entry['url']}", timeout=60, allow_redirects=False)
        assert download.status_code == 200
        assert (download.headers["Content-Disposition"]
                == f'attachment; filename="{entry["path"]}"')
        assert hashlib.sha256(download.content).hexdigest() == entry["sha256"]
        assert len(download.content) == entry["bytes"]
        data = json.loads(download.content)
        questions += sum(len(p["qas"]) for art in data["data"] for p in art["paragraphs"])
        in_storage = list((cluster["shared"] / "releases").rglob(entry["path"]))
        assert [p.read_bytes() for p in in_storage] == [download.content]
    assert questions == documents

    # Nothing landed on any host's own disk.
    for name, folder in cluster["hosts"].items():
        assert not [p for p in (folder / "media").rglob("*") if p.is_file()], name
        assert not (folder / "index").exists(), name  # the index is in PostgreSQL
    assert not list((cluster["shared"] / "imports").rglob("*.json"))
    for web in cluster["webs"]:
        log = web.log.read_text()
        assert "Traceback" not in log, log[-3000:]
