import pytest
import yaml

from pytest_kbuild.matrix import yamlload
from pytest_kbuild.matrix.yamlload import LineDict, LineList

TEXT = """\
# comment
arch: [x86_64, arm64]
toolchain:
  - gcc
  - clang-16
exclude:
  - arch: arm64
    reason: "slow"
"""


def test_mappings_and_lists_remember_lines():
    data = yamlload.load(TEXT)
    assert isinstance(data, LineDict)
    assert data == {
        "arch": ["x86_64", "arm64"],
        "toolchain": ["gcc", "clang-16"],
        "exclude": [{"arch": "arm64", "reason": "slow"}],
    }
    assert data.line == 2
    assert data.key_lines == {"arch": 2, "toolchain": 3, "exclude": 6}
    assert isinstance(data["arch"], LineList)
    assert data["arch"].item_lines == [2, 2]
    assert data["toolchain"].line == 4
    assert data["toolchain"].item_lines == [4, 5]
    entry = data["exclude"][0]
    assert isinstance(entry, LineDict)
    assert entry.line == 7
    assert entry.key_lines == {"arch": 7, "reason": 8}


def test_line_of():
    data = yamlload.load(TEXT)
    assert yamlload.line_of(data, "toolchain") == 3
    assert yamlload.line_of(data, "absent") == data.line
    assert yamlload.line_of(data["toolchain"], 1) == 5
    assert yamlload.line_of(data["toolchain"], 7) == data["toolchain"].line
    assert yamlload.line_of(data["toolchain"], "x") == data["toolchain"].line
    assert yamlload.line_of("plain", 0) is None
    assert yamlload.line_of({"a": 1}, "a") is None


def test_scalars_and_empty_documents():
    assert yamlload.load("") is None
    assert yamlload.load("42") == 42
    assert yamlload.load("[]") == []


def test_anchors_and_aliases():
    data = yamlload.load("a: &x [1, 2]\nb: *x\n")
    assert data["a"] == data["b"] == [1, 2]


def test_duplicate_key_is_an_error_at_its_line():
    with pytest.raises(yaml.YAMLError) as exc:
        yamlload.load("arch: [x86_64]\ntoolchain: gcc\narch: [arm64]\n")
    assert exc.value.problem == "duplicate key 'arch'"
    assert exc.value.problem_mark.line + 1 == 3


def test_unhashable_key_is_an_error():
    with pytest.raises(yaml.YAMLError) as exc:
        yamlload.load("? [a, b]\n: 1\n")
    assert exc.value.problem == "unhashable key"


def test_is_safe():
    with pytest.raises(yaml.YAMLError):
        yamlload.load("!!python/object/apply:os.system ['true']\n")


def test_merge_keys():
    data = yamlload.load("base: &b {a: 1, b: 2}\nx:\n  <<: *b\n  b: 3\n")
    assert data["x"] == {"a": 1, "b": 3}
