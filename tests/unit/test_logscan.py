import pytest

from pytest_kbuild import diagnostics
from pytest_kbuild.diagnostics import logscan


def first(text, limit=diagnostics.MAX_ERRORS):
    """The error lines build.py shows for a failed target."""
    return [d.headline for d in diagnostics.first_errors(diagnostics.parse(text), limit)]


def warnings(text):
    return diagnostics.summary(diagnostics.parse(text))["warnings"]


MAKE_TAIL = """\
make[4]: *** [scripts/Makefile.build:243: init/main.o] Error 1
make[3]: *** [scripts/Makefile.build:480: init] Error 2
make: *** [Makefile:1921: .] Error 2
"""


@pytest.mark.parametrize(
    "line",
    [
        "init/main.c:12:3: error: 'foo' undeclared (first use in this function)",
        "init/main.c:12: error: expected ';'",
        "drivers/x.c:1:10: fatal error: linux/nope.h: No such file or directory",
        "./include/linux/x.h:3:1: error: unknown type name 'bar'",
    ],
)
def test_compiler_errors(line):
    text = f"  CC      init/main.o\n{line}\n  12 |   foo();\n{MAKE_TAIL}"
    assert first(text) == [line]


@pytest.mark.parametrize(
    "line",
    [
        "ld: vmlinux.o: in function `start_kernel': undefined reference to `foo'",
        "aarch64-linux-gnu-ld: error: cannot find init/main.o",
        "ld.lld: error: undefined symbol: foo",
        "main.c:(.text+0x1d): undefined reference to `bar'",
    ],
)
def test_linker_errors(line):
    assert first(f"  LD      vmlinux.o\n{line}\n{MAKE_TAIL}") == [line]


@pytest.mark.parametrize(
    "line",
    [
        'ERROR: modpost: "foo" [drivers/x.ko] undefined!',
        "Error: invalid option",
        "*** Your compiler is too old",
        "scripts/kconfig/conf: error: bad option",
        "cp: cannot create regular file 'x': No space left on device",
        "/bin/sh: 1: flex: not found",
        "bash: bison: command not found",
    ],
)
def test_other_errors(line):
    assert first(f"{line}\n{MAKE_TAIL}") == [line]


def test_make_lines_when_nothing_else():
    assert first(f"  CC      x.o\n{MAKE_TAIL}") == MAKE_TAIL.strip().splitlines()


def test_errors_in_log_order_before_makes():
    text = (
        "ld: x.o: undefined reference to `a'\n"
        "ERROR: modpost: oops\n"
        "b.c:1:1: error: first\n"
        "c.c:2:2: error: second\n" + MAKE_TAIL
    )
    # The first error printed is the cause; make's *** lines never come first.
    assert first(text) == [
        "ld: x.o: undefined reference to `a'",
        "ERROR: modpost: oops",
        "b.c:1:1: error: first",
        "c.c:2:2: error: second",
    ]


def test_limit_and_strip():
    text = "".join(f"f{i}.c:1:1: error: e{i}  \n" for i in range(10))
    assert first(text) == [f"f{i}.c:1:1: error: e{i}" for i in range(5)]
    assert first(text, limit=2) == ["f0.c:1:1: error: e0", "f1.c:1:1: error: e1"]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "  CC      init/main.o\n  LD      vmlinux\n",
        "init/main.c:1:1: warning: unused variable 'x' [-Wunused-variable]\n",
        "ld: warning: vmlinux has a LOAD segment with RWX permissions\n",
        "  CC      drivers/base/error.o\n",
    ],
)
def test_no_errors(text):
    assert first(text) == []


def test_count_warnings():
    text = (
        "a.c:1:1: warning: unused variable 'x'\n"
        "b.c:2:2: warning: unused function 'y'\n"
        "ld: warning: RWX\n"
        "  CC      warning.o\n"
    )
    assert warnings(text) == 3
    assert warnings("") == 0


def test_tail():
    text = "\n".join(str(i) for i in range(100))
    assert logscan.tail(text) == "\n".join(str(i) for i in range(70, 100))
    assert logscan.tail(text, 2) == "98\n99"
    assert logscan.tail("") == ""


def test_read_slice(tmp_path):
    log = tmp_path / "build.log"
    log.write_bytes(b"# target config\nok\n# target kernel\nbad \xff byte\n")
    start = len(b"# target config\nok\n")
    assert logscan.read_slice(log, 0, start) == "# target config\nok\n"
    assert logscan.read_slice(log, start) == "# target kernel\nbad \ufffd byte\n"
    assert logscan.read_slice(log, start, start + 6) == "# targ"


def test_read_slice_past_the_end_or_backwards_is_empty(tmp_path):
    log = tmp_path / "build.log"
    log.write_text("abc\n")
    assert logscan.read_slice(log, 10) == ""
    assert logscan.read_slice(log, 3, 1) == ""


def test_conf_notices_are_not_errors():
    text = "*** Default configuration is based on 'x86_64_defconfig'\n#\n# configuration written to .config\n"
    assert diagnostics.parse(text) == []
