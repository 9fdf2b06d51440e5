from pathlib import Path

import pytest

from pytest_kbuild import definitions
from pytest_kbuild.definitions import Definition
from pytest_kbuild.errors import DefinitionError, KbuildUserError, UnknownDefinition

ALL = [(kind, name) for kind in definitions.KINDS for name in definitions.available(kind)]
ALIASES = [(kind, a, n) for kind in definitions.KINDS for a, n in definitions.aliases(kind).items()]


def test_every_kind_has_definitions():
    for kind in definitions.KINDS:
        names = definitions.available(kind)
        assert names, kind
        assert names == sorted(names)
        assert (definitions.DATA_DIR / kind).is_dir()


@pytest.mark.parametrize(("kind", "name"), ALL)
def test_every_data_file_loads(kind, name):
    d = definitions.load(kind, name)
    assert d.kind == kind
    assert d.name == name
    assert d.path == definitions.DATA_DIR / kind / f"{name}.yaml"
    assert "aliases" not in d.fields
    assert definitions.canonical(kind, name) == name


def test_data_files_are_all_yaml():
    for kind in definitions.KINDS:
        for path in (definitions.DATA_DIR / kind).iterdir():
            # Image recipes sit beside their YAML, which names them; so do the
            # boot machines' kconfig fragments and the boot init's source.
            extra = (".config", ".c") if kind == "boot" else (".Containerfile",)
            assert path.suffix in (".yaml", *extra), f"{path} is not loaded"


@pytest.mark.parametrize(("kind", "alias", "name"), ALIASES)
def test_aliases_resolve(kind, alias, name):
    assert name in definitions.available(kind)
    assert alias not in definitions.available(kind)
    assert definitions.canonical(kind, alias) == name
    assert definitions.load(kind, alias).name == name


def test_aliases_is_a_copy():
    definitions.aliases("arch")["zzz"] = "x86_64"
    assert "zzz" not in definitions.aliases("arch")


def test_unknown_name_message_names_value_where_and_known():
    with pytest.raises(UnknownDefinition) as exc:
        definitions.load("wrapper", "distcc", "matrix.yaml:3: matrix.wrapper")
    err = exc.value
    assert str(err) == (
        "matrix.yaml:3: matrix.wrapper: unknown wrapper 'distcc'; known: "
        + ", ".join(sorted(definitions.available("wrapper")))
    )
    assert err.kind == "wrapper"
    assert err.name == "distcc"
    assert isinstance(err, KbuildUserError)


def test_unknown_name_lists_aliases_as_known():
    with pytest.raises(UnknownDefinition) as exc:
        definitions.load("arch", "vax")
    for alias in definitions.aliases("arch"):
        assert alias in str(exc.value)
    assert str(exc.value).startswith("unknown arch 'vax'; known: ")


def test_unknown_kind():
    with pytest.raises(UnknownDefinition) as exc:
        definitions.available("compiler")
    assert str(exc.value) == (
        "unknown definition kind 'compiler'; known: arch, boot, image, target, toolchain, wrapper"
    )


def test_canonical_unknown_is_none():
    assert definitions.canonical("arch", "vax") is None


FAKE = Definition("target", "fake", Path("/data/target/fake.yaml"), {"order": "x", "n": 3})


def test_require_present():
    assert definitions.require(FAKE, "n", int) == 3
    assert definitions.require(FAKE, "n", (str, int)) == 3


def test_require_missing_key_names_file_and_key():
    with pytest.raises(DefinitionError) as exc:
        definitions.require(FAKE, "commands", list)
    assert str(exc.value) == "/data/target/fake.yaml: missing key 'commands'"
    assert exc.value.path == "/data/target/fake.yaml"


def test_require_wrong_type_names_file_key_type_and_value():
    with pytest.raises(DefinitionError) as exc:
        definitions.require(FAKE, "order", int)
    assert str(exc.value) == "/data/target/fake.yaml: key 'order' must be int, got 'x'"


def test_require_wrong_type_tuple_of_types():
    with pytest.raises(DefinitionError, match=r"key 'n' must be str/list, got 3"):
        definitions.require(FAKE, "n", (str, list))


def test_optional():
    assert definitions.optional(FAKE, "absent", list, ["d"]) == ["d"]
    assert definitions.optional(FAKE, "n", int, 0) == 3
    with pytest.raises(DefinitionError, match="key 'order' must be int"):
        definitions.optional(FAKE, "order", int, 0)


def test_expand():
    assert definitions.expand(FAKE, "{a}/{b}", {"a": "x", "b": "y"}) == "x/y"


def test_expand_unknown_placeholder_names_file_template_and_known():
    with pytest.raises(DefinitionError) as exc:
        definitions.expand(FAKE, "{nope}/x", {"build_dir": "b", "arch": "a"})
    assert str(exc.value) == (
        "/data/target/fake.yaml: unknown placeholder {nope} in '{nope}/x'; known: arch, build_dir"
    )


def test_expand_malformed_template_is_a_definition_error():
    with pytest.raises(DefinitionError, match=r"fake\.yaml"):
        definitions.expand(FAKE, "{build_dir", {"build_dir": "b"})


# -- malformed data files (in a private data directory) -------------------------------


def test_fake_data_dir_loads(data_dir):
    (data_dir / "wrapper" / "w.yaml").write_text("aliases: [ww]\ncommand: w\n")
    (data_dir / "wrapper" / "empty.yaml").write_text("")
    (data_dir / "wrapper" / "notes.txt").write_text("ignored")
    assert definitions.available("wrapper") == ["empty", "w"]
    assert definitions.load("wrapper", "ww").fields == {"command": "w"}
    assert definitions.load("wrapper", "empty").fields == {}


def test_invalid_yaml_names_file(data_dir):
    path = data_dir / "arch" / "bad.yaml"
    path.write_text("makevars: {ARCH: x\n")
    with pytest.raises(DefinitionError) as exc:
        definitions.available("arch")
    assert str(exc.value).startswith(f"{path}: invalid YAML: ")
    assert exc.value.path == str(path)


def test_top_level_not_a_mapping(data_dir):
    path = data_dir / "arch" / "bad.yaml"
    path.write_text("- a\n- b\n")
    with pytest.raises(DefinitionError) as exc:
        definitions.available("arch")
    assert str(exc.value) == f"{path}: top level must be a mapping"


@pytest.mark.parametrize("aliases", ["foo", "[1, 2]", "{a: b}"])
def test_aliases_must_be_string_list(data_dir, aliases):
    path = data_dir / "arch" / "bad.yaml"
    path.write_text(f"aliases: {aliases}\n")
    with pytest.raises(DefinitionError) as exc:
        definitions.available("arch")
    assert str(exc.value) == f"{path}: 'aliases' must be a list of strings"


def test_alias_defined_twice(data_dir):
    (data_dir / "arch" / "a.yaml").write_text("aliases: [same]\n")
    (data_dir / "arch" / "b.yaml").write_text("aliases: [same]\n")
    with pytest.raises(DefinitionError) as exc:
        definitions.available("arch")
    assert str(exc.value) == f"{data_dir / 'arch' / 'b.yaml'}: alias 'same' is defined twice"


@pytest.mark.parametrize(("declares", "other"), [("b", "a"), ("a", "b")])
def test_alias_equal_to_another_name(data_dir, declares, other):
    # Whichever file sorts first, the file declaring the alias is named.
    (data_dir / "arch" / f"{declares}.yaml").write_text(f"aliases: [{other}]\n")
    (data_dir / "arch" / f"{other}.yaml").write_text("{}\n")
    with pytest.raises(DefinitionError) as exc:
        definitions.available("arch")
    path = data_dir / "arch" / f"{declares}.yaml"
    assert str(exc.value) == f"{path}: alias {other!r} is also a arch name"
