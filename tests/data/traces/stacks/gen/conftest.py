"""The generators here run in their own environments (``make traces-fixtures``), each importing
a framework the test environment may not have: pytest does not import them."""

collect_ignore_glob = ["*.py"]
