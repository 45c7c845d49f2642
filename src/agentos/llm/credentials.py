"""Credentials follow the provider (spec, "Model calls through a completion gateway"; DESIGN §5.20).

The ``api_key`` / ``base_url`` given beside a provider (a call's or an agent's options) are for
that provider: every fallback hop and every embedding on it uses them, unless the hop or the
embedding names its own; a hop or an embedding on another provider never receives them and runs
on its own credentials or on that provider's from the environment.

A hop or an embedding that names either field takes nothing from the primary: the pair travels
together, so a key is never sent to an endpoint it was not given for, and a hop's own key never
goes to the primary's endpoint. A field it leaves out comes from the environment, as it would for
the primary.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ProviderCredentials"]


@dataclass(frozen=True, slots=True)
class ProviderCredentials:
    """The ``api_key`` / ``base_url`` given beside ``provider`` (``None``: no provider known).

    With ``provider=None`` the credentials are shared with no other hop or embedding. The key
    is left out of the ``repr``.
    """

    provider: str | None
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None

    def for_provider(
        self,
        provider_id: str | None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
    ) -> tuple[str | None, str | None]:
        """The ``(api_key, base_url)`` a hop or an embedding on ``provider_id`` runs with.

        Its own ``api_key`` / ``base_url`` when it names either; else these when
        ``provider_id`` is their provider; else ``(None, None)``: the provider's from the
        environment (see the module doc).
        """
        if api_key is not None or base_url is not None:
            return api_key, base_url
        if self.provider is not None and provider_id == self.provider:
            return self.api_key, self.base_url
        return None, None
