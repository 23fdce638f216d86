#!/usr/bin/env bash
# Installs (from Debian's packages) and starts a PostgreSQL server for the
# examples/postgres integration test, and gives the current user a superuser
# role so `createdb`/`dropdb` work over the local socket. Idempotent; run as
# root (CI and the developer machines run as root).
set -euo pipefail

log() { printf 'setup-postgres: %s\n' "$*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
  log "must run as root (it installs packages and starts a system service)"
  exit 1
fi

server_bin() { ls -d /usr/lib/postgresql/*/bin/postgres 2>/dev/null | sort -V | tail -n 1; }

if [ -z "$(server_bin)" ] || ! command -v pg_ctlcluster >/dev/null || ! command -v createdb >/dev/null; then
  log "installing postgresql from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
fi

bin="$(server_bin)"
version="$(basename "$(dirname "$(dirname "$bin")")")"

# The package creates the cluster; a machine restored without it gets one now.
if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$version main"; then
  log "creating cluster $version/main"
  pg_createcluster "$version" main >/dev/null
fi

if ! pg_lsclusters -h | awk -v v="$version" '$1==v && $2=="main" {print $4}' | grep -qx online; then
  log "starting cluster $version/main"
  pg_ctlcluster "$version" main start
fi

for _ in $(seq 1 30); do
  if su postgres -c "psql -qAtX -d postgres -c 'select 1'" >/dev/null 2>&1; then break; fi
  sleep 1
done

user="$(id -un)"
if [ "$(su postgres -c "psql -qAtX -d postgres -c \"select 1 from pg_roles where rolname = '$user'\"")" != "1" ]; then
  log "creating superuser role $user"
  su postgres -c "createuser --superuser '$user'"
fi

# The current user connects over the local socket with peer authentication.
psql -qAtX -d postgres -c 'select 1' >/dev/null
log "PostgreSQL $version is running; $user can createdb/dropdb"
