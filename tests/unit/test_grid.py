"""grid.py: the end-of-run grid and the failed builds, from results.json's builds."""

from __future__ import annotations

from pytest_kbuild.report import grid


def build(arch, toolchain, kconfig, **targets):
    return {"arch": arch, "toolchain": toolchain, "kconfig": kconfig, "targets": targets}


def t(status, outcome=None, **more):
    outcome = outcome or {"PASS": "passed", "SKIP": "skipped", "FAIL": "failed"}.get(
        status, "error"
    )
    return {"status": status, "outcome": outcome, **more}


BUILDS = {
    "x86_64-gcc-defconfig": build(
        "x86_64", "gcc", "defconfig", config=t("PASS"), kernel=t("PASS", warnings=3)
    ),
    "x86_64-gcc-defconfig-kasan": build(
        "x86_64",
        "gcc",
        "defconfig",
        config=t("PASS"),
        kernel=t(
            "FAIL",
            warnings=1,
            new_warnings=1,
            first_error="kernel/fork.c:12:3: error: 'x' undeclared",
            reproducer="kbuild --directory=linux -a x86_64 config kernel",
        ),
    ),
    "arm64-clang-16-tinyconfig": build(
        "arm64",
        "clang-16",
        "tinyconfig",
        # a missing compiler: the item errored at setup, before any status
        config={"outcome": "error", "first_error": "clang-16 not found"},
    ),
    "riscv-gcc-defconfig": build("riscv", "gcc", "defconfig", config=t("SKIP")),
    "arm64-gcc-defconfig": build(
        "arm64", "gcc", "defconfig", config=t("PASS"), dtbs=t("SKIP"), kernel=t("PASS")
    ),
}


def test_one_row_per_arch_one_column_per_toolchain_and_kconfig():
    lines = grid.render(BUILDS, width=200)
    assert [c.strip() for c in lines[0].split("|")] == ["", "clang-16", "gcc", "gcc"]
    assert [c.strip() for c in lines[1].split("|")] == [
        "arch",
        "tinyconfig",
        "defconfig",
        "defconfig-kasan",
    ]
    rows = {ln.split("|")[0].strip(): [c.strip() for c in ln.split("|")[1:]] for ln in lines[3:6]}
    assert rows == {
        "arm64": ["ERROR config", "pass", "-"],
        "riscv": ["-", "skip", "-"],
        "x86_64": ["-", "pass 3w", "FAIL kernel 1w +1"],
    }
    assert lines[-1] == grid.LEGEND
    assert all(ln.isascii() for ln in lines)


def test_columns_that_do_not_fit_go_to_another_table():
    lines = grid.render(BUILDS, width=40)
    assert all(len(ln) <= 40 for ln in lines)
    assert "" in lines  # a second table follows the first
    assert sum(ln.startswith("arch ") for ln in lines) == 2
    assert lines[lines.index("") + 2].endswith("| defconfig-kasan")


def test_failed_builds_show_the_first_error_wrapped_and_the_whole_reproducer():
    # Bug: the first error was cut at the terminal's width ("kernel/...").
    lines = grid.failures(BUILDS, width=50)
    assert lines == [
        "arm64-clang-16-tinyconfig config ERROR: clang-16",
        "    not found",
        "x86_64-gcc-defconfig-kasan kernel FAIL:",
        "    kernel/fork.c:12:3: error: 'x' undeclared",
        "  reproduce: kbuild --directory=linux -a x86_64 config kernel",
    ]
    assert grid.failures({"x": BUILDS["x86_64-gcc-defconfig"]}) == []


def test_failures_are_bounded():
    many = {f"b{i:02d}": BUILDS["x86_64-gcc-defconfig-kasan"] for i in range(25)}
    lines = grid.failures(many)
    assert lines[-1] == "... and 5 more (results.json lists them all)"
    assert len(lines) == 2 * grid.MAX_FAILURES + 1


def test_two_matrices_have_a_column_each_and_their_builds_their_matrix_in_the_name():
    a = {
        **BUILDS["x86_64-gcc-defconfig-kasan"],
        "matrix": "a.yaml",
        "build_id": "x86_64-gcc-defconfig-kasan",
    }
    b = {
        **BUILDS["x86_64-gcc-defconfig"],
        "matrix": "ci/b.yaml",
        "build_id": "x86_64-gcc-defconfig",
    }
    builds = {"a.yaml::x86_64-gcc-defconfig-kasan": a, "ci/b.yaml::x86_64-gcc-defconfig": b}
    lines = grid.render(builds, width=200)
    assert [c.strip() for c in lines[1].split("|")] == ["arch", "a/defconfig-kasan", "b/defconfig"]
    assert grid.failures(builds, 200)[0].startswith("a/x86_64-gcc-defconfig-kasan kernel FAIL: ")


def test_a_warning_shows_as_warn_and_is_no_failure():
    builds = {
        "x86_64-gcc-tinyconfig": build(
            "x86_64", "gcc", "tinyconfig", config=t("PASS"), kselftest=t("WARNING", "passed")
        )
    }
    lines = grid.render(builds, width=200)
    assert lines[3].split("|")[1].strip() == "warn kselftest"
    assert not any("reproduce" in ln or "first error" in ln.lower() for ln in lines)
    assert grid.status({"outcome": "passed", "status": "WARNING"}) == "WARNING"
