#!/usr/bin/env bash
# Installs zsh (from Debian's packages) for the zsh completion test
# (test/cli-habits.e2e.test.ts), which runs `berth completion zsh` in zsh.
# Idempotent; run as root, as CI does.
set -euo pipefail
command -v zsh >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zsh)
zsh --version
