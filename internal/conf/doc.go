// Package conf reads Slurm's own configuration files, slurm.conf and
// gres.conf, into typed structures the rest of Sluice builds on: the
// cluster keys, every Priority* and Preempt* key, SchedulerParameters,
// SelectTypeParameters, accounting storage, nodes and partitions.
//
// The syntax follows slurm.conf(5): one statement per line, "\" at the end
// of a line continues it, "#" starts a comment, keys are case-insensitive
// while node and partition names are not, "Include FILE" reads another
// file inline (with %c replaced by the cluster name), and NodeName=DEFAULT
// or PartitionName=DEFAULT lines set defaults for the lines that follow,
// each DEFAULT line adding to or replacing earlier defaults.
//
// Every error names the file and line it comes from ("FILE:LINE: Key:
// message"); parsing never panics. A key that Slurm knows but Sluice does
// not act on yet is kept in Config.Unused and reported as a Warning, never
// silently dropped; a key nobody knows, or a bad value, is an error.
package conf
