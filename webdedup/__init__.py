"""Plain-Python logic behind the dbt models, importable by pytest, the dbt Python models and the benchmark."""

from webdedup.shipping import unpack_if_zipped

# Imported from the archive a Spark driver ships to its executors: load the modules (and numba's shipped
# machine code) from an unpacked copy instead (webdedup/shipping.py).  Elsewhere this does nothing.
unpack_if_zipped(__path__, __file__)
