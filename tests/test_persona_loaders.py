"""Persona loaders: directory, inline list, custom loader; combinations refused; not found."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import pytest

from agentos.core import GMIError, GMIErrorCode
from agentos.persona import (
    DirectoryPersonaLoader,
    InMemoryPersonaLoader,
    PersonaDefinition,
    PersonaRegistry,
    resolve_persona_loader,
)


def _write(path: Path, data: object) -> None:
    path.write_text(json.dumps(data), encoding="utf-8")


def _ts(pid: str, **extra: object) -> dict[str, object]:
    return {"id": pid, "name": pid.upper(), "version": "1.0.0", "baseSystemPrompt": "x", **extra}


async def test_directory_loader_reads_json_files(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _write(tmp_path / "a.json", _ts("a", personalityTraits={"openness": 0.8}))
    _write(tmp_path / "b.json", _ts("dup", description="first"))
    _write(tmp_path / "c.json", _ts("dup", description="second"))
    _write(tmp_path / "missing.json", {"id": "m", "name": "M"})
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("ignored", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    _write(tmp_path / "sub" / "deep.json", _ts("deep"))
    with caplog.at_level(logging.WARNING):
        personas = await DirectoryPersonaLoader(tmp_path).load_personas()
    by_id = {p.id: p for p in personas}
    assert set(by_id) == {"a", "dup"}
    assert by_id["dup"].description == "second"
    assert by_id["a"].hexaco_traits == {"openness": 0.8}
    assert "missing" in caplog.text
    assert "broken.json" in caplog.text


async def test_missing_directory_gives_no_personas(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        assert await DirectoryPersonaLoader(tmp_path / "nope").load_personas() == []
    assert "does not exist" in caplog.text


async def test_inline_list_returns_deep_copies() -> None:
    original = PersonaDefinition(id="i", name="I", personality_traits={"openness": 0.9})
    loader = InMemoryPersonaLoader([original, {"id": "j", "name": "J"}])
    first = await loader.load_personas()
    assert first[0].personality_traits is not None
    first[0].personality_traits["openness"] = 0.1
    second = await loader.load_personas()
    assert second[0].personality_traits == {"openness": 0.9}
    assert [p.id for p in second] == ["i", "j"]


class _CustomLoader:
    def __init__(self) -> None:
        self.calls = 0

    async def load_personas(self) -> Sequence[PersonaDefinition]:
        self.calls += 1
        return [PersonaDefinition(id="custom", name="C")]


async def test_custom_loader_and_registry() -> None:
    custom = _CustomLoader()
    loader = resolve_persona_loader(persona_loader=custom)
    assert loader is custom
    registry = PersonaRegistry(loader)
    await registry.load()
    assert registry.ids() == ["custom"]
    assert registry.get("custom").name == "C"
    with pytest.raises(GMIError) as info:
        registry.get("nobody")
    assert info.value.code is GMIErrorCode.PERSONA_NOT_FOUND
    assert info.value.details["available"] == ["custom"]


def test_resolve_defaults_and_kinds(tmp_path: Path) -> None:
    default = resolve_persona_loader()
    assert isinstance(default, DirectoryPersonaLoader)
    assert default.directory == Path("./personas")
    assert isinstance(resolve_persona_loader(personas=[]), InMemoryPersonaLoader)
    chosen = resolve_persona_loader(persona_definition_path=tmp_path)
    assert isinstance(chosen, DirectoryPersonaLoader)
    assert chosen.directory == tmp_path


def test_sources_cannot_be_combined() -> None:
    with pytest.raises(GMIError) as info:
        resolve_persona_loader(personas=[], persona_loader=_CustomLoader())
    assert info.value.code is GMIErrorCode.CONFIGURATION_ERROR
    assert "personas" in info.value.message
    assert "persona_loader" in info.value.message
    assert info.value.details["options"] == ["personas", "persona_loader"]


def test_custom_loader_must_fit_protocol() -> None:
    with pytest.raises(GMIError, match="load_personas"):
        resolve_persona_loader(persona_loader=object())  # type: ignore[arg-type]
