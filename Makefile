# Two commands do everything on a fresh machine that has python3:
#   make run   - create .venv with the DuckDB pipeline's pinned packages (requirements/base.txt) if
#                missing, run the pipeline on the fixture, write the outputs to output/ and the database to
#                web_text_dedup.duckdb, and print a summary
#   make test  - every test: lint (ruff; sqlfluff on the models' full-build branches, and on their incremental
#                branches against the fixture database), dbt build with all data and unit tests, pytest
#                (pytest includes the Spark target, needs Java 17: tests/python/e2e/spark/test_spark.py runs the
#                fixture and compares DuckDB with Spark on a generated 10,000-document corpus)
#   make test-unit  - the unit tests alone (tests/python/unit: no dbt, under a minute; installs the bench
#                     packages too: the baselines are unit-tested)
#   make run-spark  - the same pipeline on Apache Spark (pyspark, local master): dbt build --target spark
#                     (installs requirements/spark.txt and the project's dbt plugin first)
#   make test-spark - only the Spark tests
#   make sql        - a SQL shell on the published database; make sql Q="select ..." runs one query
#   make bench      - the benchmark against datasketch and rensa (installs them)
#   make spark-up / spark-down - start / stop a Spark standalone cluster (master + 2 workers) and a Spark
#                Connect server on this machine (logs and pid files in target/spark-cluster/)
#   make run-spark-cluster / run-spark-connect - the pipeline on them (targets spark_cluster, spark_connect)
#   make test-spark-cluster - starts both, builds the fixture and a 10k corpus on each, compares every
#                output file with DuckDB's, stops them (part of make test)
#   make docs-pictures - rebuild the fixture and copy its pictures into assets/ (the docs overview shows them)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DBT := $(BIN)/dbt
DBT_FLAGS := --profiles-dir . --project-dir .
TEST_DIR := target/test-run
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check --no-compile
# Python's bytecode for the installed packages, written once after each install (only what is missing).
# Without it every dbt command compiles dbt from source when PYTHONDONTWRITEBYTECODE is set (as in many
# containers and on this project's machines): `dbt --version` 4.9 s against 2.3 s compiled.  Only a speed-up:
# a package file that does not compile (Python reports it on import as usual) does not stop the install.
COMPILE := $(BIN)/python -m compileall -q -j 0 $(VENV)/lib > /dev/null || true
export DBT_SEND_ANONYMOUS_USAGE_STATS := false

.PHONY: run run-spark sql test test-unit test-spark lint lint-incremental dbt-test pytest docs docs-serve docs-pictures bench \
	clean spark-install test-install bench-install
.PHONY: run-spark-cluster run-spark-connect spark-up spark-down spark-status test-spark-cluster

# Each set of packages is pinned, transitive dependencies included, in requirements/ (base: the DuckDB
# pipeline; spark, test, bench on top of it) and installed by the first command that needs it.
# `make run` installs base only; stripping the symbols of the three largest compiled libraries (llvmlite,
# DuckDB, Arrow; when binutils' strip is there) keeps that venv under 700 MB, its bytecode included.
$(VENV)/.installed-base: requirements/base.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) -r requirements/base.txt
	-command -v strip > /dev/null && find $(VENV)/lib -type f \( -name libllvmlite.so -o -name '_duckdb*.so' \
		-o \( -path '*/site-packages/pyarrow/*' \( -name '*.so' -o -name '*.so.[0-9]*' \) \) \) \
		-exec strip --strip-unneeded {} +
	$(COMPILE)
	$(BIN)/python -m webdedup.core.warm  # compile the numba kernels once (cached in webdedup/core/__pycache__)
	touch $@

# The Spark target: dbt-spark, pyspark, and the project's dbt plugin module on the venv's path (a .pth
# file, webdedup/engines/spark_plugin.py), so that plain `dbt build --target spark` works.
$(VENV)/.installed-spark: requirements/spark.txt $(VENV)/.installed-base
	$(PIP) -r requirements/spark.txt
	$(COMPILE)
	$(BIN)/python -m webdedup.engines.spark_plugin
	touch $@

$(VENV)/.installed-test: requirements/test.txt $(VENV)/.installed-base
	$(PIP) -r requirements/test.txt
	$(COMPILE)
	touch $@

$(VENV)/.installed-bench: requirements/bench.txt $(VENV)/.installed-base
	$(PIP) -r requirements/bench.txt
	$(COMPILE)
	touch $@

spark-install: $(VENV)/.installed-spark
test-install: $(VENV)/.installed-test
bench-install: $(VENV)/.installed-bench

# The build ends with a summary of the run (macros/outputs/run_summary.sql): counts, where the files and the
# published database are, and the next command; printed after dbt's own closing lines.
SUMMARY := target/run_summary.txt
run: $(VENV)/.installed-base
	@mkdir -p target && rm -f $(SUMMARY)
	@DEDUP_SUMMARY_FILE=$(SUMMARY) $(DBT) build $(DBT_FLAGS); status=$$?; cat $(SUMMARY) 2> /dev/null; exit $$status

# A SQL shell on the published database (webdedup/outputs/sql_shell.py): `make sql` is interactive,
# `make sql Q="select * from candidate_summary"` prints the whole result; DB=path opens another file.
sql: $(VENV)/.installed-base
	@$(BIN)/python -m webdedup.outputs.sql_shell $(if $(DB),--db "$(DB)") $(if $(Q),"$$WEBDEDUP_SQL_QUERY")
sql: export WEBDEDUP_SQL_QUERY = $(Q)

# Every data test runs on Spark; unit tests (DuckDB SQL fixtures) are not in a plain build (selectors.yml).
SPARK_FLAGS := --target spark

run-spark: $(VENV)/.installed-spark
	@mkdir -p target && rm -f $(SUMMARY)
	@DEDUP_SUMMARY_FILE=$(SUMMARY) $(DBT) build $(DBT_FLAGS) $(SPARK_FLAGS); status=$$?; cat $(SUMMARY) 2> /dev/null; \
		exit $$status

test: lint dbt-test lint-incremental pytest test-spark-cluster

test-unit: $(VENV)/.installed-test $(VENV)/.installed-bench
	$(BIN)/python -m pytest tests/python/unit

test-spark: $(VENV)/.installed-spark $(VENV)/.installed-test
	DEDUP_SPARK_CORPUS=1 $(BIN)/python -m pytest tests/python/e2e/spark tests/python/e2e/quality/test_quality_spark.py

# A Spark standalone cluster and a Spark Connect server from the pinned pyspark (small JVMs; see
# webdedup/engines/spark_cluster.py for the DEDUP_SPARK_* settings).  Always `make spark-down` afterwards.
SPARK_CLUSTER := $(BIN)/python -m webdedup.engines.spark_cluster

spark-up: $(VENV)/.installed-spark
	$(SPARK_CLUSTER) up

spark-down: $(VENV)/.installed-base
	$(SPARK_CLUSTER) down

spark-status: $(VENV)/.installed-base
	$(SPARK_CLUSTER) status

run-spark-cluster: $(VENV)/.installed-spark
	$(DBT) build $(DBT_FLAGS) --target spark_cluster

run-spark-connect: $(VENV)/.installed-spark
	$(DBT) build $(DBT_FLAGS) --target spark_connect

# The cluster tests start and stop their own cluster and Connect server (target/ of pytest's tmp folder).
test-spark-cluster: $(VENV)/.installed-spark $(VENV)/.installed-test
	DEDUP_SPARK_CLUSTER=1 $(BIN)/python -m pytest tests/python/e2e/spark/test_spark_cluster.py

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	mkdir -p $(TEST_DIR)
	DEDUP_DB_PATH=$(TEST_DIR)/lint.duckdb $(DBT) seed $(DBT_FLAGS) --quiet
	DEDUP_DB_PATH=$(TEST_DIR)/lint.duckdb $(BIN)/sqlfluff lint models analyses

# The models' incremental branches ({% if is_incremental() %}: rendered only once their tables exist),
# linted against the fixture database dbt-test has just built (`lint` sees the full-build branches).
lint-incremental: $(VENV)/.installed-test
	test -f $(TEST_DIR)/dbt_test.duckdb || $(MAKE) dbt-test
	DEDUP_DB_PATH=$(TEST_DIR)/dbt_test.duckdb $(BIN)/sqlfluff lint models

dbt-test: $(VENV)/.installed-base
	mkdir -p $(TEST_DIR)
	DEDUP_DB_PATH=$(TEST_DIR)/dbt_test.duckdb DEDUP_PUBLISH_DIR=$(TEST_DIR)/published $(DBT) build $(DBT_FLAGS) \
		--selector with_unit_tests --vars '{output_dir: $(TEST_DIR)/output}'

pytest: $(VENV)/.installed-spark $(VENV)/.installed-test $(VENV)/.installed-bench
	DEDUP_SPARK_CORPUS=1 $(BIN)/python -m pytest

# The benchmark with its peer libraries: make bench ARGS="--docs 100000 --work bench_work/100000"
bench: $(VENV)/.installed-bench
	$(BIN)/python benchmarks/run_benchmark.py $(or $(ARGS),--docs 10000 --work bench_work/10000)

docs: $(VENV)/.installed-base
	$(DBT) docs generate $(DBT_FLAGS)
	@echo "Docs: $(CURDIR)/target/index.html (make docs-serve serves them at http://localhost:8080)"

# The fixture's pictures for the docs overview page: built in target/, copied into the tracked assets/.
docs-pictures: $(VENV)/.installed-base
	mkdir -p $(TEST_DIR)
	DEDUP_DB_PATH=$(TEST_DIR)/pictures.duckdb DEDUP_PUBLISH_DIR= $(DBT) build $(DBT_FLAGS) \
		--select +lsh_pictures --vars '{output_dir: $(TEST_DIR)/pictures}'
	cp $(TEST_DIR)/pictures/*.svg assets/

docs-serve: docs
	$(DBT) docs serve $(DBT_FLAGS) --port 8080

clean:
	-$(SPARK_CLUSTER) down
	rm -rf target logs output web_text_dedup.duckdb spark-warehouse metastore_db derby.log
