"""The memory stores: one contract suite over both, SQLite restarts, and the vector index."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentos.memory import sqlite_store as sqlite_store_module
from agentos.memory.edge import EdgeType, MemoryEdge
from agentos.memory.in_memory_store import InMemoryMemoryStore
from agentos.memory.sqlite_schema import MEMORY_MIGRATIONS, MEMORY_STORE
from agentos.memory.sqlite_store import SQLiteMemoryStore
from agentos.memory.store import MemoryStore, TraceFilter
from agentos.memory.trace import (
    DAY,
    EmotionalContext,
    MemoryScope,
    MemoryTrace,
    MemoryType,
    Provenance,
    SourceType,
)
from agentos.memory.vector_index import VectorIndex
from agentos.storage import StorageError, open_database

DIM = 16
T0 = 1_700_000_000.0
USER = (MemoryScope.USER, "u1")
THREAD = (MemoryScope.THREAD, "s1")


def full_trace(trace_id: str = "mt_full", **changes: Any) -> MemoryTrace:
    """A trace with every field set away from its default."""
    trace = MemoryTrace(
        id=trace_id,
        type=MemoryType.SEMANTIC,
        scope=MemoryScope.USER,
        scope_id="u1",
        content="Ada likes tea — and ümlauts",
        created_at=T0 + 0.125,
        encoding_strength=0.7314,
        stability=12_345.5,
        emotional_context=EmotionalContext(
            valence=-0.25, arousal=0.75, dominance=0.5, intensity=0.33, gmi_mood="curious"
        ),
        provenance=Provenance(
            source_type=SourceType.TOOL_RESULT,
            source_id="call_7",
            source_timestamp=T0 - 5.5,
            confidence=0.61,
            verification_count=3,
            last_verified_at=T0 + 99.0,
            contradicted_by=["mt_a", "mt_b"],
        ),
        entities=["Ada", "tea"],
        tags=["pref", "drink"],
        importance=0.9,
        retrieval_count=4,
        access_count=6,
        last_accessed_at=T0 + 500.0,
        reinforcement_interval=7_200.0,
        next_reinforcement_at=T0 + 7_700.0,
        associated_trace_ids=["mt_x"],
        structured_data={"likes": ["tea", 1, 2.5, None, True], "nested": {"k": {"v": -1}}},
        updated_at=T0 + 501.0,
        consolidated_at=T0 + 600.0,
        is_active=False,
        metadata={
            "cumulative_drift": 0.125,
            "drift_history": [{"at": T0, "delta": 0.01}],
            "gisted": False,
            "schema_cluster_id": None,
        },
    )
    return dataclasses.replace(trace, **changes)


def plain_trace(trace_id: str, **changes: Any) -> MemoryTrace:
    fields: dict[str, Any] = {
        "type": MemoryType.EPISODIC,
        "scope": MemoryScope.USER,
        "scope_id": "u1",
        "content": trace_id,
        "created_at": T0,
        "encoding_strength": 0.5,
        "stability": DAY,
    }
    fields.update(changes)
    return MemoryTrace(id=trace_id, **fields)


def unit_rows(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    """The rows as a store keeps them (float32 unit vectors), back in float64."""
    wide = vectors.astype(np.float64)
    norms = np.linalg.norm(wide, axis=1, keepdims=True)
    rows: npt.NDArray[np.float64] = (wide / norms).astype(np.float32).astype(np.float64)
    return rows


def test_full_trace_sets_every_field() -> None:
    # So the round trip below covers a field added to MemoryTrace (or its nested records) later.
    trace, default = full_trace(), plain_trace("mt_full")
    for field in dataclasses.fields(MemoryTrace):
        has_default = field.default is not dataclasses.MISSING
        if field.name not in ("emotional_context", "provenance") and has_default:
            assert getattr(trace, field.name) != getattr(default, field.name), field.name
    for record in ("emotional_context", "provenance"):
        value, base = getattr(trace, record), getattr(default, record)
        for name in (f.name for f in dataclasses.fields(value)):
            assert getattr(value, name) != getattr(base, name), f"{record}.{name}"


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MemoryStore]:
    made: MemoryStore = (
        InMemoryMemoryStore()
        if request.param == "memory"
        else SQLiteMemoryStore(path=tmp_path / "agentos.db")
    )
    yield made
    await made.close()


async def test_both_stores_implement_the_protocol(store: MemoryStore) -> None:
    assert isinstance(store, MemoryStore)
    assert store.dimension is None


async def test_every_field_round_trips_and_only_update_persists(store: MemoryStore) -> None:
    original = full_trace()
    await store.add(original, np.arange(1, DIM + 1, dtype=np.float32))
    original.content = "changed after add"  # the store kept its own copy
    (got,) = await store.get(["mt_full"])
    assert got == full_trace()
    assert got is not original

    got.metadata["drift_history"].append({"at": 1.0})
    got.provenance.contradicted_by.append("mt_c")
    got.tags.append("lost")
    assert await store.get(["mt_full"]) == [full_trace()]

    changed = full_trace(
        type=MemoryType.PROCEDURAL,
        scope=MemoryScope.PERSONA,
        scope_id="p9",
        content="rewritten",
        created_at=T0 + 1.5,
        encoding_strength=0.2,
        stability=99.0,
        emotional_context=EmotionalContext(0.1, 0.2, 0.3, 0.4, None),
        provenance=Provenance(SourceType.REFLECTION, None, 1.0, 0.05, 0, None, []),
        entities=[],
        tags=["other"],
        importance=None,
        retrieval_count=5,
        access_count=7,
        last_accessed_at=T0 + 800.0,
        reinforcement_interval=14_400.0,
        next_reinforcement_at=None,
        associated_trace_ids=[],
        structured_data=None,
        updated_at=T0 + 801.0,
        consolidated_at=None,
        is_active=True,
        metadata={"gisted": True, "regulation_history": [[1, 2], {"x": "y"}]},
    )
    await store.update([changed])
    assert await store.get(["mt_full"]) == [changed]
    # The filter columns follow the update: the trace moved scope and became active.
    assert await store.count(TraceFilter(scopes=[USER], active_only=False)) == 0
    assert await store.count(TraceFilter(scopes=[(MemoryScope.PERSONA, "p9")])) == 1


async def test_get_keeps_the_order_given_and_skips_unknown_ids(store: MemoryStore) -> None:
    for n in range(3):
        await store.add(plain_trace(f"t{n}"), np.eye(DIM, dtype=np.float32)[n])
    got = await store.get(["t2", "nope", "t0", "t2"])
    assert [t.id for t in got] == ["t2", "t0", "t2"]
    assert got[0] is not got[2]


async def test_add_twice_and_update_unknown_are_refused(store: MemoryStore) -> None:
    await store.add(plain_trace("t0"), np.ones(DIM, dtype=np.float32))
    with pytest.raises(ValueError, match="already stored"):
        await store.add(plain_trace("t0"), np.ones(DIM, dtype=np.float32))
    with pytest.raises(KeyError, match="not stored"):
        await store.update([plain_trace("t0", content="x"), plain_trace("ghost")])
    assert (await store.get(["t0"]))[0].content == "t0"  # nothing of the batch applied


async def test_dimension_is_fixed_by_the_first_vector(store: MemoryStore) -> None:
    with pytest.raises(ValueError, match="zero"):
        await store.add(plain_trace("z"), np.zeros(DIM, dtype=np.float32))
    assert store.dimension is None
    await store.add(plain_trace("t0"), np.ones(DIM, dtype=np.float32))
    assert store.dimension == DIM
    with pytest.raises(ValueError, match=rf"length {DIM + 1} .*dimension {DIM}"):
        await store.add(plain_trace("t1"), np.ones(DIM + 1, dtype=np.float32))
    with pytest.raises(ValueError, match=rf"length 3 .*dimension {DIM}"):
        await store.search(np.ones(3, dtype=np.float32), 5, TraceFilter())
    assert await store.count(TraceFilter()) == 1
    assert await store.get(["t1", "z"]) == []


async def test_search_ranks_and_scores_like_numpy(store: MemoryStore) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((60, DIM), dtype=np.float32)
    for n, vector in enumerate(vectors):
        await store.add(plain_trace(f"t{n:02d}"), vector)
    query = rng.standard_normal(DIM, dtype=np.float32)
    wide_query = query.astype(np.float64)
    reference = unit_rows(vectors) @ (wide_query / np.linalg.norm(wide_query))
    expected = np.argsort(-reference)[:10]

    hits = await store.search(query, 10, TraceFilter())
    assert [hit.trace.id for hit in hits] == [f"t{n:02d}" for n in expected]
    assert [hit.similarity for hit in hits] == pytest.approx(reference[expected], abs=1e-12)
    assert hits[0].trace == plain_trace(f"t{expected[0]:02d}")
    hits[0].trace.content = "edited without update()"
    assert (await store.get([hits[0].trace.id]))[0].content == hits[0].trace.id

    ids = [hit.trace.id for hit in hits]
    similarities = await store.similarities(query, [*ids, "ghost"])
    assert similarities == {hit.trace.id: hit.similarity for hit in hits}  # the same numbers

    embeddings = await store.embeddings(["t03", "ghost"])
    assert list(embeddings) == ["t03"]
    assert embeddings["t03"].dtype == np.float32
    assert float(np.linalg.norm(embeddings["t03"])) == pytest.approx(1.0, abs=1e-6)
    embeddings["t03"][:] = 0  # a copy: the index is untouched
    assert (await store.embeddings(["t03"]))["t03"].any()

    assert len(await store.search(query, 100, TraceFilter())) == 60
    assert await store.search(query, 0, TraceFilter()) == []


FILTERS = [
    TraceFilter(),
    TraceFilter(active_only=False),
    TraceFilter(scopes=[USER]),
    TraceFilter(scopes=[USER, THREAD]),
    TraceFilter(scopes=[(MemoryScope.USER, "nobody")]),
    TraceFilter(scopes=[]),
    TraceFilter(types=frozenset({MemoryType.SEMANTIC})),
    TraceFilter(types=frozenset({MemoryType.SEMANTIC, MemoryType.PROSPECTIVE})),
    TraceFilter(tags=frozenset({"a"})),
    TraceFilter(tags=frozenset({"a", "c"}), active_only=False),
    TraceFilter(tags=frozenset({"missing"})),
    TraceFilter(min_confidence=0.5),
    TraceFilter(created_after=T0 + 10.0),
    TraceFilter(created_before=T0 + 10.0),
    TraceFilter(created_after=T0 + 5.0, created_before=T0 + 20.0),
    TraceFilter(
        scopes=[USER],
        types=frozenset({MemoryType.EPISODIC}),
        tags=frozenset({"b"}),
        min_confidence=0.2,
        created_after=T0 + 1.0,
        active_only=False,
    ),
]


def filter_population() -> list[MemoryTrace]:
    scopes = [USER, THREAD, (MemoryScope.THREAD, "s2"), (MemoryScope.PERSONA, "u1")]
    types = list(MemoryType)
    tag_sets = [[], ["a"], ["b"], ["a", "b"], ["c"]]
    traces = []
    for n in range(40):
        scope, scope_id = scopes[n % len(scopes)]
        traces.append(
            plain_trace(
                f"t{n:02d}",
                scope=scope,
                scope_id=scope_id,
                type=types[n % len(types)],
                tags=tag_sets[n % len(tag_sets)],
                created_at=T0 + (n * 7) % 30,
                provenance=Provenance(confidence=(n % 10) / 10),
                is_active=n % 6 != 0,
            )
        )
    return traces


@pytest.mark.parametrize("where", FILTERS)
async def test_every_filter_field(store: MemoryStore, where: TraceFilter) -> None:
    traces = filter_population()
    rng = np.random.default_rng(3)
    for trace in traces:
        await store.add(trace, rng.standard_normal(DIM, dtype=np.float32))
    expected = {t.id for t in traces if where.matches(t)}
    assert expected or where.scopes is not None or where.tags is not None  # filters that bite
    assert await store.count(where) == len(expected)
    assert {t.id for t in await store.list_traces(where)} == expected
    hits = await store.search(rng.standard_normal(DIM, dtype=np.float32), 100, where)
    assert {hit.trace.id for hit in hits} == expected
    hits = await store.search(rng.standard_normal(DIM, dtype=np.float32), 3, where)
    assert len(hits) == min(3, len(expected))
    assert all(where.matches(hit.trace) for hit in hits)


async def test_inactive_traces_are_never_found_unless_asked(store: MemoryStore) -> None:
    query = np.ones(DIM, dtype=np.float32)
    await store.add(plain_trace("best"), query)
    await store.add(plain_trace("other"), np.arange(DIM, dtype=np.float32))
    (best,) = await store.get(["best"])
    best.is_active = False
    assert [h.trace.id for h in await store.search(query, 1, TraceFilter())] == ["best"]
    await store.update([best])
    assert [h.trace.id for h in await store.search(query, 2, TraceFilter())] == ["other"]
    assert await store.count(TraceFilter()) == 1
    hits = await store.search(query, 1, TraceFilter(active_only=False))
    assert [h.trace.id for h in hits] == ["best"]


async def test_list_traces_oldest_first_with_limit(store: MemoryStore) -> None:
    created = {"a": T0 + 3, "b": T0 + 1, "c": T0 + 3, "d": T0 + 2, "e": T0 + 1}
    for n, (trace_id, at) in enumerate(created.items()):
        await store.add(plain_trace(trace_id, created_at=at), np.eye(DIM, dtype=np.float32)[n])
    listed = await store.list_traces(TraceFilter())
    assert [t.id for t in listed] == ["b", "e", "d", "a", "c"]  # ties in insertion order
    assert [t.id for t in await store.list_traces(TraceFilter(), limit=2)] == ["b", "e"]
    assert await store.list_traces(TraceFilter(), limit=0) == []
    with pytest.raises(ValueError, match="limit"):
        await store.list_traces(TraceFilter(), limit=-1)
    # An update that moves a trace in time moves it in the listing.
    (c,) = await store.get(["c"])
    c.created_at = T0
    await store.update([c])
    assert [t.id for t in await store.list_traces(TraceFilter(), limit=1)] == ["c"]


async def test_tags_follow_updates(store: MemoryStore) -> None:
    await store.add(plain_trace("t", tags=["x"]), np.ones(DIM, dtype=np.float32))
    (trace,) = await store.get(["t"])
    trace.tags = ["y", "y"]
    await store.update([trace])
    assert await store.count(TraceFilter(tags=frozenset({"x"}))) == 0
    assert await store.count(TraceFilter(tags=frozenset({"y"}))) == 1
    assert (await store.get(["t"]))[0].tags == ["y", "y"]


async def test_edges_save_replace_delete_load(store: MemoryStore) -> None:
    first = MemoryEdge("b", "a", EdgeType.SHARED_ENTITY, 0.4, T0)
    second = MemoryEdge("a", "c", EdgeType.TEMPORAL_SEQUENCE, 0.3, T0 + 1)
    same_ends_other_type = MemoryEdge("a", "b", EdgeType.CO_ACTIVATED, 0.2, T0 + 2)
    await store.save_edges([first, second, same_ends_other_type])
    assert await store.load_edges() == [first, second, same_ends_other_type]

    replaced = MemoryEdge("a", "b", EdgeType.SHARED_ENTITY, 0.9, T0 + 3)  # ends swapped
    await store.save_edges([replaced])
    assert await store.load_edges() == [second, same_ends_other_type, replaced]

    await store.delete_edges([("b", "a", "CO_ACTIVATED"), ("x", "y", "CONTRADICTS")])
    assert await store.load_edges() == [second, replaced]
    await store.delete_edges([replaced.key(), second.key()])
    assert await store.load_edges() == []


async def test_a_closed_store_refuses_calls(store: MemoryStore) -> None:
    await store.add(plain_trace("t"), np.ones(DIM, dtype=np.float32))
    await store.close()
    await store.close()
    with pytest.raises(StorageError, match="closed"):
        await store.get(["t"])


# --- SQLite: restarts and what is loaded -------------------------------------------------------


async def fill(store: MemoryStore, count: int, seed: int) -> npt.NDArray[np.float32]:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((count, DIM), dtype=np.float32)
    for n, vector in enumerate(vectors):
        scope = USER if n % 2 else THREAD
        await store.add(
            full_trace(
                f"t{n:03d}", scope=scope[0], scope_id=scope[1], tags=[f"g{n % 3}"], is_active=True
            ),
            vector,
        )
    return vectors


async def test_sqlite_restart_recalls_the_same_memories(tmp_path: Path) -> None:
    path = tmp_path / "home" / "agentos.db"
    store = SQLiteMemoryStore(path=path)
    await fill(store, 50, seed=11)
    (changed,) = await store.get(["t007"])
    changed.retrieval_count = 42
    changed.is_active = False
    await store.update([changed])
    edges = [MemoryEdge("t001", "t002", EdgeType.CO_ACTIVATED, 0.5, T0)]
    await store.save_edges(edges)
    query = np.random.default_rng(12).standard_normal(DIM, dtype=np.float32)
    where = TraceFilter(scopes=[USER, THREAD], tags=frozenset({"g0", "g1"}))
    before_hits = await store.search(query, 8, where)
    before_all = await store.list_traces(TraceFilter(active_only=False))
    before_vectors = await store.embeddings([t.id for t in before_all])
    await store.close()

    reopened = SQLiteMemoryStore(path=path)
    assert reopened.dimension == DIM
    after_hits = await reopened.search(query, 8, where)
    assert [(h.trace, h.similarity) for h in after_hits] == [
        (h.trace, h.similarity) for h in before_hits
    ]
    assert await reopened.list_traces(TraceFilter(active_only=False)) == before_all
    after_vectors = await reopened.embeddings([t.id for t in before_all])
    assert all(np.array_equal(before_vectors[i], after_vectors[i]) for i in before_vectors)
    assert (await reopened.get(["t007"]))[0].retrieval_count == 42
    assert await reopened.count(TraceFilter()) == 49
    assert await reopened.load_edges() == edges
    # Adding after a restart continues the insertion order.
    await reopened.add(full_trace("late"), np.ones(DIM, dtype=np.float32))
    listed = await reopened.list_traces(TraceFilter(active_only=False))
    assert listed[-1].id == "late"
    await reopened.close()


async def test_sqlite_restart_matches_the_in_memory_store(tmp_path: Path) -> None:
    memory, sqlite = InMemoryMemoryStore(), SQLiteMemoryStore(path=tmp_path / "m.db")
    await fill(memory, 40, seed=5)
    await fill(sqlite, 40, seed=5)
    await sqlite.close()
    sqlite = SQLiteMemoryStore(path=tmp_path / "m.db")
    query = np.random.default_rng(6).standard_normal(DIM, dtype=np.float32)
    for where in (TraceFilter(), TraceFilter(scopes=[USER])):
        expected = await memory.search(query, 10, where)
        got = await sqlite.search(query, 10, where)
        assert [(h.trace.id, h.similarity) for h in got] == [
            (h.trace.id, h.similarity) for h in expected
        ]
    await sqlite.close()


async def test_sqlite_opens_without_building_traces_and_searches_only_the_hits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "agentos.db"
    store = SQLiteMemoryStore(path=path)
    await fill(store, 30, seed=1)
    await store.close()

    built: list[str] = []
    decode = sqlite_store_module._trace

    def counting(row: object) -> MemoryTrace:
        trace = decode(row)  # type: ignore[arg-type]
        built.append(trace.id)
        return trace

    monkeypatch.setattr(sqlite_store_module, "_trace", counting)
    reopened = SQLiteMemoryStore(path=path)
    assert built == []
    assert await reopened.count(TraceFilter(scopes=[USER])) == 15
    assert built == []
    hits = await reopened.search(np.ones(DIM, dtype=np.float32), 4, TraceFilter(scopes=[USER]))
    assert sorted(built) == sorted(h.trace.id for h in hits)
    await reopened.close()


async def test_sqlite_store_leaves_a_shared_database_open(tmp_path: Path) -> None:
    database = open_database(tmp_path / "shared.db")
    store = SQLiteMemoryStore(database)
    await store.add(plain_trace("t"), np.ones(DIM, dtype=np.float32))
    await store.close()
    assert not database.closed
    assert database.schema_version(MEMORY_STORE) == len(MEMORY_MIGRATIONS)
    again = SQLiteMemoryStore(database)
    assert [t.id for t in await again.get(["t"])] == ["t"]
    await again.close()
    database.close()
    with pytest.raises(ValueError, match="not both"):
        SQLiteMemoryStore(database, path=tmp_path / "x.db")


# --- the vector index --------------------------------------------------------------------------


def brute_top_k(
    matrix: npt.NDArray[np.float32],
    query: npt.NDArray[np.float64],
    k: int,
    mask: npt.NDArray[np.bool_] | None,
) -> npt.NDArray[np.float64]:
    sims = matrix.astype(np.float64) @ (query / np.linalg.norm(query))
    if mask is not None:
        sims = sims[mask]
    return np.sort(sims)[::-1][:k]


@settings(max_examples=150, deadline=None)
@given(
    rows=st.integers(1, 70),
    dim=st.integers(1, 12),
    k=st.integers(1, 80),
    seed=st.integers(0, 2**32 - 1),
    masked=st.booleans(),
    density=st.floats(0.0, 1.0),
)
def test_top_k_equals_brute_force(
    rows: int, dim: int, k: int, seed: int, masked: bool, density: float
) -> None:
    rng = np.random.default_rng(seed)
    index = VectorIndex(capacity=4)  # small, so the matrix grows by doubling on the way
    vectors = rng.standard_normal((rows, dim))
    vectors[np.linalg.norm(vectors, axis=1) == 0] = 1.0
    for n, vector in enumerate(vectors):
        index.add(f"v{n}", vector)
    query = rng.standard_normal(dim) + 1e-3
    mask = rng.random(rows) < density if masked else None
    ids, sims = index.top_k(query, k, mask)

    expected = brute_top_k(index.matrix, query, k, mask)
    assert len(ids) == len(expected) == len(set(ids))
    np.testing.assert_allclose(sims, expected, rtol=0, atol=1e-6)  # the k largest, in order
    assert list(sims) == sorted(sims, reverse=True)
    own = index.similarities(query, ids)
    assert [own[i] for i in ids] == list(sims)  # each hit's number is its own similarity
    if mask is not None:
        assert all(mask[index.row(i)] for i in ids)


def test_index_remove_swaps_the_last_row_in() -> None:
    index = VectorIndex()
    eye = np.eye(4)
    for n in range(4):
        index.add(f"v{n}", eye[n])
    assert index.remove("v1") == (1, 3)
    assert list(index.ids) == ["v0", "v3", "v2"]
    assert index.row("v3") == 1
    assert index.top_k(eye[3], 1)[0] == ["v3"]
    assert index.remove("v2") == (2, 2)
    assert len(index) == 2
    assert "v2" not in index
    with pytest.raises(KeyError):
        index.remove("v2")
    index.add("v1", eye[1])
    np.testing.assert_array_equal(index.vectors(["v1", "v0"]), eye[[1, 0]].astype(np.float32))


def test_index_refuses_bad_vectors_and_masks() -> None:
    index = VectorIndex()
    with pytest.raises(ValueError, match="zero"):
        index.add("z", [0.0, 0.0])
    with pytest.raises(ValueError, match="finite"):
        index.add("n", [np.nan, 1.0])
    index.add("a", [3.0, 4.0])
    np.testing.assert_allclose(index.matrix[0], [0.6, 0.8], rtol=1e-6)
    with pytest.raises(ValueError, match="already"):
        index.add("a", [1.0, 0.0])
    with pytest.raises(ValueError, match=r"length 3 .*dimension 2"):
        index.add("b", [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="mask"):
        index.top_k([1.0, 0.0], 1, np.ones(5, dtype=np.bool_))
    ids, sims = index.top_k([1.0, 0.0], 1, np.zeros(1, dtype=np.bool_))
    assert ids == []
    assert sims.shape == (0,)
