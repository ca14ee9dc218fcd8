// Package tres models Slurm's trackable resources (TRES).
//
// A Vector maps canonical TRES names to counts: `cpu`, `mem` (megabytes, Slurm's base
// unit for memory), `energy`, `node`, `billing`, `fs/disk`, `vmem`, `pages`, generic
// resources `gres/gpu` and typed ones `gres/gpu:a100`, `license/NAME` and `bb/NAME`.
// Parse and String read and print Slurm's TRES strings (`cpu=2,mem=4G,gres/gpu=16,node=1`)
// in Slurm's order; Parse also takes the short forms admins type in sacctmgr limits
// (`gpu=32` for `gres/gpu=32`).
//
// The arithmetic (Add, Sub, Min, Max, LessOrEqual) treats a missing name as zero, the
// natural reading for allocations and free capacity. Limits read a missing name as "no
// limit": WithinLimit and Exceeded say which TRES a request exceeds, so the limits code
// can build Slurm's reason strings (QOSGrpGRES, AssocMaxCpuPerJobLimit, ...).
//
// Weights and Billing implement TRESBillingWeights and PriorityWeightTRES (slurm.conf(5)):
// the billable TRES of an allocation as a weighted sum, or with PriorityFlags=MAX_TRES /
// MAX_TRES_GRES as a maximum over the node resources plus the rest.
//
// A Vector is a plain map with no registry of configured TRES behind it: callers that
// must reject TRES the cluster does not track check names against their own list.
package tres
