#!/bin/sh
# Installs the Debian packages the build and the tests need, but only when
# something is missing, so `make` on a prepared machine does no network work.
#
# `deps.sh fuzz` (make fuzz): clang and its runtime libraries (libFuzzer,
# the sanitizers), checked by linking a one-line fuzz target.
# `deps.sh coverage` (make coverage): lcov and genhtml (gcov comes with gcc).
# `deps.sh lint` (make lint, make format-check): cppcheck, clang-tidy,
# clang-format.
# `deps.sh report` (make report-check): Debian chromium, to render the
# scenario report headless and screenshot it.
# `deps.sh build` (action.yml): only what configuring and building the
# binary needs (compiler, cmake, pkg-config and the libraries' -dev
# packages, which bring the shared libraries the binary runs with), none of
# the test tools: less to fetch on every CI job.
set -eu
# apt_install WHAT PACKAGES...: installs Debian packages as root, or says
# exactly what to run when not root.
apt_install() {
  what=$1; shift
  echo "deps: $what missing; installing Debian packages: $*" >&2
  if [ "$(id -u)" != 0 ]; then
    echo "deps: not root; run as root: apt-get update && apt-get install -y $*" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q "$@"
}
if [ "${1:-}" = coverage ]; then
  command -v lcov >/dev/null 2>&1 && command -v genhtml >/dev/null 2>&1 &&
    command -v gcov >/dev/null 2>&1 && exit 0
  apt_install "lcov/genhtml" lcov
  exit 0
fi
if [ "${1:-}" = lint ]; then
  command -v cppcheck >/dev/null 2>&1 && command -v clang-tidy >/dev/null 2>&1 &&
    command -v clang-format >/dev/null 2>&1 && exit 0
  apt_install "cppcheck/clang-tidy/clang-format" cppcheck clang-tidy clang-format
  exit 0
fi
if [ "${1:-}" = report ]; then
  command -v chromium >/dev/null 2>&1 && exit 0
  apt_install "chromium" chromium
  exit 0
fi
if [ "${1:-}" = fuzz ]; then
  probe=$(mktemp -d)
  trap 'rm -rf "$probe"' EXIT
  printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
    >"$probe/t.c"
  if command -v clang >/dev/null 2>&1 &&
    clang -fsanitize=fuzzer,address,undefined "$probe/t.c" -o "$probe/t" >/dev/null 2>&1; then
    exit 0
  fi
  echo "deps: clang with libFuzzer missing; installing Debian packages" >&2
  if [ "$(id -u)" != 0 ]; then
    echo "deps: not root; run as root: apt-get update && apt-get install -y clang libclang-rt-dev" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q clang libclang-rt-dev
  exit 0
fi
build_pkgs="build-essential cmake pkg-config libsqlite3-dev libcjson-dev libfyaml-dev \
libssl-dev check libcurl4-openssl-dev libmicrohttpd-dev libgnutls28-dev"
missing=""
for mod in sqlite3 libcjson libfyaml libcrypto check libcurl libmicrohttpd gnutls; do
  pkg-config --exists "$mod" 2>/dev/null || missing="$missing $mod"
done
if [ "${1:-}" = build ]; then
  for tool in cmake cc pkg-config; do
    command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
  done
  [ -z "$missing" ] && exit 0
  # shellcheck disable=SC2086 # one word per package
  apt_install "$missing" $build_pkgs
  exit 0
fi
pkgs="$build_pkgs valgrind libxml2-utils jq python3 sqlite3"
for tool in cmake cc pkg-config valgrind xmllint jq python3 sqlite3 mkfifo; do
  command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
# sim serve's tests: kubectl as a real client, openssl for the TLS variant.
command -v kubectl >/dev/null 2>&1 || { missing="$missing kubectl"; pkgs="$pkgs kubernetes-client"; }
command -v openssl >/dev/null 2>&1 || { missing="$missing openssl"; pkgs="$pkgs openssl"; }
# sim serve's second real client: the Kubernetes Python client
# (tests/check_serve_python.sh lists, patches and watches with it). Debian's
# package is for Debian's interpreter, whatever python3 is first on PATH.
/usr/bin/python3 -c 'import kubernetes' >/dev/null 2>&1 || { missing="$missing python3-kubernetes"; pkgs="$pkgs python3-kubernetes"; }
# tests/check_ci_yaml.sh parses the GitHub workflow and action.
python3 -c 'import yaml' >/dev/null 2>&1 || { missing="$missing python3-yaml"; pkgs="$pkgs python3-yaml"; }
# tests/check_install.sh renders the installed man page reassert(1).
command -v man >/dev/null 2>&1 || { missing="$missing man"; pkgs="$pkgs man-db"; }
command -v groff >/dev/null 2>&1 || { missing="$missing groff"; pkgs="$pkgs groff-base"; }
[ -z "$missing" ] && exit 0
echo "deps: missing:$missing; installing Debian packages" >&2
if [ "$(id -u)" != 0 ]; then
  echo "deps: not root; run as root: apt-get update && apt-get install -y $pkgs" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q $pkgs
