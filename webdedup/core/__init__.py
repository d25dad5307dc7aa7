"""The algorithm, engine-free: the spec's reference functions (``reference``), exact vectorized
normalization (``charmap``, ``normalize``), compiled kernels (``kernels``), batch fingerprints and shingle
sets (``fingerprint``) and the threaded streaming driver the models use (``stream``)."""
