"""Follow-up tools on a finished run: `repro` rebuilds one cell under exact pins and
writes self-contained scripts (template: `repro_script.py`); `bisect` finds the release
where an outcome changes. Their commands are compat/cli/commands/."""
