#!/bin/sh
# Installs the Debian packages the build and the tests need, but only when
# something is missing, so `make` on a prepared machine does no network work.
set -eu
pkgs="build-essential cmake pkg-config libsqlite3-dev libcjson-dev libfyaml-dev \
libssl-dev check libcurl4-openssl-dev libmicrohttpd-dev valgrind"
missing=""
for mod in sqlite3 libcjson libfyaml libcrypto check libcurl libmicrohttpd; do
  pkg-config --exists "$mod" 2>/dev/null || missing="$missing $mod"
done
for tool in cmake cc pkg-config valgrind; do
  command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
[ -z "$missing" ] && exit 0
echo "deps: missing:$missing; installing Debian packages" >&2
if [ "$(id -u)" != 0 ]; then
  echo "deps: not root; run as root: apt-get update && apt-get install -y $pkgs" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q $pkgs
