from pathlib import Path

import pytest

from pytest_kbuild.plugin import junit


@pytest.mark.parametrize(
    ("nodeid", "expected"),
    [
        ("m.yaml::x86_64-gcc-defconfig::kernel", "m.x86_64-gcc-defconfig"),
        (
            "matrices/stable.yaml::arm64-clang-16-defconfig::modules",
            "matrices.stable.arm64-clang-16-defconfig",
        ),
        ("../m.yaml::x86_64-gcc-defconfig::kernel", "m.x86_64-gcc-defconfig"),
        ("../../ci/m.yml::x86_64-gcc-defconfig::config", "ci.m.x86_64-gcc-defconfig"),
        ("m.yaml::x86_64-gcc-ci.defconfig::config", "m.x86_64-gcc-ci_defconfig"),
        (
            "ci.d/m.v2.yaml::x86_64-gcc-defconfig-v1.2::config",
            "ci_d.m_v2.x86_64-gcc-defconfig-v1_2",
        ),
        ("::x86_64-gcc-defconfig::kernel", "x86_64-gcc-defconfig"),
        # A KUnit case its kunit target ran: the build's classname too.
        ("m.yaml::um-gcc-kunit::kunit::list-kunit-test.list_add_test", "m.um-gcc-kunit"),
        ("test_x.py::test_y", None),
    ],
)
def test_classname(nodeid, expected):
    assert junit.classname(nodeid) == expected
    if expected:
        # Jenkins: package before the last dot, class after it.
        assert not expected.startswith(".") and ".." not in expected


def test_system_out_diagnostics_then_attachments(tmp_path):
    out = tmp_path / "kbuild-results" / "m" / "b"
    out.mkdir(parents=True)
    (out / "build.log").write_text("log\n")
    (out / "metadata.json").write_text("{}\n")
    diags = [
        {
            "kind": "error",
            "file": "a.c",
            "line": 3,
            "message": "x",
            "raw": ["a.c:3:1: error: x", "  3 | y", "    | ^", "more"],
        },
        {"kind": "warning", "file": "b.c", "line": 7, "message": "unused", "raw": []},
    ]
    text = junit.system_out(
        diags, [out / "build.log", out / "config", out / "metadata.json"], tmp_path
    )
    assert text.splitlines() == [
        "a.c:3:1: error: x",
        "  3 | y",
        "    | ^",
        "b.c:7: warning: unused",
        "[[ATTACHMENT|kbuild-results/m/b/build.log]]",
        "[[ATTACHMENT|kbuild-results/m/b/metadata.json]]",
    ]


def test_system_out_is_bounded(tmp_path):
    diags = [{"kind": "warning", "raw": [f"w{i}"]} for i in range(junit.SYSTEM_OUT_DIAGNOSTICS + 5)]
    lines = junit.system_out(diags, [], tmp_path).splitlines()
    assert len(lines) == junit.SYSTEM_OUT_DIAGNOSTICS + 1
    assert lines[-1] == "... 5 more diagnostics in build.log"


def test_system_out_path_outside_the_root(tmp_path):
    log = tmp_path / "results" / "build.log"
    log.parent.mkdir()
    log.write_text("")
    assert (
        junit.system_out([], [log], tmp_path / "project") == "[[ATTACHMENT|../results/build.log]]\n"
    )


def test_nothing_to_say_is_empty(tmp_path):
    assert junit.system_out([], [Path(tmp_path / "missing.log")], tmp_path) == ""


def test_classname_outside_the_rootdir_from_the_location():
    # pytest >= 9 gives a matrix outside the rootdir an empty path in the node id.
    assert junit.classname("::b::config", "../ci/m.yaml") == "ci.m.b"
