"""The HTML report in a real browser (Debian's Chromium through Playwright):
a fakelinux run with a failed build, a new warning against a baseline and a
make variable that tries to end the page's script; the page must open from
disk with no network, show the grid by status, filter, open a build with
its targets, diagnostics (new ones marked), log tail, relative artifact
links and a reproducer that the copy button takes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support import FAKE_KUNIT_CONFTEST, require_tools

BASE = """
arch: [x86_64, arm64]
toolchain: [gcc]
kconfig: [defconfig]
targets: [config, kernel]
"""
# The same builds with a warning in the kernel, one build that fails, and a
# value that a careless page would let out of its <script>.
CHANGED = (
    BASE
    + """env: {WARN: kernel}
include:
  - arch: x86_64
    toolchain: gcc
    name: broken
    make_variables: {FAIL: kernel, KBUILD_NOTE: "</script><img src=x onerror=alert(1)>"}
"""
)
BROKEN = "x86_64-gcc-defconfig-broken"


@pytest.fixture
def browser():
    require_tools("chromium")  # Debian's chromium (.ci/setup)
    try:
        from playwright import sync_api  # the dev extra
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("playwright is not installed (pip install -e '.[dev]')")
        pytest.skip("playwright is not installed (pip install -e '.[dev]')")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def report(pytester, fakelinux):
    (pytester.path / "m.yaml").write_text(f"tree: {fakelinux}\n{BASE}")
    pytester.runpytest("--kbuild-matrix=m.yaml", "--kbuild-results=base").assert_outcomes(passed=4)
    (pytester.path / "m.yaml").write_text(f"tree: {fakelinux}\n{CHANGED}")
    result = pytester.runpytest(
        "--kbuild-matrix=m.yaml", "--kbuild-baseline=base", "--junitxml=out/junit.xml"
    )
    result.assert_outcomes(passed=5, failed=1)
    path = pytester.path / "kbuild-results" / "report.html"
    result.stdout.fnmatch_lines([f"HTML report: {path}"])  # the default with --junitxml
    return path


def meta_of(report):
    return json.loads((report.parent / "m" / BROKEN / "metadata.json").read_text())


def open_page(browser, path):
    page = browser.new_context(permissions=["clipboard-read", "clipboard-write"]).new_page()
    problems, requests = [], []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    return page, problems, requests


def test_the_report_shows_the_run_and_each_build(browser, report):
    page, problems, requests = open_page(browser, report)
    assert page.title() == "kbuild: kbuild-results"
    # The run's header: what was built, when, how long, by which version.
    run = dict(r.split("\t") for r in page.locator("#run tr").all_inner_texts())
    assert run["tree"] == meta_of(report)["tree"]["path"]
    assert run["kernel release"] == "6.1.0" and run["pytest-kbuild"] == "0.1.0"
    assert run["started"].startswith("20") and run["wall time"].endswith(" s")
    cells = page.locator("#grid button.cell")
    assert cells.count() == 3
    assert sorted(cells.evaluate_all("els => els.map(e => e.className)")) == [
        "cell FAIL",
        "cell PASS",
        "cell PASS",
    ]
    broken = page.locator(f"button[data-build='{BROKEN}']")
    assert broken.inner_text() == "FAIL kernel 1w"  # not in the baseline: nothing is new
    # its colour comes from the status class
    assert broken.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(246, 184, 184)"

    page.select_option("#f-status", "FAIL")
    assert page.locator("#grid button.cell:not(.hidden)").count() == 1
    assert page.locator("#grid tr[data-arch='arm64']").get_attribute("class") == "hidden"
    page.select_option("#f-status", "all")
    page.select_option("#f-arch", "arm64")
    assert page.locator("#grid button.cell:not(.hidden)").all_inner_texts() == ["pass 1w +1"]
    page.select_option("#f-arch", "all")

    broken.click()
    assert page.locator("#detail").is_visible()
    assert page.locator("#d-title").inner_text() == f"{BROKEN}: FAIL"
    assert (
        page.locator("#d-compiler").inner_text()
        == f"compiler: {meta_of(report)['toolchain']['version']}"
    )
    meta = json.loads((report.parent / "m" / BROKEN / "metadata.json").read_text())
    assert page.locator("#d-reproducer").inner_text() == meta["reproducer"]
    assert "'KBUILD_NOTE=</script><img src=x onerror=alert(1)>'" in meta["reproducer"]
    rows = page.locator("#d-targets tr").all_inner_texts()
    assert rows[1].startswith("config\tPASS") and rows[2].startswith("kernel\tFAIL")
    assert "error:" in rows[2]
    assert page.locator("#d-diagnostics pre.new").count() == 0
    assert "make: Target 'bzImage' not remade" in page.locator("#d-log").inner_text()
    assert page.url.endswith(f"#build={BROKEN}")  # a link to the build

    hrefs = page.locator("#d-links a").evaluate_all("els => els.map(e => e.getAttribute('href'))")
    assert hrefs[:3] == [f"m/{BROKEN}/build.log", f"m/{BROKEN}/metadata.json", f"m/{BROKEN}/config"]
    assert all((report.parent / h).is_file() for h in hrefs)

    page.click("#copy")
    # (a locator assertion: wait_for_function would eval, which the page's CSP forbids)
    from playwright.sync_api import expect

    expect(page.locator("#copy")).to_have_text("copied")
    assert page.evaluate("navigator.clipboard.readText()") == meta["reproducer"]

    page.locator("button[data-build='x86_64-gcc-defconfig']").click()
    assert page.locator("#d-title").inner_text() == "x86_64-gcc-defconfig: PASS"
    new = page.locator("#d-diagnostics pre.new")
    assert new.count() == 1 and new.inner_text().startswith(">> kernel: scripts/inject/warn.c:7")

    groups = page.locator("#groups tr.new")
    assert groups.count() == 1 and ">>" in groups.inner_text()
    assert "3: arm64-gcc-defconfig" in groups.inner_text()

    assert problems == []  # no script error, and the img's alert never ran
    assert all(u.startswith("file://") for u in requests), requests
    assert {Path(u.split("#")[0].removeprefix("file://")) for u in requests} == {report}


def test_pytest_kbuild_report_of_a_results_dir(browser, report, tmp_path):
    from pytest_kbuild.cli.commands import main

    out = tmp_path / "elsewhere" / "r.html"
    assert main(["report", str(report.parent), "-o", str(out)]) == 0
    page, problems, _ = open_page(browser, out)
    assert page.locator("#grid button.cell").count() == 3
    page.locator(f"button[data-build='{BROKEN}']").click()
    href = page.locator("#d-links a").first.get_attribute("href")
    assert href.startswith("../") and (out.parent / href).resolve().is_file()
    assert problems == []


def test_a_build_shows_its_cases_broken_first(browser, pytester, fakelinux):
    # fakelinux has no KUnit: its kernel target gets the cases of a kunit run.
    pytester.makeconftest(FAKE_KUNIT_CONFTEST)
    one = "arch: [x86_64]\ntoolchain: [gcc]\nkconfig: [tinyconfig]\ntargets: [config, kernel]\n"
    (pytester.path / "m.yaml").write_text(f"tree: {fakelinux}\n{one}")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--junitxml=j.xml")
    result.assert_outcomes(passed=4, failed=1, skipped=1)
    page, problems, _ = open_page(browser, pytester.path / "kbuild-results" / "report.html")
    page.locator("button[data-build='x86_64-gcc-tinyconfig']").click()
    assert page.locator("#d-cases-part").is_visible()
    assert page.locator("#d-case-totals").inner_text() == "4 cases: 1 FAIL, 2 PASS, 1 SKIP"
    rows = page.locator("#d-cases tr").all_inner_texts()
    assert rows[1].startswith("kernel\tlist-kunit-test.list_del_test\tFAIL")
    assert "EXPECTATION FAILED at lib/list-test.c:55" in rows[1]
    assert [r.split("\t")[1] for r in rows[2:]] == [
        "list-kunit-test.list_add_test",
        "example.example_skip_test",
        "example.example_simple_test",
    ]
    failed = page.locator("#d-cases tr[data-case='list-kunit-test.list_del_test'] td").nth(2)
    assert failed.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(246, 184, 184)"
    assert problems == []


def test_a_build_without_cases_hides_the_cases_part(browser, report):
    page, problems, _ = open_page(browser, report)
    page.locator(f"button[data-build='{BROKEN}']").click()
    assert not page.locator("#d-cases-part").is_visible()
    assert problems == []
