"""Parse a target's slice of build.log into diagnostic records.

Each error or warning printed by the compiler, assembler, linkers, modpost,
Kconfig, dtc, dt-schema (dtbs_check), objtool, kernel-doc or make becomes one `Diagnostic`, with the
lines that explain it (``In file included from``, ``In function``, notes,
source snippets, lld's ``>>>`` lines, Kconfig's indented reasons) attached
to it. Identical diagnostics (a header's warning seen by every object that
includes it) are merged into one record with a count. `Diagnostic.key` names
a diagnostic independently of line numbers and of where the tree and the
build directory were, so that a build can be compared with a baseline.
"""

from __future__ import annotations

import enum
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..results import COMMAND_ECHO

MAX_ERRORS = 5


class Kind(str, enum.Enum):
    """How bad a diagnostic is."""

    ERROR = "error"
    WARNING = "warning"


class Tool(str, enum.Enum):
    """The program that printed a diagnostic."""

    COMPILER = "compiler"
    ASSEMBLER = "assembler"
    LINKER = "linker"
    MODPOST = "modpost"
    KCONFIG = "kconfig"
    DTC = "dtc"
    DT_SCHEMA = "dt-schema"  # dtschema's dt-validate and dt-doc-validate (dtbs_check)
    OBJTOOL = "objtool"
    KERNEL_DOC = "kernel-doc"
    MAKE = "make"
    OTHER = "other"  # the shell, a kernel script, a bare ``ERROR:`` line


@dataclass(frozen=True)
class Diagnostic:
    """One error or warning, as printed in build.log.

    *file* is relative to the tree or build directory when it was under one
    of them; the same prefixes are removed from *message*. *raw* holds the
    printed lines, context included, exactly as in the log (of the first
    occurrence); *count* is how many times the same diagnostic was printed.
    """

    kind: Kind
    tool: Tool
    message: str
    file: str = ""
    line: int | None = None
    column: int | None = None
    flag: str = ""
    raw: tuple[str, ...] = ()
    count: int = 1

    @property
    def headline(self) -> str:
        """The printed line of the diagnostic itself (its context removed)."""
        return next((r for r in self.raw if not _PREFIX.match(r)), self.message)

    @property
    def about_the_run(self) -> bool:
        """See `about_the_run`."""
        return about_the_run(self.tool.value, self.message)

    @property
    def key(self) -> str:
        """Identity for baseline matching: file, kind, flag and the message
        with quoted names and numbers blanked out; no line or column, so
        that an edit elsewhere in the file does not make it new."""
        return "|".join((self.file, self.kind.value, self.flag, normalise_message(self.message)))

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict for metadata.json (the key included, for readers
        that do not use this module)."""
        return {
            "kind": self.kind.value,
            "tool": self.tool.value,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "flag": self.flag,
            "count": self.count,
            "key": self.key,
            "raw": list(self.raw),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Diagnostic:
        """The inverse of `to_json` (the stored key is ignored: it is derived)."""
        return cls(
            kind=Kind(data["kind"]),
            tool=Tool(data["tool"]),
            message=str(data["message"]),
            file=str(data.get("file", "")),
            line=_opt_int(data.get("line")),
            column=_opt_int(data.get("column")),
            flag=str(data.get("flag", "")),
            raw=tuple(str(x) for x in data.get("raw", ())),
            count=int(data.get("count", 1)),
        )


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


_QUOTED = re.compile(r"`[^`']*'|‘[^’]*’|'[^']*'|\"[^\"]*\"")
_NUMBER = re.compile(r"\b(?:0x[0-9a-fA-F]+|\d+)\b")


def normalise_message(message: str) -> str:
    """*message* with quoted names as ``'_'`` and numbers as ``N``."""
    return _NUMBER.sub("N", _QUOTED.sub("'_'", message))


# Lines that introduce the next diagnostic (or a note of the current one).
_PREFIX = re.compile(
    r"^(?:In file included from \S.*[:,]$"
    r"|\s+from \S+:\d+[:,]$"
    r"|\S.*: (?:In (?:function|member function|static function|constructor|destructor)"
    r" .*:|At top level:)$"
    r"|In function .*,$"
    r"|\s+inlined from .* at \S+:\d+(?::\d+)?[:,]$"
    r"|\S.*: Assembler messages:$"
    r"|(?:\S*/)?(?:[\w.-]+-)?ld(?:\.\w+)?(?:-\d+)?: \S+: in function .*:$"
    r"|\S+: in function .*:$)"
)
_NOTE = re.compile(r"^\S.*?:\d+(?::\d+)?: note: ")
# Lines that belong to the diagnostic above them.
_TRAILING = re.compile(
    r"^(?:\s*\d*\s+\|"  # gcc's source snippet and caret lines
    r"|>>> "  # lld's "referenced by"
    r"|cc1\w*: (?:all |some )?warnings being treated as errors$"
    r"|compilation terminated\.$"
    r"|Set CONFIG_\w+=y to allow them\.$"  # after modpost's "Section mismatches detected."
    r"|\s+\S)"  # clang's snippet, Kconfig's reasons, dtc's "also defined at"
)
_KBUILD_QUIET = re.compile(r"^  [A-Z][A-Z0-9_\[\]-]* +\S")  # "  CC      kernel/fork.o"
_MAKE_CHATTER = re.compile(r"^(?:\S*/)?g?make(?:\[\d+\])?: ")
_TALKATIVE = (Tool.COMPILER, Tool.ASSEMBLER, Tool.KERNEL_DOC)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_WORDS = re.compile(r"[A-Za-z]{2}")

_MODPOST = re.compile(r"^(ERROR|WARNING): modpost: (.*)$")
_MODPOST_FILE = re.compile(r'^"[^"]*" \[(\S+)\]|^(\S+\.k?o): |\bin (\S+\.k?o)\b')
_UNMET = re.compile(r"^WARNING: (unmet direct dependencies detected for \S+)$")
_KCONFIG = re.compile(r"^(\S+?):(\d+):(warning|error): ?(.*)$")
_KCONFIG_FILE = re.compile(r"(?:^|/)(?:Kconfig[\w.-]*|\S*\.config|\S*defconfig)$")
_OBJTOOL = re.compile(r"^(?:(\S+): )?(warning|error): objtool: (.*)$")
_DTC = re.compile(r"^(?:(\S+?)(?::(\d+)\.(\d+)-[\d.]+)?: )?(Warning|Error) \((\w+)\): (.*)$")
_DTC_ERROR = re.compile(r"^(?:Error: (\S+?):(\d+)\.(\d+)-[\d.]+ (.*)|FATAL ERROR: (.*))$")
# dt-validate: "<build>/arch/arm64/boot/dts/x/y.dtb: <node>: <finding>", then a
# tab-indented "From schema: <binding>.yaml"; dt-doc-validate and dt-mk-schema
# name the binding: "<tree>/Documentation/devicetree/bindings/x.yaml: <finding>".
_DT_SCHEMA = re.compile(r"^(\S+\.(?:dtb|yaml)): (\S.*)$")
# dt-validate prints a finding and its "From schema" line in one print(), which
# line-buffered stderr writes as two: a dt-validate running beside it (make -j)
# can write its own finding in between, onto the end of the "From schema" line.
_DT_SCHEMA_JOINED = re.compile(r"^(\s+From schema: \S+?\.yaml)(\S+\.(?:dtb|yaml): \S.*)$")
_GAS = re.compile(r"^(\S.*?):(\d+): (Error|Warning): (.*)$")
_COMPILER = re.compile(
    r"^(\S.*?):(\d+)(?::(\d+))?: (warning|error|fatal error): (.*?)"
    r"(?: \[(-W[^\]\s]*)\])?$"
)
_DRIVER = re.compile(
    r"^(?:\S*/)?(?:[\w.+-]+-)?(?:gcc|cc1\w*|clang|cc)(?:-[\d.]+)?: "
    r"(warning|error|fatal error): (.*)$"
)
_KERNEL_DOC = re.compile(
    r"Function parameter or member|Excess (?:function parameter|struct member)"
    r"|expecting prototype for|cannot understand function prototype"
    r"|isn't a kernel-doc comment|No description found|duplicate section name|^bad line:"
)
_UNDEFINED = re.compile(
    r"^(\S+?):(?:(\d+)|\([^)]*\)): "
    r"((?:undefined reference to|multiple definition of|relocation truncated to fit).*)$"
)
_LD = re.compile(r"^(?:\S*/)?((?:[\w.-]+-)?ld(?:\.bfd|\.gold|\.lld)?(?:-\d+)?|ld\.lld\S*): (.*)$")
_LD_SEVERITY = re.compile(r"^(?:(\S+?): )?(warning|error): (.*)$")
_LD_FILE = re.compile(r"^([^\s:-][^\s:]*\.(?:o|a|ko|so|elf)|vmlinux[\w.]*): (.*)$|of file (\S+)$")
_MAKE_TARGET = re.compile(r"^\[\S+:\d+: (.+)\] Error \d+")
_MAKE = re.compile(r"^(?:\S*/)?g?make(?:\[\d+\])?: (\*\*\*|warning:) (.*)$")
_MAKEFILE = re.compile(r"^(\S*(?:Makefile[\w.-]*|Kbuild|\.mk)):(\d+): (\*\*\*|warning:) (.*)$")
_SHELL = re.compile(  # the shell, or a tool such as mv or cp, failing in a recipe
    r"^(?:\S+: (?:line )?\d+: )?\S.*?: (?:command )?not found$"
    r"|^\S+: .*: (?:No such file or directory|Permission denied)$|: No space left on device$"
)
_BARE = re.compile(r"^(ERROR|Error|error|WARNING|Warning|warning): (.*)$")
_PROGRAM = re.compile(
    r"^(?:\S*/)?[\w.+-]+: (error|warning): (.*)$"
)  # "scripts/kconfig/conf: error:"
# The top Makefile's and kconfig's "*** Your compiler is too old"; not
# conf's notices ("*** Default configuration is based on ...").
_KBUILD_ECHO = re.compile(
    r"^\*\*\* (?!Default configuration|End of the configuration|Execute 'make')(\S.*)$"
)

_Fields = tuple[Kind, Tool, str, str, "int | None", "int | None", str]


class _Paths:
    """Turns printed paths into tree-relative ones."""

    def __init__(self, prefixes: Iterable[str | None]) -> None:
        self.prefixes = sorted(
            {p.rstrip("/") + "/" for p in prefixes if p and p.strip("/")}, key=len, reverse=True
        )

    def file(self, path: str | None) -> str:
        if not path:
            return ""
        for prefix in self.prefixes:
            if path + "/" == prefix:
                return "."
            if path.startswith(prefix):
                path = path[len(prefix) :]
                break
        if path.startswith(("{", "<")):  # "{standard input}", "<command-line>"
            return path
        path = posixpath.normpath(path)
        while path.startswith("../"):
            path = path[3:]
        return path

    def text(self, message: str) -> str:
        for prefix in self.prefixes:
            message = message.replace(prefix, "")
        return message


def _kind(word: str) -> Kind:
    return Kind.WARNING if word.lower() == "warning" else Kind.ERROR


def _num(text: str | None) -> int | None:
    return int(text) if text else None


def _classify(line: str, paths: _Paths) -> _Fields | None:
    """The fields of the diagnostic *line* starts, or None."""
    if m := _MODPOST.match(line):
        f = _MODPOST_FILE.search(m[2])
        file = next((g for g in f.groups() if g), "") if f else ""
        msg = m[2][f.end() :] if f and f[2] else m[2]
        return _kind(m[1]), Tool.MODPOST, paths.text(msg), paths.file(file), None, None, ""
    if m := _UNMET.match(line):
        return Kind.WARNING, Tool.KCONFIG, m[1], "", None, None, ""
    if m := _KCONFIG.match(line):
        return _kind(m[3]), Tool.KCONFIG, m[4], paths.file(m[1]), int(m[2]), None, ""
    if m := _OBJTOOL.match(line):
        return _kind(m[2]), Tool.OBJTOOL, m[3], paths.file(m[1]), None, None, ""
    if m := _DTC.match(line):
        flag = f"-W{m[5]}"
        msg = paths.text(m[6])
        return _kind(m[4]), Tool.DTC, msg, paths.file(m[1]), _num(m[2]), _num(m[3]), flag
    if m := _DTC_ERROR.match(line):
        msg = m[4] or m[5]
        return Kind.ERROR, Tool.DTC, msg, paths.file(m[1]), _num(m[2]), _num(m[3]), ""
    if m := _DT_SCHEMA.match(line):
        return Kind.WARNING, Tool.DT_SCHEMA, paths.text(m[2]), paths.file(m[1]), None, None, ""
    if m := _MAKEFILE.match(line):
        return _kind(m[3][:-1]), Tool.MAKE, m[4], paths.file(m[1]), int(m[2]), None, ""
    if m := _GAS.match(line):
        return _kind(m[3]), Tool.ASSEMBLER, m[4], paths.file(m[1]), int(m[2]), None, ""
    if m := _COMPILER.match(line):
        file, msg = paths.file(m[1]), paths.text(m[5])
        tool = Tool.COMPILER
        if file.endswith(".s") or file.startswith(("{standard input}", "<instantiation>")):
            tool = Tool.ASSEMBLER
        elif m[3] is None and _KCONFIG_FILE.search(file):  # the parser's own warnings
            tool = Tool.KCONFIG
        elif m[3] is None and m[6] is None and _KERNEL_DOC.search(msg):
            tool = Tool.KERNEL_DOC
        return _kind(m[4].split()[-1]), tool, msg, file, int(m[2]), _num(m[3]), m[6] or ""
    if m := _DRIVER.match(line):
        return _kind(m[1].split()[-1]), Tool.COMPILER, paths.text(m[2]), "", None, None, ""
    if m := _UNDEFINED.match(line):
        return Kind.ERROR, Tool.LINKER, m[3], paths.file(m[1]), _num(m[2]), None, ""
    if m := _LD.match(line):
        return _linker(m[2], paths)
    if (m := _MAKE.match(line)) and not m[2].startswith("Deleting "):  # make tidying up
        t = _MAKE_TARGET.match(m[2])
        file = paths.file(t[1]) if t else ""
        return _kind(m[1].rstrip(":")), Tool.MAKE, paths.text(m[2]), file, None, None, ""
    if _SHELL.search(line):
        return Kind.ERROR, Tool.OTHER, paths.text(line), "", None, None, ""
    if m := _BARE.match(line):
        return _kind(m[1]), Tool.OTHER, paths.text(m[2]), "", None, None, ""
    if m := _PROGRAM.match(line):
        return _kind(m[1]), Tool.OTHER, paths.text(line), "", None, None, ""
    if m := _KBUILD_ECHO.match(line):
        return Kind.ERROR, Tool.OTHER, paths.text(m[1]), "", None, None, ""
    return None


def _linker(rest: str, paths: _Paths) -> _Fields:
    """GNU ld's or lld's message after its ``ld:`` prefix: an error unless it
    says warning (ld prints most errors without saying so)."""
    kind, file = Kind.ERROR, ""
    if m := _UNDEFINED.match(rest):
        return kind, Tool.LINKER, m[3], paths.file(m[1]), _num(m[2]), None, ""
    if m := _LD_SEVERITY.match(rest):
        kind, file, rest = _kind(m[2]), m[1] or "", m[3]
    if not file and (f := _LD_FILE.search(rest)):
        file = f[1] or f[3]
        rest = f[2] if f[1] else rest
    return kind, Tool.LINKER, paths.text(rest), paths.file(file), None, None, ""


class _Parser:
    """Reads lines one by one: pending context, the open record, the result."""

    def __init__(self, paths: _Paths) -> None:
        self.paths = paths
        self.prefix: list[str] = []
        self.fields: _Fields | None = None
        self.raw: list[str] = []
        self.found: dict[_Fields, int] = {}
        self.diags: list[Diagnostic] = []
        self.said = ""  # the line just read when it was a recipe's own output
        self.last_words: tuple[int, str] | None = None  # see explain()

    def feed(self, line: str) -> None:
        if line.startswith(COMMAND_ECHO):
            # build.log's line of the next command: the last one's output is over.
            self.flush()
            self.prefix, self.said = [], ""
            return
        if _PREFIX.match(line):
            self.prefix.append(line)
            return
        if self.fields and (
            _NOTE.match(line)
            or (not self.prefix and _TRAILING.match(line) and not _KBUILD_QUIET.match(line))
        ):
            self.raw += [*self.prefix, line]
            self.prefix = []
            return
        fields = _classify(line, self.paths)
        if fields is None and self._compiler_says_more(line):
            self.raw.append(line)
            return
        self.flush()
        if fields:
            self._recipe_failed(fields)
            self.fields, self.raw = fields, [*self.prefix, line]
        self.prefix = []
        said = fields is None and _WORDS.search(line) and not _KBUILD_QUIET.match(line)
        self.said = line if said and not _MAKE_CHATTER.match(line) else ""

    def _recipe_failed(self, fields: _Fields) -> None:
        """Keep what the recipe printed just before make's first ``[target]
        Error N``: ``Compiler lacks asm-goto support.`` is the cause."""
        if self.last_words is None and fields[1] == Tool.MAKE and _MAKE_TARGET.match(fields[2]):
            self.last_words = (len(self.diags), self.said) if self.said else (0, "")

    def explain(self) -> None:
        """When nothing but make's ``***`` lines tells why a recipe failed,
        the line the recipe printed last is the error, before make's."""
        index, words = self.last_words or (0, "")
        if words and all(d.tool == Tool.MAKE for d in self.diags if d.kind == Kind.ERROR):
            msg = self.paths.text(words.strip())
            self.diags.insert(index, Diagnostic(Kind.ERROR, Tool.OTHER, msg, raw=(words,)))

    def _compiler_says_more(self, line: str) -> bool:
        """Whether *line* is the open compiler diagnostic's: clang's source
        snippets, fix-its and "2 warnings generated." are not indented."""
        return (
            self.fields is not None
            and self.fields[1] in _TALKATIVE
            and not self.prefix
            and not _KBUILD_QUIET.match(line)
            and not _MAKE_CHATTER.match(line)
        )

    def flush(self) -> None:
        if self.fields is None:
            return
        if (index := self.found.get(self.fields)) is not None:
            old = self.diags[index]
            self.diags[index] = replace(old, count=old.count + 1)
        else:
            self.found[self.fields] = len(self.diags)
            kind, tool, msg, file, line, col, flag = self.fields
            self.diags.append(Diagnostic(kind, tool, msg, file, line, col, flag, tuple(self.raw)))
        self.fields, self.raw = None, []


def parse(
    text: str,
    *,
    tree: str | None = None,
    build_dir: str | None = None,
    guest: Sequence[str] = (),
) -> list[Diagnostic]:
    """The diagnostics in *text* (a slice of build.log), in the order of their
    first occurrence. Paths under *tree* (the kernel source) or *build_dir*
    (``O=``, or an external module's directory) are made relative to it, and
    so are those under *guest*, the same directories as a container mounts them."""
    parser = _Parser(_Paths((tree, build_dir, *guest)))
    for line in text.splitlines():
        line = _ANSI.sub("", line).rstrip()
        if m := _DT_SCHEMA_JOINED.match(line):
            parser.feed(m[1])
            line = m[2]
        parser.feed(line)
    parser.flush()
    parser.explain()
    return parser.diags


def relative(text: str, *dirs: str | Path | None) -> str:
    """*text* with the paths under *dirs* (the tree, the build dir) written
    relative to them, as the records' messages are."""
    return _Paths(str(d) for d in dirs if d).text(text)


def first_errors(diags: Sequence[Diagnostic], limit: int = MAX_ERRORS) -> list[Diagnostic]:
    """The errors that explain a failure, cause first: those of the tools
    that did the work, then other programs' errors; make's ``***`` lines
    only when nothing else failed (they just say that something did)."""
    errors = [d for d in diags if d.kind == Kind.ERROR]
    causes = [d for d in errors if d.tool != Tool.MAKE]
    causes.sort(key=lambda d: d.tool == Tool.OTHER)  # stable: log order within each group
    return (causes or errors)[:limit]


def _counted_errors(diags: Sequence[Diagnostic]) -> list[Diagnostic]:
    """The errors `summary` counts. make's ``[target] Error N`` lines only
    repeat, once per make level, that a recipe failed: they count when
    nothing else failed, and then only the first (the innermost recipe),
    unless make said something of its own (``No rule to make target``)."""
    errors = [d for d in diags if d.kind == Kind.ERROR]
    causes = [d for d in errors if d.tool != Tool.MAKE]
    own = [d for d in errors if not _MAKE_TARGET.match(d.message)]
    return causes or own or errors[:1]


def about_the_run(tool: str, message: str) -> bool:
    """A diagnostic about how the build was run, not about the sources:
    make's jobserver warnings (``-j0 forced in makefile``, ``jobserver
    unavailable``) come and go with -n and --kbuild-jobserver. They stay in
    the records, but no count, baseline or --kbuild-fail-on takes them."""
    return tool == Tool.MAKE.value and "jobserver" in message


def summary(diags: Sequence[Diagnostic]) -> dict[str, int]:
    """Distinct diagnostics per kind, ``{"errors": n, "warnings": n}``: a
    merged record counts once, whatever its *count*; errors as in
    `_counted_errors`; warnings about the run (`about_the_run`) not at all."""
    warnings = sum(1 for d in diags if d.kind == Kind.WARNING and not d.about_the_run)
    return {"errors": len(_counted_errors(diags)), "warnings": warnings}
