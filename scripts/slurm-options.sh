#!/bin/sh
# Writes internal/cli/slurmopts/COMMAND.txt: the options of Slurm 24.11's
# commands as their man pages (Debian 13 slurm-client, in the oracle's
# chroot) list them, one per line: "-A --account=" (a trailing = when the
# option takes a value, [=] when the value is optional). Only the names
# are taken; docs/compatibility.md is generated from these lists and the
# commands' own option parsers (internal/cli/compat_test.go).
set -eu
root=${ORACLE_ROOT:-/var/cache/slurm-oracle/trixie}
man=$root/usr/share/man/man1
out=$(dirname "$0")/../internal/cli/slurmopts
[ -d "$man" ] || { echo "no man pages in $man: run scripts/oracle-prepare.sh first" >&2; exit 1; }
mkdir -p "$out"
for c in sbatch srun salloc squeue sinfo scontrol scancel sacct sacctmgr sreport sprio sshare sdiag sstat sattach; do
	zcat "$man/$c.1.gz" | awk '/^\.TP/ { getline; print }' | grep '^\\f[B3]\\-' |
		sed -e 's/\\-/-/g' -e 's/\\f[BIRP123]//g' |
		awk '{
			line = $0; names = ""; arg = ""; bare = 0
			while (match(line, /^-[-A-Za-z0-9][-A-Za-z0-9_]*/)) {
				name = substr(line, 1, RLENGTH); line = substr(line, RLENGTH + 1)
				if (line ~ /^\[=/) arg = "[=]"
				else if (line ~ /^=/ || line ~ /^ *</ || line ~ /^ +[a-z]/ && name !~ /^--/) arg = "="
				else bare = 1
				if (index(" " names " ", " " name " ") == 0)
					names = names (names == "" ? "" : " ") name
				sub(/^[^,]*, */, "", line)
				if (line == "" || line !~ /^-/) break
			}
			if (arg == "=" && bare && names ~ /^--[^ ]*$/) arg = "[=]"
			if (names != "") print names arg
		}' | awk '!seen[$0]++' > "$out/$c.txt"
	echo "$c: $(wc -l < "$out/$c.txt") options"
done
