"""Cognitive memory (rank 2; spec: Cognitive memory).

Traces, encoding, decay, scored retrieval, the memory graph and spreading activation, the eight
mechanisms, the observer/reflector pipeline, consolidation and the stores.
"""
