#!/usr/bin/env bash
# Start PostgreSQL and Redis on 127.0.0.1 when they are not running, and
# install them (and HAProxy, which the fleet test starts itself) from
# Debian's packages when the machine lacks them.
set -euo pipefail

need_apt=()
command -v pg_ctlcluster >/dev/null 2>&1 || need_apt+=(postgresql)
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v psql >/dev/null 2>&1 || need_apt+=(postgresql-client)
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || need_apt+=(haproxy)
if [ ${#need_apt[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  conf=/etc/postgresql/$version/main/pg_hba.conf
  # Tests connect over TCP as postgres without a password (trust on loopback only).
  if ! grep -q '^host all all 127.0.0.1/32 trust' "$conf"; then
    sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$conf"
  fi
  pg_ctlcluster --skip-systemctl-redirect "$version" main start
  for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
fi
psql -h 127.0.0.1 -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" | grep -q 1 \
  || psql -h 127.0.0.1 -U postgres -d postgres -c 'CREATE DATABASE test' >/dev/null
psql -h 127.0.0.1 -U postgres -d test -tAc 'SELECT 1' >/dev/null
echo "postgresql: ready"

if ! redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; then
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG && break; sleep 0.5; done
fi
redis-cli -h 127.0.0.1 -p 6379 ping | grep -q PONG
echo "redis: ready"

# Installed only: the fleet test runs its own HAProxy on ephemeral ports.
{ command -v haproxy || ls /usr/sbin/haproxy; } >/dev/null 2>&1
echo "haproxy: installed"
