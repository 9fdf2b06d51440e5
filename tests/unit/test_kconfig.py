import hashlib
import http.server
import socket
import threading
import time

import pytest

from pytest_kbuild import kconfig
from pytest_kbuild.errors import KbuildInfraError, KbuildUserError, KconfigError, KconfigFetchError
from pytest_kbuild.kconfig import MERGE_CONFIG, Dropped

URL_CONFIG = b"CONFIG_FROM_URL=y\n# CONFIG_OTHER is not set\n"


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server's name
        if self.path == "/slow.config":
            time.sleep(0.5)
        if self.path == "/moved.config":
            self.send_response(301)
            self.send_header("Location", "/good.config")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path in ("/good.config", "/slow.config"):
            body = URL_CONFIG
        elif self.path == "/big.config":
            body = b"#" * 10_000
        else:
            self.send_error(404)
            return
        try:
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout, size cap)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    """http://127.0.0.1:<port>: /good.config, /big.config, /slow.config,
    /moved.config (301 to /good.config); else 404."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.block_on_close = False
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")


@pytest.fixture
def dirs(tmp_path, kernel_tree):
    base = tmp_path / "matrices"
    build = tmp_path / "build"
    base.mkdir()
    build.mkdir()
    return kernel_tree, base, build


# -- literals ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("CONFIG_X=y", ("CONFIG_X", "y")),
        ("CONFIG_X=m", ("CONFIG_X", "m")),
        ("CONFIG_X=n", ("CONFIG_X", None)),
        ("  CONFIG_X_2=y  ", ("CONFIG_X_2", "y")),
        ('CONFIG_CMDLINE="console=ttyS0 quiet"', ("CONFIG_CMDLINE", '"console=ttyS0 quiet"')),
        ('CONFIG_S="a \\" b"', ("CONFIG_S", '"a \\" b"')),
        ("CONFIG_NR_CPUS=64", ("CONFIG_NR_CPUS", "64")),
        ("CONFIG_I=-1", ("CONFIG_I", "-1")),
        ("CONFIG_H=0x1f", ("CONFIG_H", "0x1f")),
        ("# CONFIG_X is not set", ("CONFIG_X", None)),
    ],
)
def test_parse_literal(text, expected):
    assert kconfig.parse_literal(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "CONFIG_X=maybe",
        "CONFIG_X",
        "X=y",
        'CONFIG_S="open',
        "CONFIG_X = y",
        "# CONFIG_X",
        "defconfig",
    ],
)
def test_parse_literal_rejects(text):
    assert kconfig.parse_literal(text) is None


def test_parse_config():
    text = '#\n# Automatically generated\n#\nCONFIG_A=y\nCONFIG_B="s"\n# CONFIG_C is not set\n\n'
    assert kconfig.parse_config(text) == {"CONFIG_A": "y", "CONFIG_B": '"s"', "CONFIG_C": None}


# -- syntax checks ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", ["defconfig", "tinyconfig", "configs/my.config", "/abs/config", "https://e/x.config"]
)
def test_validate_kconfig_accepts(value):
    kconfig.validate_kconfig(value)


@pytest.mark.parametrize("value", ["", "   "])
def test_validate_kconfig_empty(value):
    with pytest.raises(KconfigError) as exc:
        kconfig.validate_kconfig(value)
    assert str(exc.value) == f"kconfig {value!r}: empty; give a *config target, a path or a URL"
    assert exc.value.value == value
    assert isinstance(exc.value, KbuildUserError)


@pytest.mark.parametrize("value", ["CONFIG_X=y", "# CONFIG_X is not set"])
def test_validate_kconfig_option(value):
    with pytest.raises(KconfigError) as exc:
        kconfig.validate_kconfig(value)
    assert str(exc.value) == f"kconfig {value!r}: an option belongs in kconfig_add, not kconfig"


@pytest.mark.parametrize(
    "value",
    [
        "CONFIG_X=y",
        "# CONFIG_X is not set",
        "make:kvm_guest.config",
        "kvm_guest.config",
        "a/b.config",
        "http://e/f",
    ],
)
def test_validate_fragment_accepts(value):
    kconfig.validate_fragment(value)


def test_validate_fragment_empty():
    with pytest.raises(KconfigError) as exc:
        kconfig.validate_fragment(" ")
    assert str(exc.value) == "kconfig ' ': empty fragment"


@pytest.mark.parametrize("value", ["CONFIG_X=maybe", "CONFIG_X", "# CONFIG_X", "#CONFIG_X=y"])
def test_validate_fragment_bad_literal(value):
    with pytest.raises(KconfigError) as exc:
        kconfig.validate_fragment(value)
    assert str(exc.value) == (
        f"kconfig {value!r}: not a valid option; accepted: "
        'CONFIG_X=y|m|n|"string"|123|0x1f or "# CONFIG_X is not set"'
    )


@pytest.mark.parametrize("value", ["make:", "make:  "])
def test_validate_fragment_make_without_target(value):
    with pytest.raises(KconfigError) as exc:
        kconfig.validate_fragment(value)
    assert str(exc.value) == f"kconfig {value!r}: make: needs a target, e.g. make:kvm_guest.config"


# -- checking the final .config -------------------------------------------------------------


def test_dropped_messages():
    assert str(Dropped("CONFIG_X", "y", None)) == (
        "CONFIG_X=y was asked for, but the final .config is not set"
    )
    assert str(Dropped("CONFIG_X", "y", "m")) == (
        "CONFIG_X=y was asked for, but the final .config is CONFIG_X=m"
    )
    assert str(Dropped("CONFIG_X", None, "y")) == (
        "CONFIG_X not set was asked for, but the final .config is CONFIG_X=y"
    )


def test_check_options():
    config = "CONFIG_A=y\nCONFIG_B=m\n# CONFIG_C is not set\nCONFIG_D=y\n"
    wanted = {
        "CONFIG_A": "y",
        "CONFIG_B": "y",
        "CONFIG_C": None,
        "CONFIG_D": None,
        "CONFIG_E": None,
    }
    assert kconfig.check_options(wanted, config) == [
        Dropped("CONFIG_B", "y", "m"),
        Dropped("CONFIG_D", None, "y"),
    ]
    assert kconfig.check_options({"CONFIG_F": "y"}, config) == [Dropped("CONFIG_F", "y", None)]


def test_unmet():
    config = "CONFIG_MODULES=y\n# CONFIG_OF is not set\n"
    assert kconfig.unmet(("CONFIG_MODULES=y",), config) == []
    assert kconfig.unmet(("CONFIG_MODULES=y", "CONFIG_OF=y"), config) == ["CONFIG_OF=y"]
    assert kconfig.unmet(("CONFIG_XIP_KERNEL=y",), "") == ["CONFIG_XIP_KERNEL=y"]
    assert kconfig.unmet(("CONFIG_OF=n",), config) == []


def test_met():
    config = "CONFIG_XIP_KERNEL=y\n# CONFIG_OF is not set\n"
    assert kconfig.met(("CONFIG_XIP_KERNEL=y", "CONFIG_OF=y", "CONFIG_OF=n"), config) == [
        "CONFIG_XIP_KERNEL=y",
        "CONFIG_OF=n",
    ]
    assert kconfig.met(("CONFIG_XIP_KERNEL=y",), "") == []
    assert kconfig.met(("not a literal",), config) == []


# -- plans ------------------------------------------------------------------------------------


def _merge(tree, build, *fragments):
    script = str(tree / MERGE_CONFIG)  # absolute: it runs in the build directory
    return [script, "-m", "-O", str(build), str(build / ".config"), *map(str, fragments)]


def test_plan_make_target(dirs):
    tree, base, build = dirs
    p = kconfig.plan("tinyconfig", (), tree, base, build)
    assert p.commands == [["make", "tinyconfig"]]
    assert p.wanted == {}
    assert p.sources == [{"kconfig": "tinyconfig", "kind": "make target"}]


def test_plan_literal_fragments(dirs):
    tree, base, build = dirs
    p = kconfig.plan(
        "defconfig", ("CONFIG_A=y", " # CONFIG_B is not set", "CONFIG_C=n"), tree, base, build
    )
    frags = [build / f"kbuild-fragment-{i}.config" for i in range(3)]
    assert p.commands == [
        ["make", "defconfig"],
        _merge(tree, build, *frags),
        ["make", "olddefconfig"],
    ]
    assert [f.read_text() for f in frags] == [
        "CONFIG_A=y\n",
        "# CONFIG_B is not set\n",
        "# CONFIG_C is not set\n",
    ]
    assert p.wanted == {"CONFIG_A": "y", "CONFIG_B": None, "CONFIG_C": None}
    assert p.sources[1:] == [
        {"fragment": "CONFIG_A=y", "kind": "literal"},
        {"fragment": "# CONFIG_B is not set", "kind": "literal"},
        {"fragment": "CONFIG_C=n", "kind": "literal"},
    ]


def test_plan_make_fragments_keep_their_order(dirs):
    tree, base, build = dirs
    p = kconfig.plan(
        "defconfig",
        ("CONFIG_A=y", "make:kvm_guest.config", "CONFIG_B=y", "debug.config"),
        tree,
        base,
        build,
    )
    assert p.commands == [
        ["make", "defconfig"],
        _merge(tree, build, build / "kbuild-fragment-0.config"),
        ["make", "kvm_guest.config"],
        _merge(tree, build, build / "kbuild-fragment-2.config"),
        ["make", "debug.config"],
        ["make", "olddefconfig"],
    ]
    assert p.sources[2] == {"fragment": "make:kvm_guest.config", "kind": "make target"}
    assert p.sources[4] == {"fragment": "debug.config", "kind": "make target"}


def test_plan_fragment_file_beside_the_matrix_wins_over_make_target(dirs):
    tree, base, build = dirs
    (base / "debug.config").write_text("CONFIG_DEBUG=y\n")
    p = kconfig.plan("defconfig", ("debug.config",), tree, base, build)
    dest = build / "kbuild-fragment-0.config"
    assert p.commands == [
        ["make", "defconfig"],
        _merge(tree, build, dest),
        ["make", "olddefconfig"],
    ]
    assert dest.read_text() == "CONFIG_DEBUG=y\n"
    assert p.sources[1] == {
        "fragment": "debug.config",
        "kind": "file",
        "sha256": hashlib.sha256(b"CONFIG_DEBUG=y\n").hexdigest(),
    }
    assert p.wanted == {}


def test_plan_kconfig_file_beside_the_matrix(dirs):
    tree, base, build = dirs
    (base / "configs").mkdir()
    (base / "configs" / "my.config").write_text("CONFIG_MINE=y\n")
    p = kconfig.plan("configs/my.config", (), tree, base, build)
    assert p.commands == [["make", "olddefconfig"]]
    assert (build / ".config").read_text() == "CONFIG_MINE=y\n"
    assert p.sources == [
        {
            "kconfig": "configs/my.config",
            "kind": "file",
            "sha256": hashlib.sha256(b"CONFIG_MINE=y\n").hexdigest(),
        }
    ]


def test_plan_file_named_like_a_target_is_a_file(dirs):
    tree, base, build = dirs
    (base / "myconfig").write_text("CONFIG_MINE=y\n")
    p = kconfig.plan("myconfig", (), tree, base, build)
    assert p.commands == [["make", "olddefconfig"]]
    assert p.sources[0]["kind"] == "file"


def test_plan_in_tree_file(dirs):
    tree, base, build = dirs
    (tree / "arch/x86/configs").mkdir(parents=True)
    (tree / "arch/x86/configs/x86_64_defconfig").write_text("CONFIG_X86_64=y\n")
    p = kconfig.plan("arch/x86/configs/x86_64_defconfig", (), tree, base, build)
    assert p.sources[0]["kind"] == "in-tree file"
    assert (build / ".config").read_text() == "CONFIG_X86_64=y\n"


def test_plan_absolute_path(dirs, tmp_path):
    tree, base, build = dirs
    (tmp_path / "abs.config").write_text("CONFIG_ABS=y\n")
    p = kconfig.plan(str(tmp_path / "abs.config"), (), tree, base, build)
    assert p.sources[0]["kind"] == "file"
    assert (build / ".config").read_text() == "CONFIG_ABS=y\n"


@pytest.mark.parametrize(
    ("kconfig_value", "fragments", "missing"),
    [("nope/my.config", (), "nope/my.config"), ("defconfig", ("frags/x.frag",), "frags/x.frag")],
)
def test_plan_missing_file(dirs, kconfig_value, fragments, missing):
    tree, base, build = dirs
    with pytest.raises(KconfigError) as exc:
        kconfig.plan(kconfig_value, fragments, tree, base, build)
    assert str(exc.value) == (
        f"kconfig {missing!r}: no such file (looked in {base} and in the tree {tree}); "
        "accepted: a *config make target, a file path, an in-tree path or an http(s) URL"
    )
    assert exc.value.value == missing


def test_plan_url_kconfig_and_fragment(dirs, server):
    tree, base, build = dirs
    url = f"{server}/good.config"
    p = kconfig.plan(url, (url,), tree, base, build)
    dest = build / "kbuild-fragment-0.config"
    assert p.commands == [_merge(tree, build, dest), ["make", "olddefconfig"]]
    assert (build / ".config").read_bytes() == URL_CONFIG
    assert dest.read_bytes() == URL_CONFIG
    digest = hashlib.sha256(URL_CONFIG).hexdigest()
    assert p.sources == [
        {"kconfig": url, "kind": "url", "final_url": url, "sha256": digest},
        {"fragment": url, "kind": "url", "final_url": url, "sha256": digest},
    ]


def test_plan_logs_where_a_url_kconfig_or_fragment_was_redirected(dirs, server):
    tree, base, build = dirs
    moved, good = f"{server}/moved.config", f"{server}/good.config"
    lines = []
    p = kconfig.plan(moved, (moved,), tree, base, build, log=lines.append)
    said = [
        f"I: kconfig {moved} redirected: HTTP 301 {moved} -> {good}",
        f"I: kconfig {moved} fetched from {good}",
    ]
    assert lines == said + said  # the kconfig's, then the fragment's
    assert [s["final_url"] for s in p.sources] == [good, good]
    assert (build / ".config").read_bytes() == URL_CONFIG


def test_is_url():
    assert kconfig.is_url("http://e/x")
    assert kconfig.is_url("https://e/x")
    assert not kconfig.is_url("ftp://e/x")
    assert not kconfig.is_url("defconfig")


# -- fetching ---------------------------------------------------------------------------------


def test_fetch(server, tmp_path):
    kconfig.fetch(f"{server}/good.config", tmp_path / "c")
    assert (tmp_path / "c").read_bytes() == URL_CONFIG


def test_fetch_404(server, tmp_path):
    url = f"{server}/missing.config"
    with pytest.raises(KconfigFetchError) as exc:
        kconfig.fetch(url, tmp_path / "c")
    assert str(exc.value) == f"cannot fetch kconfig {url!r}: HTTP 404 Not Found"
    assert exc.value.url == url
    assert isinstance(exc.value, KbuildInfraError)


def test_fetch_too_large(server, tmp_path):
    url = f"{server}/big.config"
    with pytest.raises(KconfigFetchError) as exc:
        kconfig.fetch(url, tmp_path / "c", max_bytes=1000)
    assert str(exc.value) == f"cannot fetch kconfig {url!r}: larger than the 1000 byte cap"


def test_fetch_timeout(server, tmp_path):
    url = f"{server}/slow.config"
    with pytest.raises(KconfigFetchError) as exc:
        kconfig.fetch(url, tmp_path / "c", timeout=0.1)
    assert str(exc.value) == f"cannot fetch kconfig {url!r}: timed out after 0.1 s"


def test_fetch_connection_refused(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/x.config"
    with pytest.raises(KconfigFetchError) as exc:
        kconfig.fetch(url, tmp_path / "c", timeout=2)
    assert str(exc.value).startswith(f"cannot fetch kconfig {url!r}: ")


def test_plan_url_404_is_an_infra_error(dirs, server):
    tree, base, build = dirs
    with pytest.raises(KconfigFetchError, match="HTTP 404"):
        kconfig.plan("defconfig", (f"{server}/nope.config",), tree, base, build)


def test_a_kconfig_name_too_long_for_the_system_is_no_such_file(dirs):
    # Found by tests/unit/test_bad_input_properties.py: Path.is_file raised
    # OSError (ENAMETOOLONG) at build time, and the reproducer too.
    tree, base, build = dirs
    value = "configs/" + "x" * 5000
    with pytest.raises(
        KconfigError, match=r"^kconfig 'configs/x+'\.\.\. \(5008 characters\): no such"
    ):
        kconfig.plan(value, (), tree, base, build)
    assert kconfig.absolute(value, base) == value
    assert kconfig.plan("x" * 5000 + "config", (), tree, base, build).commands[0][0] == "make"


# -- gaps found by mutation testing (benchmarks/mutation.py kconfig) -----------------------


def test_validate_fragment_make_with_a_one_letter_target():
    kconfig.validate_fragment("make:k")


@pytest.mark.parametrize("value", ["make:W=1", "make: -j", "make:-k"])
def test_validate_fragment_make_takes_no_variable_or_option(value):
    with pytest.raises(KconfigError) as exc:
        kconfig.validate_fragment(value)
    assert str(exc.value) == (
        f"kconfig {value!r}: make: takes one target, not a variable or option, "
        "e.g. make:kvm_guest.config"
    )


def test_validate_fragment_with_a_nul_byte():
    with pytest.raises(KconfigError) as exc:
        kconfig.validate_fragment("my\0.config")
    assert str(exc.value) == "kconfig 'my\\x00.config': holds a NUL byte"


def test_absolute_makes_a_file_beside_the_matrix_absolute_and_leaves_the_rest(tmp_path):
    (tmp_path / "my.config").write_text("CONFIG_A=y\n")
    assert kconfig.absolute("my.config", tmp_path) == str((tmp_path / "my.config").resolve())
    for value in ("missing.config", "/abs/x.config", "https://e/x.config", "CONFIG_A=y"):
        assert kconfig.absolute(value, tmp_path) == value
    (tmp_path / "CONFIG_B=y").write_text("")  # a literal, even when a file has its name
    assert kconfig.absolute("CONFIG_B=y", tmp_path) == "CONFIG_B=y"
    # an absolute path stays as written, even through a link (the reproducer
    # shows what the matrix says)
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "x.config").write_text("CONFIG_A=y\n")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    linked = str(tmp_path / "link" / "x.config")
    assert kconfig.absolute(linked, tmp_path) == linked


def _plan_runner(build, config_text, fail=()):
    ran = []

    def run(cmd):
        ran.append(cmd)
        if cmd[:2] in [list(f) for f in fail]:
            return 2
        if config_text is not None:
            (build / ".config").write_text(config_text)
        return 0

    return ran, run


def test_run_plan_passes_when_every_option_survived(tmp_path):
    p = kconfig.ConfigPlan(commands=[["make", "tinyconfig"]], wanted={"CONFIG_A": "y"})
    ran, run = _plan_runner(tmp_path, "CONFIG_A=y\n")
    assert kconfig.run_plan(p, tmp_path, run, lambda line: None) == (True, "")
    assert ran == [["make", "tinyconfig"]]


def test_run_plan_stops_at_the_first_failing_command(tmp_path):
    cmds = [["make", "tinyconfig", "x"], ["make", "olddefconfig"]]
    ran, run = _plan_runner(tmp_path, "", fail=[("make", "tinyconfig")])
    got = kconfig.run_plan(kconfig.ConfigPlan(commands=cmds), tmp_path, run, lambda line: None)
    assert got == (False, "make tinyconfig failed")
    assert ran == cmds[:1]


def test_run_plan_without_a_config(tmp_path):
    ran, run = _plan_runner(tmp_path, None)
    p = kconfig.ConfigPlan(commands=[["make", "tinyconfig"]])
    assert kconfig.run_plan(p, tmp_path, run, lambda line: None) == (
        False,
        "no .config was produced",
    )


def test_run_plan_names_every_dropped_option_in_the_reason_and_the_log(tmp_path):
    wanted = {"CONFIG_A": "y", "CONFIG_B": None, "CONFIG_C": "m"}
    p = kconfig.ConfigPlan(commands=[["make", "olddefconfig"]], wanted=wanted)
    ran, run = _plan_runner(tmp_path, "CONFIG_A=y\nCONFIG_B=y\n")
    logged = []
    ok, why = kconfig.run_plan(p, tmp_path, run, logged.append)
    dropped = [
        "CONFIG_B not set was asked for, but the final .config is CONFIG_B=y",
        "CONFIG_C=m was asked for, but the final .config is not set",
    ]
    assert (ok, why) == (False, "; ".join(dropped))
    assert logged == [
        "E: options asked for but missing from the final .config:",
        *(f"E:   {d}" for d in dropped),
    ]


def test_validate_kconfig_with_a_nul_byte():
    with pytest.raises(KconfigError) as exc:
        kconfig.validate_kconfig("my\0.config")
    assert str(exc.value) == "kconfig 'my\\x00.config': holds a NUL byte"


def test_run_plan_reads_a_config_that_is_not_utf8(tmp_path):
    p = kconfig.ConfigPlan(commands=[["make", "olddefconfig"]], wanted={"CONFIG_A": "y"})
    ran, run = _plan_runner(tmp_path, None)
    (tmp_path / ".config").write_bytes(b'CONFIG_A=y\nCONFIG_S="\xff"\n')
    assert kconfig.run_plan(p, tmp_path, run, lambda line: None) == (True, "")
