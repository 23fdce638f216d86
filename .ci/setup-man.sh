#!/usr/bin/env bash
# Installs man-db (from Debian's packages) for the man page test
# (test/man-page.test.ts) and the installed-package check (.ci/pack-install.sh),
# which render berth.1 with `man -l`. Idempotent; run as root, as CI does.
set -euo pipefail
command -v man >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq man-db)
man --version
