"""`nox -s triage`: a failing model to an upstream report (command.py runs the phases)."""
