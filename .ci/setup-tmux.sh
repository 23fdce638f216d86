#!/usr/bin/env bash
# Installs tmux (from Debian's packages) for the desk's real-terminal test
# (test/desk-tmux.e2e.test.ts). Idempotent; run as root, as CI does.
set -euo pipefail
command -v tmux >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux)
tmux -V
