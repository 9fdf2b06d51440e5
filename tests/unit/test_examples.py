"""The CI examples under examples/ci/: valid, and naming options that exist."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pytest_kbuild.cli.commands import main
from pytest_kbuild.options import OPTIONS
from tests.support import ROOT

CI = ROOT / "examples" / "ci"
OPTION = re.compile(r"--kbuild-[a-z-]+")
KNOWN = {o.cli for o in OPTIONS}
CHECK_JSONSCHEMA = Path(sys.executable).parent / "check-jsonschema"


def scripts(job):
    return " ".join(" ".join(job.get(k, [])) for k in ("before_script", "script"))


def check_gitlab_schema(path):
    """check-jsonschema's copy of GitLab's CI JSON schema (the one GitLab's
    pipeline editor validates with): its output, or "" when *path* is valid."""
    done = subprocess.run(
        [CHECK_JSONSCHEMA, "--builtin-schema", "vendor.gitlab-ci", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return "" if done.returncode == 0 else done.stdout + done.stderr


def test_gitlab_example_is_valid_against_gitlab_ci_schema():
    assert check_gitlab_schema(CI / "gitlab-ci.yml") == ""


def test_gitlab_schema_check_rejects_a_broken_job(tmp_path):
    data = yaml.safe_load((CI / "gitlab-ci.yml").read_text())
    data["kbuild-merge"]["artifacts"]["expose_as"] = ["not", "a", "string"]
    bad = tmp_path / "gitlab-ci.yml"
    bad.write_text(yaml.safe_dump(data))
    assert "expose_as" in check_gitlab_schema(bad)


def test_gitlab_example_parses_and_uses_existing_options():
    data = yaml.safe_load((CI / "gitlab-ci.yml").read_text())
    jobs = {k: v for k, v in data.items() if isinstance(v, dict) and "script" in v}
    build = jobs["kbuild"]
    assert build["parallel"] == 4
    assert build["stage"] in data["stages"]
    # pytest-kbuild is not on PyPI: a wheel built from a checkout, then installed
    wheel = jobs["pytest-kbuild-wheel"]
    assert data["stages"].index(wheel["stage"]) < data["stages"].index(build["stage"])
    assert "pip wheel --no-deps --wheel-dir wheels/" in scripts(wheel)
    assert wheel["artifacts"] == {"paths": ["wheels/"], "expire_in": "1 day"}
    install = " ".join(data[".pytest-kbuild"]["before_script"])
    assert "install -q wheels/pytest_kbuild-*.whl pytest-xdist" in install
    assert data["default"]["image"] == "debian:bookworm"
    for job in ("kbuild", "kbuild-merge"):
        assert jobs[job]["extends"] == ".pytest-kbuild"
        assert "pytest-kbuild-wheel" in jobs[job]["needs"]
    assert "apt-get install" in scripts(build)
    assert "$(pytest-kbuild packages matrices/stable.yaml)" in scripts(build)
    line = scripts(build)
    assert "pytest --kbuild-matrix=matrices/stable.yaml" in line
    assert "--junitxml=kbuild-results/$CI_NODE_INDEX/junit.xml" in line
    assert set(OPTION.findall(line)) <= KNOWN
    assert build["artifacts"]["when"] == "always"
    assert build["artifacts"]["reports"]["junit"] == "kbuild-results/*/junit.xml"
    assert build["artifacts"]["expire_in"]
    # the compiler cache: the matrix's ccache, in a directory GitLab caches
    assert "--kbuild-cache-dir=.ccache" in line
    assert build["cache"]["paths"] == [".ccache/"]
    assert "$CI_NODE_INDEX" in build["cache"]["key"]
    stable = yaml.safe_load((ROOT / "matrices" / "stable.yaml").read_text())
    assert stable["wrapper"] == "ccache"
    merge = jobs["kbuild-merge"]
    assert data["stages"].index(merge["stage"]) > data["stages"].index(build["stage"])
    assert merge["when"] == "always"
    assert "pytest-kbuild merge merged kbuild-results/*/" in scripts(merge)
    report = merge["artifacts"]["reports"]["codequality"]
    assert f"pytest-kbuild diagnostics merged --codequality {report}" in scripts(merge)
    assert "pytest-kbuild report merged --output merged/report.html" in scripts(merge)
    assert merge["artifacts"]["expose_as"] == "kbuild report"
    assert merge["artifacts"]["paths"][0] == "merged/report.html"
    assert merge["artifacts"]["expire_in"]
    assert set(OPTION.findall((CI / "gitlab-ci.yml").read_text())) <= KNOWN


def test_jenkins_example_uses_existing_options_and_shards():
    text = (CI / "Jenkinsfile").read_text()
    assert set(OPTION.findall(text)) <= KNOWN
    assert "--kbuild-shard=$SHARD/4" in text
    assert re.search(r"values '1', '2', '3', '4'", text)
    for step in ("junit ", "archiveArtifacts ", "pytest-kbuild merge merged kbuild-results/*/"):
        assert step in text
    # testcase properties are written with xunit1 only, and kept with keepProperties
    assert "-o junit_family=xunit1" in text and "keepProperties: true" in text
    assert "AttachmentPublisher" in text and "timeout(time:" in text
    assert "pytest-kbuild report merged --output merged/report.html" in text
    assert re.search(
        r"publishHTML\(target: \[reportDir: 'merged', reportFiles: 'report.html'", text
    )
    # installed from a checkout (not on PyPI) in every stage that runs it
    assert text.count("installPytestKbuild()") == 3
    assert "pip install -q ./pytest-kbuild pytest-xdist" in text
    assert "HTML Publisher" in text and "JUnit Attachments" in text
    assert text.count("{") == text.count("}")  # braces balance (no Groovy parser here)


def test_merge_subcommand_of_the_examples_exists(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["merge", "--help"])
    assert exc.value.code == 0
    assert "OUT DIR [DIR ...]" in capsys.readouterr().out


def check_github_schema(path):
    """check-jsonschema's copy of GitHub's workflow JSON schema (SchemaStore's):
    its output, or "" when *path* is valid."""
    done = subprocess.run(
        [CHECK_JSONSCHEMA, "--builtin-schema", "vendor.github-workflows", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return "" if done.returncode == 0 else done.stdout + done.stderr


def test_github_example_is_valid_against_githubs_workflow_schema():
    assert check_github_schema(CI / "github-actions.yml") == ""


def test_github_schema_check_rejects_a_broken_job(tmp_path):
    # Edited as text: PyYAML (YAML 1.1) reads the key `on` as True, GitHub does not.
    text = (CI / "github-actions.yml").read_text()
    assert text.count("    needs: wheel\n") == 1
    bad = tmp_path / "github-actions.yml"
    bad.write_text(text.replace("    needs: wheel\n", "    needz: wheel\n"))
    assert "needz" in check_github_schema(bad)


def steps_text(job):
    return " ".join(s.get("run", "") for s in job["steps"])


def test_github_example_shards_caches_and_merges_with_existing_commands():
    text = (CI / "github-actions.yml").read_text()
    data = yaml.safe_load(text)
    jobs = data["jobs"]
    build, merge = jobs["build"], jobs["merge"]
    assert build["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
    assert build["strategy"]["fail-fast"] is False
    line = steps_text(build)
    assert "--kbuild-shard=${{ matrix.shard }}/4" in line
    assert "--kbuild-results=kbuild-results/${{ matrix.shard }}" in line
    assert "--junitxml=kbuild-results/${{ matrix.shard }}/junit.xml" in line
    assert "packages matrices/stable.yaml)" in line and "apt-get install" in line
    assert set(OPTION.findall(text)) <= KNOWN
    uses = {s.get("uses", "").split("@")[0]: s for s in build["steps"]}
    assert uses["actions/cache"]["with"]["path"] == ".ccache/"
    assert "--kbuild-cache-dir=.ccache" in line
    assert uses["actions/upload-artifact"]["if"] == "always()"
    assert "wheel" in build["needs"]
    assert merge["if"] == "always()" and set(merge["needs"]) == {"wheel", "build"}
    merging = steps_text(merge)
    for command in (
        "pytest-kbuild merge merged kbuild-results/*/",
        "pytest-kbuild report merged --output merged/report.html",
        'pytest-kbuild summary merged >> "$GITHUB_STEP_SUMMARY"',
    ):
        assert command in merging
    downloads = [s for s in merge["steps"] if s.get("uses", "").startswith("actions/download")]
    assert {"pattern": "kbuild-results-*", "merge-multiple": True, "path": "kbuild-results/"} in [
        d["with"] for d in downloads
    ]
    for name in ("merge", "report", "summary", "packages", "sarif"):
        with pytest.raises(SystemExit) as exc:
            main([name, "--help"])
        assert exc.value.code == 0


def test_github_example_uploads_the_merged_diagnostics_as_sarif():
    merge = yaml.safe_load((CI / "github-actions.yml").read_text())["jobs"]["merge"]
    assert merge["permissions"]["security-events"] == "write"
    steps = merge["steps"]
    uses = [s.get("uses", "").split("@")[0] for s in steps]
    # the tree is checked out: the SARIF paths are relative to the repository
    assert uses[0] == "actions/checkout"
    (written,) = [i for i, s in enumerate(steps) if "pytest-kbuild sarif" in s.get("run", "")]
    assert steps[written]["run"] == "pytest-kbuild sarif merged --output merged/kbuild.sarif"
    merged = next(i for i, s in enumerate(steps) if "pytest-kbuild merge " in s.get("run", ""))
    upload = uses.index("github/codeql-action/upload-sarif")
    assert merged < written < upload
    assert steps[upload]["if"] == "always()"
    assert steps[upload]["with"]["sarif_file"] == "merged/kbuild.sarif"
