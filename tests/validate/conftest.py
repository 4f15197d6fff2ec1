# project/ is the git project the end-to-end tests copy and validate; its tests run only there.
collect_ignore = ["project"]
