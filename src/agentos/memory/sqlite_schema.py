"""The SQLite memory store's tables and migrations (DESIGN.md §5.9, §6).

`agentos.memory.sqlite_store.SQLiteMemoryStore` keeps its migrations under the store name
``"memory"``. Tables:

- ``memory_traces``: one row per trace. ``seq`` (the rowid) is the insertion order; ``id``,
  ``type``, ``scope``, ``scope_id``, ``is_active``, ``created_at`` and ``confidence`` (the
  provenance's) are indexed columns; ``body`` holds every other field as JSON (nested records
  as objects, so ``metadata`` must be JSON-representable: a tuple comes back as a list).
- ``memory_vectors``: one row per trace, its unit vector as a little-endian float32 BLOB.
- ``memory_trace_tags``: one row per (trace, tag), so the tag filter is built without JSON.
- ``memory_edges``: ``source``, ``target``, ``type``, ``weight``, ``created_at``, unique on the
  edge key (both ends sorted, and the type) through an expression index, so an edge saved
  with its ends swapped replaces the old one and reads back exactly as it was saved.

Migration 2 (DESIGN.md §5.17, typed scopes) moves what sessions filed before it from ``user``
scopes to their session's ``thread`` scope where the rows show it was the session's (see the
migration's comment); a user's own messages stay in the user's scope.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentos.storage.sqlite import Migration

__all__ = ["MEMORY_MIGRATIONS", "MEMORY_STORE"]

MEMORY_STORE = "memory"
"""The memory store's name in ``schema_version``."""

MEMORY_MIGRATIONS: Sequence[Migration] = (
    Migration(
        1,
        """
        CREATE TABLE memory_traces (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            type TEXT NOT NULL,
            scope TEXT NOT NULL,
            scope_id TEXT NOT NULL,
            is_active INTEGER NOT NULL CHECK (is_active IN (0, 1)),
            created_at REAL NOT NULL,
            confidence REAL NOT NULL,
            -- Every other MemoryTrace field, as a JSON object.
            body TEXT NOT NULL
        );
        CREATE INDEX memory_traces_by_scope
            ON memory_traces (scope, scope_id, is_active, created_at);
        CREATE INDEX memory_traces_by_type ON memory_traces (type, created_at);
        CREATE INDEX memory_traces_by_time ON memory_traces (created_at);
        CREATE INDEX memory_traces_by_confidence ON memory_traces (confidence);
        CREATE TABLE memory_vectors (
            seq INTEGER PRIMARY KEY REFERENCES memory_traces (seq) ON DELETE CASCADE,
            -- The unit vector, little-endian float32.
            vector BLOB NOT NULL
        );
        CREATE TABLE memory_trace_tags (
            seq INTEGER NOT NULL REFERENCES memory_traces (seq) ON DELETE CASCADE,
            tag TEXT NOT NULL,
            PRIMARY KEY (seq, tag)
        ) WITHOUT ROWID;
        CREATE INDEX memory_trace_tags_by_tag ON memory_trace_tags (tag);
        CREATE TABLE memory_edges (
            source TEXT NOT NULL,
            target TEXT NOT NULL,
            type TEXT NOT NULL,
            weight REAL NOT NULL,
            created_at REAL NOT NULL
        );
        -- The edge key: an undirected edge is one row whichever end it was saved from.
        CREATE UNIQUE INDEX memory_edges_key
            ON memory_edges (min(source, target), max(source, target), type);
        """,
    ),
    Migration(
        2,
        """
        -- DESIGN.md §5.17: scopes are typed. Before this version a session filed every exchange
        -- under a 'user' scope: the user's message under the user id (or, without a user, the
        -- session's scope id) and the reply under the scope id, so a session id could meet a
        -- user id. A session's exchanges move to its 'thread' scope, found by what the old
        -- bridge wrote: its replies are 'agent_inference' traces tagged 'assistant'; it tagged
        -- a message and its reply with the user id, which was the scope id without a user. So
        -- a user message belongs to a session without a user when the next reply carrying the
        -- message's scope id as a tag was filed under that same id. Where a user id equalled its
        -- session's id the two cannot be told apart, and the message goes to the session: it
        -- stays reachable by that session and never by another user's. (One pass over the
        -- rows: "the next reply" is a running minimum over each owner tag, newest first.)
        UPDATE memory_traces SET scope = 'thread'
        WHERE seq IN (
          WITH roles AS (
            SELECT t.seq, t.scope_id,
              json_extract(t.body, '$.provenance.source_type') = 'agent_inference'
                AND EXISTS (SELECT 1 FROM memory_trace_tags g
                            WHERE g.seq = t.seq AND g.tag = 'assistant') AS is_reply,
              json_extract(t.body, '$.provenance.source_type') = 'user_statement'
                AND EXISTS (SELECT 1 FROM memory_trace_tags g
                            WHERE g.seq = t.seq AND g.tag = 'user') AS is_user
            FROM memory_traces AS t WHERE t.scope = 'user'
          ),
          owned AS (
            SELECT r.seq, r.scope_id, r.is_reply, g.tag AS owner
            FROM roles AS r JOIN memory_trace_tags AS g ON g.seq = r.seq
            WHERE r.is_reply OR (r.is_user AND g.tag = r.scope_id)
          ),
          following AS (
            SELECT seq, scope_id, is_reply,
              min(CASE WHEN is_reply THEN seq END) OVER (
                PARTITION BY owner ORDER BY seq DESC
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
              ) AS next_reply
            FROM owned
          )
          SELECT f.seq FROM following AS f JOIN memory_traces AS reply ON reply.seq = f.next_reply
          WHERE NOT f.is_reply AND reply.scope_id = f.scope_id
        );
        UPDATE memory_traces SET scope = 'thread'
        WHERE scope = 'user'
          AND json_extract(body, '$.provenance.source_type') = 'agent_inference'
          AND seq IN (SELECT seq FROM memory_trace_tags WHERE tag = 'assistant');
        """,
    ),
)
"""The memory store's migrations, in order; a later change is a new entry at the end."""
