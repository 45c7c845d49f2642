"""Token and cost figures of model calls, and how they add up.

A cost of ``None`` means *unknown* (a model without a price, a provider that did not say) and is
never read as zero: adding an unknown cost to anything gives an unknown cost. `ModelUsage.zero()`
is the identity of addition, with a known cost of 0.

A usage marked ``estimated`` was not reported by the provider but estimated by agentos: a stream
its reader left before the provider's usage report (DESIGN §5.19). A sum that holds an estimated
usage is estimated too.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["ModelUsage"]

_COUNTS = ("prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens")


@dataclass(frozen=True, slots=True)
class ModelUsage:
    """What one or more model calls consumed.

    ``total_tokens`` defaults to ``prompt_tokens + completion_tokens``; ``cost_usd`` is ``None``
    when unknown; ``estimated`` is true when the figures are agentos's estimate rather than the
    provider's report (a stream left early, DESIGN §5.19). A negative token count
    (``total_tokens`` included) or a cost that is negative, NaN or infinite is refused with a
    `ValueError` naming the field.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    # None only until __post_init__ derives it, so an explicit -1 is refused like any negative.
    total_tokens: int = None  # type: ignore[assignment]
    cost_usd: float | None = None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    estimated: bool = False

    def __post_init__(self) -> None:
        # One comparison chain first: usages are made several times per model step.
        if (
            self.prompt_tokens < 0
            or self.completion_tokens < 0
            or self.cache_read_tokens < 0
            or self.cache_write_tokens < 0
        ):
            for name in _COUNTS:
                if getattr(self, name) < 0:
                    raise ValueError(f"ModelUsage.{name} must be >= 0, got {getattr(self, name)}")
        if self.total_tokens is None:
            object.__setattr__(self, "total_tokens", self.prompt_tokens + self.completion_tokens)
        elif self.total_tokens < 0:
            raise ValueError(f"ModelUsage.total_tokens must be >= 0, got {self.total_tokens}")
        if self.cost_usd is not None and not (math.isfinite(self.cost_usd) and self.cost_usd >= 0):
            raise ValueError(
                f"ModelUsage.cost_usd must be a finite number >= 0 or None, got {self.cost_usd}"
            )

    @classmethod
    def zero(cls) -> ModelUsage:
        """No tokens and a known cost of 0: the starting point of a sum."""
        if cls is ModelUsage:
            return _ZERO  # frozen, so one instance serves every caller
        return cls(cost_usd=0.0)

    @property
    def cost_known(self) -> bool:
        """Whether ``cost_usd`` is a figure rather than unknown."""
        return self.cost_usd is not None

    def __add__(self, other: ModelUsage) -> ModelUsage:
        if not isinstance(other, ModelUsage):
            return NotImplemented
        cost = (
            None
            if self.cost_usd is None or other.cost_usd is None
            else self.cost_usd + other.cost_usd
        )
        return ModelUsage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cost_usd=cost,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            estimated=self.estimated or other.estimated,
        )

    @classmethod
    def sum(cls, usages: Iterable[ModelUsage]) -> ModelUsage:
        """Add usages up; an empty iterable gives `ModelUsage.zero()`."""
        total = cls.zero()
        for usage in usages:
            total = total + usage
        return total


_ZERO = ModelUsage(cost_usd=0.0)
