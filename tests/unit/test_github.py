"""GitHub Actions output (report/github.py): workflow commands and the step summary."""

from pathlib import Path

from pytest_kbuild.report import github


def group(kind="warning", file="kernel/fork.c", line=12, new=None, builds=("b1",), **kw):
    return {
        "kind": kind,
        "tool": "gcc",
        "file": file,
        "line": line,
        "column": kw.get("column", 3),
        "message": kw.get("message", "unused variable 'x'"),
        "flag": kw.get("flag", "-Wunused-variable"),
        "builds": list(builds),
        "new": new,
    }


def test_a_command_has_the_file_line_and_column_in_the_repository():
    cmd = github.command(group(builds=("b1", "b2", "b3", "b4")), "linux/kernel/fork.c")
    assert cmd == (
        "::warning file=linux/kernel/fork.c,line=12,col=3,"
        "title=gcc warning [-Wunused-variable]%3A 4 builds"
        "::unused variable 'x' [-Wunused-variable] (b1, b2, b3 and 1 more)"
    )


def test_messages_and_properties_are_escaped_as_the_runner_reads_them():
    cmd = github.command(group(message="100% a\nb", flag="", file="a,b:c.c"), "a,b:c.c")
    assert cmd.startswith("::warning file=a%2Cb%3Ac.c,line=12,col=3,")
    assert cmd.endswith("::100%25 a%0Ab (b1)")


def test_without_a_place_in_the_repository_the_message_says_where():
    cmd = github.command(group(kind="error", new=True), None)
    assert cmd.startswith("::error title=new gcc error [-Wunused-variable]%3A 1 build::")
    assert cmd.endswith("::kernel/fork.c:12: unused variable 'x' [-Wunused-variable] (b1)")


def test_repository_path(tmp_path):
    tree = tmp_path / "repo" / "linux"
    (tree / "kernel").mkdir(parents=True)
    (tree / "kernel" / "fork.c").write_text("")
    assert github.repository_path(str(tree), "kernel/fork.o", tree) is None  # not in the tree
    assert github.repository_path(str(tree), "kernel/fork.c", tmp_path / "repo") == (
        "linux/kernel/fork.c"
    )
    assert github.repository_path(str(tree), "kernel/fork.c", tree) == "kernel/fork.c"
    assert github.repository_path(str(tree), "kernel/fork.c", tmp_path / "other") is None
    assert github.repository_path(str(tree), "", tree) is None
    assert github.repository_path(str(tree), "kernel/fork.c", None) is None


def test_errors_then_new_warnings_then_the_rest_ten_of_each_and_a_notice(tmp_path):
    (tmp_path / "kernel").mkdir()
    (tmp_path / "kernel" / "fork.c").write_text("")
    groups = [group(kind="error", line=i, message=f"e{i}") for i in range(1, 13)]
    groups.append(
        group(kind="error", file="", message="[Makefile:1: x.o] Error 1") | {"tool": "make"}
    )
    jobserver = "jobserver unavailable: using -j1.  Add '+' to parent make rule."
    groups.append(group(file="", message=jobserver) | {"tool": "make"})  # about the run
    groups += [group(line=i, message=f"w{i}") for i in range(1, 13)]
    groups += [group(line=i, new=True, message=f"n{i}") for i in range(1, 4)]
    out = github.workflow_commands(groups, {"b1": str(tmp_path)}, tmp_path)
    assert len(out) == 21
    assert all(c.startswith("::error file=kernel/fork.c,") for c in out[:10])
    assert [c.split("::")[2].split()[0] for c in out[10:20]] == [
        "n1", "n2", "n3", "w1", "w2", "w3", "w4", "w5", "w6", "w7"
    ]  # fmt: skip
    assert out[20] == (
        "::notice title=kbuild::7 more diagnostics than GitHub shows (10 errors and "
        "10 warnings per step): every one is in diagnostics.json of the results dir"
    )
    assert github.workflow_commands(groups[:2], {}, tmp_path)[-1].startswith("::error title=")


BUILDS = {
    "x86_64-gcc-defconfig": {
        "arch": "x86_64",
        "toolchain": "gcc",
        "kconfig": "defconfig",
        "targets": {
            "kernel": {
                "outcome": "failed",
                "status": "FAIL",
                "first_error": "a.c:1:2: error: x",
                "reproducer": "kbuild -a x86_64 kernel",
            }
        },
    }
}


def test_the_step_summary_has_the_grid_the_failures_and_the_diagnostics():
    text = github.step_summary(BUILDS, [group()], "1 build (1 failed)", "baseline: 1 new warning")
    assert text.startswith("## kbuild: 1 build (1 failed)\n")
    assert "FAIL kernel" in text and "a.c:1:2: error: x" in text
    assert "reproduce: kbuild -a x86_64 kernel" in text
    assert "**baseline: 1 new warning**" in text and "### Diagnostics (1)" in text
    assert text.count("```") % 2 == 0


def test_the_step_summary_is_cut_below_githubs_limit(monkeypatch):
    monkeypatch.setattr(github, "SUMMARY_LIMIT", 2000)
    many = [group(line=i, message="m" * 150) for i in range(50)]
    monkeypatch.setattr(github, "MAX_DIAGNOSTIC_LINES", 50)
    text = github.step_summary(BUILDS, many, "1 build", "")
    assert len(text.encode()) <= 2000 and text.endswith(github.CUT)


def test_append_summary_appends_and_a_file_it_cannot_write_is_a_message(tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    assert github.append_summary("## kbuild\n", {"GITHUB_STEP_SUMMARY": str(summary)}) == ""
    assert summary.read_text() == "earlier step\n## kbuild\n"
    assert github.append_summary("x", {}) == ""
    bad = tmp_path / "no" / "such" / "dir" / "summary.md"
    problem = github.append_summary("x", {"GITHUB_STEP_SUMMARY": str(bad)})
    assert problem.startswith(f"GITHUB_STEP_SUMMARY={bad} not written: ")
    assert not Path(bad).exists()


def test_active_only_in_github_actions():
    assert github.active({"GITHUB_ACTIONS": "true"})
    assert not github.active({}) and not github.active({"GITHUB_ACTIONS": "false"})


def test_the_summary_command_writes_a_results_dirs_step_summary(tmp_path, capsys):
    from pytest_kbuild.cli.commands import EXIT_INPUT, EXIT_OK, main
    from pytest_kbuild.results import write_json

    write_json(tmp_path / "results.json", {"schema": 3, "builds": BUILDS})
    assert main(["summary", str(tmp_path)]) == EXIT_OK
    out = capsys.readouterr().out
    assert out == github.step_summary(BUILDS, [], "1 build (1 failed)")
    assert out.startswith("## kbuild: 1 build (1 failed)\n") and "a.c:1:2: error: x" in out
    assert main(["summary", str(tmp_path / "none")]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert f"E: '{tmp_path / 'none'}' has no results.json with builds" in err
