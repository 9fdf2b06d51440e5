"""The pytest layer at unit speed: in-process pytester runs whose builds run
on a FakeRuntime that a plugin supplies through pytest_kbuild_make_runtime
(the project's own extension point), on a fake tree. No make, no compiler."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from fakes import FakeRuntime, make_tree

from pytest_kbuild.errors import KbuildUserError


class FakeRuntimes:
    """A plugin that provides the runtime ``fake`` and records the hooks."""

    def __init__(self, **fake: object) -> None:
        self.fake = fake
        self.made: list[FakeRuntime] = []
        self.targets: list[tuple[str, str]] = []
        self.builds: list[tuple[str, str]] = []

    @pytest.hookimpl
    def pytest_kbuild_make_runtime(self, config, name):
        if name != "fake":
            return None
        rt = FakeRuntime(**self.fake)
        self.made.append(rt)
        return rt

    @pytest.hookimpl
    def pytest_kbuild_target_finished(self, item, result):
        self.targets.append((item.parent.spec.id, result.name))

    @pytest.hookimpl
    def pytest_kbuild_build_finished(self, config, build, result):
        self.builds.append((build.id, result.status.value))


@pytest.fixture
def tree(tmp_path):
    return make_tree(tmp_path / "linux")


def run(pytester, tree, body, *args, plugin=None):
    (pytester.path / "m.yaml").write_text(f"tree: {tree}\n{body}")
    plugin = plugin or FakeRuntimes()
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--kbuild-matrix=m.yaml", *args, plugins=[plugin]
    )
    return result, plugin


def results(pytester):
    return json.loads((pytester.path / "kbuild-results" / "results.json").read_text())


BODY = "arch: [x86_64]\ntoolchain: [gcc]\nkconfig: [tinyconfig]\nruntime: fake\n"


def test_a_runtime_from_a_plugin_is_accepted_in_a_matrix(pytester, tree):
    # Bug: runtime: NAME was checked against the built-in names only.
    result, plugin = run(pytester, tree, BODY + "targets: [config, kernel, debugkernel]\n")
    result.assert_outcomes(passed=3)
    assert plugin.made and all(rt.calls for rt in plugin.made[1:])
    meta = json.loads(
        (pytester.path / "kbuild-results/m/x86_64-gcc-tinyconfig/metadata.json").read_text()
    )
    assert meta["runtime"] == {"name": "fake"} and meta["status"] == "PASS"
    assert meta["matrix"]["line"] == 2 and meta["pytest_selection"].startswith("pytest ")


def test_results_json_durations_are_numbers(pytester, tree):
    # Bug: the duration went float -> "1.234" -> float, and results.json kept the string.
    result, _ = run(pytester, tree, BODY + "targets: [config, kernel]\n")
    result.assert_outcomes(passed=2)
    summary = results(pytester)
    assert summary["schema"] == 4
    targets = summary["builds"]["m.yaml::x86_64-gcc-tinyconfig"]["targets"]
    assert all(isinstance(t["duration"], float) for t in targets.values()), targets


def test_and_as_kbuild_runtime(pytester, tree):
    body = "arch: [x86_64]\ntoolchain: [gcc]\nkconfig: [tinyconfig]\ntargets: [config]\n"
    result, _ = run(pytester, tree, body, "--kbuild-runtime=fake")
    result.assert_outcomes(passed=1)


def test_an_unknown_runtime_lists_the_plugin_provided_ones(pytester, tree):
    result, _ = run(
        pytester, tree, BODY + "include:\n  - {arch: arm64, toolchain: gcc, runtime: nope}\n"
    )
    assert result.ret == 2
    result.stdout.fnmatch_lines(
        ["*m.yaml:7: matrix.include[[]0[]].runtime: unknown runtime 'nope'; known: *fake*"]
    )


def test_hooks_fire_per_target_and_once_per_build(pytester, tree):
    result, plugin = run(pytester, tree, BODY + "targets: [config, kernel, modules]\n")
    result.assert_outcomes(passed=2, skipped=1)  # the fake .config has no CONFIG_MODULES
    bid = "x86_64-gcc-tinyconfig"
    assert plugin.targets == [(bid, "config"), (bid, "kernel"), (bid, "modules")]
    assert plugin.builds == [(bid, "PASS")]


def test_outcomes_junit_and_results(pytester, tree):
    body = (
        BODY
        + "targets: [config, kernel]\nexclude: []\ninclude:\n"
        + ("  - {arch: sparc, toolchain: clang-16, kconfig: tinyconfig, runtime: fake}\n")
    )
    result, _ = run(pytester, tree, body, "--junitxml=j.xml", "-o", "junit_family=xunit1", "-rs")
    # sparc + clang is a skip with the arch data's reason, as in Build() and kbuild
    result.assert_outcomes(passed=2, skipped=2)
    result.stdout.fnmatch_lines(["*clang-16 cannot build arch sparc (arch data: clang: false)*"])
    summary = results(pytester)
    assert summary["totals"] == {"builds": 2, "passed": 2, "skipped": 2}
    cases = ET.parse(pytester.path / "j.xml").getroot().findall(".//testcase")
    props = {p.get("name"): p.get("value") for p in cases[1].findall("properties/property")}
    assert props["build_id"] == "sparc-clang-16-tinyconfig" or props["status"] == "PASS"


def test_a_failed_target_reports_errors_log_and_reproducer(pytester, tree):
    plugin = FakeRuntimes(
        exit_codes={"bzImage": 2},
        outputs={"bzImage": "kernel/fork.c:12:3: error: 'x' undeclared\n"},
    )
    result, _ = run(pytester, tree, BODY + "targets: [config, kernel]\n", plugin=plugin)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*x86_64-gcc-tinyconfig::kernel FAIL: kernel/fork.c:12:3: error: 'x' undeclared",
            "  make bzImage failed",
            "log: *build.log",
            "reproduce: kbuild --directory=* --runtime=fake *",
            "rerun: pytest --kbuild-matrix=m.yaml m.yaml::x86_64-gcc-tinyconfig::kernel",
        ]
    )


def test_a_timeout_is_an_error_and_later_targets_skip(pytester, tree):
    plugin = FakeRuntimes(hang={"bzImage"})
    body = BODY + "targets: [config, kernel, debugkernel]\n"
    result, _ = run(pytester, tree, body, "--kbuild-timeout=3", plugin=plugin)
    result.assert_outcomes(passed=1, errors=1, skipped=1)  # the machine's, not the kernel's
    result.stdout.fnmatch_lines(["*kernel ERROR: timeout after 3 s*make was killed*"])
    assert plugin.made[-1].timeouts[0] <= 3


def test_k_selects_a_target_and_its_dependencies_still_run(pytester, tree):
    result, plugin = run(pytester, tree, BODY + "targets: [config, kernel]\n", "-k", "kernel")
    result.assert_outcomes(passed=1, deselected=1)
    assert "tinyconfig" in plugin.made[-1].goals and "bzImage" in plugin.made[-1].goals


def test_shard_splits_whole_builds(pytester, tree):
    body = "arch: [x86_64, arm64, riscv]\ntoolchain: [gcc]\ntargets: [config]\nruntime: fake\n"
    result, _ = run(pytester, tree, body, "--kbuild-shard=2/3")
    result.assert_outcomes(passed=1, deselected=2)
    result.stdout.fnmatch_lines(["kbuild shard 2/3: 1 of 3 builds (est. *)"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kbuild-jobs=0"], "--kbuild-jobs: '0' is not a positive whole number"),
        # The rule kbuild -j follows too (issue 16: make was given these).
        (["--kbuild-jobs=-1"], "--kbuild-jobs: '-1' is not a positive whole number"),
        (
            ["--kbuild-jobs=99999999999999999999"],
            "--kbuild-jobs: '99999999999999999999' is not a whole number from 1 to 1000000",
        ),
        (["--kbuild-image="], "--kbuild-image: empty value"),
        (["--kbuild-timeout=-1"], "--kbuild-timeout: '-1' is not a positive number of seconds"),
        (["--kbuild-runtime=nope"], "--kbuild-runtime: unknown runtime 'nope'; known: *"),
        (["--kbuild-jobserver=on", "--kbuild-jobs=2"], "*both set: the jobserver replaces*"),
        (["--kbuild-kcidb-origin=My-CI"], "--kbuild-kcidb-origin: 'My-CI' is not a KCIDB origin*"),
        (["--kbuild-kcidb-base-url=ftp://h/r"], "--kbuild-kcidb-base-url: 'ftp://h/r' has scheme*"),
    ],
)
def test_bad_options_are_usage_errors(pytester, tree, args, message):
    result, _ = run(pytester, tree, BODY, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])


@pytest.mark.parametrize("value", ["", ":"])
def test_an_empty_matrix_option_is_a_usage_error(pytester, value):
    # Bug (issue 16): "--kbuild-matrix=" ran nothing and said "no tests ran".
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", f"--kbuild-matrix={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --kbuild-matrix: empty value"])


def test_without_a_matrix_the_plugin_stays_out_of_the_way(pytester):
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--kbuild-jobs=0")
    result.assert_outcomes(passed=1)


def test_the_state_refuses_an_unknown_runtime_at_build_time(pytester, tree):
    from pytest_kbuild.plugin.state import KbuildState
    from pytest_kbuild.runtime import Registry

    class Config:
        class hook:  # noqa: N801 - stands in for config.hook
            @staticmethod
            def pytest_kbuild_make_runtime(config, name):
                return None

    state = KbuildState.__new__(KbuildState)
    state.runtimes = Registry()
    with pytest.raises(KbuildUserError, match="unknown runtime 'gone'; known: docker, local"):
        state.make_runtime(Config(), "gone")


WARN = "kernel/fork.c:123:9: warning: unused variable 'x' [-Wunused-variable]\n"
ERR = "kernel/exit.c:7:3: error: 'y' undeclared\n"


def test_error_and_warning_counts_go_to_junit_and_results(pytester, tree):
    plugin = FakeRuntimes(
        exit_codes={"bzImage": 2},
        outputs={"tinyconfig": WARN, "bzImage": WARN + ERR + WARN.replace("123", "200")},
    )
    body = BODY + "targets: [config, kernel]\n"
    result, _ = run(
        pytester, tree, body, "--junitxml=j.xml", "-o", "junit_family=xunit1", plugin=plugin
    )
    result.assert_outcomes(passed=1, failed=1)
    targets = results(pytester)["builds"]["m.yaml::x86_64-gcc-tinyconfig"]["targets"]
    assert (targets["config"]["errors"], targets["config"]["warnings"]) == (0, 1)
    # the same warning on another line is another record
    assert (targets["kernel"]["errors"], targets["kernel"]["warnings"]) == (1, 2)
    cases = ET.parse(pytester.path / "j.xml").getroot().findall(".//testcase")
    props = [{p.get("name"): p.get("value") for p in c.iter("property")} for c in cases]
    assert [(p["errors"], p["warnings"]) for p in props] == [("0", "1"), ("1", "2")]


def test_a_failure_leads_with_its_first_error_and_a_repeated_one_is_shown_once(
    pytester, tree, monkeypatch
):
    # Bugs: the short summary said "FAIL: make bzImage failed", and
    # debugkernel failing on kernel's error printed the same lines again.
    monkeypatch.setenv("CI", "true")  # pytest then never cuts the short summary
    plugin = FakeRuntimes(
        exit_codes={"bzImage": 2, "vmlinux": 2}, outputs={"bzImage": ERR, "vmlinux": ERR}
    )
    body = BODY + "targets: [config, kernel, debugkernel]\n"
    result, _ = run(pytester, tree, body, "--junitxml=j.xml", plugin=plugin)
    result.assert_outcomes(passed=1, failed=2)
    first = "kernel/exit.c:7:3: error: 'y' undeclared"
    result.stdout.fnmatch_lines(
        [
            f"FAILED m.yaml::x86_64-gcc-tinyconfig::kernel - x86_64-gcc-tinyconfig::kernel FAIL: {first}",
            f"FAILED m.yaml::x86_64-gcc-tinyconfig::debugkernel - *debugkernel FAIL: {first}",
        ]
    )
    out = result.stdout.str()
    assert "  make bzImage failed" in out
    assert out.count("--- last lines of") == 1
    assert "--- the same errors as kernel: its lines of build.log are above ---" in out
    # JUnit's failure message is that first line; its text is the whole failure.
    failures = ET.parse(pytester.path / "j.xml").getroot().findall(".//failure")
    assert [f.get("message") for f in failures] == [
        f"x86_64-gcc-tinyconfig::kernel FAIL: {first}",
        f"x86_64-gcc-tinyconfig::debugkernel FAIL: {first}",
    ]
    assert "rerun: pytest --kbuild-matrix=m.yaml" in failures[0].text


def test_in_ci_a_failed_builds_log_tail_is_folded_and_an_errors_log_has_its_url(
    pytester, tree, monkeypatch
):
    # GitLab links no attachment for a JUnit <error>: its text names the
    # log's URL among the job's artifacts. GitHub folds the failed log tail.
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITLAB_CI", "true")  # both: GitHub's fold wins, GitLab's URL is given
    monkeypatch.setenv("CI_JOB_URL", "https://gitlab.example.org/g/linux/-/jobs/42")
    monkeypatch.setenv("CI_PROJECT_DIR", str(pytester.path))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    plugin = FakeRuntimes(
        exit_codes={"bzImage": 1},
        outputs={"bzImage": "cc1: out of memory allocating 65536 bytes\n"},
    )
    body = BODY + "targets: [config, kernel]\n"
    result, _ = run(pytester, tree, body, "--junitxml=j.xml", plugin=plugin)
    result.assert_outcomes(passed=1, errors=1)
    url = (
        "https://gitlab.example.org/g/linux/-/jobs/42/artifacts/file/"
        "kbuild-results/m/x86_64-gcc-tinyconfig/build.log"
    )
    [error] = ET.parse(pytester.path / "j.xml").getroot().findall(".//error")
    assert f"log in the job's artifacts: {url}" in error.text
    result.stdout.fnmatch_lines(
        [
            "*- kbuild failed builds -*",
            "x86_64-gcc-tinyconfig kernel ERROR: *",
            "::group::x86_64-gcc-tinyconfig kernel ERROR: last lines of build.log",
            "$ make *bzImage",
            "cc1: out of memory allocating 65536 bytes",
            "::endgroup::",
        ]
    )


def test_qq_keeps_the_totals_and_what_broke_and_colour_marks_the_grids_cells(pytester, tree):
    plugin = FakeRuntimes(exit_codes={"bzImage": 2}, outputs={"bzImage": ERR})
    body = BODY + "targets: [config, kernel]\n"
    result, _ = run(pytester, tree, body, "-qq", plugin=plugin)
    out = result.stdout.str()
    assert "1 build (1 passed, 1 failed); results in " in out
    assert "- kbuild failed builds -" in out and "x86_64-gcc-tinyconfig kernel FAIL: " in out
    assert "kbuild grid" not in out and "kbuild diagnostics" not in out
    quiet, _ = run(pytester, tree, body, "-q", plugin=plugin)
    assert "- kbuild grid -" in quiet.stdout.str()  # -q is pytest's quiet, the grid stays
    assert "\x1b[" not in quiet.stdout.str()  # pytest colours nothing here, nor does the grid
    colour, _ = run(pytester, tree, body, "--color=yes", plugin=plugin)
    [row] = [ln for ln in colour.stdout.lines if ln.startswith("x86_64 ")]
    assert "| \x1b[31mFAIL\x1b[0m kernel" in row
    [header] = [ln for ln in colour.stdout.lines if ln.startswith("arch ")]
    assert "\x1b[" not in header


def test_grouped_diagnostics_in_the_terminal_and_diagnostics_json(pytester, tree, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # each line is cut to the terminal's width
    plugin = FakeRuntimes(outputs={"bzImage": WARN + WARN})
    body = "arch: [x86_64]\ntoolchain: [gcc]\nkconfig: [tinyconfig, defconfig]\nruntime: fake\n"
    result, _ = run(pytester, tree, body + "targets: [config, kernel]\n", plugin=plugin)
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(
        [
            "*- kbuild diagnostics (1) -*",
            "kernel/fork.c:123: warning: unused variable 'x' [-Wunused-variable] - 2 builds: "
            "x86_64-gcc-defconfig, x86_64-gcc-tinyconfig",
        ]
    )
    data = json.loads((pytester.path / "kbuild-results" / "diagnostics.json").read_text())
    [g] = data["diagnostics"]
    assert g["count"] == 4 and g["targets"] == ["kernel"]


def test_two_matrices_with_the_same_build_ids_keep_all_their_builds(pytester, tree, monkeypatch):
    # Bug: results.json was keyed by build id, so a.yaml's and b.yaml's
    # x86_64-gcc-tinyconfig were one build: "4 passed", but 1 build reported.
    monkeypatch.setenv("COLUMNS", "200")
    plugin = FakeRuntimes(outputs={"bzImage": WARN})
    for name in ("a.yaml", "b.yaml"):
        (pytester.path / name).write_text(f"tree: {tree}\n{BODY}targets: [config, kernel]\n")
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--kbuild-matrix=a.yaml", "--kbuild-matrix=b.yaml",
        "--kbuild-html=kbuild-results/report.html", plugins=[plugin],
    )  # fmt: skip
    result.assert_outcomes(passed=4)
    summary = results(pytester)
    assert summary["totals"] == {"builds": 2, "passed": 4}
    assert {k: (b["matrix"], b["build_id"]) for k, b in summary["builds"].items()} == {
        "a.yaml::x86_64-gcc-tinyconfig": ("a.yaml", "x86_64-gcc-tinyconfig"),
        "b.yaml::x86_64-gcc-tinyconfig": ("b.yaml", "x86_64-gcc-tinyconfig"),
    }
    logs = {k: b["targets"]["kernel"]["log"] for k, b in summary["builds"].items()}
    assert logs["a.yaml::x86_64-gcc-tinyconfig"].endswith("/a/x86_64-gcc-tinyconfig/build.log")
    assert logs["b.yaml::x86_64-gcc-tinyconfig"].endswith("/b/x86_64-gcc-tinyconfig/build.log")
    # The grid has a column per matrix; the diagnostics name both builds.
    result.stdout.fnmatch_lines(
        [
            "*| gcc *| gcc",
            "arch *| a/tinyconfig *| b/tinyconfig",
            "x86_64 *| pass 1w *| pass 1w",
            "* - 2 builds: a/x86_64-gcc-tinyconfig, b/x86_64-gcc-tinyconfig",
        ]
    )
    data = json.loads((pytester.path / "kbuild-results" / "diagnostics.json").read_text())
    assert [g["builds"] for g in data["diagnostics"]] == [
        ["a/x86_64-gcc-tinyconfig", "b/x86_64-gcc-tinyconfig"]
    ]
    page = (pytester.path / "kbuild-results" / "report.html").read_text()
    assert '"id": "a/x86_64-gcc-tinyconfig"' in page and '"id": "b/x86_64-gcc-tinyconfig"' in page


def test_no_diagnostics_section_without_diagnostics(pytester, tree):
    result, _ = run(pytester, tree, BODY + "targets: [config]\n")
    result.assert_outcomes(passed=1)
    assert "kbuild diagnostics" not in result.stdout.str()
    data = json.loads((pytester.path / "kbuild-results" / "diagnostics.json").read_text())
    assert data["diagnostics"] == []


def test_diagnostics_json_holds_this_runs_builds_and_survives_a_corrupt_file(pytester, tree):
    old = pytester.path / "kbuild-results" / "m" / "arm64-gcc-tinyconfig"
    old.mkdir(parents=True)
    (old / "metadata.json").write_text("{ not json")  # an earlier run's, damaged
    plugin = FakeRuntimes(outputs={"bzImage": "kernel/fork.c:3:5: warning: unused x [-Wunused]\n"})
    result, _ = run(pytester, tree, BODY + "targets: [config, kernel]\n", plugin=plugin)
    result.assert_outcomes(passed=2)
    data = json.loads((pytester.path / "kbuild-results" / "diagnostics.json").read_text())
    assert [g["builds"] for g in data["diagnostics"]] == [["x86_64-gcc-tinyconfig"]]
    (pytester.path / "kbuild-results" / "m" / "x86_64-gcc-tinyconfig" / "metadata.json").write_text(
        "{"
    )
    from pytest_kbuild.errors import NotAResultsDir
    from pytest_kbuild.report import grouping

    with pytest.raises(NotAResultsDir, match="cannot be read as JSON"):
        grouping.summarise(pytester.path / "kbuild-results")
