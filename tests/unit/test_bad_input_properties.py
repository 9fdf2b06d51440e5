"""Property: whatever a user writes in a matrix file or gives as an option
(command line, PYTEST_KBUILD_* variable, ini key), the loader and the option
parsers either accept it or raise the project's own error (a KbuildError,
shown as one line, never a traceback), with a message of bounded length.

A fixed profile keeps CI stable and fast: derandomized examples (the same
on every run, no example database), a bounded number of them, and a per
example deadline (10 s, some 50 times a typical example) that only a
pathological slowness reaches (a value whose
expansion blows up), not a busy machine.
"""

from __future__ import annotations

import string
from datetime import timedelta
from pathlib import Path

import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pytest_kbuild import matrix, options, parsers
from pytest_kbuild.errors import KbuildError
from pytest_kbuild.matrix import matrixfile
from pytest_kbuild.settings import resolve

MAX_MESSAGE = 2000

PROFILE = settings(
    derandomize=True,
    database=None,
    deadline=timedelta(seconds=10),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Values the loader knows, so that generated matrices get past the first key.
KNOWN = [
    "x86_64",
    "arm64",
    "riscv",
    "gcc",
    "clang",
    "gcc-12",
    "defconfig",
    "tinyconfig",
    "my.config",
    "https://example.invalid/x.config",
    "CONFIG_X=y",
    "# CONFIG_Y is not set",
    "make:kvm_guest.config",
    "config",
    "kernel",
    "modules",
    "ccache",
    "none",
    "local",
    "null",
    "never",
    "warnings",
    "new-warnings",
    "W",
    "1",
    "",
]
KEYS = [
    *matrixfile.TOP_KEYS,
    *matrixfile.INCLUDE_KEYS,
    *matrixfile.EXCLUDE_KEYS,
    "kernel",
    "O",
    "ARCH",
]

leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([10**100, -(10**40), 2**63, 0]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.text(alphabet=string.ascii_letters + "\0\n\t $(){}=:#'\"`;", max_size=20),
    st.sampled_from(KNOWN),
    st.sampled_from(KNOWN).map(lambda s: s + "\0x"),
    st.just("x" * 5000),
)
values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=8)), inner, max_size=4),
    ),
    max_leaves=12,
)
names = st.one_of(st.sampled_from(KNOWN), leaves)
variables = st.dictionaries(
    st.one_of(st.sampled_from(["W", "O", "ARCH", "KCFLAGS", "O\n", "A B", "", "1X"]), leaves),
    leaves,
    max_size=3,
)
axis = st.one_of(names, st.lists(names, max_size=3))
# Per key, values near what the loader accepts, so that examples get past
# the first check and reach the later ones (expansion, includes, excludes).
PLAUSIBLE = {
    "version": leaves,
    "tree": st.one_of(leaves, st.sampled_from([".", "linux", "a\0b", "/nonexistent"])),
    "arch": axis,
    "toolchain": axis,
    "kconfig": axis,
    "kconfig_add": st.one_of(names, st.lists(names, max_size=3)),
    "targets": st.one_of(names, st.lists(names, max_size=3)),
    "make_variables": st.one_of(variables, leaves),
    "env": st.one_of(variables, leaves),
    "wrapper": names,
    "runtime": names,
    "fail_on": names,
    "timeout": st.one_of(leaves, st.dictionaries(names, leaves, max_size=2)),
    "exclude": st.lists(
        st.dictionaries(st.sampled_from([*matrixfile.EXCLUDE_KEYS, "x"]), names, max_size=3),
        max_size=2,
    ),
    "include": st.lists(
        st.dictionaries(st.sampled_from([*matrixfile.INCLUDE_KEYS, "x"]), names, max_size=4),
        max_size=2,
    ),
}
BASE = {"arch": ["x86_64"], "toolchain": ["gcc"], "kconfig": ["tinyconfig"]}
documents = st.one_of(
    st.dictionaries(st.sampled_from(KEYS), values, max_size=len(matrixfile.TOP_KEYS)),
    st.fixed_dictionaries(
        {},
        optional={k: st.one_of(PLAUSIBLE[k], values) for k in matrixfile.TOP_KEYS},
    ).map(lambda doc: {**BASE, **doc}),
    st.sampled_from(sorted(PLAUSIBLE)).flatmap(
        lambda k: PLAUSIBLE[k].map(lambda v: {**BASE, k: v})
    ),
)


def _bounded_error(err: KbuildError) -> None:
    message = str(err)
    assert message, f"{type(err).__name__} with an empty message"
    assert len(message) <= MAX_MESSAGE, f"{type(err).__name__}: {len(message)} chars"


def _load(path: Path, tree: Path | None, check: bool) -> None:
    try:
        m = matrix.load(path, tree=tree, check=check)
    except KbuildError as err:
        _bounded_error(err)
        event(f"error: {str(err).split(': ', 2)[-1][:25]}")  # --hypothesis-show-statistics
    else:
        event(f"loaded: {min(len(m.builds), 3)} builds or more")


@settings(PROFILE, max_examples=150)
@given(doc=documents, check=st.booleans(), override=st.booleans())
def test_a_structured_matrix_loads_or_is_a_kbuild_error(
    tmp_path, kernel_tree, doc, check, override
):
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    _load(path, kernel_tree if override else None, check)


@settings(PROFILE, max_examples=150)
@given(text=st.text(max_size=300))
def test_any_text_as_matrix_loads_or_is_a_kbuild_error(tmp_path, kernel_tree, text):
    path = tmp_path / "m.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    _load(path, kernel_tree, check=True)


@settings(PROFILE, max_examples=100)
@given(data=st.binary(max_size=300))
def test_any_bytes_as_matrix_load_or_are_a_kbuild_error(tmp_path, kernel_tree, data):
    path = tmp_path / "m.yaml"
    path.write_bytes(data)
    _load(path, kernel_tree, check=True)


option_text = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=string.digits + "-+./eE xX_", max_size=30),
    st.integers().map(str),
    st.sampled_from(["0", "-1", "1/0", "0/1", "1/10000000000", "2/1", "inf", "nan", "1e400"]),
    st.sampled_from(["off", "on", "auto", "redis://", "://x", "{arch}", "{x}", "{", "a\0b"]),
    st.just("9" * 5000),
)
PARSERS = {o.name: o.parse for o in options.OPTIONS} | {
    "text": parsers.text,
    "positive_int": parsers.positive_int,
    "count": parsers.count,
    "seconds": parsers.seconds,
    "seconds_or_off": parsers.seconds_or_off,
    "url": parsers.url,
    "boolean": parsers.boolean,
    "image_template": parsers.image_template,
    "jobserver_mode": parsers.jobserver_mode,
    "shard": parsers.shard,
    "fail_on": parsers.choice("fail-on", parsers.FAIL_ON),
    "kcidb_origin": parsers.kcidb_origin,
    "kcidb_base_url": parsers.kcidb_base_url,
}


@settings(PROFILE, max_examples=600)
@given(name=st.sampled_from(sorted(PARSERS)), value=option_text)
def test_every_option_parser_accepts_or_raises_a_kbuild_error(name, value):
    try:
        PARSERS[name](value, f"--kbuild-{name}")
    except KbuildError as err:
        _bounded_error(err)


@settings(PROFILE, max_examples=300)
@given(
    option=st.sampled_from(options.OPTIONS),
    source=st.sampled_from(["cli", "env", "ini"]),
    value=option_text,
)
def test_every_setting_resolves_or_raises_a_kbuild_error(option, source, value):
    cli = ([value] if option.multiple else value) if source == "cli" else None
    env = {option.env: value} if source == "env" else {}
    ini = value if source == "ini" else None
    try:
        resolve(option, cli, env, ini)
    except KbuildError as err:
        _bounded_error(err)
