package sched

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/resv"
)

// License is one cluster license: Licenses=matlab:4 in slurm.conf (a
// count of 1 when omitted). Licenses are global, not per node: a job
// holds its licenses while it runs or is suspended (Slurm frees them only
// when the job ends), and a job that cannot get them waits with reason
// Licenses without blocking its partition (SEMANTICS §4.2).
type License struct {
	Name  string
	Total int64
}

// LicenseReq is one license a job asks for: `-L matlab:2`.
type LicenseReq struct {
	Name  string
	Count int64
}

// LicensesFromConf converts slurm.conf's Licenses= entries.
func LicensesFromConf(ls []conf.License) []License {
	out := make([]License, 0, len(ls))
	for _, l := range ls {
		out = append(out, License{Name: l.Name, Total: l.Count})
	}
	return out
}

// LicenseIndex returns the index of license name in Cluster.Licenses, or -1.
func (cl *Cluster) LicenseIndex(name string) int {
	for i := range cl.Licenses {
		if cl.Licenses[i].Name == name {
			return i
		}
	}
	return -1
}

// ParseLicenseReq parses -L/--licenses: `name[:count]` (or `name*count`)
// separated by commas; a repeated name adds up. Slurm's '|' (any one of)
// form is not supported and is rejected.
func ParseLicenseReq(s string) ([]LicenseReq, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	ls, err := resv.ParseLicenses(s)
	if err != nil {
		return nil, fmt.Errorf("licenses %q: %w", s, ErrInvalidLicense)
	}
	out := make([]LicenseReq, len(ls))
	for i, l := range ls {
		out[i] = LicenseReq{Name: l.Name, Count: l.Count}
	}
	return out, nil
}

// checkLicenses rejects a job asking for a license the cluster does not
// have, or for more than are configured (Slurm's "Invalid license
// specification" at submission).
func (st *State) checkLicenses(j *Job, _ Submitter) error {
	for _, l := range j.Req.Licenses {
		i := st.Cluster.LicenseIndex(l.Name)
		if i < 0 || l.Count > st.Cluster.Licenses[i].Total {
			return reject(ErrInvalidLicense)
		}
	}
	return nil
}

// licensesInUse returns, per cluster license, the count held by running
// and suspended jobs (suspension does not free licenses).
func (st *State) licensesInUse() []int64 {
	used := make([]int64, len(st.Cluster.Licenses))
	if len(used) == 0 {
		return used
	}
	for _, j := range st.jobList {
		if !isActive(j) {
			continue
		}
		for _, l := range j.Req.Licenses {
			if i := st.Cluster.LicenseIndex(l.Name); i >= 0 {
				used[i] += l.Count
			}
		}
	}
	return used
}

// LicenseInfo is one row of `scontrol show licenses`.
type LicenseInfo struct {
	Name string
	// Total is the configured count, Used the count held by running and
	// suspended jobs, Reserved the count held by active reservations.
	Total, Used, Reserved int64
}

// Free is what a job outside any reservation could take now.
func (l LicenseInfo) Free() int64 { return max(l.Total-l.Used-l.Reserved, 0) }

// Licenses returns the cluster's licenses with their use at now, sorted
// by name as scontrol show lic lists them (oracle: Licenses=matlab:2,
// zeta:1,fluent:1 shows fluent, matlab, zeta).
func (st *State) Licenses(now time.Time) []LicenseInfo {
	used := st.licensesInUse()
	resvd := st.reservedLicenses(now, nil)
	out := make([]LicenseInfo, len(st.Cluster.Licenses))
	for i, l := range st.Cluster.Licenses {
		out[i] = LicenseInfo{Name: l.Name, Total: l.Total, Used: used[i], Reserved: resvd[i]}
	}
	slices.SortStableFunc(out, func(a, b LicenseInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// FormatLicenses renders `scontrol show licenses` (Slurm 22.05's layout:
// `LicenseName=NAME` then an indented `Total= Used= Free= Reserved=
// Remote=no` line, or both on one line with -o); name selects one license
// ("" = all). An unknown name prints Slurm's "No licenses configured in
// Slurm" only when none are configured, else nothing.
func FormatLicenses(ls []LicenseInfo, name string, oneLiner bool) string {
	if len(ls) == 0 {
		return "No licenses configured in Slurm.\n"
	}
	var b strings.Builder
	for _, l := range ls {
		if name != "" && l.Name != name {
			continue
		}
		sep := "\n    "
		if oneLiner {
			sep = " "
		}
		fmt.Fprintf(&b, "LicenseName=%s%sTotal=%d Used=%d Free=%d Reserved=%d Remote=no\n", l.Name, sep, l.Total, l.Used,
			l.Free(), l.Reserved)
	}
	return b.String()
}

// addLicenseTRES adds j's licenses to a TRES vector in Policy.TRES order
// (license/NAME), so that GrpTRES=license/matlab=2 and the like apply.
func addLicenseTRES(p *Policy, j *Job, out []int64) {
	if p == nil {
		return
	}
	for _, l := range j.Req.Licenses {
		if i := p.tresIdx("license/" + l.Name); i >= 0 && int(i) < len(out) {
			out[i] += l.Count
		}
	}
}

// FormatLicenseReq prints a job's licenses as scontrol show job does
// (`Licenses=matlab:2,ansys:1`), "(null)" when none.
func FormatLicenseReq(ls []LicenseReq) string {
	if len(ls) == 0 {
		return "(null)"
	}
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l.Name + ":" + strconv.FormatInt(l.Count, 10)
	}
	return strings.Join(parts, ",")
}
