#!/usr/bin/env bash
# setup.sh — installs every Debian 12 package faasnode needs to build, test and run.
# Idempotent; run as root. Packages already present are left as they are.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
  echo "setup.sh: must run as root (it calls apt-get); try: sudo $0" >&2
  exit 2
fi

PACKAGES=(
  # toolchain and test tools
  build-essential cmake pkg-config git ca-certificates
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  # runtime: user-level threads
  libboost-context-dev
  # kernel-bypass data path
  dpdk libdpdk-dev
  # energy and ledger
  libpowercap-dev powercap-utils libsqlite3-dev sqlite3
  # logging, parsing, config, CLI
  libspdlog-dev libfmt-dev node-llhttp nlohmann-json3-dev libtomlplusplus-dev libcli11-dev
  # benchmarks (docs/benchmarks/node.md)
  wrk
  # load scenarios (docs/benchmarks/load.md): a cross-checking load generator, the plots
  hey gnuplot-nox
  # tests that build their own network namespaces and fault injection
  iproute2 nftables curl util-linux procps iputils-ping
  # the /metrics test scrapes the node with a real Prometheus
  prometheus
  # the faas-cli flow test reads configs/stack.yml as faas-cli would (python3 + PyYAML)
  python3 python3-yaml
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "setup.sh: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

echo "setup.sh: installing ${#missing[@]} package(s): ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "setup.sh: done"
