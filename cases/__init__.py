"""The built-in corpus: one module per family (see README.md here). Shipped in the wheel
as `compat.builtin_cases`; the runner loads the modules by path, not by import."""
