#!/bin/sh
# serverload.sh runs cmd/stepdload against stepd serve binaries in turn,
# alternating them round by round, each on a fresh store, and prints one
# line of figures per run (see docs/performance.md, "The server's cost per
# request").
#
#   scripts/serverload.sh MODE ROUNDS BINARY... [-- STEPDLOAD FLAGS...]
#
# MODE is start, mixed, express or durable. STORE=postgres (with
# PGURL=postgres://USER@HOST:PORT/DB) runs each server on a fresh schema of
# that database instead of SQLite in a temporary folder. STEPDLOAD names the
# load client's binary (default: built from cmd/stepdload); PORT the port.
set -eu
mode=$1 rounds=$2
shift 2
bins=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do bins="$bins $1"; shift; done
[ $# -gt 0 ] && shift
port=${PORT:-18083}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
load=${STEPDLOAD:-}
if [ -z "$load" ]; then
	load=$dir/stepdload
	go build -o "$load" "$(dirname "$0")/../cmd/stepdload"
fi
mock=$(cd "$(dirname "$0")/../cmd/stepdload" && pwd)/mock.json
n=0
for r in $(seq "$rounds"); do
	for bin in $bins; do
		n=$((n + 1))
		if [ "${STORE:-sqlite}" = postgres ]; then
			schema=load_$$_$n
			PGOPTIONS='-c client_min_messages=warning' psql "${PGURL:?}" -qc "create schema $schema" >/dev/null
			storeflags="--store ${PGURL}?search_path=$schema"
		else
			storeflags="--data $dir/data$n"
		fi
		# shellcheck disable=SC2086
		"$bin" serve --addr 127.0.0.1:$port $storeflags --mock-config "$mock" --log-level warn >"$dir/out$n" 2>&1 &
		pid=$!
		i=0
		until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; do
			i=$((i + 1)); [ $i -gt 100 ] && { cat "$dir/out$n"; exit 1; }
			sleep 0.1
		done
		"$load" -addr 127.0.0.1:$port -mode "$mode" -pid $pid -label "round=$r bin=$bin" "$@" || true
		kill $pid; wait $pid || true
		[ "${STORE:-sqlite}" = postgres ] && PGOPTIONS='-c client_min_messages=warning' psql "$PGURL" -qc "drop schema $schema cascade" >/dev/null
	done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
