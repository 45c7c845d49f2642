"""Loopback servers that speak each provider's wire format, for testing the real SDKs offline."""
