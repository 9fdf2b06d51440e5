"""YAML loading that remembers the line of every mapping key and list item,
so matrix errors can say ``file:line: key.path: problem``."""

from __future__ import annotations

from typing import Any

import yaml


class LineDict(dict[Any, Any]):
    """A mapping with ``line`` (its own) and ``key_lines`` (line of each key)."""

    line: int = 0
    key_lines: dict[Any, int]


class LineList(list[Any]):
    """A list with ``line`` (its own) and ``item_lines`` (line of each item)."""

    line: int = 0
    item_lines: list[int]


MAX_ALIASES = 1000  # a matrix needs a few; a "billion laughs" document needs many


class _Loader(yaml.SafeLoader):
    aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        # Every *alias is a reference; nested anchors make a document of a
        # few hundred bytes stand for billions of values. Bound them.
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                event = self.peek_event()  # type: ignore[no-untyped-call]
                raise yaml.composer.ComposerError(
                    None, None, f"more than {MAX_ALIASES} aliases (*name)", event.start_mark
                )
        return super().compose_node(parent, index)

    def construct_yaml_map(self, node: yaml.MappingNode) -> Any:
        data = LineDict()
        data.line = node.start_mark.line + 1
        data.key_lines = {}
        yield data
        # "<<: *anchor" merge keys: merged pairs come first, explicit keys may
        # override them; only an explicit key given twice is an error.
        explicit = sum(1 for k, _ in node.value if k.tag != "tag:yaml.org,2002:merge")
        self.flatten_mapping(node)
        merged = len(node.value) - explicit
        seen: set[Any] = set()
        for index, (key_node, value_node) in enumerate(node.value):
            key = self.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, "unhashable key", key_node.start_mark
                ) from None
            if index >= merged:
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r}", key_node.start_mark
                    )
                seen.add(key)
            data[key] = self.construct_object(value_node, deep=True)
            data.key_lines[key] = key_node.start_mark.line + 1

    def construct_yaml_seq(self, node: yaml.SequenceNode) -> Any:
        data = LineList()
        data.line = node.start_mark.line + 1
        data.item_lines = [child.start_mark.line + 1 for child in node.value]
        yield data
        data.extend(self.construct_object(child, deep=True) for child in node.value)


_Loader.add_constructor("tag:yaml.org,2002:map", _Loader.construct_yaml_map)
_Loader.add_constructor("tag:yaml.org,2002:seq", _Loader.construct_yaml_seq)


def load(text: str) -> Any:
    """Parse *text*; mappings become LineDict and lists LineList."""
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader derives from SafeLoader


def line_of(container: Any, key: Any) -> int | None:
    """The line of *key* (dict key or list index) in *container*, if known."""
    if isinstance(container, LineDict):
        return container.key_lines.get(key, container.line)
    if isinstance(container, LineList) and isinstance(key, int) and key < len(container.item_lines):
        return container.item_lines[key]
    return getattr(container, "line", None)
