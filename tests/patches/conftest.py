# The mini project and the fixture corpus are inputs to the codemods, not tests to collect.
collect_ignore_glob = ["project/*", "fixtures/*"]
