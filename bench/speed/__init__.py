"""The speed benchmark harness: voirdire, bare drivers and Inspect AI against one fake endpoint (docs/performance.md).

``python -m bench.speed --help``; the modules: ``fake_server`` (the endpoint), ``examination`` (the examination the
bare drivers run, and the critical-path bound), ``drivers/`` (raw SDK, autogen client, Inspect AI), ``commands``
(each driver's command line), ``harness`` (measured processes, the endpoint's records), ``cli`` (tables, JSON).
"""
