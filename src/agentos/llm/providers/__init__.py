"""Provider adapters, one module per wire format; each imports its SDK lazily."""
