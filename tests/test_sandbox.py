"""The bubblewrap sandbox forged Python code runs in (issue 15, item 7, "Done when").

The real-sandbox tests skip where bubblewrap cannot run, except under ``.ci/run``, which exports
``AGENTOS_REQUIRE_SANDBOX=1``: there a missing sandbox fails them.
"""

from __future__ import annotations

import asyncio
import os
import resource
import socket
from pathlib import Path

import pytest

import agentos
from agentos.core.errors import GMIErrorCode
from agentos.emergent.sandbox import (
    PythonSandbox,
    SandboxError,
    SandboxLimits,
    SandboxUnavailable,
)

REQUIRE = os.environ.get("AGENTOS_REQUIRE_SANDBOX") == "1"
PROJECT_FILE = Path(agentos.__file__).resolve()
LIMITS = SandboxLimits(cpu_seconds=1, memory_mb=128, timeout_s=3.0)


@pytest.fixture
async def sandbox() -> PythonSandbox:
    """A working sandbox, or a skip (a failure under AGENTOS_REQUIRE_SANDBOX=1)."""
    box = PythonSandbox(LIMITS)
    try:
        await box.check()
    except SandboxUnavailable as exc:
        if REQUIRE:
            pytest.fail(f"AGENTOS_REQUIRE_SANDBOX=1 but {exc.message}")
        pytest.skip(f"bubblewrap cannot run here: {exc.reason}")
    return box


async def test_a_benign_tool_runs_and_returns_its_result(sandbox: PythonSandbox) -> None:
    code = "def execute(input):\n    return {'sum': input['a'] + input['b']}\n"
    assert await sandbox.run(code, {"a": 2, "b": 3}) == {"sum": 5}


async def test_what_the_code_prints_does_not_corrupt_the_result(sandbox: PythonSandbox) -> None:
    code = "def execute(input):\n    print('noise')\n    return [1, 2]\n"
    assert await sandbox.run(code, {}) == [1, 2]


async def test_the_environment_is_empty_and_there_is_no_home(sandbox: PythonSandbox) -> None:
    os.environ["AGENTOS_SANDBOX_TEST_SECRET"] = "s3cr3t-env"
    try:
        code = (
            "import os\n"
            "def execute(input):\n"
            "    return {'env': sorted(os.environ), 'cwd': os.getcwd(), 'uid': os.getuid(),\n"
            "            'cwd_files': os.listdir('.')}\n"
        )
        result = await sandbox.run(code, {})
    finally:
        del os.environ["AGENTOS_SANDBOX_TEST_SECRET"]
    assert result == {
        "env": ["HOME", "LC_CTYPE", "PWD"],
        "cwd": "/work",
        "uid": 65534,
        "cwd_files": [],
    }


async def test_an_endless_loop_is_stopped_and_the_host_stays_responsive(
    sandbox: PythonSandbox,
) -> None:
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    ticker = asyncio.create_task(tick())
    try:
        with pytest.raises(SandboxError) as caught:
            await sandbox.run("def execute(input):\n    while True:\n        pass\n", {})
    finally:
        ticker.cancel()
    assert caught.value.code == GMIErrorCode.TOOL_EXECUTION_FAILED
    assert "stopped" in caught.value.message
    assert ticks > 1  # the event loop kept running while the code looped


async def test_a_sleeping_tool_is_stopped_by_the_wall_clock_limit(sandbox: PythonSandbox) -> None:
    code = "import time\ndef execute(input):\n    time.sleep(3600)\n"
    with pytest.raises(SandboxError, match=r"wall-clock limit of 3\.0 s"):
        await sandbox.run(code, {})


async def test_allocating_2_gb_fails_and_the_host_memory_does_not_grow(
    sandbox: PythonSandbox,
) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code = "def execute(input):\n    block = bytearray(2 * 1024**3)\n    return len(block)\n"
    with pytest.raises(SandboxError, match="MemoryError"):
        await sandbox.run(code, {})
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb < 100 * 1024


async def test_a_socket_reaches_nothing_outside_the_sandbox(sandbox: PythonSandbox) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        server.setblocking(False)
        code = (
            "import socket\n"
            "def execute(input):\n"
            "    with socket.create_connection(('127.0.0.1', input['port']), timeout=1):\n"
            "        return 'connected'\n"
        )
        with pytest.raises(SandboxError, match="Error"):
            await sandbox.run(code, {"port": port})
        with pytest.raises(BlockingIOError):
            server.accept()  # nobody connected


@pytest.fixture
def planted_secret(tmp_path: Path) -> Path:
    """A secret in a home-like directory of the host."""
    home = tmp_path / "home"
    home.mkdir()
    secret = home / ".secret"
    secret.write_text("TOP-SECRET-TOKEN")
    return secret


async def test_files_outside_the_working_directory_are_not_there(
    sandbox: PythonSandbox, planted_secret: Path
) -> None:
    code = "def execute(input):\n    return open(input['path']).read()\n"
    for path in (planted_secret, PROJECT_FILE):
        with pytest.raises(SandboxError) as caught:
            await sandbox.run(code, {"path": str(path)})
        assert "FileNotFoundError" in caught.value.message
        assert "TOP-SECRET-TOKEN" not in caught.value.message


async def test_output_past_the_cap_is_refused(sandbox: PythonSandbox) -> None:
    capped = PythonSandbox(SandboxLimits(max_output_bytes=1000))
    with pytest.raises(SandboxError, match="exceeded the limit of 1000 bytes"):
        await capped.run("def execute(input):\n    return 'x' * 5000\n", {})


async def test_code_without_execute_fails_naming_it(sandbox: PythonSandbox) -> None:
    with pytest.raises(SandboxError, match=r"execute\(input\)"):
        await sandbox.run("x = 1\n", {})


async def test_a_missing_bwrap_refuses_rather_than_run_unconfined() -> None:
    box = PythonSandbox(bwrap="agentos-no-such-bwrap")
    with pytest.raises(SandboxUnavailable) as caught:
        await box.run("def execute(input):\n    return 1\n", {})
    assert caught.value.code == GMIErrorCode.MISSING_DEPENDENCY
    assert "bubblewrap (agentos-no-such-bwrap) is not installed" in caught.value.message
    assert "apt-get install -y bubblewrap" in caught.value.message


def test_limits_are_checked_naming_the_field() -> None:
    with pytest.raises(agentos.GMIError) as caught:
        SandboxLimits(memory_mb=0)
    assert caught.value.details == {"option": "memory_mb"}
    with pytest.raises(agentos.GMIError) as caught:
        SandboxLimits(timeout_s=-1)
    assert caught.value.details == {"option": "timeout_s"}
