"""diagnostics.py on lines from real builds (see data/logs/README.md)."""

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_kbuild import diagnostics
from pytest_kbuild.diagnostics import Diagnostic, Kind, Tool

LOGS = Path(__file__).parent / "data" / "logs"
TREE = "/usr/src/linux-source-6.1"


def log(name):
    return (LOGS / name).read_text()


def parse(name, **kwargs):
    return diagnostics.parse(log(name), **kwargs)


def only(diags, **fields):
    found = [d for d in diags if all(getattr(d, k) == v for k, v in fields.items())]
    assert len(found) == 1, found
    return found[0]


# --- gcc ---------------------------------------------------------------------


def test_gcc_warning_with_flag_and_snippet():
    d = parse("x86_64-gcc-w1.log", tree=TREE, build_dir="/tmp/dg/x86")[0]
    assert d == Diagnostic(
        kind=Kind.WARNING,
        tool=Tool.COMPILER,
        message="no previous prototype for ‘arch_post_acpi_subsys_init’",
        file="init/main.c",
        line=749,
        column=20,
        flag="-Wmissing-prototypes",
        raw=(
            f"{TREE}/init/main.c:749:20: warning: no previous prototype for"
            " ‘arch_post_acpi_subsys_init’ [-Wmissing-prototypes]",
            "  749 | void __init __weak arch_post_acpi_subsys_init(void) { }",
            "      |                    ^~~~~~~~~~~~~~~~~~~~~~~~~~",
        ),
    )


def test_in_file_included_from_is_context_of_the_next_warning():
    d = only(parse("x86_64-gcc-w1.log", tree=TREE), file="kernel/sched/rt.c")
    assert d.raw[0] == f"In file included from {TREE}/kernel/sched/build_policy.c:45:"
    assert (d.line, d.column, d.flag) == (9, 18, "-Wunused-const-variable=")
    assert len(d.raw) == 4


def test_in_function_and_at_top_level_are_context():
    diags = parse("x86_64-gcc-w1.log", tree=TREE)
    l3 = only(diags, message="variable ‘l3_id’ set but not used")
    assert l3.raw[0].endswith("cacheinfo.c: In function ‘init_intel_cacheinfo’:")
    l2 = only(diags, message="variable ‘l2_id’ set but not used")
    assert "In function" not in l2.raw[0]
    printk = only(diags, message="no previous prototype for ‘__warn_printk’")
    assert printk.raw[0] == f"{TREE}/kernel/panic.c: At top level:"


def test_notes_are_context_not_records():
    diags = parse("x86_64-gcc-w1.log", tree=TREE)
    hrtimer = [d for d in diags if d.file == "kernel/time/hrtimer.c"]
    assert [d.line for d in hrtimer] == [124, 125]
    assert (
        hrtimer[0]
        .raw[-1]
        .endswith("note: (near initialization for ‘hrtimer_clock_to_base_table[0]’)")
    )
    assert not any("note:" in d.message for d in diags)


def test_note_after_its_own_include_chain():
    diags = parse("module-warnings.log", tree=TREE, build_dir="/tmp/kmod/m2")
    fmt = only(diags, flag="-Wformat=")
    assert fmt.file == "include/linux/kern_levels.h"
    assert fmt.raw[0] == f"In file included from {TREE}/include/asm-generic/bug.h:22,"
    assert fmt.raw[6].endswith("from /tmp/kmod/m2/warns.c:1:")
    assert fmt.raw[-3].endswith("warns.c:11:9: note: in expansion of macro ‘pr_info’")
    assert len(fmt.raw) == 25
    uninit = only(diags, flag="-Wuninitialized")
    assert (uninit.file, uninit.raw[1]) == (
        "helper.h",
        "/tmp/kmod/m2/helper.h: In function ‘helper_sum’:",
    )
    assert uninit.raw[-4].endswith("helper.h:3:13: note: ‘i’ was declared here")
    assert uninit.raw[-1] == "cc1: some warnings being treated as errors"


def test_gcc_werror_flag_is_an_error_and_cc1_line_is_context():
    diags = parse("module-errors.log", tree=TREE, build_dir="/tmp/kmod/m1")
    d = only(diags, file="werr.c")
    assert (d.kind, d.flag, d.message) == (
        Kind.ERROR,
        "-Werror=unused-variable",
        "unused variable ‘unused’",
    )
    assert d.raw[0] == "/tmp/kmod/m1/werr.c: In function ‘werr_init’:"
    default = only(parse("module-warnings.log"), flag="-Werror=incompatible-pointer-types")
    assert default.kind is Kind.ERROR
    assert default.raw[5] == "      |                      long int *"
    assert default.raw[6].endswith("note: expected ‘int *’ but argument is of type ‘long int *’")


def test_gcc_fatal_error():
    d = only(parse("module-errors.log", build_dir="/tmp/kmod/m1"), file="missing.c")
    assert (d.kind, d.tool, d.line, d.column, d.flag) == (Kind.ERROR, Tool.COMPILER, 2, 10, "")
    assert d.message == "linux/no_such_header.h: No such file or directory"
    assert "compilation terminated." in d.raw


def test_gcc_colours_are_ignored():
    [d] = parse("gcc-color.log")
    assert (d.file, d.line, d.column, d.flag) == ("col.c", 3, 13, "-Wunused-variable")
    assert d.message == "unused variable ‘unused’"
    assert d.raw[0] == "col.c: In function ‘f’:"


def test_kernel_doc_warnings_have_their_own_tool():
    diags = parse("x86_64-gcc-w1.log", tree=TREE)
    pt = [d for d in diags if d.file == "arch/x86/events/intel/pt.c"]
    assert {d.tool for d in pt} == {Tool.KERNEL_DOC}
    assert [d.line for d in pt] == [747, 1220, 1220, 1220, 1302, 1302]
    assert pt[0].column is None
    comment = only(diags, file="kernel/time/timekeeping.c", line=1705)
    assert comment.raw[1] == " * We have three kinds of time sources to use for sleep time"
    assert only(diags, message="bad line:").tool is Tool.KERNEL_DOC


# --- clang -------------------------------------------------------------------


def test_clang_warning_keeps_its_note_snippet_and_fixit():
    first, second = parse("arm64-clang-w1.log", tree=TREE)
    assert (first.tool, first.kind, first.file, first.line, first.column, first.flag) == (
        Tool.COMPILER,
        Kind.WARNING,
        "init/main.c",
        749,
        20,
        "-Wmissing-prototypes",
    )
    assert first.message == "no previous prototype for function 'arch_post_acpi_subsys_init'"
    assert first.raw[1:] == (
        "void __init __weak arch_post_acpi_subsys_init(void) { }",
        "                   ^",
        f"{TREE}/init/main.c:749:1: note: declare 'static' if the function is not intended"
        " to be used outside of this translation unit",
        "void __init __weak arch_post_acpi_subsys_init(void) { }",
        "^",
        "static",
    )
    assert second.raw[-1] == "2 warnings generated."


@pytest.mark.parametrize("log_name", ["gcc-color.log", "gas-stdin.log", "arm64-clang-w1.log"])
def test_a_diagnostics_lines_end_at_the_next_command_build_log_names(log_name):
    # Bug: after clang's last warning, build.log's "$ xz ..." line (the next
    # command the build ran) was kept as one of the warning's lines.
    text = log(log_name).rstrip("\n")
    command = "$ xz -T1 --keep --check=crc32 --lzma2=dict=1MiB vmlinux"
    diags = diagnostics.parse(f"{text}\n{command}\nvmlinux.xz done\n", tree=TREE)
    assert [d.raw for d in diags] == [d.raw for d in parse(log_name, tree=TREE)]
    assert all(command not in d.raw for d in diags)


def test_clang_werror_flag():
    diags = parse("arm64-clang-werror.log", tree=TREE)
    errors = [d for d in diags if d.tool is Tool.COMPILER]
    assert {(d.kind, d.flag) for d in errors} == {(Kind.ERROR, "-Werror,-Wmissing-prototypes")}
    assert [d.line for d in errors] == [749, 761]
    assert errors[1].raw[-1] == "2 errors generated."
    assert diagnostics.first_errors(diags) == errors
    assert [d.file for d in diags if d.tool is Tool.MAKE] == ["init/main.o", "init"]


# --- dtc ---------------------------------------------------------------------


def test_dtc_warnings():
    diags = parse("dtc.log", tree=TREE)
    assert {(d.tool, d.kind) for d in diags} == {(Tool.DTC, Kind.WARNING)}
    d = only(diags, line=433)
    assert (d.file, d.column, d.flag) == (
        "arch/arm64/boot/dts/rockchip/rk3399.dtsi",
        26,
        "-Wunit_address_vs_reg",
    )
    assert d.message == "/usb@fe800000: node has a unit name, but no reg or ranges property"
    assert d.raw[1].startswith("  also defined at ")
    assert len(only(diags, file="scripts/dtc/include-prefixes/arm/bcm283x.dtsi").raw) == 4


# --- dt-schema (dtbs_check) -------------------------------------------------


def test_dt_schema_findings_are_warnings_with_their_schema():
    diags = parse("dtbs-check.log", tree=TREE, build_dir="/tmp/dg/arm64")
    assert {(d.tool, d.kind) for d in diags} == {(Tool.DT_SCHEMA, Kind.WARNING)}
    assert len(diags) == 8
    assert {d.flag for d in diags} == {""}  # dt-validate names no -W flag (found by mutmut)
    binding = diags[0]
    assert binding.file == "Documentation/devicetree/bindings/pci/amlogic,axg-pcie.yaml"
    assert binding.message.startswith("Unable to find schema file matching $id: ")
    d = diags[1]
    assert d.file == "arch/arm64/boot/dts/toshiba/tmpv7708-rm-mbrc.dtb"
    assert d.message == (
        "pmux@24190000: $nodename:0: 'pmux@24190000' does not match '^(pinctrl|pinmux)(@[0-9a-f]+)?$'"
    )
    assert d.raw[1] == (
        "\tFrom schema: /usr/src/linux-source-6.1/Documentation/devicetree/bindings/pinctrl/"
        "toshiba,visconti-pinctrl.yaml"
    )
    assert diagnostics.summary(diags) == {"errors": 0, "warnings": 8}


def test_a_finding_written_onto_another_dt_validates_schema_line_is_still_found():
    """Two dt-validate runs (make -j2) share stderr; each writes its "From
    schema" line and the newline after it apart, so the other's finding can
    land between them (seen once in CI: one board's finding went missing)."""
    text = log("dtbs-check.log")
    lines = text.splitlines()
    # lines 3 and 4 (0-based 2, 3): the first pinctrl finding's schema line,
    # then the second finding, joined as the two writes interleave.
    assert lines[2].startswith("\tFrom schema: ") and "dtb: " in lines[3]
    tangled = "\n".join([*lines[:2], lines[2] + lines[3], *lines[4:], ""])
    diags = diagnostics.parse(tangled, tree=TREE, build_dir="/tmp/dg/arm64")
    untangled = parse("dtbs-check.log", tree=TREE, build_dir="/tmp/dg/arm64")
    assert [(d.file, d.message, d.raw) for d in diags] == [
        (d.file, d.message, d.raw) for d in untangled
    ]


def test_paths_as_a_container_mounts_them_are_made_relative_too():
    text = log("dtbs-check.log").replace("/tmp/dg/arm64", "/kbuild/build")
    text = text.replace(TREE, "/kbuild/src")
    diags = diagnostics.parse(
        text, tree=TREE, build_dir="/tmp/b", guest=("/kbuild/src", "/kbuild/build")
    )
    on_host = parse("dtbs-check.log", tree=TREE, build_dir="/tmp/dg/arm64")
    assert [(d.file, d.message) for d in diags] == [(d.file, d.message) for d in on_host]
    assert diags[0].file == "Documentation/devicetree/bindings/pci/amlogic,axg-pcie.yaml"
    assert diags[1].file == "arch/arm64/boot/dts/toshiba/tmpv7708-rm-mbrc.dtb"
    unmapped = diagnostics.parse(text, tree=TREE, build_dir="/tmp/b")
    assert unmapped[1].file == "/kbuild/build/arch/arm64/boot/dts/toshiba/tmpv7708-rm-mbrc.dtb"


# --- assembler ---------------------------------------------------------------


def test_gas_errors_in_kernel_objects():
    diags = parse("module-errors.log", tree=TREE, build_dir="/tmp/kmod/m1")
    gas = only(diags, file="gas.S")
    assert (gas.tool, gas.kind, gas.line, gas.message) == (
        Tool.ASSEMBLER,
        Kind.ERROR,
        3,
        "bad register name `%zz'",
    )
    assert gas.raw[0] == "/tmp/kmod/m1/gas.S: Assembler messages:"
    inline = only(diags, file="badasm.c")
    assert (inline.tool, inline.line) == (Tool.ASSEMBLER, 4)


def test_gas_standard_input():
    [d] = parse("gas-stdin.log")
    assert (d.tool, d.kind, d.file, d.line) == (Tool.ASSEMBLER, Kind.ERROR, "{standard input}", 28)
    assert d.raw == (
        "{standard input}: Assembler messages:",
        "{standard input}:28: Error: bad instruction `bogus_insn'",
    )


# --- linkers -----------------------------------------------------------------


def test_gnu_ld_undefined_reference():
    plain, debug = parse("ld-undefined.log", build_dir="/tmp/dg/ld")
    assert (plain.tool, plain.kind, plain.file, plain.line) == (
        Tool.LINKER,
        Kind.ERROR,
        "u.c",
        None,
    )
    assert plain.message == "undefined reference to `missing_symbol'"
    assert plain.raw[0] == "ld: ug.o: in function `_start':"
    assert (debug.file, debug.line) == ("u.c", 2)
    assert plain.key == debug.key


def test_lld_error_with_referenced_by_lines():
    [d] = parse("ld.lld.log")
    assert (d.tool, d.kind, d.message) == (
        Tool.LINKER,
        Kind.ERROR,
        "undefined symbol: missing_symbol",
    )
    assert d.raw[1:] == (">>> referenced by u.c", ">>>               u.o:(_start)")


def test_ld_rwx_warning():
    [d] = parse("ld-rwx.log")
    assert (d.tool, d.kind, d.message) == (
        Tool.LINKER,
        Kind.WARNING,
        "r has a LOAD segment with RWX permissions",
    )


def test_riscv_merge_failure():
    abi, merge, entry = parse("riscv-ld.log")
    assert (abi.kind, abi.file, abi.message) == (
        Kind.ERROR,
        "b.o",
        "can't link double-float modules with soft-float modules",
    )
    assert (merge.kind, merge.file) == (Kind.ERROR, "b.o")
    assert merge.message == "failed to merge target specific data of file b.o"
    assert entry.kind is Kind.WARNING


# --- modpost, objtool --------------------------------------------------------


def test_modpost():
    diags = parse("modpost.log", tree=TREE, build_dir="/tmp/kmod/m2")
    mismatch, undefined, detected = diags[:3]
    assert (mismatch.tool, mismatch.kind, mismatch.file) == (
        Tool.MODPOST,
        Kind.WARNING,
        "mismatch.o",
    )
    assert mismatch.message.startswith("section mismatch in reference: mismatch_late_call")
    assert (undefined.tool, undefined.kind, undefined.file) == (
        Tool.MODPOST,
        Kind.ERROR,
        "undef.ko",
    )
    assert undefined.message == '"kbuild_no_such_symbol" [undef.ko] undefined!'
    assert detected.message == "Section mismatches detected."
    assert detected.raw[1] == "Set CONFIG_SECTION_MISMATCH_WARN_ONLY=y to allow them."


def test_objtool():
    build, direct = parse("objtool.log", build_dir="/tmp/kmod/m3")
    assert (build.tool, build.kind, build.file) == (Tool.OBJTOOL, Kind.WARNING, "fall.o")
    assert build.message == ".text: unexpected end of section"
    assert direct.message == "fall_through+0x6: call without frame pointer save/setup"


# --- kconfig, make -----------------------------------------------------------


def test_kconfig():
    diags = parse("kconfig.log")
    assert {d.tool for d in diags} == {Tool.KCONFIG}
    assert {d.kind for d in diags} == {Kind.WARNING}
    blank = diags[0]
    assert (blank.file, blank.line, blank.message) == (
        "Kconfig",
        14,
        "'BUS_C' defined with blank help text",
    )
    unmet = only(diags, message="unmet direct dependencies detected for HELPER_B")
    assert unmet.raw[1:] == (
        "  Depends on [n]: BUS_C [=n]",
        "  Selected by [y]:",
        "  - FEATURE_A [=y]",
    )
    override = only(diags, file=".config", line=1298)
    assert override.message == "override: reassigning to symbol MODULES"
    assert only(diags, line=1300, message="symbol value 'lots' invalid for NR_CPUS")


def test_make_errors_name_the_target():
    diags = parse("module-errors.log", tree=TREE, build_dir="/tmp/kmod/m1")
    make = [d for d in diags if d.tool is Tool.MAKE]
    assert [d.file for d in make] == ["missing.o", "werr.o", "gas.o", "badasm.o", ".", "__sub-make"]
    assert make[0].message == "[scripts/Makefile.build:255: missing.o] Error 1"
    assert {d.kind for d in make} == {Kind.ERROR}
    no_rule = parse("make-no-rule.log")[0]
    assert (no_rule.tool, no_rule.message) == (
        Tool.MAKE,
        "No rule to make target 'nosuchtarget'.  Stop.",
    )


# --- merging, keys, JSON -----------------------------------------------------


def test_a_header_warning_seen_twice_is_one_record():
    [d] = parse("header-twice.log", build_dir="/tmp/kmod/m4")
    assert (d.file, d.line, d.count) == ("helper.h", 4, 2)
    assert d.raw[0] == "In file included from /tmp/kmod/m4/one.c:2:"


def test_sh4_header_warning_from_every_object_is_one_record():
    clone3, minalign = parse("sh4-gcc.log", tree=TREE)
    assert (clone3.file, clone3.line, clone3.column, clone3.flag) == ("<stdin>", 1517, 2, "-Wcpp")
    assert clone3.message == "#warning syscall clone3 not implemented"
    assert (minalign.file, minalign.line, minalign.column, minalign.count) == (
        "arch/sh/include/asm/page.h",
        184,
        None,
        2,
    )
    assert minalign.message == '"ARCH_DMA_MINALIGN" redefined'
    assert minalign.raw[4] == f"                 from {TREE}/init/main.c:17:"
    assert minalign.raw[-3].endswith(
        "cache.h:104: note: this is the location of the previous definition"
    )
    assert minalign.raw[-1] == "      |"


def test_key_survives_line_shifts_and_prefixes():
    text = log("x86_64-gcc-w1.log")
    here = parse("x86_64-gcc-w1.log", tree=TREE)
    moved = diagnostics.parse(
        text.replace(TREE + "/", "../").replace(":749:20:", ":761:20:"), tree="/elsewhere"
    )
    assert [d.key for d in here] == [d.key for d in moved]
    assert here[0].line != moved[0].line
    assert here[0].key == "init/main.c|warning|-Wmissing-prototypes|no previous prototype for '_'"


def test_key_blanks_numbers_and_quoted_names():
    assert diagnostics.normalise_message("x.o:(.text+0x1d): `foo' ‘bar’ 'baz' \"q\" 12 ext4") == (
        "x.o:(.text+N): '_' '_' '_' '_' N ext4"
    )


def test_json_round_trip():
    diags = parse("module-warnings.log", tree=TREE, build_dir="/tmp/kmod/m2")
    data = json.loads(json.dumps([d.to_json() for d in diags]))
    assert [Diagnostic.from_json(d) for d in data] == diags
    assert data[0]["key"] == diags[0].key
    assert data[0]["kind"] == "error" and data[0]["tool"] == "compiler"


def test_summary_counts_distinct_records():
    assert diagnostics.summary(parse("x86_64-gcc-w1.log")) == {"errors": 0, "warnings": 27}
    assert diagnostics.summary(parse("header-twice.log")) == {"errors": 0, "warnings": 1}
    assert diagnostics.summary([]) == {"errors": 0, "warnings": 0}


def test_summary_counts_makes_lines_only_when_nothing_else_failed():
    # one compiler error, echoed by make at three levels
    assert diagnostics.summary(parse("module-warnings.log")) == {"errors": 1, "warnings": 3}
    # make's own complaint, not its echo
    assert diagnostics.summary(parse("make-no-rule.log")) == {"errors": 1, "warnings": 0}
    # only echoes: the first one is the failed recipe
    echoes = [d for d in parse("module-errors.log") if d.tool is Tool.MAKE]
    assert diagnostics.summary(echoes) == {"errors": 1, "warnings": 0}


# --- first_errors ------------------------------------------------------------


def test_first_errors_put_the_cause_before_make():
    diags = parse("module-errors.log", build_dir="/tmp/kmod/m1")
    assert [(d.tool, d.file) for d in diagnostics.first_errors(diags)] == [
        (Tool.COMPILER, "werr.c"),
        (Tool.COMPILER, "missing.c"),
        (Tool.ASSEMBLER, "gas.S"),
        (Tool.ASSEMBLER, "badasm.c"),
    ]
    assert len(diagnostics.first_errors(diags, limit=2)) == 2


def test_shell_errors():
    diags = parse("shell-not-found.log", tree=TREE)
    assert (diags[0].tool, diags[0].kind, diags[0].message) == (
        Tool.OTHER,
        Kind.ERROR,
        "/bin/sh: 1: nosuchflex: not found",
    )
    assert diags[1].file == "scripts/kconfig/lexer.lex.c"
    assert diagnostics.first_errors(diags) == diags[:1]


def test_first_errors_other_programs_after_the_tools():
    diags = diagnostics.parse(log("shell-not-found.log") + log("modpost.log"))
    assert [d.tool for d in diagnostics.first_errors(diags)] == [
        Tool.MODPOST,
        Tool.MODPOST,
        Tool.OTHER,
    ]


def test_first_errors_fall_back_to_make():
    diags = parse("make-no-rule.log")
    assert [d.message for d in diagnostics.first_errors(diags)] == [
        "No rule to make target 'nosuchtarget'.  Stop.",
        "[Makefile:250: __sub-make] Error 2",
    ]
    assert diagnostics.first_errors(parse("header-twice.log")) == []


@pytest.mark.parametrize(
    "text",
    ["", "  CC      init/main.o\n  LD      vmlinux\n", "  CC      drivers/base/error.o\n"],
)
def test_quiet_lines_are_not_diagnostics(text):
    assert diagnostics.parse(text) == []


# --- any mix of lines --------------------------------------------------------

REAL_LINES = sorted({ln for p in LOGS.glob("*.log") for ln in p.read_text().splitlines()})


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(REAL_LINES) | st.text(max_size=40), max_size=40))
def test_any_mix_of_lines_parses_into_records_made_of_its_lines(lines):
    text = "\n".join(lines)
    diags = diagnostics.parse(text, tree=TREE)
    printed = set(diagnostics._ANSI.sub("", text).splitlines()) | {
        ln.rstrip() for ln in diagnostics._ANSI.sub("", text).splitlines()
    }
    for d in diags:
        assert d.raw and set(d.raw) <= printed
        assert d.count >= 1
        assert Diagnostic.from_json(json.loads(json.dumps(d.to_json()))) == d
    assert len(
        {(d.kind, d.tool, d.message, d.file, d.line, d.column, d.flag) for d in diags}
    ) == len(diags)
    assert sum(diagnostics.summary(diags).values()) <= len(diags)


def test_what_a_failing_recipe_printed_last_is_the_error(tmp_path):
    # The form of Linux 4.x's arch/x86 "checkbin" (and TuxMake's
    # compiler-lacks.log): a recipe echoes why it stops and exits 1; only
    # make's "***" lines follow. Real make, run here.
    (tmp_path / "Makefile").write_text(
        "all: checkbin\n\techo '  CC      init/main.o'\n"
        "checkbin:\n\t@echo Compiler lacks asm-goto support.; exit 1\n"
    )
    done = subprocess.run(
        ["make", "-s", "-C", str(tmp_path), "--no-print-directory"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    diags = diagnostics.parse(done.stdout + done.stderr)
    cause, make = diags
    assert (cause.kind, cause.tool, cause.message) == (
        Kind.ERROR,
        Tool.OTHER,
        "Compiler lacks asm-goto support.",
    )
    assert make.tool is Tool.MAKE and make.message.endswith("checkbin] Error 1")
    assert diagnostics.first_errors(diags) == [cause]
    assert diagnostics.summary(diags) == {"errors": 1, "warnings": 0}


def test_a_recipe_line_is_not_the_error_when_a_tool_said_why():
    diags = parse("shell-not-found.log", tree=TREE)
    assert [d.tool for d in diags if d.kind is Kind.ERROR][0] is Tool.OTHER
    assert len([d for d in diags if d.tool is Tool.OTHER]) == 1
    werr = parse("module-errors.log", tree=TREE, build_dir="/tmp/kmod/m1")
    assert all(d.tool is not Tool.OTHER for d in werr)


JOBSERVER = """\
make[3]: warning: -j0 forced in makefile: resetting jobserver mode.
make[3]: warning: jobserver unavailable: using -j1.  Add '+' to parent make rule.
kernel/fork.c:10:5: warning: unused variable 'x' [-Wunused-variable]
"""


def test_make_jobserver_warnings_are_kept_but_not_counted():
    # Seen in Linux 6.1 x86_64 tinyconfig under -n 2: about how make ran,
    # not about the kernel, so the grid and JUnit counts leave them out.
    diags = diagnostics.parse(JOBSERVER)
    assert [d.about_the_run for d in diags] == [True, True, False]
    assert diagnostics.summary(diags) == {"errors": 0, "warnings": 1}
    assert not diagnostics.about_the_run("compiler", "jobserver in a compiler message")


# -- gaps found by mutation testing (benchmarks/mutation.py diagnostics) -------------------

K, T = Kind, Tool
ONE_LINE = [
    (
        'ERROR: modpost: "foo" [drivers/x/y.ko] undefined!',
        (K.ERROR, T.MODPOST, '"foo" [drivers/x/y.ko] undefined!', "drivers/x/y.ko", None, None, ""),
    ),
    (
        "WARNING: modpost: missing MODULE_DESCRIPTION() in drivers/x/z.o",
        (
            K.WARNING,
            T.MODPOST,
            "missing MODULE_DESCRIPTION() in drivers/x/z.o",
            "drivers/x/z.o",
            None,
            None,
            "",
        ),
    ),
    (
        "WARNING: modpost: vmlinux: section mismatch in reference: f (section: .text) -> g (section: .init.text)",
        (
            K.WARNING,
            T.MODPOST,
            "vmlinux: section mismatch in reference: f (section: .text) -> g (section: .init.text)",
            "",
            None,
            None,
            "",
        ),
    ),
    (
        "WARNING: modpost: something odd",
        (K.WARNING, T.MODPOST, "something odd", "", None, None, ""),
    ),
    (
        "WARNING: unmet direct dependencies detected for FOO",
        (K.WARNING, T.KCONFIG, "unmet direct dependencies detected for FOO", "", None, None, ""),
    ),
    (
        "arch/x86/Kconfig:12:warning: defaults for choice values are not supported",
        (
            K.WARNING,
            T.KCONFIG,
            "defaults for choice values are not supported",
            "arch/x86/Kconfig",
            12,
            None,
            "",
        ),
    ),
    (
        "vmlinux.o: warning: objtool: foo+0x1: call to bar() leaves .noinstr.text section",
        (
            K.WARNING,
            T.OBJTOOL,
            "foo+0x1: call to bar() leaves .noinstr.text section",
            "vmlinux.o",
            None,
            None,
            "",
        ),
    ),
    (
        "Error: /src/linux/arch/arm64/boot/dts/x.dts:10.5-12 syntax error",
        (K.ERROR, T.DTC, "syntax error", "arch/arm64/boot/dts/x.dts", 10, 5, ""),
    ),
    (
        "FATAL ERROR: Unable to parse input tree",
        (K.ERROR, T.DTC, "Unable to parse input tree", "", None, None, ""),
    ),
    (
        "scripts/Makefile.build:41: *** missing separator.  Stop.",
        (K.ERROR, T.MAKE, "missing separator.  Stop.", "scripts/Makefile.build", 41, None, ""),
    ),
    (
        "/build/o/Makefile:5: warning: overriding recipe for target 'x'",
        (K.WARNING, T.MAKE, "overriding recipe for target 'x'", "Makefile", 5, None, ""),
    ),
    (
        "arch/x86/entry/entry_64.S:10: Error: no such instruction: `foo'",
        (
            K.ERROR,
            T.ASSEMBLER,
            "no such instruction: `foo'",
            "arch/x86/entry/entry_64.S",
            10,
            None,
            "",
        ),
    ),
    (
        "/tmp/ccAbc.s:5:3: error: unknown mnemonic",
        (K.ERROR, T.ASSEMBLER, "unknown mnemonic", "/tmp/ccAbc.s", 5, 3, ""),
    ),
    (
        "<instantiation>:1:2: error: invalid operand for instruction",
        (K.ERROR, T.ASSEMBLER, "invalid operand for instruction", "<instantiation>", 1, 2, ""),
    ),
    (
        "{standard input}:3:1: error: bad register",
        (K.ERROR, T.ASSEMBLER, "bad register", "{standard input}", 3, 1, ""),
    ),
    (
        "/src/linux/kernel/fork.c:100: warning: Function parameter or member 'x' not described in 'f'",
        (
            K.WARNING,
            T.KERNEL_DOC,
            "Function parameter or member 'x' not described in 'f'",
            "kernel/fork.c",
            100,
            None,
            "",
        ),
    ),
    (
        "kernel/a.c:1:2: warning: No description found for return value of 'f' [-Wfoo]",
        (
            K.WARNING,
            T.COMPILER,
            "No description found for return value of 'f'",
            "kernel/a.c",
            1,
            2,
            "-Wfoo",
        ),
    ),
    (
        "kernel/a.c:3: warning: something of the compiler",
        (K.WARNING, T.COMPILER, "something of the compiler", "kernel/a.c", 3, None, ""),
    ),
    (
        "gcc: error: unrecognized command-line option '-mfoo'",
        (K.ERROR, T.COMPILER, "unrecognized command-line option '-mfoo'", "", None, None, ""),
    ),
    (
        "x86_64-linux-gnu-gcc-12: fatal error: no input files",
        (K.ERROR, T.COMPILER, "no input files", "", None, None, ""),
    ),
    (
        "make[2]: *** [scripts/Makefile.build:250: kernel/fork.o] Error 1",
        (
            K.ERROR,
            T.MAKE,
            "[scripts/Makefile.build:250: kernel/fork.o] Error 1",
            "kernel/fork.o",
            None,
            None,
            "",
        ),
    ),
    (
        "kernel/fork.o:(.text+0x1): undefined reference to `foo'",
        (K.ERROR, T.LINKER, "undefined reference to `foo'", "kernel/fork.o", None, None, ""),
    ),
    (
        "/src/linux/kernel/a.c:12: undefined reference to `bar'",
        (K.ERROR, T.LINKER, "undefined reference to `bar'", "kernel/a.c", 12, None, ""),
    ),
    (
        "make: *** No rule to make target 'foo'.  Stop.",
        (K.ERROR, T.MAKE, "No rule to make target 'foo'.  Stop.", "", None, None, ""),
    ),
    (
        "make[1]: warning: jobserver unavailable: using -j1.  Add '+' to parent make rule.",
        (
            K.WARNING,
            T.MAKE,
            "jobserver unavailable: using -j1.  Add '+' to parent make rule.",
            "",
            None,
            None,
            "",
        ),
    ),
    (
        "/bin/sh: 1: foo-tool: not found",
        (K.ERROR, T.OTHER, "/bin/sh: 1: foo-tool: not found", "", None, None, ""),
    ),
    (
        "error: something broke in /build/o/x",
        (K.ERROR, T.OTHER, "something broke in x", "", None, None, ""),
    ),
    ("Warning: bare words", (K.WARNING, T.OTHER, "bare words", "", None, None, "")),
    (
        "scripts/kconfig/conf: error: bad input",
        (K.ERROR, T.OTHER, "scripts/kconfig/conf: error: bad input", "", None, None, ""),
    ),
    (
        "*** Your compiler is too old",
        (K.ERROR, T.OTHER, "Your compiler is too old", "", None, None, ""),
    ),
    (
        "ld: kernel/a.o: in function `f': a.c:(.text+0x5): undefined reference to `g'",
        (
            K.ERROR,
            T.LINKER,
            "in function `f': a.c:(.text+0x5): undefined reference to `g'",
            "kernel/a.o",
            None,
            None,
            "",
        ),
    ),
    (
        "ld.lld: error: undefined symbol: foo",
        (K.ERROR, T.LINKER, "undefined symbol: foo", "", None, None, ""),
    ),
    (
        "x86_64-linux-gnu-ld: warning: vmlinux has a LOAD segment with RWX permissions",
        (
            K.WARNING,
            T.LINKER,
            "vmlinux has a LOAD segment with RWX permissions",
            "",
            None,
            None,
            "",
        ),
    ),
    (
        "ld: /build/o/drivers/x.o: relocation R_X86_64_32 against `.rodata' can not be used",
        (
            K.ERROR,
            T.LINKER,
            "relocation R_X86_64_32 against `.rodata' can not be used",
            "drivers/x.o",
            None,
            None,
            "",
        ),
    ),
    (
        "ld: cannot find -lfoo: No such file or directory",
        (K.ERROR, T.LINKER, "cannot find -lfoo: No such file or directory", "", None, None, ""),
    ),
    (
        "aarch64-linux-gnu-ld: error in kernel/b.o(.eh_frame); no .eh_frame_hdr table will be created",
        (
            K.ERROR,
            T.LINKER,
            "error in kernel/b.o(.eh_frame); no .eh_frame_hdr table will be created",
            "",
            None,
            None,
            "",
        ),
    ),
    (
        "ld: /src/linux/kernel/a.c:12: undefined reference to `foo'",
        (K.ERROR, T.LINKER, "undefined reference to `foo'", "kernel/a.c", 12, None, ""),
    ),
    (
        "ld: vmlinux.o: warning: relocation in read-only section `.text'",
        (
            K.WARNING,
            T.LINKER,
            "relocation in read-only section `.text'",
            "vmlinux.o",
            None,
            None,
            "",
        ),
    ),
    (
        "arch/x86/kernel/head_64.S:5: Warning: setting incorrect section attributes",
        (
            K.WARNING,
            T.ASSEMBLER,
            "setting incorrect section attributes",
            "arch/x86/kernel/head_64.S",
            5,
            None,
            "",
        ),
    ),
    (
        "gcc: warning: switch '-mfoo' is no longer supported",
        (K.WARNING, T.COMPILER, "switch '-mfoo' is no longer supported", "", None, None, ""),
    ),
    (
        "scripts/sign-file: warning: not signing",
        (K.WARNING, T.OTHER, "scripts/sign-file: warning: not signing", "", None, None, ""),
    ),
]


def test_make_deleting_a_half_made_file_is_no_diagnostic():
    assert diagnostics.parse("make[1]: *** Deleting file 'kernel/fork.o'") == []


@pytest.mark.parametrize(("line", "fields"), ONE_LINE)
def test_every_kind_of_line_gives_all_its_fields(line, fields):
    (d,) = diagnostics.parse(line, tree="/src/linux", build_dir="/build/o")
    assert (d.kind, d.tool, d.message, d.file, d.line, d.column, d.flag) == fields


def test_from_json_fills_in_what_to_json_leaves_out():
    d = Diagnostic.from_json({"kind": "error", "tool": "compiler", "message": "m"})
    assert d == Diagnostic(Kind.ERROR, Tool.COMPILER, "m", "", None, None, "", (), 1)


@pytest.mark.parametrize(
    ("tree", "build_dir", "printed", "file"),
    [
        ("/src", "/src/out", "/src/out/kernel/x.o", "kernel/x.o"),  # the longer prefix wins
        ("/src/out", "/src", "/src/out/kernel/x.o", "kernel/x.o"),
        ("/src/linux/", None, "/src/linux/kernel/x.c", "kernel/x.c"),  # a trailing slash
        ("/", None, "/usr/include/x.h", "/usr/include/x.h"),  # never the root itself
        (" /src", None, "/src/kernel/x.c", "/src/kernel/x.c"),  # no blank stripped
    ],
)
def test_paths_are_made_relative_to_the_longest_prefix(tree, build_dir, printed, file):
    (d,) = diagnostics.parse(f"{printed}:1:1: error: e", tree=tree, build_dir=build_dir)
    assert d.file == file


RECIPE_FAILED = """\
Compiler lacks asm-goto support.
make[2]: *** [Makefile:3: checkbin] Error 1
make[1]: *** [Makefile:1: all] Error 2
"""


def test_a_recipe_line_is_the_error_through_every_make_level():
    diags = diagnostics.parse(RECIPE_FAILED)
    assert [(d.tool, d.message) for d in diags] == [
        (Tool.OTHER, "Compiler lacks asm-goto support."),
        (Tool.MAKE, "[Makefile:3: checkbin] Error 1"),
        (Tool.MAKE, "[Makefile:1: all] Error 2"),
    ]
    assert diagnostics.summary(diags) == {"errors": 1, "warnings": 0}
    assert diags[0].raw == ("Compiler lacks asm-goto support.",)


def test_a_recipe_line_is_the_error_beside_warnings_of_other_tools():
    diags = diagnostics.parse("WARNING: modpost: something odd\n" + RECIPE_FAILED)
    assert [d.tool for d in diags] == [Tool.MODPOST, Tool.OTHER, Tool.MAKE, Tool.MAKE]
    assert diagnostics.summary(diags) == {"errors": 1, "warnings": 1}


def test_make_lines_count_only_when_no_tool_failed():
    compiler = (
        "kernel/a.c:1:2: error: boom\n"
        "make[2]: *** [scripts/Makefile.build:250: kernel/a.o] Error 1\n"
        "make: *** No rule to make target 'x'.  Stop.\n"
    )
    assert diagnostics.summary(diagnostics.parse(compiler)) == {"errors": 1, "warnings": 0}
    own = (
        "make[2]: *** [Makefile:3: a] Error 1\n"
        "make[1]: *** [Makefile:1: b] Error 2\n"
        "make: *** No rule to make target 'x'.  Stop.\n"
        "make: *** No rule to make target 'y'.  Stop.\n"
    )
    assert diagnostics.summary(diagnostics.parse(own)) == {"errors": 2, "warnings": 0}


def test_relative_writes_paths_under_the_tree_and_build_dir_relative_to_them(tmp_path):
    # What a failed item's report shows of its first error (plugin/items.py).
    tree, build = tmp_path / "linux", tmp_path / "linux-build"
    text = f"{tree}/kernel/fork.c:1: error: x; see {build}/include/generated/a.h and /usr/x.h"
    assert diagnostics.relative(text, tree, build, None) == (
        "kernel/fork.c:1: error: x; see include/generated/a.h and /usr/x.h"
    )
    assert diagnostics.relative(text) == text
