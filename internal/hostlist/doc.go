// Package hostlist expands and compresses Slurm host lists.
//
// Slurm writes sets of node names compactly: `node[01-32]`, `gpu[01-08],bigmem[1-4]`,
// `rack[1-2]-n[01-04]`. Expand turns such an expression into the individual names in the
// order Slurm lists them (what `scontrol show hostnames` prints); Compress is the inverse
// (what `scontrol show hostlist` prints): it sorts, removes duplicates and folds names that
// share a prefix into bracketed ranges, keeping zero padding (`node[01-03,07]`).
//
// The keyword `ALL` (partition `Nodes=ALL`) is not a host list: callers handle it.
package hostlist
