"""The value grammars that live in parsers.py (the bottom layer) and the
names the upper modules keep for them."""

import pytest

from pytest_kbuild import parsers
from pytest_kbuild.definitions import toolchain
from pytest_kbuild.errors import KbuildUserError, KcidbError, ShardError
from pytest_kbuild.run import jobserver, shard
from pytest_kbuild.runtime import container


@pytest.mark.parametrize(("value", "expected"), [("2/4", (2, 4)), (" 1 / 1 ", (1, 1))])
def test_shard(value, expected):
    assert parsers.shard(value, "--kbuild-shard") == parsers.Shard(*expected)
    assert str(parsers.shard(value, "--kbuild-shard")) == f"{expected[0]}/{expected[1]}"


@pytest.mark.parametrize("value", ["x", "0/4", "5/4", "1/0", "1/10001"])
def test_shard_rejects(value):
    with pytest.raises(ShardError, match="--kbuild-shard"):
        parsers.shard(value, "--kbuild-shard")


@pytest.mark.parametrize(("value", "mode"), [("auto", "auto"), (" ON ", "on"), ("8", 8)])
def test_jobserver_mode(value, mode):
    assert parsers.jobserver_mode(value, "--kbuild-jobserver") == mode


@pytest.mark.parametrize("value", ["0", "4097", "many"])
def test_jobserver_mode_rejects(value):
    with pytest.raises(KbuildUserError, match=r"^--kbuild-jobserver: .* is not a jobserver mode"):
        parsers.jobserver_mode(value, "--kbuild-jobserver")


def test_image_reference():
    assert parsers.image_reference("r/{arch}_{toolchain}", "arm64", "gcc") == "r/arm64_gcc"
    with pytest.raises(KbuildUserError, match=r"\{tag\} is not a placeholder"):
        parsers.image_reference("r/{tag}", "arm64", "gcc")


def test_image_template_names_where():
    with pytest.raises(KbuildUserError, match=r"^--kbuild-image: image 'r/\{': an unbalanced"):
        parsers.image_template("r/{", "--kbuild-image")


def test_redact():
    assert parsers.redact("redis://:secret@host:6379") == "redis://:***@host:6379"
    assert parsers.redact("redis://host:6379") == "redis://host:6379"


def test_old_names_are_the_moved_ones():
    assert shard.Shard is parsers.Shard
    assert shard.parse is parsers.shard
    assert jobserver.parse_mode is parsers.jobserver_mode
    assert container.image_reference is parsers.image_reference
    assert toolchain.redact is parsers.redact


def test_kcidb_origin_is_kcidbs_grammar():
    # kcidb-io's origin_pattern, which every id starts with before its colon
    from kcidb_io.schema import LATEST

    assert parsers.KCIDB_ORIGIN.pattern == LATEST.origin_pattern
    assert parsers.kcidb_origin(" my_ci2 ", "--kbuild-kcidb-origin") == "my_ci2"
    for bad in ("My-CI", "", "a:b", "ci.example", "ü"):
        with pytest.raises(KcidbError) as exc:
            parsers.kcidb_origin(bad, "--kbuild-kcidb-origin")
        assert str(exc.value) == (
            f"--kbuild-kcidb-origin: {bad!r} is not a KCIDB origin; accepted: lower-case "
            "letters, digits and _ (KCIDB's [a-z0-9_]+), e.g. my_ci"
        )
        assert exc.value.value == bad


@pytest.mark.parametrize(
    "value", ["https://ci.example.org/a/1/res", "http://h:8080/r/", "file:///srv/res"]
)
def test_kcidb_base_url(value):
    assert parsers.kcidb_base_url(value, "--kbuild-kcidb-base-url") == value


ACCEPTED_URL = "accepted: an http://, https:// or file:// URL of where the results dir is served"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("ftp://h/res", "'ftp://h/res' has scheme 'ftp'"),
        ("res/m", "'res/m' has no scheme"),
        ("https:///res", "'https:///res' has no host"),
        ("https://h/r?x=1", "'https://h/r?x=1' has a query or fragment, which file paths"),
        ("https://u:pw@h/a b", "'https://u:***@h/a b' has spaces or characters a URL cannot"),
        ("http://[::1/r", "'http://[::1/r' is not a URL (Invalid IPv6 URL)"),
    ],
)
def test_kcidb_base_url_rejects(value, problem):
    with pytest.raises(KcidbError) as exc:
        parsers.kcidb_base_url(value, "--kbuild-kcidb-base-url")
    assert str(exc.value).startswith(f"--kbuild-kcidb-base-url: {problem}")
    assert str(exc.value).endswith(ACCEPTED_URL)
    assert "pw" not in str(exc.value)
