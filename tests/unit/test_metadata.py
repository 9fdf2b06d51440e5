import datetime
import json
import os
import platform

import pytest
from fakes import make_tree

from pytest_kbuild.build import record as metadata
from pytest_kbuild.build.record import kernelversion
from pytest_kbuild.errors import KbuildInfraError
from pytest_kbuild.results import Artifact, Status, TargetResult


@pytest.mark.parametrize(
    ("makefile", "version"),
    [
        ("VERSION = 6\nPATCHLEVEL = 8\nSUBLEVEL = 0\nEXTRAVERSION = -rc3\n", "6.8.0-rc3"),
        ("VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 77\nEXTRAVERSION =\nNAME = x\n", "6.1.77"),
        ("VERSION=5\nPATCHLEVEL\t=\t15\n", "5.15.0"),
        ("# no version\nall:\n", None),
    ],
)
def test_kernelversion(tmp_path, makefile, version):
    assert kernelversion(make_tree(tmp_path / "t", makefile)) == version


def test_kernelversion_without_makefile(tmp_path):
    assert kernelversion(tmp_path) is None


GIT_NULL = dict.fromkeys(["commit", "describe", "describe_tags", "branch", "remote_url"])
TOOLS = {"make": ["make", "--version"], "compiler": ["gcc", "--version"]}
GCC = {"name": "gcc", "compiler": "gcc", "version": None}


def test_git_state_from_a_git_tree(kernel_tree, fake_runtime):
    (kernel_tree / ".git").mkdir()
    fake_runtime.capture_outputs["git describe --always --dirty"] = (0, "v6.8-rc3-2-gabcdef\n")
    fake_runtime.capture_outputs["git rev-parse HEAD"] = (128, "fatal\n")
    fake_runtime.capture_outputs["git symbolic-ref --short -q HEAD"] = (0, "main\n")
    fake_runtime.capture_outputs["git remote get-url origin"] = (
        0,
        "https://gitlab-ci-token:secret@gitlab.example/k/linux.git\n",
    )
    facts = metadata.runtime_facts(fake_runtime, kernel_tree, GCC, TOOLS)
    assert facts["tree"] == {
        "path": str(kernel_tree),
        "kernelversion": "6.8.0-rc3",
        "git": {
            **GIT_NULL,
            "describe": "v6.8-rc3-2-gabcdef",
            "branch": "main",
            "remote_url": "https://gitlab-ci-token:***@gitlab.example/k/linux.git",
        },
    }
    assert len(fake_runtime.captures) == 2 + 5  # one runtime call: two versions, five git


def test_without_git_every_git_key_is_null(kernel_tree, fake_runtime):
    facts = metadata.runtime_facts(fake_runtime, kernel_tree, GCC, TOOLS)
    assert facts["tree"]["git"] == GIT_NULL
    assert all(argv[0] != "git" for argv in fake_runtime.captures)


def test_host_info():
    info = metadata.host_info()
    assert info["hostname"] == platform.node()
    assert info["machine"] == platform.machine()
    assert info["python"] == platform.python_version()
    assert info["cpus"] == os.cpu_count()
    assert info["os"] is None or isinstance(info["os"], str)


def test_now_is_utc_seconds():
    t = datetime.datetime.fromisoformat(metadata.now())
    assert t.utcoffset() == datetime.timedelta(0)
    assert t.microsecond == 0


def test_runtime_facts(kernel_tree, fake_runtime):
    fake_runtime.capture_outputs["gcc --version"] = (0, "gcc (Fake) 12.2.0\nCopyright\n")
    toolchain = {"name": "gcc", "compiler": "gcc", "version": None}
    facts = metadata.runtime_facts(fake_runtime, kernel_tree, toolchain, TOOLS)
    assert facts == {
        "toolchain": {
            "name": "gcc",
            "compiler": "gcc",
            "version": "gcc (Fake) 12.2.0",
            "version_number": "12.2.0",
            "minimum_version": None,  # the tree has no scripts/min-tool-version.sh
        },
        "runtime": {"name": "fake"},
        "tree": {"path": str(kernel_tree), "kernelversion": "6.8.0-rc3", "git": GIT_NULL},
        "tools": {"make": "make (Fake 1.0) 1.0.0", "compiler": "gcc (Fake) 12.2.0"},
    }
    assert toolchain["version"] is None, "the entry given is not changed"


@pytest.mark.parametrize("answer", [(127, "gcc: not found\n"), (0, "")])
def test_runtime_facts_without_a_compiler_version(kernel_tree, fake_runtime, answer):
    fake_runtime.capture_outputs["gcc --version"] = answer
    toolchain = {"name": "gcc", "compiler": "gcc", "version": None}
    facts = metadata.runtime_facts(fake_runtime, kernel_tree, toolchain, TOOLS)
    assert facts["toolchain"]["version"] is None


def test_record_target(tmp_path):
    image = tmp_path / "bzImage"
    image.write_text("image\n")
    artifact = Artifact.of(image)
    result = TargetResult("kernel", Status.PASS, 1.5, artifacts=[artifact])
    record = metadata.BuildRecord(
        **dict.fromkeys(["build_id", "arch", "kconfig", "reproducer"], ""),
        **dict.fromkeys(["toolchain", "make_variables", "makevars", "env", "wrapper"], {}),
        **dict.fromkeys(["runtime", "options"], {}),
        kconfig_add=[],
        jobs=None,
        jobserver=None,
        targets_requested=["kernel"],
    )
    record.targets["config"] = {"status": "PASS"}
    record.record_target(result)
    assert record.targets == {"config": {"status": "PASS"}, "kernel": result.to_json()}
    record.write(tmp_path / "out")
    written = json.loads((tmp_path / "out" / "metadata.json").read_text())
    assert written["artifacts"] == record.artifacts and written["error"] is None
    assert record.artifacts == {
        "bzImage": {"size": artifact.size, "sha256": artifact.sha256, "target": "kernel"}
    }


def test_write_metadata(tmp_path):
    path = tmp_path / "out" / "metadata.json"
    metadata.write_metadata(path, {"schema": 1, "status": "running"})
    assert json.loads(path.read_text()) == {"schema": 1, "status": "running"}


def test_unwritable_metadata_is_an_infrastructure_error(tmp_path):
    (tmp_path / "out").write_text("a file where the results directory should be\n")
    path = tmp_path / "out" / "metadata.json"
    with pytest.raises(KbuildInfraError) as exc:
        metadata.write_metadata(path, {"schema": 1})
    assert str(exc.value) == f"cannot write {path}: File exists"


def test_edit_reads_changes_and_writes_a_record_back(tmp_path):
    metadata.write_metadata(tmp_path / "metadata.json", {"schema": 1, "status": "running"})
    written = metadata.edit(tmp_path, lambda d: d.update(status="ERROR"))
    assert written == {"schema": 1, "status": "ERROR"}
    assert metadata.read(tmp_path) == written


@pytest.mark.parametrize("text", [None, "{", "[1]", "\xff"], ids=["none", "bad", "list", "bytes"])
def test_edit_of_no_record_writes_nothing(tmp_path, text):
    if text is not None:
        (tmp_path / "metadata.json").write_text(text, encoding="latin-1")
    assert metadata.read(tmp_path) is None
    assert metadata.edit(tmp_path, lambda d: d.update(status="ERROR")) is None
    if text is None:
        assert not (tmp_path / "metadata.json").exists()
    else:
        assert (tmp_path / "metadata.json").read_text(encoding="latin-1") == text
