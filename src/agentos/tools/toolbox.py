"""`ToolBox`: an ordered, growable set of tools, and `OfferedTools`, the tools a step offers.

Contract (issue 14, member-call plumbing): `generate_text()` / `stream_text()` and an agent's
``tools`` option take a `ToolBox` wherever they take a list of tools, and the step loop reads it
at each step, so a tool added while a call runs (by one of that call's own tools, say a manager's
``spawn_specialist``) is offered from the next model step and can be called then. A tool
orchestrator built on a box looks its calls up in it, so the added tool also runs.

`OfferedTools` is how the box reaches the step loop through code that only passes lists around:
it is the list of definitions offered now (a plain ``list`` to everything else) and knows how to
read them again (`OfferedTools.current`), which the step loop does before each step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, overload

from agentos.llm.model import ToolDefinition
from agentos.tools.tool import Tool

__all__ = ["OfferedTools", "ToolBox"]


class ToolBox(Sequence[Tool]):
    """An ordered set of tools, one per name, that may grow while a call uses it.

    ``tools`` are `Tool` objects or plain functions (wrapped as `Tool.from_function` does).
    Tools are only added, never removed or replaced: a step that offered a tool can still run
    its call. A box is a `Sequence` of its tools (in the order added), so code that reads a
    list of tools reads the box as it is at that moment.
    """

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for given in tools:
            self.add(given)

    def add(self, tool: Tool | Callable[..., Any]) -> Tool:
        """Add ``tool`` (a function is wrapped) and return it as a `Tool`.

        Raises `ValueError` naming the tool when the box already holds one of that name.
        """
        item = Tool.coerce(tool)
        if item.name in self._tools:
            raise ValueError(f"two tools are named {item.name!r}")
        self._tools[item.name] = item
        return item

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or ``None``."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """The tools' names, in the order they were added."""
        return list(self._tools)

    def definitions(self) -> list[ToolDefinition]:
        """What a model is told of each tool, in the order they were added."""
        return [tool.definition() for tool in self._tools.values()]

    @overload
    def __getitem__(self, index: int) -> Tool: ...

    @overload
    def __getitem__(self, index: slice) -> list[Tool]: ...

    def __getitem__(self, index: int | slice) -> Tool | list[Tool]:
        return list(self._tools.values())[index]

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))  # a copy: adding while iterating is allowed

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, item: object) -> bool:
        """Whether the box holds ``item``: a tool, or a tool's name."""
        if isinstance(item, str):
            return item in self._tools
        return isinstance(item, Tool) and self._tools.get(item.name) is item

    def __repr__(self) -> str:
        return f"ToolBox({self.names()!r})"


class OfferedTools(list[ToolDefinition]):
    """The tools offered now, as a list, with `current()` to read them again.

    ``read`` gives the definitions to offer at the moment it is called (a tool orchestrator's
    filter over its `ToolBox`). The list holds what it gave when this object was made.
    """

    __slots__ = ("_read",)

    def __init__(self, read: Callable[[], list[ToolDefinition]]) -> None:
        super().__init__(read())
        self._read = read

    def current(self) -> list[ToolDefinition]:
        """The tools to offer now (tools added since this list was made included)."""
        return self._read()
