"""report.py's data: which builds of a results dir the page shows."""

from __future__ import annotations

import json

from pytest_kbuild import report


def test_a_run_reports_its_own_builds_not_earlier_ones_in_the_same_dir(tmp_path):
    for build in ("x86_64-gcc-defconfig", "arm64-gcc-defconfig"):
        folder = tmp_path / "m" / build
        folder.mkdir(parents=True)
        arch = build.split("-")[0]
        meta = {"build_id": build, "arch": arch, "toolchain": "gcc", "kconfig": "defconfig"}
        meta["targets"] = {"config": {"status": "PASS", "diagnostics": []}}
        (folder / "metadata.json").write_text(json.dumps(meta))
    out = tmp_path / "report.html"
    every = report.data(tmp_path, out)
    assert [b["id"] for b in every["builds"]] == ["arm64-gcc-defconfig", "x86_64-gcc-defconfig"]
    only = report.data(tmp_path, out, only={"x86_64-gcc-defconfig"})
    assert [b["id"] for b in only["builds"]] == ["x86_64-gcc-defconfig"]
    assert only["builds"][0]["links"] == [
        {"name": "metadata.json", "href": "m/x86_64-gcc-defconfig/metadata.json"}
    ]
