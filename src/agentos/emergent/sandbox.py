"""`PythonSandbox`: runs a forged tool's Python code confined by bubblewrap.

Issue 15, item 7: "a tool written as Python code [...] runs in a real sandbox: bubblewrap with a
fresh mount namespace holding only the interpreter and a throwaway working directory (no home, no
project files), no network namespace access, CPU-time, memory and wall-clock limits and an empty
environment; where bubblewrap cannot run, sandbox mode refuses with a clear error rather than run
unconfined."

How a run is confined:

* ``bwrap --unshare-all`` (new user, pid, network, ipc, uts and cgroup namespaces: the network
  namespace holds only a downed loopback), ``--die-with-parent``, ``--new-session``,
  ``--clearenv``, ``--cap-drop ALL`` and uid/gid 65534 inside;
* a mount namespace of read-only binds of ``/usr``, the ``/lib*`` directories (or their
  merged-usr symlinks) and the base interpreter's prefix (never the virtualenv, which lives in
  the project), a fresh ``/proc``, ``/dev`` and ``/tmp``, and a size-capped tmpfs ``/work`` as the
  throwaway working directory (gone when the run ends);
* the interpreter runs isolated (``-I -S``: no site-packages, no user site, no ``PYTHON*``
  variables); a bootstrap lowers the hard limits on CPU time, address space, file size and open
  files before the forged code is even read, so the code cannot raise them again (done in the
  sandbox rather than in a ``preexec_fn``, which is unsafe in a host that runs threads);
* the host kills bwrap's process group after the wall-clock timeout (the sandboxed child dies
  with bwrap through ``--die-with-parent``), and reads at most ``max_output_bytes`` of output.

The code defines ``execute(input)``; the input goes in and the result comes out as JSON over
stdin / stdout (what the code prints goes to stderr, which is read and dropped).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
from dataclasses import dataclass
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode

__all__ = ["PythonSandbox", "SandboxError", "SandboxLimits", "SandboxUnavailable"]

_INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install -y bubblewrap)"
_NOBODY = "65534"
_WORKDIR = "/work"

# Runs first inside the sandbox: lowers the limits, then reads the request and runs the code.
_BOOTSTRAP = """\
import json, resource, sys
cpu, memory, fsize = (int(v) for v in sys.argv[1:4])
for limit, value in ((resource.RLIMIT_CPU, cpu), (resource.RLIMIT_AS, memory),
                     (resource.RLIMIT_FSIZE, fsize), (resource.RLIMIT_NOFILE, 64),
                     (resource.RLIMIT_CORE, 0)):
    resource.setrlimit(limit, (value, value))
out = sys.stdout
sys.stdout = sys.stderr
try:
    request = json.loads(sys.stdin.read())
    scope = {"__name__": "forged_tool"}
    exec(compile(request["code"], "<forged tool>", "exec"), scope)
    if not callable(scope.get("execute")):
        raise NameError("the code must define a function execute(input)")
    reply = json.dumps({"ok": True, "output": scope["execute"](request["input"])})
except BaseException as exc:
    reply = json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}"[:2000]})
out.write(reply)
out.flush()
"""


class SandboxUnavailable(GMIError):
    """bubblewrap is missing or cannot start here: nothing runs (code ``MISSING_DEPENDENCY``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"sandbox tools cannot run: {reason}; {_INSTALL_HINT} where user namespaces are "
            "allowed. Forged code never runs unconfined.",
            GMIErrorCode.MISSING_DEPENDENCY,
            {"reason": reason, "install": "bubblewrap"},
            component="sandbox",
        )
        self.reason = reason


class SandboxError(GMIError):
    """The forged code failed, or was stopped by a limit (code ``TOOL_EXECUTION_FAILED``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"forged code failed: {reason}",
            GMIErrorCode.TOOL_EXECUTION_FAILED,
            {"reason": reason},
            component="sandbox",
        )
        self.reason = reason


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Limits of one run (reference defaults: ``sandboxMemoryMB`` 128, ``sandboxTimeoutMs`` 5000).

    ``cpu_seconds`` of CPU time, ``memory_mb`` of address space, ``timeout_s`` of wall-clock
    time, ``max_output_bytes`` of result read back, ``workdir_mb`` of working-directory space.
    """

    cpu_seconds: int = 5
    memory_mb: int = 128
    timeout_s: float = 5.0
    max_output_bytes: int = 1_000_000
    workdir_mb: int = 16

    def __post_init__(self) -> None:
        for option in ("cpu_seconds", "memory_mb", "max_output_bytes", "workdir_mb"):
            value = getattr(self, option)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise _invalid(option, f"must be an int >= 1, got {value!r}")
        if (
            isinstance(self.timeout_s, bool)
            or not isinstance(self.timeout_s, int | float)
            or not self.timeout_s > 0
        ):
            raise _invalid("timeout_s", f"must be a number > 0, got {self.timeout_s!r}")


class PythonSandbox:
    """Runs ``execute(input)`` of forged Python code under bubblewrap with `SandboxLimits`.

    ``bwrap`` is the bubblewrap executable (found on ``PATH`` when None). `check()` raises
    `SandboxUnavailable` naming why bubblewrap cannot run; `run()` calls it first, so no code
    ever runs unconfined.
    """

    def __init__(self, limits: SandboxLimits | None = None, *, bwrap: str | None = None) -> None:
        if limits is not None and not isinstance(limits, SandboxLimits):
            raise _invalid("limits", "must be a SandboxLimits")
        self.limits = limits or SandboxLimits()
        self._bwrap = bwrap
        self._checked = False

    async def check(self) -> None:
        """Raise `SandboxUnavailable` unless bubblewrap is installed and starts a sandbox here.

        The first successful probe (a confined ``python -c pass``) is remembered.
        """
        if self._checked:
            return
        executable = self._executable()
        interpreter = _interpreter()
        if not os.path.isfile(interpreter):  # noqa: ASYNC240 (one stat, once per sandbox)
            raise SandboxUnavailable(f"the Python interpreter {interpreter} was not found")
        proc = await asyncio.create_subprocess_exec(
            *self._command(executable, interpreter, ["-c", "pass"]),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        try:
            _, err = await asyncio.wait_for(proc.communicate(), timeout=30)
        except TimeoutError:
            _kill(proc)
            raise SandboxUnavailable("bubblewrap did not start a sandbox within 30 s") from None
        if proc.returncode != 0:
            detail = err.decode(errors="replace").strip()[:300] or f"exit {proc.returncode}"
            raise SandboxUnavailable(f"bubblewrap cannot start a sandbox here ({detail})")
        self._checked = True

    async def run(self, code: str, input: Any) -> Any:
        """The JSON result of ``execute(input)`` in ``code``, run confined.

        Raises `SandboxUnavailable` when bubblewrap cannot run, `SandboxError` when the code
        raises, is stopped by a limit (CPU, memory, wall clock) or returns something that is not
        JSON, or its output exceeds ``max_output_bytes``.
        """
        if not isinstance(code, str) or not code.strip():
            raise _invalid("code", "must be non-empty Python source")
        request = json.dumps({"code": code, "input": input}).encode()
        await self.check()
        limits = self.limits
        args = ["-c", _BOOTSTRAP, str(limits.cpu_seconds), str(limits.memory_mb * 2**20)]
        args.append(str(limits.workdir_mb * 2**20))
        proc = await asyncio.create_subprocess_exec(
            *self._command(self._executable(), _interpreter(), args),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # its own process group, killed whole on timeout
        )
        try:
            out = await asyncio.wait_for(_exchange(proc, request, limits), limits.timeout_s)
        except TimeoutError:
            raise SandboxError(
                f"stopped after the wall-clock limit of {limits.timeout_s} s"
            ) from None
        finally:
            await _end(proc)
        return _reply(out, proc.returncode, limits)

    def _executable(self) -> str:
        found = shutil.which(self._bwrap or "bwrap")
        if found is None:
            raise SandboxUnavailable(f"bubblewrap ({self._bwrap or 'bwrap'}) is not installed")
        return found

    def _command(self, bwrap: str, interpreter: str, args: list[str]) -> list[str]:
        command = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--clearenv"]
        command += ["--cap-drop", "ALL", "--uid", _NOBODY, "--gid", _NOBODY]
        command += ["--ro-bind", "/usr", "/usr"]
        for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            if os.path.islink(top):  # merged /usr: recreate the symlink, bind nothing more
                command += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                command += ["--ro-bind", top, top]
        prefix = os.path.realpath(sys.base_prefix)
        if not prefix.startswith("/usr"):
            command += ["--ro-bind", prefix, prefix]
        command += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        command += ["--size", str(self.limits.workdir_mb * 2**20), "--tmpfs", _WORKDIR]
        command += ["--chdir", _WORKDIR, "--setenv", "HOME", _WORKDIR]
        return [*command, "--", interpreter, "-I", "-S", *args]


async def _exchange(
    proc: asyncio.subprocess.Process, request: bytes, limits: SandboxLimits
) -> bytes:
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    drain = asyncio.ensure_future(_read_capped(proc.stderr, 65_536, keep=False))
    try:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(request)
            await proc.stdin.drain()
            proc.stdin.close()
        return await _read_capped(proc.stdout, limits.max_output_bytes, keep=True)
    finally:
        drain.cancel()


async def _read_capped(stream: asyncio.StreamReader, cap: int, *, keep: bool) -> bytes:
    """Read to EOF, keeping at most ``cap`` bytes; past the cap, raise (kept) or discard."""
    kept = bytearray()
    while chunk := await stream.read(65_536):
        if keep:
            kept += chunk
            if len(kept) > cap:
                raise SandboxError(f"its output exceeded the limit of {cap} bytes")
    return bytes(kept)


def _reply(out: bytes, returncode: int | None, limits: SandboxLimits) -> Any:
    try:
        reply = json.loads(out)
    except ValueError:
        reply = None
    if not isinstance(reply, dict):
        number = _signal_number(returncode)
        if number is not None:
            name = signal.Signals(number).name
            if name in ("SIGXCPU", "SIGKILL"):
                raise SandboxError(f"stopped by {name} (CPU limit {limits.cpu_seconds} s)")
            raise SandboxError(f"stopped by {name}")
        raise SandboxError(f"it ended (exit {returncode}) without a JSON result")
    if not reply.get("ok"):
        raise SandboxError(str(reply.get("error", "unknown error")))
    return reply.get("output")


def _signal_number(returncode: int | None) -> int | None:
    """The signal that ended the code: bwrap reports a child's death by signal N as 128 + N."""
    if returncode is None:
        return None
    number = -returncode if returncode < 0 else returncode - 128
    return number if number in signal.valid_signals() else None


def _interpreter() -> str:
    """The base interpreter (a virtualenv's python would need the project tree bound)."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    return os.path.realpath(base)


async def _end(proc: asyncio.subprocess.Process) -> None:
    """Kill the run and drain its pipes: asyncio's wait() returns only once both reach EOF."""
    _kill(proc)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            await _read_capped(stream, 0, keep=False)
    await proc.wait()


def _kill(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def _invalid(option: str, problem: str) -> GMIError:
    return GMIError(
        f"{option} {problem}",
        GMIErrorCode.INVALID_ARGUMENT,
        {"option": option},
        component="sandbox",
    )
