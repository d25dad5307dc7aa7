"""Plain-Python logic behind the dbt models (importable by pytest, by the dbt Python models and by the benchmark)."""
