package cli

import (
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
)

// usageField is a resource-usage column (MaxRSS, TotalCPU, ...) from the
// usage the node agents gathered for each step. A job's own line shows
// only TotalCPU, UserCPU and SystemCPU, the sums over its steps, and
// ConsumedEnergy 0 once a sample saw a step; a step line shows every
// figure, energy and CPU frequency 0 (Sluice gathers neither), and no
// figure but the CPU times when nothing was measured (oracle: "1" MaxRSS
// empty and TotalCPU 00:04.833; "1.batch" MaxRSS 416404K; "1.0" of a 2 s
// step TotalCPU only).
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
		if r.Step == "" && lower != "totalcpu" && lower != "usercpu" && lower != "systemcpu" {
			return ""
		}
		if strings.HasPrefix(lower, "tresusage") {
			if r.Step == "" {
				return ""
			}
			return tresUsage(r.Usage, lower, false)
		}
		if r.Usage.Empty() {
			return ""
		}
		if b, ok := r.Usage.MemoryBytes(name); ok && r.noconvert {
			return b // oracle: --noconvert MaxRSS 426397696
		}
		v, _ := r.Usage.UsageField(name, false)
		return v
	}
}

// tresUsage is a TRESUsageIn*/Out* column ("tresusageinmaxnode").
func tresUsage(u *api.Usage, lower string, sstat bool) string {
	rest, out := strings.CutPrefix(lower, "tresusageout")
	if !out {
		rest = strings.TrimPrefix(lower, "tresusagein")
	}
	kind, suffix := rest[:3], rest[3:]
	return u.TRESUsage(out, kind, suffix, sstat)
}
