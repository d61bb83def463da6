"""The HTML report's orchestration: runs the measures a report shows (``collect``)."""
