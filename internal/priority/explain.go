package priority

import (
	"fmt"
	"math"
	"time"
)

// Term is one part of a job's priority: the normalised factor, its
// weight and the weighted contribution.
type Term struct {
	// Name is age, assoc, fairshare, jobsize, partition, qos, tres/NAME,
	// site or nice.
	Name                         string
	Factor, Weight, Contribution float64
}

// Explanation is every term of one job's priority and a sentence on what
// dominates it (scontrol show job and the simulator report show it).
type Explanation struct {
	JobID    uint32
	Priority uint32
	Terms    []Term
	Summary  string
}

// Explain returns every factor of the job with its weight and
// contribution, and a one-line explanation of what dominates.
func (c *Calculator) Explain(j *Job, now time.Time) Explanation {
	var f Factors
	c.Factors(j, now, &f)
	e := Explanation{JobID: j.ID, Priority: f.Priority}
	if j.Held {
		e.Priority = 0
		e.Summary = "held: priority 0, the job is not considered until it is released"
		return e
	}
	if f.Direct {
		e.Summary = fmt.Sprintf("priority %d was set explicitly (scontrol update or --priority); factors are not used", f.Priority)
		return e
	}
	cfg := c.cfg
	add := func(name string, factor float64, w float64) {
		e.Terms = append(e.Terms, Term{Name: name, Factor: factor, Weight: w, Contribution: factor * w})
	}
	add("age", f.Age, float64(cfg.WeightAge))
	add("assoc", f.Assoc, float64(cfg.WeightAssoc))
	add("fairshare", f.FairShare, float64(cfg.WeightFairshare))
	add("jobsize", f.JobSize, float64(cfg.WeightJobSize))
	add("partition", f.Partition, float64(cfg.WeightPartition))
	add("qos", f.QOS, float64(cfg.WeightQOS))
	for k, w := range cfg.WeightTRES {
		add("tres/"+w.Name, f.TRES[k], w.Weight)
	}
	e.Terms = append(e.Terms, Term{Name: "site", Factor: float64(f.Site), Weight: 1, Contribution: float64(f.Site)},
		Term{Name: "nice", Factor: float64(f.Nice), Weight: -1, Contribution: -float64(f.Nice)})
	e.Summary = c.summary(j, &e, now)
	return e
}

// summary names the term with the largest contribution and says why.
func (c *Calculator) summary(j *Job, e *Explanation, now time.Time) string {
	best := -1
	for k, t := range e.Terms {
		if t.Name == "nice" || t.Contribution <= 0 {
			continue
		}
		if best < 0 || t.Contribution > e.Terms[best].Contribution {
			best = k
		}
	}
	if best < 0 {
		return fmt.Sprintf("every weighted factor is 0, so the priority is %d and jobs run in submit order", e.Priority)
	}
	t := e.Terms[best]
	s := fmt.Sprintf("%s dominates (%.0f of %d): %s", t.Name, t.Contribution, e.Priority, c.why(j, t, now))
	if j.Nice > 0 {
		s += fmt.Sprintf("; nice %d lowers it", j.Nice)
	}
	return s
}

func (c *Calculator) why(j *Job, t Term, now time.Time) string {
	switch t.Name {
	case "fairshare":
		return c.whyFairShare(j)
	case "age":
		return fmt.Sprintf("the job has been eligible for %v (PriorityMaxAge %s)", now.Sub(j.AccrueTime).Round(time.Minute), humanDuration(c.cfg.MaxAge))
	case "jobsize":
		favor := "large"
		if c.cfg.FavorSmall {
			favor = "small"
		}
		return fmt.Sprintf("the job asks %d nodes and %d CPUs of %d and %d; job size favours %s jobs",
			j.Nodes, j.CPUs, c.cluster.Nodes, c.cluster.CPUs, favor)
	case "partition":
		return fmt.Sprintf("partition %s has PriorityJobFactor %.0f of the largest %.0f", j.Partition, t.Factor*c.maxPart, c.maxPart)
	case "qos":
		return fmt.Sprintf("QOS %s has priority %.0f of the largest %.0f", j.QOS, t.Factor*c.maxQOS, c.maxQOS)
	case "assoc":
		return fmt.Sprintf("association %s/%s has priority %.0f of the largest %.0f", j.Account, j.User, t.Factor*c.maxAssoc, c.maxAssoc)
	case "site":
		return "an administrator set the job's site factor"
	}
	return fmt.Sprintf("the job asks %.0f%% of the partition's %s", t.Factor*100, t.Name[len("tres/"):])
}

// whyFairShare compares the account's usage with its share: U/S over the
// decay half-life (1/LevelFS under Fair Tree).
func (c *Calculator) whyFairShare(j *Job) string {
	tr := c.tree
	tr.syncRecords()
	a := &tr.Assocs[j.Assoc]
	acct := a
	if a.IsUser() && a.Parent >= 0 {
		acct = &tr.Assocs[a.Parent]
	}
	window := "in total (no decay)"
	if hl := c.cfg.DecayHalfLife; hl > 0 {
		window = "in the last " + humanDuration(hl)
	}
	use := "none of its share"
	if acct.NormShares > 0 && acct.EffectvUsage > 0 {
		use = fmt.Sprintf("%.2fx its share", acct.EffectvUsage/acct.NormShares)
	}
	rank := ""
	if c.cfg.Flags.FairTree() && a.IsUser() {
		n := tr.UserCount()
		rank = fmt.Sprintf("; user %s ranks %d of %d", a.User, n-int(math.Round(a.FairShare*float64(n)))+1, n)
	}
	return fmt.Sprintf("account %s has used %s %s%s", acct.Account, use, window, rank)
}

func humanDuration(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		if n := d / (24 * time.Hour); n != 1 {
			return fmt.Sprintf("%d days", n)
		}
		return "day"
	}
	return d.String()
}
