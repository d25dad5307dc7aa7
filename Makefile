# Two commands do everything on a fresh machine that has python3:
#   make run   - create .venv from the pinned requirements (if missing), run the pipeline on the fixture,
#                write the outputs to output/ and the database to web_text_dedup.duckdb
#   make test  - every test: lint (ruff, sqlfluff), dbt build with all data and unit tests, pytest
#                (pytest includes the Spark target, needs Java 17: tests/python/test_spark.py runs the
#                fixture and compares DuckDB with Spark on a generated 10,000-document corpus)
#   make test-unit  - the unit tests alone (tests/python/unit: no dbt, under a minute)
#   make run-spark  - the same pipeline on Apache Spark (pyspark, local master): --target spark
#   make test-spark - only the Spark tests
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
export DBT_SEND_ANONYMOUS_USAGE_STATS := false

.PHONY: run run-spark run-spark-cluster run-spark-connect spark-up spark-down spark-status test-spark-cluster
.PHONY: test test-unit test-spark lint dbt-test pytest docs docs-serve docs-pictures clean

$(VENV)/.installed: requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m webdedup.core.warm  # compile the numba kernels once (cached in webdedup/core/__pycache__)
	touch $@

run: $(VENV)/.installed
	$(DBT) build $(DBT_FLAGS)
	@echo "Outputs in output/:" && ls -1 output

# dbt on Spark goes through webdedup.engines.dbt_spark (dbt plus the in-process Python-model submission helper).
# Unit tests are DuckDB-only (their fixtures are DuckDB SQL); every data test runs on Spark.
DBT_SPARK := $(BIN)/python -m webdedup.engines.dbt_spark
SPARK_FLAGS := --target spark --exclude-resource-type unit_test

run-spark: $(VENV)/.installed
	$(DBT_SPARK) build $(DBT_FLAGS) $(SPARK_FLAGS)
	@echo "Outputs in output/:" && ls -1 output

test: lint dbt-test pytest test-spark-cluster

test-unit: $(VENV)/.installed
	$(BIN)/python -m pytest tests/python/unit

test-spark: $(VENV)/.installed
	DEDUP_SPARK_CORPUS=1 $(BIN)/python -m pytest tests/python/e2e/spark

# A Spark standalone cluster and a Spark Connect server from the pinned pyspark (small JVMs; see
# webdedup/engines/spark_cluster.py for the DEDUP_SPARK_* settings).  Always `make spark-down` afterwards.
SPARK_CLUSTER := $(BIN)/python -m webdedup.engines.spark_cluster

spark-up: $(VENV)/.installed
	$(SPARK_CLUSTER) up

spark-down:
	$(SPARK_CLUSTER) down

spark-status:
	$(SPARK_CLUSTER) status

run-spark-cluster: $(VENV)/.installed
	$(DBT_SPARK) build $(DBT_FLAGS) --target spark_cluster --exclude-resource-type unit_test

run-spark-connect: $(VENV)/.installed
	$(DBT_SPARK) build $(DBT_FLAGS) --target spark_connect --exclude-resource-type unit_test

# The cluster tests start and stop their own cluster and Connect server (target/ of pytest's tmp folder).
test-spark-cluster: $(VENV)/.installed
	DEDUP_SPARK_CLUSTER=1 $(BIN)/python -m pytest tests/python/e2e/spark/test_spark_cluster.py

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	mkdir -p $(TEST_DIR)
	DEDUP_DB_PATH=$(TEST_DIR)/lint.duckdb $(DBT) seed $(DBT_FLAGS) --quiet
	DEDUP_DB_PATH=$(TEST_DIR)/lint.duckdb $(BIN)/sqlfluff lint models analyses

dbt-test: $(VENV)/.installed
	mkdir -p $(TEST_DIR)
	DEDUP_DB_PATH=$(TEST_DIR)/dbt_test.duckdb DEDUP_PUBLISH_DIR=$(TEST_DIR)/published $(DBT) build $(DBT_FLAGS) \
		--vars '{output_dir: $(TEST_DIR)/output}'

pytest: $(VENV)/.installed
	DEDUP_SPARK_CORPUS=1 $(BIN)/python -m pytest

docs: $(VENV)/.installed
	$(DBT) docs generate $(DBT_FLAGS)

# The fixture's pictures for the docs overview page: built in target/, copied into the tracked assets/.
docs-pictures: $(VENV)/.installed
	mkdir -p $(TEST_DIR)
	DEDUP_DB_PATH=$(TEST_DIR)/pictures.duckdb DEDUP_PUBLISH_DIR= $(DBT) build $(DBT_FLAGS) \
		--select +lsh_pictures --vars '{output_dir: $(TEST_DIR)/pictures}'
	cp $(TEST_DIR)/pictures/*.svg assets/

docs-serve: docs
	$(DBT) docs serve $(DBT_FLAGS) --port 8080

clean:
	-$(SPARK_CLUSTER) down
	rm -rf target logs output web_text_dedup.duckdb spark-warehouse metastore_db derby.log
