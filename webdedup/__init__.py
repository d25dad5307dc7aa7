"""Plain-Python logic behind the dbt models, importable by pytest, the dbt Python models and the benchmark."""
