package sched

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
