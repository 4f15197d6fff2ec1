"""Suite-wide rule: a test cannot pass by skipping in CI.

A test that cannot run because this machine could not build or boot something (the trn native
core, a device) calls ``hn_skip.skip_environment(reason)``. On a developer's machine that is a
skip with its reason; under ``CI=true`` it is a failure, because CI is where the environment is
supposed to be complete. A developer without a compiler who still runs with ``CI=true`` opts out
explicitly with ``HN_ALLOW_SKIP=1`` (README, "Tests"). Other skips (an upstream OpInfo skip, a
permission check that cannot apply to root) are ordinary skips.
"""

from hn_skip import pytest_configure, pytest_runtest_makereport  # noqa: F401  (hooks, see hn_skip)
