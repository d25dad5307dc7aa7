"""Input files as the staging SQL needs them: CSV profiling (max_line_size from the file, UTF-8 checks
and repaired copies) and the UTF-8 decoding of binary text (``csv_files``)."""
