"""A target's failure as pytest reports it: the text it always was, with
its first line as the crash message. pytest's short summary and JUnit's
``<failure message>`` read that message; a plain string longrepr gave them
the whole text (pytest 8 and later print all of it in the short summary
under CI). Built from pytest's own report classes, so xdist carries it from
the workers as it carries a traceback."""

from __future__ import annotations

from collections.abc import Sequence

from _pytest._code.code import ReprEntryNative, ReprExceptionInfo, ReprFileLocation, ReprTraceback


def failure(lines: Sequence[str], path: str, line: int) -> ReprExceptionInfo:
    """The longrepr whose text is *lines* and whose message is the first of
    them, located at *path*:*line* (the build's line of its matrix)."""
    text = [f"{s}\n" for s in lines]
    crash = ReprFileLocation(path=path, lineno=line, message=lines[0] if lines else "")
    body = ReprTraceback(reprentries=[ReprEntryNative(lines=text)], extraline=None, style="native")
    return ReprExceptionInfo(reprtraceback=body, reprcrash=crash)
