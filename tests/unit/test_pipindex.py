"""The host's pip index and CA bundle, as `pip config list` tells them."""

from __future__ import annotations

from pathlib import Path

from pytest_kbuild.cli import pipindex
from pytest_kbuild.cli.pipindex import PipIndex


def test_the_environment_wins_over_the_files():
    listing = (
        ":env:.cert='/env/ca.pem'\n"
        ":env:.default-timeout='180'\n"
        "global.cert='/etc/ca.pem'\n"
        "global.index-url='https://mirror.example/simple'\n"
        "global.extra-index-url='file:///opt/more/simple'\n"
    )
    assert pipindex.parse(listing) == PipIndex("https://mirror.example/simple", Path("/env/ca.pem"))


def test_install_section_and_defaults():
    assert pipindex.parse("install.index-url='https://m.example/pypi'\n") == PipIndex(
        "https://m.example/pypi", None
    )
    assert pipindex.parse("") == PipIndex()
    assert pipindex.parse("garbage line\nglobal.timeout=5\n") == PipIndex()


def test_the_host_answers_with_an_existing_bundle_or_none():
    found = pipindex.host()
    assert found.cert is None or found.cert.is_file()
