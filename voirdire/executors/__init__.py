"""Where a run's sessions run: in the run's own event loop (``run_protocol``), in worker processes on this machine
(``local``: ``--workers N``), or on a Ray cluster (``ray``: ``--executor ray``). All of them write one ordinary
transcript, and ``base`` holds what they share. Ray is imported only by ``ray``, and only when it is chosen."""

EXECUTORS = ("local", "ray")
