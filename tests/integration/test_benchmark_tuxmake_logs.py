"""benchmarks/tuxmake_logs.py on a source tree laid out as TuxMake's sdist
(the real sdist comes from pip; the figures are in issue 12's note)."""

from __future__ import annotations

from benchmarks import tuxmake_logs

LOG_PARSER_TEST = """
import pytest

class TestLogParser:
    @pytest.mark.parametrize(
        "log,errors,warnings",
        (
            ("ld.log", 1, 0),
            ("twice.log", 0, 2),
        ),
    )
    def test_log(self, log, errors, warnings):
        pass
"""
# A line counter of the same kind as TuxMake's: every line saying error:/warning:.
LOG_PY = """
class LogParser:
    def __init__(self):
        self.errors = self.warnings = 0

    def parse(self, path):
        for line in path.open(errors="ignore"):
            self.errors += "error:" in line.lower()
            self.warnings += "warning:" in line.lower()
"""


def test_counts_side_by_side(tmp_path, capsys):
    src = tmp_path / "tuxmake-0"
    (src / "test" / "logs").mkdir(parents=True)
    (src / "tuxmake").mkdir()
    (src / "test" / "test_log_parser.py").write_text(LOG_PARSER_TEST)
    (src / "tuxmake" / "log.py").write_text(LOG_PY)
    # Real lines (tests/unit/data/logs): ld's error without "error:", and
    # one header warning printed for two objects.
    (src / "test" / "logs" / "ld.log").write_text(
        "riscv64-linux-gnu-ld: failed to merge target specific data of file b.o\n"
    )
    twice = "helper.h:4:13: warning: 'x' defined but not used [-Wunused-variable]\n"
    (src / "test" / "logs" / "twice.log").write_text(twice * 2)
    rows = {r["log"]: r for r in tuxmake_logs.compare(src)}
    assert rows["ld.log"]["expected"] == (1, 0)
    assert rows["ld.log"]["tuxmake"] == (0, 0)  # no "error:" on the line
    assert rows["ld.log"]["ours"] == (1, 0)
    assert rows["twice.log"]["tuxmake"] == (0, 2)
    assert (rows["twice.log"]["ours"], rows["twice.log"]["occurrences"]) == ((0, 1), 2)
    assert tuxmake_logs.main(["--sdist", str(src)]) == 0
    out = capsys.readouterr().out
    assert "same counts: 1 of 2 logs" in out
    assert "  ld.log: riscv64-linux-gnu-ld: failed to merge" in out
