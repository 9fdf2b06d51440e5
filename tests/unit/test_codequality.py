"""codequality.py: the run's grouped diagnostics as a GitLab Code Quality report."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from pytest_kbuild.diagnostics import parse
from pytest_kbuild.report import codequality, grouping

SCHEMA = json.loads((Path(__file__).parent / "data/schemas/gitlab-codequality.json").read_text())
WARN = "/src/linux/kernel/fork.c:123:9: warning: unused variable 'x' [-Wunused-variable]\n"
ERR = "/src/linux/kernel/exit.c:7:3: error: 'y' undeclared\n"
KCONFIG = (
    "WARNING: unmet direct dependencies detected for FOO\n"
    "  Depends on [n]: BAR [=n]\n"
    "  Selected by [y]:\n"
    "  - BAZ [=y]\n"
)


def groups_of(builds: dict[str, str], tree: str = "/src/linux") -> list[dict]:
    return grouping.group(
        {
            b: {"targets": {"kernel": {"diagnostics": [d.to_json() for d in parse(t, tree=tree)]}}}
            for b, t in builds.items()
        }
    )


def test_one_schema_valid_entry_per_distinct_diagnostic():
    groups = groups_of({"arm64-gcc": WARN + WARN + ERR, "x86_64-gcc": WARN + KCONFIG})
    report = codequality.report(groups)
    jsonschema.validate(report, SCHEMA)
    assert len(report) == len(groups) == 3
    assert len({e["fingerprint"] for e in report}) == 3
    err, warn = report[0], next(e for e in report if e["location"]["path"] == "kernel/fork.c")
    assert err["severity"] == "critical" and err["location"] == {
        "path": "kernel/exit.c",
        "lines": {"begin": 7},
    }
    assert warn["severity"] == "minor" and warn["check_name"] == "compiler/-Wunused-variable"
    assert warn["description"] == (
        "warning: unused variable 'x' [-Wunused-variable] (2 builds: arm64-gcc, x86_64-gcc)"
    )
    # Kconfig's warning has no file: GitLab needs a path, so the top Makefile
    kconfig = next(e for e in report if e["check_name"] == "kconfig")
    assert kconfig["location"] == {"path": "Makefile", "lines": {"begin": 1}}


def test_fingerprint_survives_line_shifts_and_tree_location():
    before = codequality.report(groups_of({"b": WARN}))
    moved = WARN.replace("/src/linux/", "/home/ci/linux/").replace(":123:", ":140:")
    after = codequality.report(groups_of({"b": moved}, tree="/home/ci/linux"))
    assert before[0]["fingerprint"] == after[0]["fingerprint"]
    assert after[0]["location"]["lines"]["begin"] == 140
    other = codequality.report(groups_of({"b": WARN.replace("'x'", "'y'").replace("fork", "exit")}))
    assert other[0]["fingerprint"] != before[0]["fingerprint"]


def test_many_builds_are_bounded():
    [g] = groups_of({f"b{i}": WARN for i in range(8)})
    entry = codequality.issue(g)
    assert entry["description"].endswith("(8 builds: b0, b1, b2, b3, b4 and 3 more)")


def test_write_and_the_cli(tmp_path, capsys):
    from pytest_kbuild.cli.commands import EXIT_INPUT, EXIT_OK, main

    build = tmp_path / "res" / "m" / "b1"
    build.mkdir(parents=True)
    diags = [d.to_json() for d in parse(WARN, tree="/src/linux")]
    (build / "metadata.json").write_text(
        json.dumps({"build_id": "b1", "targets": {"kernel": {"diagnostics": diags}}})
    )
    out = tmp_path / "gl-code-quality-report.json"
    assert main(["diagnostics", str(tmp_path / "res"), "--codequality", str(out)]) == EXIT_OK
    report = json.loads(out.read_text())
    jsonschema.validate(report, SCHEMA)
    assert [e["location"]["path"] for e in report] == ["kernel/fork.c"]
    capsys.readouterr()
    (tmp_path / "a-file").write_text("")
    bad = tmp_path / "a-file" / "cq.json"  # its folder cannot be made
    assert main(["diagnostics", str(tmp_path / "res"), "--codequality", str(bad)]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert err.startswith(f"E: --codequality {bad}: ") and "Traceback" not in err


def test_a_warning_new_against_the_baseline_is_major():
    diags = [d.to_json() for d in parse(WARN, tree="/src/linux")]
    builds = {"b": {"targets": {"kernel": {"diagnostics": diags}}}}
    builds["b"]["targets"]["kernel"]["diagnostics"][0]["new"] = True
    (entry,) = codequality.report(grouping.group(builds))
    jsonschema.validate([entry], SCHEMA)
    assert entry["severity"] == "major" and entry["description"].startswith("new warning: ")
