"""Generate a series: findings -> libcst rewrites (codemods/) -> plan -> git format-patch series."""
