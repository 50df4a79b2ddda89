# Two commands matter: `make run` (serve on 127.0.0.1:9083, embedded store) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?=
# Python keeps its compiled modules (__pycache__) whatever the environment says: the suite starts
# well over a thousand Python processes (servers, their workers, clients) and `serve` one per worker;
# with PYTHONDONTWRITEBYTECODE set (as on some machines and images) each would compile every
# module it imports from source again, about half of a process's start.
unexport PYTHONDONTWRITEBYTECODE
#: uv installs from the committed uv.lock: no resolver search on a fresh machine, and progress.
UV_VERSION ?= 0.13.9
UV := $(BIN)/uv
export UV_PROJECT_ENVIRONMENT := $(abspath $(VENV))
#: What serving needs (the server, the REST catalog, LDAP); the tests add their tools.
SERVE_EXTRAS := --extra server --extra rest --extra ldap
TEST_EXTRAS := $(SERVE_EXTRAS) --extra test
SERVE_STAMP := $(VENV)/.installed-serve
TEST_STAMP := $(VENV)/.installed-test
# setup.py compiles metastore_server/wire/walk.py, storage/row_scan.py and
# metastore_server/wire/partitions.py (Cython): a change to any reinstalls.
SOURCES := pyproject.toml uv.lock setup.py metastore_server/wire/walk.py \
	metastore_server/wire/walk.pxd storage/row_scan.py storage/row_scan.pxd \
	metastore_server/wire/partitions.py \
	metastore_server/wire/partitions.pxd

.PHONY: install install-serve run test test-fast lint lock clean

$(UV):
	@echo "==> Creating $(VENV) with $$($(PYTHON) --version) and uv $(UV_VERSION)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check 'uv==$(UV_VERSION)'

# --locked: the versions are uv.lock's, and a pyproject.toml that no longer matches it is an
# error (`make lock` refreshes it); --inexact keeps what another target installed.
$(SERVE_STAMP): $(UV) $(SOURCES)
	@echo "==> Installing the server from uv.lock (about a minute on a fresh machine)"
	$(UV) sync --locked --inexact $(SERVE_EXTRAS)
	@touch $@

$(TEST_STAMP): $(UV) $(SOURCES)
	@echo "==> Installing the server and the test tools from uv.lock (PySpark, moto, ...:" \
		"about 4 minutes on a fresh machine)"
	$(UV) sync --locked --inexact $(TEST_EXTRAS)
	@echo "==> Adding python-gssapi (the kerberos extra) if it builds here"
	$(UV) sync --locked --inexact $(TEST_EXTRAS) --extra kerberos || echo "python-gssapi \
(the kerberos extra) did not install: it builds against MIT Kerberos (Debian's libkrb5-dev); \
the Kerberos tests skip"
	@touch $(SERVE_STAMP) $@

install-serve: $(SERVE_STAMP)

install: $(TEST_STAMP)

run: $(SERVE_STAMP)
	@echo "==> Serving on 127.0.0.1:9083 (embedded store in ./var); Ctrl-C stops"
	$(BIN)/metastore-server serve

lock: $(UV)
	$(UV) lock

# The whole suite runs in a private network namespace (loopback only) when this user may create
# one: the reference Hive Metastore used by the compatibility tests listens on every interface.
# The integration suite runs a second time on the HBase backend, against the HBase test double,
# beside the first pass (in a namespace of its own): tests/run-both-passes.sh.
test: $(TEST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/python tests/typecheck.py
	command -v npm >/dev/null 2>&1 && cd tests/clients/node && npm install --silent || true
	sh tests/run-both-passes.sh $(BIN)/python $(PYTEST_ARGS)

test-fast: $(TEST_STAMP)
	$(BIN)/python -m pytest -m 'not spark and not compat' $(PYTEST_ARGS)

lint: $(TEST_STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) var build *.egg-info .pytest_cache .ruff_cache .hypothesis
	rm -f metastore_server/wire/walk.c metastore_server/wire/walk.*.so storage/row_scan.c storage/row_scan.*.so \
		metastore_server/wire/partitions.c metastore_server/wire/partitions.*.so

# The partition-filter benchmark (docs/benchmarks.md) against our server (prints figures; not a test).
# More: make bench BENCH_ARGS='--sizes 10000,100000 --reference thrift://127.0.0.1:9183'; the
# reference HMS on PostgreSQL: see the docstring of tests/bench/partition_filters.py.
BENCH_ARGS ?= --sizes 10000 --repeat 10
.PHONY: bench
bench: $(TEST_STAMP)
	$(BIN)/python tests/bench/partition_filters.py $(BENCH_ARGS)
