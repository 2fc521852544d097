#!/usr/bin/env bash
# PostgreSQL 15 + pgvector 0.8.0 for the tests marked `postgres` (run as root, Debian 12).
#
# Debian 12 ships no pgvector package, so it is built from Debian 13's (trixie) source package
# against bookworm's PostgreSQL 15. A test cluster "15/ci" listens on 127.0.0.1:5433 only, with
# role/database app/app. Idempotent: every step is skipped when already done, so CI may call it
# on every run. Tests connect with ERP_AGENT_TEST_PG (default
# postgresql://app:app@127.0.0.1:5433/app).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

PG=15
PORT=5433
CLUSTER=ci
PGVECTOR=0.8.0-1
PGC=/usr/lib/postgresql/$PG/bin/pg_config

if [ "$(id -u)" -ne 0 ]; then
  echo "pgvector.sh must run as root (it installs packages and creates a cluster)" >&2
  exit 1
fi

need=()
for pkg in postgresql postgresql-server-dev-$PG dpkg-dev make gcc; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  apt-get update
  apt-get install -y --no-install-recommends "${need[@]}"
fi

if [ ! -f "$($PGC --pkglibdir)/vector.so" ] || \
   [ ! -f "$($PGC --sharedir)/extension/vector--${PGVECTOR%-*}.sql" ]; then
  # A throwaway apt configuration reads trixie's sources; the system's sources stay untouched.
  W=$(mktemp -d)
  trap 'rm -rf "$W"' EXIT
  mkdir -p "$W/lists/partial" "$W/parts" "$W/cache/archives/partial"
  : > "$W/empty.list"
  # The machine's own Debian mirror (the first main-archive URI it is configured with).
  MIRROR=$(grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' \
           | grep -v -- '-security' | head -n 1)
  [ -n "$MIRROR" ] || MIRROR=$(awk '$1=="deb" && $0 !~ /security/ {print $2; exit}' /etc/apt/sources.list)
  [ -n "$MIRROR" ] || { echo "no Debian mirror configured in apt sources" >&2; exit 1; }
  cat > "$W/parts/trixie-src.sources" <<SRC
Types: deb-src
URIs: $MIRROR
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  A=(-o Dir::Etc::sourcelist="$W/empty.list" -o Dir::Etc::sourceparts="$W/parts"
     -o Dir::State::Lists="$W/lists" -o Dir::Cache="$W/cache")
  apt-get "${A[@]}" update
  (cd "$W" && apt-get "${A[@]}" source --download-only "pgvector=$PGVECTOR" \
     && dpkg-source -x "pgvector_$PGVECTOR.dsc" pgvector)
  make -C "$W/pgvector" PG_CONFIG=$PGC with_llvm=no -j2
  make -C "$W/pgvector" PG_CONFIG=$PGC with_llvm=no install
fi

if ! pg_lsclusters -h | awk '{print $1"/"$2}' | grep -qx "$PG/$CLUSTER"; then
  # Loopback only, not started at boot.
  pg_createcluster $PG $CLUSTER -p $PORT --start-conf=manual -- \
    --auth-local=peer --auth-host=scram-sha-256 >/dev/null
  # Quoted: an unquoted 127.0.0.1 is a syntax error in postgresql.conf.
  sed -i "s/^#\?listen_addresses.*/listen_addresses = '127.0.0.1'/" \
    /etc/postgresql/$PG/$CLUSTER/postgresql.conf
fi

if ! pg_lsclusters -h | awk '$1"/"$2=="'$PG/$CLUSTER'" {print $4}' | grep -qx online; then
  pg_ctlcluster $PG $CLUSTER start
fi

psql_as_postgres() { su postgres -c "PGOPTIONS='-c client_min_messages=warning' psql -p $PORT -v ON_ERROR_STOP=1 -qAt $*"; }
if [ "$(psql_as_postgres "-c \"select 1 from pg_roles where rolname='app'\"")" != "1" ]; then
  psql_as_postgres "-c \"create role app login password 'app'\""
fi
if [ "$(psql_as_postgres "-c \"select 1 from pg_database where datname='app'\"")" != "1" ]; then
  psql_as_postgres "-c 'create database app owner app'"
fi
psql_as_postgres "-d app -c 'create extension if not exists vector'"
echo "pgvector $(psql_as_postgres "-d app -c \"select extversion from pg_extension where extname='vector'\"") on 127.0.0.1:$PORT (db app, role app)"
