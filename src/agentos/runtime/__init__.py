"""The full runtime (spec: AgentOS, GMIManager, processRequest; DESIGN.md §3, rank 6).

Being built (issue 13). Its parts so far: `agentos.runtime.retrieval`, the retrieval augmentor
that ships (documents chunked, embedded and stored in SQLite with a full-text index, hybrid
retrieval), and `agentos.runtime.guardrails`, the guardrail protocol and its packs.
"""
