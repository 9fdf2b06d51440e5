"""TuxSuite plan files (``version: 1``, ``jobs:``) -> the Matrix of BuildSpecs
that matrixfile.py makes of a matrix file.

Each build of a job is one BuildSpec; what the plan names that exists in
TuxSuite but not here (a kernel.org or nightly toolchain, an arch, a TuxMake
target, a test device) is mapped to what builds it here or made a SKIP with
why, from data/tuxsuite.yaml. Values are checked with spec.py's rules, and
errors are matrix/matrixfile.py's MatrixError with the file, line and key. No pytest
here, nor any probing of the machine (every xdist worker reads the same).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Collection, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import definitions
from .. import spec as specs
from ..definitions.targets import default_targets
from ..definitions.toolchain import known as known_toolchains
from ..errors import KbuildUserError
from ..spec import BuildSpec
from . import yamlload
from .expander import Expander, Matrix, yaml_type
from .tuxsuite import rules

__all__ = ["PlanExpander"]

VERSION = 1
TOP_KEYS = ("version", "name", "description", "jobs", "tree")
JOB_KEYS = ("name", "build", "builds", "test", "tests", "sanity_test")
BUILD_KEYS = (
    "target_arch",
    "toolchain",
    "kconfig",
    "targets",
    "make_variables",
    "environment",
    "kernel_image",
    "build_name",
)
BOOT = "boot"


class PlanExpander(Expander):
    """Expands a plan; *jobs* are --kbuild-plan-job globs (none: every job)."""

    def __init__(
        self,
        path: Path,
        data: Any,
        runtimes: Collection[str],
        tree_where: str,
        jobs: Sequence[str] = (),
    ) -> None:
        super().__init__(path, data, runtimes, tree_where)
        self.globs = tuple(jobs)
        self.rules = rules()

    def expand(self, tree_override: str | Path | None, check: bool) -> Matrix:
        data = self.data
        self._unknown_keys(data, TOP_KEYS, "plan")
        version = data.get("version")
        if version != VERSION or isinstance(version, bool):
            raise self.error(
                f"unsupported version {specs.short(version)}; a TuxSuite plan has version: "
                f"{VERSION}",
                "plan.version",
                data,
                "version" if "version" in data else None,
            )
        for key in ("name", "description"):
            if key in data and not isinstance(data[key], (str, type(None))):
                raise self.error("must be a string", f"plan.{key}", data, key)
        tree = self._tree(data, tree_override, check)
        jobs = data["jobs"]
        if not isinstance(jobs, list) or not jobs:
            raise self.error(
                "must be a non-empty list of jobs (build:/builds: with test:/tests:)",
                "plan.jobs",
                data,
                "jobs",
            )
        specs_: list[BuildSpec] = []
        matched: set[str] = set()
        names = []
        for i, job in enumerate(jobs):
            name = self._job_name(jobs, i, job)
            names.append(name)
            hits = {g for g in self.globs if fnmatch.fnmatchcase(name, g)}
            if self.globs and not hits:
                continue
            matched |= hits
            specs_ += self._job(jobs, i, job, name)
        for glob in self.globs:
            if glob not in matched:
                raise self.error(
                    f"--kbuild-plan-job {glob!r} matches no job; jobs: {', '.join(names)}",
                    "plan.jobs",
                    data,
                    "jobs",
                )
        return Matrix(self.path, tree, tuple(sorted(self._unique(specs_), key=lambda s: s.id)))

    # -- jobs -------------------------------------------------------------------
    def _job_name(self, jobs: list[Any], i: int, job: Any) -> str:
        key = f"plan.jobs[{i}]"
        if not isinstance(job, dict):
            raise self.error(
                "must be a mapping with build:/builds: and test:/tests:/sanity_test:",
                key,
                jobs,
                i,
            )
        self._unknown_keys(job, JOB_KEYS, key)
        name = job.get("name")
        if name is None:
            return f"job{i + 1}"
        if not isinstance(name, str) or not specs.id_part(name):
            raise self.error(
                f"name {specs.short(name)} must be a string with a letter or digit",
                f"{key}.name",
                job,
                "name",
            )
        return name

    def _job(self, jobs: list[Any], i: int, job: dict[str, Any], name: str) -> list[BuildSpec]:
        key = f"plan.jobs[{i}]"
        entries = self._entries(job, key, ("build",), "builds")
        tests = self._tests(job, key)
        if not entries and not tests:
            raise self.error("has no build:, builds: nor tests:", key, jobs, i)
        if not entries:
            return [self._prebuilt(t, name, tkey, line) for t, tkey, line in tests]
        return [
            self._build(container[index], k, container, index, name, tests)
            for k, container, index in entries
        ]

    def _entries(
        self, job: dict[str, Any], key: str, singles: tuple[str, ...], many: str
    ) -> list[tuple[str, Any, Any]]:
        """(key, container, index) of the job's *singles* (build:) and of each
        entry of its list *many* (builds:)."""
        out: list[tuple[str, Any, Any]] = [(f"{key}.{k}", job, k) for k in singles if k in job]
        values = job.get(many)
        if values is None:
            return out
        if not isinstance(values, list):
            raise self.error(
                f"must be a list of {many}, got {yaml_type(values)}", f"{key}.{many}", job, many
            )
        return out + [(f"{key}.{many}[{j}]", values, j) for j in range(len(values))]

    def _tests(self, job: dict[str, Any], key: str) -> list[tuple[dict[str, Any], str, int]]:
        """The job's sanity_test:, test: and tests: entries, each checked to
        be a mapping with a device."""
        out = []
        for tkey, container, index in self._entries(job, key, ("sanity_test", "test"), "tests"):
            test = container[index]
            if not isinstance(test, dict) or not isinstance(test.get("device"), str):
                raise self.error(
                    "a test is a mapping with device: (e.g. {device: qemu-arm64, "
                    "tests: [ltp-smoke]})",
                    tkey,
                    container,
                    index,
                )
            out.append((test, tkey, yamlload.line_of(container, index) or 0))
        return out

    # -- one build ----------------------------------------------------------------
    def _build(
        self,
        entry: Any,
        key: str,
        container: Any,
        index: Any,
        job: str,
        tests: list[tuple[dict[str, Any], str, int]],
    ) -> BuildSpec:
        if not isinstance(entry, dict):
            raise self.error(
                "a build is a mapping like {target_arch: arm64, toolchain: gcc-12, "
                "kconfig: defconfig}",
                key,
                container,
                index,
            )
        self._unknown_keys(entry, BUILD_KEYS, key)
        for required in ("target_arch", "toolchain"):
            if required not in entry:
                raise self.error(f"missing {required}:", key, container, index)
        notes: dict[str, str] = {}
        arch, arch_skip = self._arch(entry, key)
        toolchain, written, tool_skip = self._toolchain(entry, key, notes)
        base, fragments = self._kconfig(entry, key)
        targets, unavailable = self._targets(entry, key)
        make_vars = (
            self._variables(entry, "make_variables", key) if "make_variables" in entry else {}
        )
        env = self._variables(entry, "environment", key) if "environment" in entry else {}
        if not tool_skip:
            _versioned_llvm(make_vars, toolchain, written, notes)
        name = self.check(
            specs.build_name, f"{key}.build_name", entry, "build_name", entry.get("build_name", "")
        )
        image = self._kernel_image(entry, key)
        skip = arch_skip or tool_skip
        if tests:
            targets = self._boot(tests, arch, skip, targets, unavailable, notes)
        return specs.assemble(
            arch,
            toolchain,
            base,
            targets,
            fixed_id=specs.build_id(arch, written, base, _name(job, name)),
            leave_out=not arch_skip,
            kconfig_add=fragments,
            make_variables=tuple(sorted(make_vars.items())),
            env=tuple(sorted(env.items())),
            name=_name(job, name),
            origin=key,
            line=yamlload.line_of(container, index) or 0,
            skip_reason=skip,
            job=job,
            notes=tuple(sorted(notes.items())),
            unavailable=tuple(sorted(unavailable.items())),
            kernel_image=image,
            base_dir=self.path.parent,
        )

    def _kernel_image(self, entry: dict[str, Any], key: str) -> str:
        """The plan's kernel_image: a file name, or "" for the arch's own."""
        image = entry.get("kernel_image", "")
        if not isinstance(image, str) or (image and specs.id_part(image) != image):
            raise self.error(
                f"{specs.short(image)} is not an image file name (vmlinux, Image, bzImage...)",
                f"{key}.kernel_image",
                entry,
                "kernel_image",
            )
        return image

    def _arch(self, entry: dict[str, Any], key: str) -> tuple[str, str]:
        """(arch, why it is a SKIP or "")."""
        value = entry["target_arch"]
        tux = isinstance(value, str) and value in self.rules.arches
        if tux and definitions.canonical("arch", value) is None:
            known = ", ".join(definitions.available("arch"))
            return value, f"pytest-kbuild cannot build arch {value} (it builds {known})"
        where = f"{key}.target_arch"
        return self.check(specs.arch_name, where, entry, "target_arch", value), ""

    def _toolchain(
        self, entry: dict[str, Any], key: str, notes: dict[str, str]
    ) -> tuple[str, str, str]:
        """(toolchain that builds it here, the plan's name, why it is a SKIP or "")."""
        value, where = entry["toolchain"], f"{key}.toolchain"
        if isinstance(value, str):
            for rule in self.rules.toolchains:
                m = rule.match.fullmatch(value)
                if m is None:
                    continue
                if rule.skip:
                    return value, value, rule.skip.format(name=value)
                runs_on = rule.runs_on.format(**m.groupdict())
                try:
                    toolchain = specs.toolchain_name(runs_on)
                except KbuildUserError:
                    known = ", ".join(known_toolchains())
                    why = f"{value} would build with {runs_on}, which pytest-kbuild does not know"
                    return value, value, f"{why} (known: {known})"
                if rule.note:
                    notes["toolchain"] = rule.note.format(runs_on=toolchain, **m.groupdict())
                return toolchain, value, ""
        toolchain = self.check(specs.toolchain_name, where, entry, "toolchain", value)
        return toolchain, toolchain, ""

    def _kconfig(self, entry: dict[str, Any], key: str) -> tuple[str, tuple[str, ...]]:
        """The base config and fragments: kconfig: NAME or [BASE, FRAGMENT...]."""
        value = entry.get("kconfig", "defconfig")
        where = f"{key}.kconfig"
        if isinstance(value, list):
            if not value:
                raise self.error("must not be empty", where, entry, "kconfig")
            base = self.check(specs.kconfig_value, f"{where}[0]", value, 0, value[0])
            fragments = tuple(
                self.check(specs.fragment, f"{where}[{i}]", value, i, v)
                for i, v in enumerate(value)
                if i
            )
            return base, fragments
        return self.check(specs.kconfig_value, where, entry, "kconfig", value), ()

    def _targets(self, entry: dict[str, Any], key: str) -> tuple[tuple[str, ...], dict[str, str]]:
        """Targets built here and TuxMake targets that are not (with why)."""
        values = entry.get("targets", ["default"])
        where = f"{key}.targets"
        if isinstance(values, str):
            values = [values]
        if not isinstance(values, list) or not values:
            raise self.error("must be a non-empty list of targets", where, entry, "targets")
        names: list[str] = []
        unavailable: dict[str, str] = {}
        for i, value in enumerate(values):
            if value == "default":  # TuxMake's builds; a boot comes from a test only
                names += [t for t in default_targets() if t != BOOT]
            elif (
                isinstance(value, str)
                and definitions.canonical("target", value) is None
                and (value in self.rules.targets)
            ):
                known = ", ".join(definitions.available("target"))
                unavailable[value] = (
                    f"TuxMake target {value} is not built by pytest-kbuild (it builds {known})"
                )
            else:
                self.check(specs.target_names, f"{where}[{i}]", values, i, [value])
                names.append(value)
        targets = self.check(specs.target_names, where, entry, "targets", names) if names else ()
        return targets, unavailable

    def _boot(
        self,
        tests: list[tuple[dict[str, Any], str, int]],
        arch: str,
        skip: str,
        targets: tuple[str, ...],
        unavailable: dict[str, str],
        notes: dict[str, str],
    ) -> tuple[str, ...]:
        """The targets with a boot for the job's tests on a qemu-<arch>
        device; a boot that cannot be is put in *unavailable* with why (a
        SKIP item, and so until a boot target exists here)."""
        devices = sorted({t["device"] for t, _, _ in tests})
        suites = sorted({str(s) for t, _, _ in tests for s in (t.get("tests") or [])})
        qemu = [d for d in devices if d in self.rules.devices]
        wrong = [d for d in qemu if self.rules.devices[d] != arch]
        notes["devices"] = ", ".join(devices)
        if suites:
            notes["tests"] = f"{', '.join(suites)}: not run here (pytest-kbuild boots the kernel)"
        if not qemu:
            unavailable[BOOT] = (
                f"device {', '.join(devices)} is not a QEMU machine; pytest-kbuild boots "
                "only on qemu-<arch> devices"
            )
        elif wrong and not skip:
            unavailable[BOOT] = (
                f"device {wrong[0]} boots {self.rules.devices[wrong[0]]}, not this {arch} build"
            )
        elif definitions.canonical("target", BOOT) is None:
            unavailable[BOOT] = (
                f"boot target not available: pytest-kbuild cannot boot yet "
                f"(plan test on {', '.join(qemu)})"
            )
        elif not skip:
            return specs.target_names([*targets, BOOT])
        return targets

    def _prebuilt(self, test: dict[str, Any], job: str, key: str, line: int) -> BuildSpec:
        """A test of a prebuilt kernel (a tests:-only job): a SKIP, nothing to build."""
        device = test["device"]
        kernel = str(test.get("kernel") or "kernel")
        arch = self.rules.devices.get(device, device)
        reason = (
            f"a test of a prebuilt kernel ({kernel}) on {device}: pytest-kbuild boots the "
            "kernels it builds"
        )
        return specs.assemble(
            arch,
            "prebuilt",
            kernel,
            (),
            fixed_id=specs.build_id(specs.id_part(arch), "prebuilt", kernel, job),
            name=specs.id_part(job),
            origin=key,
            line=line,
            skip_reason=reason,
            job=job,
            unavailable=((BOOT, reason),),
            base_dir=self.path.parent,
        )

    def _unique(self, builds: list[BuildSpec]) -> list[BuildSpec]:
        """Builds with the same id (a job's defconfig with and without a
        fragment) get -2, -3... in plan order; build_name: names them."""
        seen: dict[str, int] = {}
        out = []
        for spec in builds:
            n = seen.get(spec.id, 0) + 1
            seen[spec.id] = n
            out.append(spec if n == 1 else replace(spec, id=f"{spec.id}-{n}"))
        if len({s.id for s in out}) != len(out):
            return self._unique(out)
        return out


def _versioned_llvm(
    make_vars: dict[str, str], toolchain: str, written: str, notes: dict[str, str]
) -> None:
    """Drop a plan's LLVM=1 for a clang-N toolchain, with a note saying so."""
    if make_vars.get("LLVM") == "1" and toolchain.startswith("clang-"):
        # Debian's versioned clang-N has no unversioned clang: our toolchain's
        # LLVM=-N picks clang-N, ld.lld-N... as LLVM=1 does a plain clang.
        del make_vars["LLVM"]
        notes["LLVM"] = f"LLVM=1 with {written}: Debian's versioned LLVM-{toolchain[6:]} tools"


def _name(job: str, build_name: str) -> str:
    return "-".join(p for p in (specs.id_part(job), build_name) if p)
