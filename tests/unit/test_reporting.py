import json

from pytest_kbuild.plugin.reporting import ResultsReporter, cache_line


class Report:
    def __init__(self, props, outcome="passed"):
        self.user_properties = list(props.items())
        self.when = "call"
        self.outcome = outcome
        self.skipped = outcome == "skipped"
        self.failed = outcome == "failed"
        self.location = ("m.yaml", 0, "")
        self.nodeid = f"m.yaml::{props['build_id']}::{props['target']}"


def _props(build_id, target, **cache):
    ident = {"arch": "x86_64", "toolchain": "gcc", "kconfig": "tinyconfig"}
    return {**ident, "build_id": build_id, "target": target, **cache}


def test_cache_figures_reach_the_summary(tmp_path):
    r = ResultsReporter(tmp_path, ())
    r.pytest_runtest_logreport(Report(_props("a", "config")))
    r.pytest_runtest_logreport(
        Report(
            _props(
                "a",
                "kernel",
                cache_hits=8,
                cache_local_hits=2,
                cache_remote_hits=6,
                cache_misses=2,
                cache_remote_errors=0,
            )
        )
    )
    r.pytest_runtest_logreport(Report(_props("b", "kernel", cache_hits=0, cache_misses=10)))
    kernel = r.summary()["builds"]["m.yaml::a"]["targets"]["kernel"]
    assert kernel["cache"] == {
        "hits": 8,
        "local_hits": 2,
        "remote_hits": 6,
        "misses": 2,
        "remote_errors": 0,
    }
    assert "cache" not in r.summary()["builds"]["m.yaml::a"]["targets"]["config"]
    assert cache_line(r.builds) == (
        "compiler cache: 40.0% hits (8 hits: 2 local, 6 remote; 12 misses; 0 remote errors)"
    )


def test_no_cache_line_without_figures(tmp_path):
    r = ResultsReporter(tmp_path, ())
    r.pytest_runtest_logreport(Report(_props("a", "config")))
    assert cache_line(r.builds) == ""


class Session:
    exitstatus = 0


def test_a_kcidb_document_that_cannot_be_written_loses_no_other_result(tmp_path):
    from kcidb_io.schema import LATEST

    from pytest_kbuild.report.kcidb import Destination

    (tmp_path / "a-file").write_text("")
    bad = tmp_path / "a-file" / "kcidb.json"  # its folder cannot be made
    r = ResultsReporter(tmp_path / "res", (), kcidb=Destination(bad, "my_ci"))
    r.pytest_runtest_logreport(Report({**_props("a", "config"), "status": "PASS"}))
    session = Session()
    r.pytest_sessionfinish(session)
    [problem] = r.problems
    assert problem.startswith(f"KCIDB document {bad} not written: ")
    assert r.kcidb is None and session.exitstatus == 0
    assert (tmp_path / "res" / "results.json").is_file()
    assert (tmp_path / "res" / "diagnostics.json").is_file()

    good = tmp_path / "kcidb.json"
    r = ResultsReporter(tmp_path / "res", (), kcidb=Destination(good, "my_ci"))
    r.pytest_runtest_logreport(Report({**_props("a", "config"), "status": "PASS"}))
    r.pytest_sessionfinish(Session())
    doc = json.loads(good.read_text())
    LATEST.validate(doc)
    assert [b["status"] for b in doc["builds"]] == ["PASS"] and not r.problems


def test_every_report_that_cannot_be_written_is_named_and_the_others_are_written(tmp_path):
    (tmp_path / "a-file").write_text("")
    cq, html = tmp_path / "a-file" / "cq.json", tmp_path / "a-file" / "report.html"
    log = tmp_path / "a-file" / "kbuild.sarif"
    r = ResultsReporter(tmp_path / "res", (), codequality=cq, sarif=log, html=html)
    r.pytest_runtest_logreport(Report(_props("a", "kernel")))
    r.pytest_sessionfinish(Session())
    assert (tmp_path / "res" / "results.json").is_file()
    assert (tmp_path / "res" / "diagnostics.json").is_file()
    assert [p.split(" not written: ")[0] for p in r.problems] == [
        f"code quality report {cq}",
        f"SARIF report {log}",
        f"HTML report {html}",
    ]
