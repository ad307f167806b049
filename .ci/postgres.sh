#!/usr/bin/env bash
# Start a throwaway PostgreSQL server for the store tests and print the lines that point them at it.
#
#   eval "$(bash .ci/postgres.sh)"
#
# stdout carries only `export ...` lines (so `eval` is safe); every message goes to stderr.
# Idempotent: a server this script already started is reused (about 0.1 s); otherwise the
# cluster is made anew in $BYHEART_PG_DIR (default /tmp/byheart-pg), because a data directory
# left by a killed session holds a stale postmaster.pid that may name a live, unrelated process.
#
#   bash .ci/postgres.sh stop
#
# stops the server only if this run started it: starting exports BYHEART_PG_STARTED, a token
# also written beside the data, and `stop` compares the two.  A run that only reused a server
# (another run's, still in use there) exports no token, so its exit trap leaves it running.
# Installs PostgreSQL from Debian's packages and psycopg from PyPI only when they are missing.
set -euo pipefail
exec 3>&1 1>&2

dir="${BYHEART_PG_DIR:-/tmp/byheart-pg}"
db="byheart_test"
python="${PYTHON:-python3}"
command -v "$python" >/dev/null 2>&1 || python=python

pg_bin() {
    # The newest installed major version; Debian puts the server binaries outside PATH.
    local d
    d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    if [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ]; then
        echo "$d"
    fi
}

as_pg() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

bin="$(pg_bin)"
if [ "${1:-}" = stop ]; then
    # End the server so nothing outlives the run that started it; never one it only reused.
    token="${BYHEART_PG_STARTED:-}"
    if [ -z "$token" ] || [ "$(cat "$dir/started-by" 2>/dev/null || true)" != "$token" ]; then
        echo "postgres.sh: leaving the server in $dir running (this run did not start it)"
        exit 0
    fi
    if [ -n "$bin" ] && [ -d "$dir/data" ]; then
        as_pg "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1 || true
    fi
    rm -f "$dir/started-by"
    exit 0
fi

if [ -z "$bin" ]; then
    echo "postgres.sh: installing PostgreSQL from Debian's packages"
    export DEBIAN_FRONTEND=noninteractive
    # 3>&-: a cluster the package's scripts may start must not hold the caller's pipe either.
    apt-get update -qq 3>&-
    apt-get install -y -qq --no-install-recommends postgresql postgresql-client >/dev/null 3>&-
    bin="$(pg_bin)"
    [ -n "$bin" ] || { echo "postgres.sh: no initdb/pg_ctl after installing postgresql"; exit 1; }
fi

# The client driver (the package's "postgres" extra); the tests fail, not skip, without it.
if ! "$python" -c "import psycopg" >/dev/null 2>&1; then
    echo "postgres.sh: installing psycopg[binary] (the yait-byheart[postgres] extra)"
    "$python" -m pip install -q "psycopg[binary]>=3.1"
fi

# PostgreSQL refuses to run as root: the server runs as an unprivileged `postgres` user.
if ! id postgres >/dev/null 2>&1; then
    useradd --system --home-dir /var/lib/postgresql --shell /bin/sh postgres
fi

emit() {
    local port
    port="$(cat "$dir/port")"
    echo "export BYHEART_TEST_PG_DSN='postgresql://postgres@127.0.0.1:${port}/${db}'" >&3
    # Set by this script only: a configured server that the tests cannot use is a failure, not a skip.
    echo "export BYHEART_TEST_PG_REQUIRED=1" >&3
}

if [ -f "$dir/port" ] && [ -d "$dir/data" ] \
    && as_pg "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1 \
    && "$bin/pg_isready" -q -h 127.0.0.1 -p "$(cat "$dir/port")" >/dev/null 2>&1; then
    echo "postgres.sh: reusing the server in $dir on port $(cat "$dir/port")"
    emit
    echo "unset BYHEART_PG_STARTED" >&3  # not ours to stop
    exit 0
fi

if [ -d "$dir/data" ]; then
    # Not answering (a server still starting, or a pid file naming a reused pid): stop
    # whatever may run there before its data directory is removed.
    as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
fi
rm -rf "$dir"
mkdir -p "$dir"
port="$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
chown -R postgres "$dir" 2>/dev/null || true
chmod 700 "$dir"
# --no-sync and fsync=off: a test cluster that dies with the machine needs no durability,
# and initdb without them spends most of its ~2 s in fsync.
as_pg "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log"; exit 1; }
# `3>&-`: the server must not inherit fd 3 (the caller's $(...) pipe); if it does, the
# caller's command substitution waits for the server to exit, i.e. forever (CI timed out so).
as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start 3>&- </dev/null -o \
    "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir \
     -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=50" \
    >/dev/null || { cat "$dir/server.log"; exit 1; }
echo "$port" >"$dir/port"
token="$$-$(date +%s%N)-$RANDOM"
echo "$token" >"$dir/started-by"
echo "export BYHEART_PG_STARTED='$token'" >&3
as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres "$db"
echo "postgres.sh: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port, data in $dir"
emit
