package cli

import (
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
)

// squeueOnlyState is squeue --only-job-state's layout: the job id and
// its state, whatever -o asks (Slurm 24.11 loads only those two with
// this option and prints nothing else of use).
const squeueOnlyState = "%.18i %.2t"

// perPartition is squeue -P: a pending job submitted to several
// partitions is listed once per partition (the scheduler considers it in
// each), each row naming one.
func perPartition(jobs []api.JobInfo) []api.JobInfo {
	var out []api.JobInfo
	for _, j := range jobs {
		parts := strings.Split(j.Partition, ",")
		if j.State != "PENDING" || len(parts) < 2 {
			out = append(out, j)
			continue
		}
		for _, p := range parts {
			c := j
			c.Partition = p
			out = append(out, c)
		}
	}
	return out
}
