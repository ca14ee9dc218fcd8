#!/usr/bin/env bash
# Installs the Debian packages the end-to-end tests use beyond Go, when
# running as root and they are missing: MPICH for the MPI test
# (internal/cli TestMPIHelloPMI2), Chromium for the simulator report's
# layout check (internal/sim TestReportNoTextOverflowsInBrowser). Prints
# the variables that make those tests fail rather than skip when their
# tools are still missing.
set -euo pipefail
want=()
command -v mpicc.mpich >/dev/null 2>&1 || want+=(mpich libmpich-dev)
command -v chromium >/dev/null 2>&1 || want+=(chromium)
if [ ${#want[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "test-deps: not root, not installing ${want[*]} (their tests skip)" >&2
    exit 0
  fi
  echo "test-deps: installing ${want[*]} (Debian packages)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq "${want[@]}" >&2
fi
command -v mpicc.mpich >/dev/null 2>&1 && echo "export SLUICE_REQUIRE_MPI=1"
command -v chromium >/dev/null 2>&1 && echo "export SLUICE_REQUIRE_BROWSER=1"
exit 0
