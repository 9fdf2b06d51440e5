"""Run-wide reports made from a results dir: the grid, diagnostics grouped
across builds, the HTML report, GitLab Code Quality, KUnit cases, merged
shards and what an interrupted run tells."""
