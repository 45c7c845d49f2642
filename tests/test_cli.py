"""The `agentos` command: one-shot and interactive chat, version, and one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import agentos
import agentos.cli
import agentos.llm.resolve
from agentos import Message, Role
from agentos.llm.local import local_model_available
from agentos.llm.model import ChatModel
from agentos.testing import ScriptedModel, ScriptStep
from agentos.testing.scripted_model import ScriptFunction

needs_local_model = pytest.mark.skipif(
    not local_model_available(), reason="the 'local' extra is not installed"
)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def use_model(
    monkeypatch: pytest.MonkeyPatch, script: list[ScriptStep | str] | ScriptFunction
) -> ScriptedModel:
    """Make the command chat with a scripted model instead of resolving a real one."""
    model = ScriptedModel(script)

    def resolve(
        provider: str | None, name: str | None, *, base_url: str | None = None
    ) -> ChatModel:
        return model

    monkeypatch.setattr(agentos.cli, "resolve_model", resolve)
    return model


def invoke(runner: CliRunner, args: list[str], stdin: str | None = None) -> tuple[int, str, str]:
    result = runner.invoke(agentos.cli.app, args, input=stdin)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def assert_one_error_line(stderr: str, *fragments: str) -> None:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ")
    for fragment in fragments:
        assert fragment in lines[0]
    assert "Traceback" not in stderr
    assert "\x1b[" not in stderr


# --- version and help ---


def test_version_prints_the_package_version(runner: CliRunner) -> None:
    code, out, _ = invoke(runner, ["--version"])
    assert code == 0
    assert out == f"agentos {agentos.__version__}\n"


def test_chat_help_lists_the_options(runner: CliRunner) -> None:
    code, out, _ = invoke(runner, ["chat", "--help"])
    assert code == 0
    for option in ("--provider", "--model", "--system", "--seed", "--max-tokens", "--temperature"):
        assert option in out


# --- one-shot ---


def test_one_shot_prints_exactly_the_streamed_answer(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_model(monkeypatch, ["Hello there"])
    code, out, err = invoke(runner, ["chat", "Hi"])
    assert (code, out, err) == (0, "Hello there\n", "")


def test_one_shot_streams_delta_by_delta(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[str] = []
    real_write = agentos.cli._Output.write

    def spy(self: agentos.cli._Output, text: str) -> None:
        writes.append(text)
        real_write(self, text)

    monkeypatch.setattr(agentos.cli._Output, "write", spy)
    use_model(monkeypatch, [ScriptStep(text=["Hel", "lo", " there"])])
    code, out, _ = invoke(runner, ["chat", "Hi"])
    assert code == 0
    assert writes == ["Hel", "lo", " there", "\n"]
    assert out == "Hello there\n"


def test_one_shot_sends_the_options_and_the_system_message(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = use_model(monkeypatch, ["ok"])
    args = ["chat", "--system", "Be brief.", "--seed", "7", "--max-tokens", "9"]
    code, _, _ = invoke(runner, [*args, "--temperature", "0.2", "Hi"])
    assert code == 0
    [request] = model.requests
    assert [(m.role, m.text) for m in request.messages] == [
        (Role.SYSTEM, "Be brief."),
        (Role.USER, "Hi"),
    ]
    assert (request.options.seed, request.options.max_tokens) == (7, 9)
    assert request.options.temperature == 0.2


def test_one_shot_passes_provider_and_model_to_resolution(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str | None, str | None, str | None]] = []

    def resolve(
        provider: str | None, name: str | None, *, base_url: str | None = None
    ) -> ChatModel:
        seen.append((provider, name, base_url))
        return ScriptedModel(["ok"])

    monkeypatch.setattr(agentos.cli, "resolve_model", resolve)
    code, _, _ = invoke(runner, ["chat", "-p", "local", "-m", "smollm2-135m-instruct", "Hi"])
    assert code == 0
    code, _, _ = invoke(
        runner, ["chat", "-p", "ollama", "--base-url", "http://127.0.0.1:9/v1", "Hi"]
    )
    assert code == 0
    assert seen == [
        ("local", "smollm2-135m-instruct", None),
        ("ollama", None, "http://127.0.0.1:9/v1"),
    ]


def test_one_shot_adds_its_newline_like_print(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_model(monkeypatch, [ScriptStep(text=["Done.\n"])])
    code, out, _ = invoke(runner, ["chat", "Hi"])
    assert (code, out) == (0, "Done.\n\n")


# --- errors: one line on stderr, exit 2 ---


def test_unknown_provider_is_one_line_and_exit_2(runner: CliRunner) -> None:
    code, out, err = invoke(runner, ["chat", "--provider", "foo", "Hi"])
    assert code == 2
    assert out == ""
    assert_one_error_line(err, "Unknown provider 'foo'", "local")


def test_openai_without_a_key_is_one_line_and_exit_2(runner: CliRunner) -> None:
    code, out, err = invoke(runner, ["chat", "--provider", "openai", "Hi"])
    assert code == 2
    assert out == ""
    # This version has no OpenAI adapter (NOT_SUPPORTED); with one, the key is what is missing.
    assert_one_error_line(err, "openai")


def test_missing_local_extra_names_the_extra(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(agentos.llm.resolve, "local_model_available", lambda: False)
    for args in (["chat", "Hi"], ["chat", "--provider", "local", "Hi"]):
        code, out, err = invoke(runner, args)
        assert code == 2
        assert out == ""
        # The brackets must survive: the error line is not parsed as rich markup.
        assert_one_error_line(err, "agentos[local]")


def test_a_bad_option_is_one_line_and_exit_2(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = use_model(monkeypatch, ["never sent"])
    code, out, err = invoke(runner, ["chat", "--temperature", "5", "Hi"])
    assert code == 2
    assert out == ""
    assert_one_error_line(err, "temperature")
    assert model.calls == 0


def test_a_provider_failure_after_output_ends_the_line_then_reports(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_model(monkeypatch, [ScriptStep.fail(503, "overloaded", after_text="Part")])
    code, out, err = invoke(runner, ["chat", "Hi"])
    assert code == 2
    assert out == "Part\n"
    assert_one_error_line(err, "[503] overloaded")


def test_an_unexpected_exception_is_one_line_and_exit_1(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(provider: str | None, name: str | None, *, base_url: str | None = None) -> ChatModel:
        raise RuntimeError("boom")

    monkeypatch.setattr(agentos.cli, "resolve_model", broken)
    code, out, err = invoke(runner, ["chat", "Hi"])
    assert code == 1
    assert out == ""
    assert_one_error_line(err, "RuntimeError: boom", "AGENTOS_DEBUG=1")


def test_agentos_debug_lets_the_traceback_through(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(provider: str | None, name: str | None, *, base_url: str | None = None) -> ChatModel:
        raise RuntimeError("boom")

    monkeypatch.setattr(agentos.cli, "resolve_model", broken)
    monkeypatch.setenv("AGENTOS_DEBUG", "1")
    result = runner.invoke(agentos.cli.app, ["chat", "Hi"])
    assert isinstance(result.exception, RuntimeError)


# --- interactive ---


def test_interactive_chat_streams_each_reply_and_exits_0(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_model(monkeypatch, ["Hello there"])
    code, out, err = invoke(runner, ["chat"], stdin="hello\n/exit\n")
    assert code == 0
    assert out == "Hello there\n"
    # The prompt and the piped lines go to stderr, so stdout holds the replies alone.
    assert err == "you> hello\nyou> /exit\n"


def test_interactive_chat_sends_the_earlier_turns(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = use_model(monkeypatch, ["Hi, Ada.", "You are Ada."])
    stdin = "I am Ada\n\nwho am I?\n/quit\n"
    code, out, _ = invoke(runner, ["chat", "--system", "Be kind."], stdin=stdin)
    assert code == 0
    assert out == "Hi, Ada.\nYou are Ada.\n"
    assert model.calls == 2  # the empty line was skipped, not sent
    second = model.requests[1].messages
    assert second == [
        Message.system("Be kind."),
        Message.user("I am Ada"),
        Message.assistant("Hi, Ada."),
        Message.user("who am I?"),
    ]


@pytest.mark.parametrize("stdin", ["hello\n", ""])
def test_interactive_chat_ends_at_end_of_input(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, stdin: str
) -> None:
    use_model(monkeypatch, ["Hello there"])
    code, out, _ = invoke(runner, ["chat"], stdin=stdin)
    assert code == 0
    assert out == ("Hello there\n" if stdin else "")


def test_ctrl_c_at_the_prompt_ends_the_chat_with_0(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_model(monkeypatch, [])

    def interrupted(prompt: object = "") -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr("builtins.input", interrupted)
    code, out, err = invoke(runner, ["chat"])
    assert (code, out) == (0, "")
    assert "Traceback" not in err


def test_ctrl_c_during_a_reply_ends_the_chat_with_0(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_model(monkeypatch, [ScriptStep(text="Half", error=KeyboardInterrupt())])
    code, out, _ = invoke(runner, ["chat"], stdin="hello\nnever read\n")
    assert (code, out) == (0, "Half\n")


def test_ctrl_c_during_a_one_shot_reply_exits_130(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_model(monkeypatch, [ScriptStep(text="Half", error=KeyboardInterrupt())])
    code, out, _ = invoke(runner, ["chat", "Hi"])
    assert (code, out) == (130, "Half\n")


def test_a_provider_failure_in_a_chat_is_reported_and_the_chat_goes_on(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = use_model(monkeypatch, [ScriptStep.fail(429, "slow down"), "Fine now."])
    code, out, err = invoke(runner, ["chat"], stdin="one\ntwo\n/exit\n")
    assert code == 0
    assert out == "Fine now.\n"
    assert "error: [429] slow down" in err.splitlines()
    # The failed turn is not kept: the second call sees only its own message.
    assert model.requests[1].messages == [Message.user("two")]


def test_a_bad_option_ends_an_interactive_chat_with_2(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_model(monkeypatch, [])
    code, _, err = invoke(runner, ["chat", "--max-tokens", "0"], stdin="hello\n")
    assert code == 2
    assert "error: max_tokens: must be an integer >= 1, got 0" in err.splitlines()


# --- the real local model ---


@needs_local_model
@pytest.mark.local_model
def test_one_shot_on_the_local_model(runner: CliRunner) -> None:
    args = ["chat", "--provider", "local", "--seed", "1", "--max-tokens", "12", "Who are you?"]
    code, out, err = invoke(runner, args)
    assert code == 0, err
    assert out.strip()
    assert out.endswith("\n")
    assert "\x1b[" not in out
    assert "Traceback" not in err


@needs_local_model
@pytest.mark.local_model
def test_the_installed_command_end_to_end() -> None:
    command = Path(sys.executable).parent / "agentos"
    if not command.exists():
        pytest.skip("the agentos console script is not installed in this environment")
    done = subprocess.run(
        [str(command), "chat", "--seed", "1", "--max-tokens", "12"],
        input="Hi\n/exit\n",
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    assert "\x1b[" not in done.stdout
    assert "Traceback" not in done.stderr
