package cli

import (
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
)

// usageField is a resource-usage column (MaxRSS, TotalCPU, ...) from the
// usage the node agents gathered for each step. A job's own line shows
// only TotalCPU, UserCPU and SystemCPU, the sums over its steps, and
// ConsumedEnergy 0; a step line shows every figure, energy 0 and CPU
// frequency 0 (Sluice gathers neither), and no figure at all but the CPU
// times when no sample saw the step (oracle: "1" MaxRSS empty and
// TotalCPU 00:04.833; "1.batch" MaxRSS 416404K; "1.0" of a 2 s step
// TotalCPU only).
func usageField(name string) func(*sacctRow) string {
	lower := strings.ToLower(name)
	return func(r *sacctRow) string {
		switch lower {
		case "consumedenergy", "consumedenergyraw":
			// 0 on a step line; on the job's line only once a sample
			// gave its steps an energy figure (oracle: "" for a 1 s job,
			// 0 for a 46 s one).
			if r.Step == "" && !r.Usage.Sampled() {
				return ""
			}
			return "0"
		case "avecpufreq":
			if r.Step == "" {
				return ""
			}
			return "0"
		}
		if r.Usage.Empty() {
			return ""
		}
		if r.Step == "" && lower != "totalcpu" && lower != "usercpu" && lower != "systemcpu" {
			return ""
		}
		if strings.HasPrefix(lower, "tresusage") {
			return tresUsage(r.Usage, lower)
		}
		v, _ := r.Usage.UsageField(name, false)
		return v
	}
}

// tresUsage is a TRESUsageIn*/Out* column: Slurm's usage as TRES
// (oracle: TRESUsageInMax "cpu=00:00:02,energy=0,fs/disk=10467,
// mem=416404K,pages=1,vmem=420456K", TRESUsageOutTot "energy=0,
// fs/disk=1"). The Node and Task variants are left empty.
func tresUsage(u *api.Usage, lower string) string {
	kind := strings.TrimPrefix(strings.TrimPrefix(lower, "tresusagein"), "tresusageout")
	out := strings.HasPrefix(lower, "tresusageout")
	if strings.HasSuffix(kind, "node") || strings.HasSuffix(kind, "task") {
		return ""
	}
	get := func(metric string) string {
		prefix := map[string]string{"max": "Max", "min": "Max", "ave": "Ave", "tot": "Max"}[kind]
		if metric == "CPU" && kind == "min" {
			prefix = "Min"
		}
		v, _ := u.UsageField(prefix+metric, true)
		return v
	}
	if out {
		if v := get("DiskWrite"); v != "" {
			return "energy=0,fs/disk=" + v
		}
		return "energy=0"
	}
	if get("RSS") == "" {
		return ""
	}
	return "cpu=" + get("CPU") + ",energy=0,fs/disk=" + get("DiskRead") + ",mem=" + get("RSS") +
		",pages=" + get("Pages") + ",vmem=" + get("VMSize")
}
