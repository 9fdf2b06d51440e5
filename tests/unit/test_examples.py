"""The CI examples under examples/ci/: valid, and naming options that exist."""

import re

import pytest
import yaml

from pytest_kbuild.cli import main
from pytest_kbuild.options import OPTIONS
from tests.support import ROOT

CI = ROOT / "examples" / "ci"
OPTION = re.compile(r"--kbuild-[a-z-]+")
KNOWN = {o.cli for o in OPTIONS}


def scripts(job):
    return " ".join(" ".join(job.get(k, [])) for k in ("before_script", "script"))


def test_gitlab_example_parses_and_uses_existing_options():
    data = yaml.safe_load((CI / "gitlab-ci.yml").read_text())
    jobs = {k: v for k, v in data.items() if isinstance(v, dict) and "script" in v}
    build = jobs["kbuild"]
    assert build["parallel"] == 4
    assert build["stage"] in data["stages"]
    line = scripts(build)
    assert "pytest --kbuild-matrix=matrices/stable.yaml" in line
    assert "--junitxml=kbuild-results/$CI_NODE_INDEX/junit.xml" in line
    assert set(OPTION.findall(line)) <= KNOWN
    assert build["artifacts"]["when"] == "always"
    assert build["artifacts"]["reports"]["junit"] == "kbuild-results/*/junit.xml"
    merge = jobs["kbuild-merge"]
    assert data["stages"].index(merge["stage"]) > data["stages"].index(build["stage"])
    assert merge["when"] == "always"
    assert "pytest-kbuild merge merged kbuild-results/*/" in scripts(merge)
    report = merge["artifacts"]["reports"]["codequality"]
    assert f"pytest-kbuild diagnostics merged --codequality {report}" in scripts(merge)
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
    assert text.count("{") == text.count("}")  # braces balance (no Groovy parser here)


def test_merge_subcommand_of_the_examples_exists(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["merge", "--help"])
    assert exc.value.code == 0
    assert "OUT DIR [DIR ...]" in capsys.readouterr().out
