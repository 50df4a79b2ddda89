# Two commands matter: `make run` (serve on 127.0.0.1:9083, embedded store) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?=
STAMP := $(VENV)/.installed

.PHONY: install run test test-fast lint clean

# setup.py compiles metastore_server/server/wire_walk.py, storage/row_scan.py and
# metastore_server/catalog/basics/wire_partitions.py (Cython): a change to any reinstalls.
$(STAMP): pyproject.toml setup.py metastore_server/server/wire_walk.py metastore_server/server/wire_walk.pxd \
		storage/row_scan.py storage/row_scan.pxd \
		metastore_server/catalog/basics/wire_partitions.py metastore_server/catalog/basics/wire_partitions.pxd
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,ldap]'
	$(BIN)/pip install -q 'gssapi>=1.8' || echo "python-gssapi (the kerberos extra) did not \
install: it builds against MIT Kerberos (Debian's libkrb5-dev); the Kerberos tests skip"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/metastore-server serve

# The whole suite runs in a private network namespace (loopback only) when this user may create
# one: the reference Hive Metastore used by the compatibility tests listens on every interface.
# The integration suite runs a second time on the HBase backend, against the HBase test double.
test: $(STAMP)
	$(BIN)/ruff check .
	command -v npm >/dev/null 2>&1 && cd tests/clients/node && npm install --silent || true
	sh tests/run-isolated.sh $(BIN)/python -m pytest $(PYTEST_ARGS)
	METASTORE_TEST_STORAGE=hbase-double $(BIN)/python -m pytest tests/integration $(PYTEST_ARGS)

test-fast: $(STAMP)
	$(BIN)/python -m pytest -m 'not spark and not compat' $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) var build *.egg-info .pytest_cache .ruff_cache .hypothesis
	rm -f metastore_server/server/wire_walk.c metastore_server/server/wire_walk.*.so storage/row_scan.c storage/row_scan.*.so \
		metastore_server/catalog/basics/wire_partitions.c metastore_server/catalog/basics/wire_partitions.*.so

# The partition-filter benchmark (docs/benchmarks.md) against our server (prints figures; not a test).
# More: make bench BENCH_ARGS='--sizes 10000,100000 --reference thrift://127.0.0.1:9183'; the
# reference HMS on PostgreSQL: see the docstring of tests/bench/partition_filters.py.
BENCH_ARGS ?= --sizes 10000 --repeat 10
.PHONY: bench
bench: $(STAMP)
	$(BIN)/python tests/bench/partition_filters.py $(BENCH_ARGS)
