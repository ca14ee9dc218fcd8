#!/usr/bin/env bash
# Installs the Slurm 24.11 oracle (../shared/oracle/oracle.sh install) and
# makes its daemons' links usable from the host. Debian points
# /usr/sbin/slurmctld, slurmd and slurmstepd at /etc/alternatives/NAME with
# absolute links; seen from the host those resolve outside the chroot, so
# oracle.sh's "installed" check (test -x on the host path) fails and `up`
# says the chroot is missing. Relative links work from both sides.
set -euo pipefail
ORACLE_SH=${ORACLE_SH:-../shared/oracle/oracle.sh}
ROOT=${ORACLE_ROOT:-/var/cache/slurm-oracle/trixie}
"$ORACLE_SH" install
for b in slurmctld slurmd slurmstepd; do
  alt="$ROOT/etc/alternatives/$b"
  [ -L "$alt" ] || continue
  target=$(readlink "$alt")
  ln -sfn "$(basename "$target")" "$ROOT/usr/sbin/$b"
done
