"""The `agentos` command: one-shot and interactive chat, version, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

import agentos
import agentos.cli
import agentos.cli.chat_run
import agentos.cli.output
import agentos.llm.resolve
from agentos import Message, Role
from agentos.llm.local import local_model_available
from agentos.llm.model import ChatModel
from agentos.persona.builtins import get_built_in_persona
from agentos.persona.personality import personality_section
from agentos.storage.sqlite import AGENTOS_HOME_ENV
from agentos.testing import HashEmbedder, ScriptedModel, ScriptStep
from agentos.testing.scripted_model import ScriptFunction

needs_local_model = pytest.mark.skipif(
    not local_model_available(), reason="the 'local' extra is not installed"
)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """AGENTOS_HOME in a fresh directory: the chat's durable stores never touch ~/.agentos."""
    directory = tmp_path / "agentos-home"
    monkeypatch.setenv(AGENTOS_HOME_ENV, str(directory))
    return directory


def use_model(
    monkeypatch: pytest.MonkeyPatch, script: list[ScriptStep | str] | ScriptFunction
) -> ScriptedModel:
    """Make the command chat with a scripted model instead of resolving a real one."""
    model = ScriptedModel(script)

    def resolve(
        provider: str | None, name: str | None, *, base_url: str | None = None
    ) -> ChatModel:
        return model

    monkeypatch.setattr(agentos.cli.chat_run, "resolve_model", resolve)
    return model


def invoke(runner: CliRunner, args: list[str], stdin: str | None = None) -> tuple[int, str, str]:
    result = runner.invoke(agentos.cli.app, args, input=stdin)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def interrupted_after(text: str) -> ScriptStep:
    """A reply that Ctrl-C stops once ``text`` has been shown.

    The GMI streams from a task of its own, so the model pauses after the text (the chat
    writes it meanwhile) before the KeyboardInterrupt.
    """
    return ScriptStep(text=[text], wait=0.05, wait_at=1, error=KeyboardInterrupt())


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
    options = ("--provider", "--model", "--system", "--seed", "--max-tokens", "--temperature")
    chat_options = ("--persona", "--session", "--user", "--cognition", "--show-state", "--recall")
    for option in (*options, *chat_options):
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
    real_write = agentos.cli.output.ReplyOutput.write

    def spy(self: agentos.cli.output.ReplyOutput, text: str) -> None:
        writes.append(text)
        real_write(self, text)

    monkeypatch.setattr(agentos.cli.output.ReplyOutput, "write", spy)
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

    monkeypatch.setattr(agentos.cli.chat_run, "resolve_model", resolve)
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

    monkeypatch.setattr(agentos.cli.chat_run, "resolve_model", broken)
    code, out, err = invoke(runner, ["chat", "Hi"])
    assert code == 1
    assert out == ""
    assert_one_error_line(err, "RuntimeError: boom", "AGENTOS_DEBUG=1")


def test_agentos_debug_lets_the_traceback_through(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(provider: str | None, name: str | None, *, base_url: str | None = None) -> ChatModel:
        raise RuntimeError("boom")

    monkeypatch.setattr(agentos.cli.chat_run, "resolve_model", broken)
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
    use_model(monkeypatch, [interrupted_after("Half")])
    code, out, _ = invoke(runner, ["chat"], stdin="hello\nnever read\n")
    assert (code, out) == (0, "Half\n")


def test_ctrl_c_during_a_one_shot_reply_exits_130(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_model(monkeypatch, [interrupted_after("Half")])
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


# --- the gmi session: persona, durable sessions, state, memory ---

FRUSTRATED = (
    "I'm so frustrated and angry! My cat Miso knocked my coffee over again. Awful, terrible "
    "morning."
)
"""A message the lexicon scores below -0.6: one turn raises user_frustrated."""


def use_embedder(monkeypatch: pytest.MonkeyPatch) -> HashEmbedder:
    """Give the cognitive memory the offline hashing embedder instead of the default chain."""
    embedder = HashEmbedder()
    monkeypatch.setattr(agentos.cli.chat_run, "resolve_embedder", lambda: embedder)
    return embedder


def system_text(request_messages: Sequence[Message]) -> str:
    return "\n\n".join(m.text for m in request_messages if m.role is Role.SYSTEM)


def test_a_built_in_persona_gives_the_instructions_and_name(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = use_model(monkeypatch, ["Main finding first."])
    code, out, err = invoke(
        runner, ["chat", "--persona", "v_researcher", "--system", "Be brief.", "Hi"]
    )
    assert (code, out, err) == (0, "Main finding first.\n", "")
    system = system_text(model.requests[0].messages)
    persona = get_built_in_persona("v_researcher")
    # The persona's base prompt, then --system, then the name line: one system prompt.
    assert system.index(persona.system_prompt_text()) < system.index("Be brief.")
    assert "Assistant name: V." in system


def test_a_persona_file_gives_personality_and_default_model(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    file = tmp_path / "ada.json"
    file.write_text(
        json.dumps(
            {
                "id": "ada",
                "name": "Ada",
                "version": "1.0.0",
                "baseSystemPrompt": "You are Ada, a patient tutor.",
                "personalityTraits": {"honesty": 0.9, "extraversion": 0.2, "verbosity": "low"},
                "defaultProviderId": "ollama",
                "defaultModelId": "llama3.2",
            }
        ),
        encoding="utf-8",
    )
    seen: list[tuple[str | None, str | None]] = []
    model = ScriptedModel(["ok", "ok"])

    def resolve(
        provider: str | None, name: str | None, *, base_url: str | None = None
    ) -> ChatModel:
        seen.append((provider, name))
        return model

    monkeypatch.setattr(agentos.cli.chat_run, "resolve_model", resolve)
    assert invoke(runner, ["chat", "--persona", str(file), "Hi"])[0] == 0
    system = system_text(model.requests[0].messages)
    assert system.startswith("You are Ada, a patient tutor.")
    assert "Assistant name: Ada." in system
    section = personality_section({"honesty": 0.9, "extraversion": 0.2})
    assert section is not None
    assert section in system  # the HEXACO traits' personality section
    assert "verbosity" not in system  # not a HEXACO trait
    # Any --provider or --model replaces the persona's pair whole.
    assert invoke(runner, ["chat", "--persona", str(file), "-p", "local", "Hi"])[0] == 0
    assert seen == [("ollama", "llama3.2"), ("local", None)]


@pytest.mark.parametrize(
    ("persona", "fragment"),
    [("no_such_persona", "v_researcher"), ("missing.json", "missing.json")],
)
def test_an_unknown_persona_is_one_line_and_exit_2(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, persona: str, fragment: str
) -> None:
    model = use_model(monkeypatch, ["never sent"])
    code, out, err = invoke(runner, ["chat", "--persona", persona, "Hi"])
    assert (code, out) == (2, "")
    assert_one_error_line(err, "persona", fragment)
    assert model.calls == 0


def test_a_session_continues_in_a_later_invocation(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    model = use_model(monkeypatch, ["Hi, Ada.", "You are Ada.", "Who?"])
    assert invoke(runner, ["chat", "--session", "s1", "I am Ada"])[:2] == (0, "Hi, Ada.\n")
    # A new invocation opens the database again: only the store carries the history.
    assert invoke(runner, ["chat", "--session", "s1", "who am I?"])[:2] == (0, "You are Ada.\n")
    assert invoke(runner, ["chat", "--session", "s2", "who am I?"])[:2] == (0, "Who?\n")
    assert model.requests[1].messages == [
        Message.user("I am Ada"),
        Message.assistant("Hi, Ada."),
        Message.user("who am I?"),
    ]
    assert model.requests[2].messages == [Message.user("who am I?")]
    assert (home / "agentos.db").is_file()


def test_the_default_session_is_durable_too(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = use_model(monkeypatch, ["One.", "Two."])
    invoke(runner, ["chat", "first"])
    invoke(runner, ["chat", "second"])
    assert [m.text for m in model.requests[1].messages] == ["first", "One.", "second"]


def test_show_state_prints_the_mood_and_a_sentiment_event_on_stderr(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_embedder(monkeypatch)
    # The reply, then the frustration metaprompt's answer (it runs after the turn).
    use_model(monkeypatch, ["Sorry about the coffee!", '{"updatedGmiMood": "empathetic"}'])
    args = ["chat", "--cognition", "full", "--show-state", FRUSTRATED]
    code, out, err = invoke(runner, args)
    assert code == 0
    assert out == "Sorry about the coffee!\n"  # stdout holds the reply alone
    lines = err.splitlines()
    assert lines[0] == "[state] mood: empathetic (set by metaprompt gmi_frustration_recovery)"
    assert lines[1].startswith("[state] event: user_frustrated (medium), sentiment -0.")
    assert len(lines) == 2


def test_show_state_on_light_cognition_reports_no_events(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = use_model(monkeypatch, ["Sorry!"])
    code, out, err = invoke(runner, ["chat", "--show-state", FRUSTRATED])
    assert (code, out, err) == (0, "Sorry!\n", "[state] mood: neutral\n")
    assert model.calls == 1  # 'light': no sentiment tracking, so no metaprompt call


def test_show_state_after_each_interactive_turn(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_model(monkeypatch, ["One.", "Two."])
    code, out, err = invoke(runner, ["chat", "--show-state"], stdin="a\nb\n")
    assert (code, out) == (0, "One.\nTwo.\n")
    assert err.count("[state] mood: neutral") == 2


def test_a_users_memory_is_recalled_in_another_session(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_embedder(monkeypatch)
    model = use_model(monkeypatch, ["Oh no!", "{}", "Welcome back.", "Hello.", "Hello."])
    full = ["chat", "--cognition", "full"]
    assert invoke(runner, [*full, "--user", "ada", "--session", "a", FRUSTRATED])[0] == 0
    code, out, err = invoke(
        runner, [*full, "--user", "ada", "--session", "b", "--recall", "my cat", "Hi again."]
    )
    assert (code, out) == (0, "Welcome back.\n")
    lines = err.splitlines()
    assert lines[0] == "Recalled from memory (user 'ada', query 'my cat'):"
    assert lines[1].startswith(f"  - {FRUSTRATED}  [episodic, score ")
    # The GMI recalled it too: session b's prompt carries session a's message as a memory.
    assert "Miso" in system_text(model.requests[2].messages)
    # Another user's session recalls nothing of ada's.
    code, _, err = invoke(
        runner, [*full, "--user", "bob", "--session", "c", "--recall", "my cat", "Hi."]
    )
    assert code == 0
    assert "Miso" not in err
    assert "Miso" not in system_text(model.requests[3].messages)


def test_recall_needs_full_cognition(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    model = use_model(monkeypatch, ["never sent"])
    code, out, err = invoke(runner, ["chat", "--recall", "cat", "Hi"])
    assert (code, out) == (2, "")
    assert_one_error_line(err, "recall", "--cognition full")
    assert model.calls == 0


def test_the_user_id_is_sent_as_the_end_user(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = use_model(monkeypatch, ["ok", "ok"])
    assert invoke(runner, ["chat", "--user", "ada", "Hi"])[0] == 0
    assert invoke(runner, ["chat", "--session", "other", "Hi"])[0] == 0
    assert model.requests[0].options.user_id == "ada"
    assert model.requests[1].options.user_id is None


def test_seed_and_temperature_reach_every_turn_of_a_chat(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = use_model(monkeypatch, ["One.", "Two."])
    args = ["chat", "--seed", "3", "--temperature", "0.5"]
    assert invoke(runner, args, stdin="a\nb\n")[0] == 0
    assert [(r.options.seed, r.options.temperature) for r in model.requests] == [(3, 0.5)] * 2


def test_an_unknown_cognition_profile_is_a_usage_error(runner: CliRunner) -> None:
    code, out, _ = invoke(runner, ["chat", "--cognition", "deep", "Hi"])
    assert (code, out) == (2, "")


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
