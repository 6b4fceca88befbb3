# CrowdQA: `make demo` and `make test` do all set-up on a fresh machine.
# The interpreter of .venv: the distribution's /usr/bin/python3.11 when it can make a virtual
# environment, else python3.11 on the PATH. Debian builds it with profile-guided and link-time
# optimisation and links the interpreter into the executable; a default pyenv build has
# neither, and serves the same requests with about 10% more CPU (docs/deployment.md).
SYSTEM_PYTHON := /usr/bin/python3.11
ifeq ($(origin PYTHON),undefined)
PYTHON := $(shell $(SYSTEM_PYTHON) -c 'import ensurepip, venv' >/dev/null 2>&1 && echo $(SYSTEM_PYTHON) || echo python3.11)
endif
VENV   := .venv
PY     := $(VENV)/bin/python
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: demo serve test e2e worker beat lint migrate install clean messages compilemessages font

$(VENV)/.installed: requirements.txt
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "$(PYTHON) not found: set PYTHON=/path/to/python3.11"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

install: $(VENV)/.installed

migrate: install
	$(PY) manage.py migrate --noinput

demo: migrate
	$(PY) manage.py load_demo
	@echo "Serving CrowdQA on http://$(HOST):$(PORT)/ (log in at http://$(HOST):$(PORT)/accounts/login/; Ctrl-C stops it)"
	$(PY) manage.py runserver $(HOST):$(PORT)

serve: migrate
	$(PY) manage.py runserver $(HOST):$(PORT)

# The interface's translations (locale/zh_Hans): collect the msgids of templates, Python and
# static/js, translate the new ones, compile (the .mo files are committed), and rebuild the
# CJK font subset when new characters appear (needs fonts-noto-cjk; scripts/font_subset.py).
MESSAGES_ARGS := -l zh_Hans --ignore=.venv --ignore=var --ignore="static/vendor/*" --no-obsolete --no-location
messages: install
	$(PY) manage.py makemessages $(MESSAGES_ARGS)
	$(PY) manage.py makemessages -d djangojs $(MESSAGES_ARGS)

compilemessages: install
	$(PY) manage.py compilemessages -l zh_Hans

font: install
	$(PY) scripts/font_subset.py

# The pytest suite on the embedded default (SQLite, eager Celery, Whoosh on disk).
# Browser tests run when chromium is installed; worker tests when a broker is configured.
test: install
	$(PY) -m pytest $(PYTEST_ARGS)

e2e: install
	$(PY) -m pytest tests/e2e $(PYTEST_ARGS)

# A worker for both queues; production runs the `index` queue in its own worker with
# --concurrency 1 so each search index has a single writer.
worker: install
	$(VENV)/bin/celery -A config worker -Q default,index --concurrency 1 -B -l info

# The periodic jobs (lease expiry) on their own, for deployments with several workers.
beat: install
	$(VENV)/bin/celery -A config beat -l info

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check . || true

clean:
	rm -rf var .pytest_cache
