"""Kconfig URL fetches against a local server on 127.0.0.1: one deadline for
the whole download, redirects recorded, the body checked."""

import socket
import threading
import time

import pytest
from fakes import http_server, send

from pytest_kbuild import kconfig
from pytest_kbuild.errors import KbuildInfraError, KconfigFetchError, KconfigNotAConfig
from pytest_kbuild.kconfig import remote as kconfigfetch
from pytest_kbuild.kconfig.remote import Redirect, not_a_config

CONFIG = b"# a fragment\nCONFIG_FROM_URL=y\n\n# CONFIG_OTHER is not set\n"
LARGE = b"".join(b"CONFIG_OPTION_%05d=y\n" % n for n in range(2000))  # 52 KB, many reads
HTML = b'<!DOCTYPE html>\n<html lang="en"><head><title>Sign in</title></head></html>\n'


def _trickle(handler):
    """One byte of a valid config every 0.2 s, 100 bytes in all (20 s)."""
    handler.send_response(200)
    handler.send_header("Content-Length", "100")
    handler.end_headers()
    for _ in range(100):
        handler.wfile.write(b"#")
        handler.wfile.flush()
        time.sleep(0.2)


def _slow_headers(handler):
    """The status line, then one header byte every 0.2 s."""
    handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
    for _ in range(100):
        handler.wfile.write(b"X")
        handler.wfile.flush()
        time.sleep(0.2)


def _stall(handler):
    """Nothing at all for 10 s: not even the status line."""
    time.sleep(10)


def _to(location, status=302):
    return lambda h: send(h, b"", status, Location=location)


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def server():
    routes = {
        "/good.config": lambda h: send(h, CONFIG),
        "/trickle.config": _trickle,
        "/slow-headers.config": _slow_headers,
        "/login.config": lambda h: send(h, HTML, Content_Type="text/html"),
        "/moved.config": _to("/good.config", 301),
        "/loop.config": _to("/loop.config"),
        "/file.config": _to("file:///etc/passwd"),
        "/gone.config": _to("/missing.config"),
        "/stall.config": _stall,
        "/moved-login.config": _to("/login.config"),
        "/far.config": _to("ftp://" + "x" * 300),
        # /hopN.config: N redirects to /good.config
        **{f"/hop{n}.config": _to(f"/hop{n - 1}.config") for n in range(2, 12)},
        "/hop1.config": _to("/good.config"),
        "/large.config": lambda h: send(h, LARGE),
    }
    with http_server(routes) as url:
        port = url.rsplit(":", 1)[1]
        routes["/elsewhere.config"] = _to(f"http://localhost:{port}/good.config")
        yield url


def test_fetch_writes_the_body_and_says_where_it_came_from(server, tmp_path):
    got = kconfigfetch.fetch(f"{server}/good.config", tmp_path / "c")
    assert (tmp_path / "c").read_bytes() == CONFIG
    assert got == kconfigfetch.Fetched(
        f"{server}/good.config", f"{server}/good.config", (), len(CONFIG)
    )
    assert got.log_lines() == []


@pytest.mark.parametrize("path", ["/trickle.config", "/slow-headers.config"])
def test_a_trickling_server_stops_at_the_total_deadline(server, tmp_path, path):
    # Every read gets a byte within 0.2 s, so a per-read timeout never fires;
    # the deadline covers the whole download.
    url = f"{server}{path}"
    started = time.monotonic()
    with pytest.raises(KconfigFetchError) as exc:
        kconfigfetch.fetch(url, tmp_path / "c", timeout=1.0)
    took = time.monotonic() - started
    assert str(exc.value) == f"cannot fetch kconfig {url!r}: timed out after 1 s"
    assert 0.9 < took < 2.0
    assert not (tmp_path / "c").exists()


def test_a_redirect_is_followed_and_recorded(server, tmp_path):
    url, final = f"{server}/moved.config", f"{server}/good.config"
    got = kconfigfetch.fetch(url, tmp_path / "c")
    assert (tmp_path / "c").read_bytes() == CONFIG
    assert got.final_url == final
    assert got.redirects == (Redirect(301, url, final),)
    assert got.log_lines() == [
        f"I: kconfig {url} redirected: HTTP 301 {url} -> {final}",
        f"I: kconfig {url} fetched from {final}",
    ]


def test_a_redirect_to_another_host_is_said_in_the_log(server, tmp_path):
    url = f"{server}/elsewhere.config"
    port = server.rsplit(":", 1)[1]
    final = f"http://localhost:{port}/good.config"
    got = kconfigfetch.fetch(url, tmp_path / "c")
    assert got.final_url == final
    assert got.redirects[0].other_host
    assert (
        f"W: kconfig {url} redirected to another host: 127.0.0.1:{port} -> localhost:{port}"
        in got.log_lines()
    )


def test_a_redirect_to_a_file_url_is_refused(server, tmp_path):
    url = f"{server}/file.config"
    with pytest.raises(KconfigFetchError) as exc:
        kconfigfetch.fetch(url, tmp_path / "c")
    assert str(exc.value) == (
        f"cannot fetch kconfig {url!r}: redirected from {url} to 'file:///etc/passwd', "
        "which is not an http(s) URL (only http and https are followed)"
    )
    assert not (tmp_path / "c").exists()


def test_a_redirect_loop_stops(server, tmp_path):
    url = f"{server}/loop.config"
    with pytest.raises(KconfigFetchError, match=r": more than 10 redirects \(last: HTTP 302 "):
        kconfigfetch.fetch(url, tmp_path / "c")


def test_an_error_after_a_redirect_names_where_it_ended(server, tmp_path):
    url = f"{server}/gone.config"
    with pytest.raises(KconfigFetchError) as exc:
        kconfigfetch.fetch(url, tmp_path / "c")
    assert str(exc.value) == (
        f"cannot fetch kconfig {url!r}: HTTP 404 Not Found (redirected to {server}/missing.config)"
    )


def test_an_html_page_is_not_a_config(server, tmp_path):
    url = f"{server}/login.config"
    with pytest.raises(KconfigNotAConfig) as exc:
        kconfigfetch.fetch(url, tmp_path / "c")
    assert isinstance(exc.value, KbuildInfraError)  # ERROR, not a kernel FAIL
    assert str(exc.value) == (
        f"cannot fetch kconfig {url!r}: got an HTML page (starts with '<!DOCTYPE html>'), "
        "not a .config or a fragment (accepted: lines CONFIG_X=..., '# CONFIG_X is not set', "
        "other comments and blank lines)"
    )
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize(
    ("body", "got"),
    [
        (b"", "an empty body"),
        (b" \n\n", "only whitespace"),
        (b"CONFIG_A=y\n\0\1", "binary data (starts with b'CONFIG_A=y\\n\\x00\\x01')"),
        (b"\xff\xfe", "binary data, not UTF-8 text (starts with b'\\xff\\xfe')"),
        (
            b"<html><body>502</body></html>",
            "an HTML page (starts with '<html><body>502</body></html>')",
        ),
        (
            b"\n<?xml version='1.0'?><Error/>",
            "an XML or HTML document (starts with \"<?xml version='1.0'?><Error/>\")",
        ),
        (
            b'{"message": "Not Found"}',
            'JSON or other structured data (starts with \'{"message": "Not Found"}\')',
        ),
        (b"CONFIG_A=y\nCONFIG_B is y\n", "text that is not config lines (line 2: 'CONFIG_B is y')"),
        (b"# c\n" + b"x" * 100, f"text that is not config lines (line 2: {'x' * 40!r})"),
    ],
)
def test_what_came_instead_of_a_config(body, got):
    assert not_a_config(body) == got


@pytest.mark.parametrize(
    "body",
    [
        b"CONFIG_A=y\n",
        b"CONFIG_A=y\r\n# CONFIG_B is not set\r\n",
        b'#\n# Automatically generated file; DO NOT EDIT.\n#\nCONFIG_CC_VERSION_TEXT="gcc (Debian 12.2.0-14) 12.2.0"\n\nCONFIG_X=0x10\n',
        b"  CONFIG_INDENTED=m  \n",
    ],
)
def test_config_text_is_a_config(body):
    assert not_a_config(body) is None


def test_plan_records_the_final_url_and_logs_the_redirect(server, tmp_path, kernel_tree):
    build = tmp_path / "build"
    build.mkdir()
    url, final = f"{server}/moved.config", f"{server}/good.config"
    lines: list[str] = []
    p = kconfig.plan(url, (), kernel_tree, tmp_path, build, lines.append)
    assert p.sources[0]["final_url"] == final
    assert f"I: kconfig {url} fetched from {final}" in lines
    assert (build / ".config").read_bytes() == CONFIG


@pytest.mark.parametrize(
    ("body", "got"),
    [  # found by mutation testing: each way of saying what came instead, on its own
        (
            b"<!DOCTYPE html>\n<title>Sign in</title>",
            "an HTML page (starts with '<!DOCTYPE html>')",
        ),
        (
            b"<HTML><BODY>x</BODY></HTML>",
            "an HTML page (starts with '<HTML><BODY>x</BODY></HTML>')",
        ),
        (
            b'<?xml version="1.0"?>\n<html xmlns="x">',
            "an HTML page (starts with '<?xml version=\"1.0\"?>')",
        ),
        (b'["CONFIG_A=y"]', "JSON or other structured data (starts with '[\"CONFIG_A=y\"]')"),
        (b"CONFIG_A=y\n\0" + b"x" * 30, "binary data (starts with b'CONFIG_A=y\\n\\x00xxxx')"),
        (
            b"CONFIG_A=y\n\xff" + b"x" * 30,
            "binary data, not UTF-8 text (starts with b'CONFIG_A=y\\n\\xffxxxx')",
        ),
    ],
)
def test_what_came_instead_each_kind(body, got):
    assert not_a_config(body) == got


# -- more gaps found by mutation testing (benchmarks/mutation.py kconfigfetch) ---------------


def test_exactly_max_redirects_are_followed_and_one_more_is_refused(server, tmp_path):
    got = kconfigfetch.fetch(f"{server}/hop{kconfigfetch.MAX_REDIRECTS}.config", tmp_path / "c")
    assert len(got.redirects) == kconfigfetch.MAX_REDIRECTS
    assert got.final_url == f"{server}/good.config"
    url = f"{server}/hop{kconfigfetch.MAX_REDIRECTS + 1}.config"
    with pytest.raises(KconfigFetchError) as exc:
        kconfigfetch.fetch(url, tmp_path / "d")
    assert str(exc.value) == (
        f"cannot fetch kconfig {url!r}: more than 10 redirects "
        f"(last: HTTP 302 {server}/hop1.config -> {server}/good.config)"
    )


def test_a_page_that_is_no_config_after_a_redirect_names_where_it_ended(server, tmp_path):
    url = f"{server}/moved-login.config"
    with pytest.raises(KconfigNotAConfig) as exc:
        kconfigfetch.fetch(url, tmp_path / "c")
    assert (
        f"got an HTML page (starts with '<!DOCTYPE html>') (redirected to '{server}/login.config'),"
        in str(exc.value)
    )


def test_a_long_redirect_target_is_cut_in_the_message(server, tmp_path):
    with pytest.raises(KconfigFetchError) as exc:
        kconfigfetch.fetch(f"{server}/far.config", tmp_path / "c")
    assert f" to {('ftp://' + 'x' * 300)[:200]!r}, which is not an http(s) URL" in str(exc.value)


def test_the_download_thread_left_at_the_deadline_is_a_named_daemon(server, tmp_path):
    # It trickles on after fetch() gave up: it must not keep Python alive.
    url = f"{server}/trickle.config"
    with pytest.raises(KconfigFetchError, match="timed out after 0.5 s"):
        kconfigfetch.fetch(url, tmp_path / "c", timeout=0.5)
    (left,) = [t for t in threading.enumerate() if t.name == f"kconfig fetch {url}"]
    assert left.daemon


def test_a_silent_servers_download_thread_ends_at_its_read_timeout(server, tmp_path):
    # Each read has what is left of the deadline: the thread does not wait
    # for the server (10 s) after fetch() gave up.
    url = f"{server}/stall.config"
    with pytest.raises(KconfigFetchError) as exc:
        kconfigfetch.fetch(url, tmp_path / "c", timeout=0.5)
    # whichever comes first, the read's timeout or fetch()'s wait, says the same
    assert str(exc.value) == f"cannot fetch kconfig {url!r}: timed out after 0.5 s"
    for thread in threading.enumerate():
        if thread.name == f"kconfig fetch {url}":
            thread.join(3)
            assert not thread.is_alive()


def test_a_body_of_many_reads_is_kept_whole_up_to_the_byte_cap(server, tmp_path):
    url = f"{server}/large.config"
    got = kconfigfetch.fetch(url, tmp_path / "c", max_bytes=len(LARGE))  # exactly the cap
    assert (tmp_path / "c").read_bytes() == LARGE and got.size == len(LARGE)
    with pytest.raises(KconfigFetchError) as exc:
        kconfigfetch.fetch(url, tmp_path / "d", max_bytes=len(LARGE) - 1)
    assert str(exc.value) == (
        f"cannot fetch kconfig {url!r}: larger than the {len(LARGE) - 1} byte cap"
    )
    assert not (tmp_path / "d").exists()


def test_a_refused_connection_says_why(tmp_path):
    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/x.config"
    with pytest.raises(KconfigFetchError) as exc:
        kconfigfetch.fetch(url, tmp_path / "c")
    msg = str(exc.value)
    assert msg.startswith(f"cannot fetch kconfig {url!r}: ") and "Connection refused" in msg
    assert len(msg) < 700
