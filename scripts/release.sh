#!/usr/bin/env bash
# Builds stepd's release archives: a static binary (CGO_ENABLED=0; the
# SQLite driver is pure Go) for each target, with the README and the manual
# it links to (docs/*.md and their pictures), in
# stepd_VERSION_OS_ARCH.tar.gz (.zip for a windows target), and SHA256SUMS.
# Windows is not a default target: task/command runs handlers in Unix
# process groups (Setpgid, kill of the group) and does not build there.
#
#   scripts/release.sh v1.2.3 [OUTDIR]          # OUTDIR defaults to dist
#   TARGETS="linux/amd64 darwin/arm64" scripts/release.sh v1.2.3
#
# The version is stamped with -ldflags -X main.version (stepd version).
set -euo pipefail
version=${1:?usage: scripts/release.sh VERSION [OUTDIR]}
out=${2:-dist}
targets=${TARGETS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"}
cd "$(dirname "$0")/.."
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
archives=()
for target in $targets; do
	os=${target%/*}
	arch=${target#*/}
	name=stepd_${version#v}_${os}_${arch}
	exe=stepd
	[ "$os" = windows ] && exe=stepd.exe
	mkdir -p "$work/$name"
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -ldflags "-s -w -X main.version=$version" \
		-o "$work/$name/$exe" ./cmd/stepd
	cp README.md "$work/$name/"
	mkdir -p "$work/$name/docs"
	cp docs/*.md "$work/$name/docs/"
	if [ -d docs/img ]; then cp -R docs/img "$work/$name/docs/"; fi
	if [ -f LICENSE ]; then cp LICENSE "$work/$name/"; fi
	if [ "$os" = windows ]; then
		rm -f "$out/$name.zip"
		(cd "$work" && zip -qr "$out/$name.zip" "$name")
		archives+=("$name.zip")
	else
		tar -C "$work" -czf "$out/$name.tar.gz" "$name"
		archives+=("$name.tar.gz")
	fi
	echo "built $out/${archives[-1]}"
done
(cd "$out" && sha256sum "${archives[@]}" >SHA256SUMS)
