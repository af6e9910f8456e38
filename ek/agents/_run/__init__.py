"""A run's records: the store a suite run writes and resumes, what is read back from it, a
baseline or a host's log, and what a report and a gate keep of them.

``store`` (the JSON-lines trial store), ``ledger`` (what a suite run keeps of its trials),
``stored`` (a stored run's trials read back by offset), ``load`` (``load_run``: a store, a
baseline, an Inspect log or a trace file read once), ``tally`` (per-task counts, sums and costs
while reading), ``sums`` (what a run knows of a metric it names), ``summary`` (``RunSummary``),
``baseline`` (a run frozen as a file) and ``resample`` (a metric's intervals over tasks). The
public names are at :mod:`ek.agents.harness`.
"""

__all__: list[str] = []  # names are imported from their modules; the faces are in ek.agents.harness
