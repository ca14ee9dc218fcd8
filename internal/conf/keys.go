package conf

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// setter applies one cluster key's value to the configuration.
type setter func(p *parser, pr pair) error

// clusterKey is one cluster-wide key Sluice acts on.
type clusterKey struct {
	name string
	set  setter
}

func strKey(f func(*Config) *string) setter {
	return func(p *parser, pr pair) error { *f(p.cfg) = pr.Value; return nil }
}

func intKey(lo, hi int64, f func(*Config) *int) setter {
	return func(p *parser, pr pair) error {
		n, err := parseInt(pr.Value, lo, hi)
		*f(p.cfg) = int(n)
		return err
	}
}

func int64Key(lo, hi int64, f func(*Config) *int64) setter {
	return func(p *parser, pr pair) error {
		n, err := parseInt(pr.Value, lo, hi)
		*f(p.cfg) = n
		return err
	}
}

func secKey(lo, hi int64, f func(*Config) *time.Duration) setter {
	return func(p *parser, pr pair) error {
		d, err := parseSeconds(pr.Value, lo, hi)
		*f(p.cfg) = d
		return err
	}
}

// minutesKey sets a count of minutes up to 65533, or UNLIMITED
// (OverTimeLimit, ResvOverRun).
func minutesKey(f func(*Config) *time.Duration) setter {
	return func(p *parser, pr pair) error {
		n, err := parseLimit(pr.Value, 0, 65533)
		if n == Unlimited {
			*f(p.cfg) = infinite
		} else {
			*f(p.cfg) = time.Duration(n) * time.Minute
		}
		return err
	}
}

func timeKey(f func(*Config) *time.Duration) setter {
	return func(p *parser, pr pair) error {
		d, err := parseTime(pr.Value)
		*f(p.cfg) = d
		return err
	}
}

func boolKey(f func(*Config) *bool) setter {
	return func(p *parser, pr pair) error {
		b, err := parseBool(pr.Value)
		*f(p.cfg) = b
		return err
	}
}

func listKey(f func(*Config) *[]string) setter {
	return func(p *parser, pr pair) error { *f(p.cfg) = splitList(pr.Value); return nil }
}

// prologFlags are the PrologFlags slurm.conf documents, lower-cased.
var prologFlags = []string{"alloc", "contain", "deferbatch", "forcerequeueonfail", "nohold", "runinjob", "serial", "x11"}

// ContainJobs reports PrologFlags=Contain (or X11, which sets it): every
// job gets a container on its nodes at allocation, listed by sacct as the
// job's extern step.
func (c *Config) ContainJobs() bool {
	for _, f := range c.PrologFlags {
		if strings.EqualFold(f, "contain") || strings.EqualFold(f, "x11") {
			return true
		}
	}
	return false
}

// clusterKeys are the cluster keys Sluice reads, by lower-case name; the
// table is built on first use, not at program start (every command of the
// binary links this package, few read a slurm.conf).
var clusterKeys = sync.OnceValue(buildClusterKeys)

func buildClusterKeys() map[string]clusterKey {
	clusterKeys := map[string]clusterKey{}
	add := func(name string, s setter) { clusterKeys[strings.ToLower(name)] = clusterKey{name, s} }
	add("ClusterName", func(p *parser, pr pair) error {
		if pr.Value == "" {
			return fmt.Errorf("empty cluster name")
		}
		// slurmctld lower-cases the cluster name (the accounting database
		// keys on it), with a message.
		p.cfg.ClusterName = strings.ToLower(pr.Value)
		if p.cfg.ClusterName != pr.Value {
			p.warnf(pr, "cluster name %s is used in lower case: %s", quote(pr.Value), p.cfg.ClusterName)
		}
		return nil
	})
	add("SlurmctldHost", func(p *parser, pr pair) error {
		h, err := parseControllerHost(pr.Value)
		p.cfg.SlurmctldHosts = append(p.cfg.SlurmctldHosts, h)
		return err
	})
	add("ControlMachine", func(p *parser, pr pair) error {
		p.cfg.SlurmctldHosts = append([]ControllerHost{{Name: pr.Value, Addr: pr.Value}}, p.cfg.SlurmctldHosts...)
		p.warnf(pr, "deprecated; use SlurmctldHost")
		return nil
	})
	add("BackupController", func(p *parser, pr pair) error {
		p.cfg.SlurmctldHosts = append(p.cfg.SlurmctldHosts, ControllerHost{Name: pr.Value, Addr: pr.Value})
		p.warnf(pr, "deprecated; use a second SlurmctldHost")
		return nil
	})
	add("ControlAddr", func(p *parser, pr pair) error {
		p.controlAddr = pr.Value
		return nil
	})
	add("SlurmctldPort", func(p *parser, pr pair) error {
		lo, hi, found := strings.Cut(pr.Value, "-")
		a, err := parseInt(lo, 1, 65535)
		if err != nil {
			return err
		}
		p.cfg.SlurmctldPort, p.cfg.SlurmctldPortCount = int(a), 1
		if found {
			b, err := parseInt(hi, a, 65535)
			if err != nil {
				return err
			}
			p.cfg.SlurmctldPortCount = int(b-a) + 1
		}
		return nil
	})
	add("SlurmdPort", intKey(1, 65535, func(c *Config) *int { return &c.SlurmdPort }))
	add("StateSaveLocation", strKey(func(c *Config) *string { return &c.StateSaveLocation }))
	add("SlurmUser", strKey(func(c *Config) *string { return &c.SlurmUser }))
	add("SlurmdSpoolDir", strKey(func(c *Config) *string { return &c.SlurmdSpoolDir }))
	add("SelectType", func(p *parser, pr pair) error {
		v := strings.ToLower(pr.Value)
		switch v {
		case "select/cons_tres":
		case "select/cons_res", "select/linear", "select/cray_aries":
			p.warnf(pr, "%s: Sluice allocates as select/cons_tres", pr.Value)
		default:
			return fmt.Errorf("invalid value %s", quote(pr.Value))
		}
		p.cfg.SelectType = v
		return nil
	})
	add("SelectTypeParameters", func(p *parser, pr pair) error {
		s, err := parseSelectTypeParameters(pr.Value)
		p.cfg.SelectTypeParameters = s
		return err
	})
	add("GresTypes", func(p *parser, pr pair) error {
		p.cfg.GresTypes = nil
		for _, g := range splitList(pr.Value) {
			p.cfg.GresTypes = append(p.cfg.GresTypes, strings.ToLower(g))
		}
		return nil
	})
	addPriorityKeys(add)
	addPreemptKeys(add)
	add("SchedulerType", func(p *parser, pr pair) error {
		v := strings.ToLower(pr.Value)
		if v != "sched/backfill" && v != "sched/builtin" {
			return fmt.Errorf("invalid value %s (sched/backfill or sched/builtin)", quote(pr.Value))
		}
		p.cfg.SchedulerType = v
		return nil
	})
	add("PrologFlags", func(p *parser, pr pair) error {
		p.cfg.PrologFlags = splitList(pr.Value)
		for _, f := range p.cfg.PrologFlags {
			if !slices.Contains(prologFlags, strings.ToLower(f)) {
				return fmt.Errorf("invalid PrologFlags value %q (valid: Alloc, Contain, DeferBatch, ForceRequeueOnFail, NoHold, RunInJob, Serial, X11)", f)
			}
		}
		return nil
	})
	add("SchedulerParameters", func(p *parser, pr pair) error {
		s, err := parseSchedulerParameters(pr.Value, func(m string) { p.warnf(pr, "%s", m) })
		p.cfg.SchedulerParameters = s
		if len(s.Unused) > 0 {
			p.warnf(pr, "options not used by Sluice (kept): %s", strings.Join(s.Unused, ","))
		}
		return err
	})
	add("DependencyParameters", func(p *parser, pr pair) error {
		p.cfg.DependencyParameters = splitList(pr.Value)
		return nil
	})
	add("SchedulerTimeSlice", secKey(5, 65533, func(c *Config) *time.Duration { return &c.SchedulerTimeSlice }))
	addAccountingKeys(add)
	addAuthKeys(add) // authalt.go
	add("KillWait", secKey(0, 65533, func(c *Config) *time.Duration { return &c.KillWait }))
	add("JobAcctGatherType", strKey(func(c *Config) *string { return &c.JobAcctGatherType }))
	add("JobAcctGatherFrequency", func(p *parser, pr pair) error {
		d, err := parseGatherFrequency(pr.Value)
		p.cfg.JobAcctGatherFrequency = d
		return err
	})
	add("OverTimeLimit", minutesKey(func(c *Config) *time.Duration { return &c.OverTimeLimit }))
	add("ResvOverRun", minutesKey(func(c *Config) *time.Duration { return &c.ResvOverRun }))
	add("MinJobAge", secKey(0, 1<<31, func(c *Config) *time.Duration { return &c.MinJobAge }))
	add("MaxJobCount", intKey(1, 1<<31, func(c *Config) *int { return &c.MaxJobCount }))
	add("MaxArraySize", intKey(0, 4000001, func(c *Config) *int { return &c.MaxArraySize }))
	add("FirstJobId", func(p *parser, pr pair) error {
		n, err := parseInt(pr.Value, 1, 1<<32-1)
		p.cfg.FirstJobId = uint32(n)
		return err
	})
	add("MaxJobId", func(p *parser, pr pair) error {
		n, err := parseInt(pr.Value, 1, 0x7fffffff)
		p.cfg.MaxJobId = uint32(n)
		return err
	})
	add("InactiveLimit", secKey(0, 65533, func(c *Config) *time.Duration { return &c.InactiveLimit }))
	add("MessageTimeout", secKey(1, 100, func(c *Config) *time.Duration { return &c.MessageTimeout }))
	add("SlurmdTimeout", secKey(0, 65533, func(c *Config) *time.Duration { return &c.SlurmdTimeout }))
	add("SlurmctldTimeout", secKey(0, 65533, func(c *Config) *time.Duration { return &c.SlurmctldTimeout }))
	add("ResumeTimeout", secKey(0, 1<<31, func(c *Config) *time.Duration { return &c.ResumeTimeout }))
	add("ReturnToService", intKey(0, 2, func(c *Config) *int { return &c.ReturnToService }))
	add("WaitTime", secKey(0, 65533, func(c *Config) *time.Duration { return &c.WaitTime }))
	add("JobRequeue", func(p *parser, pr pair) error {
		n, err := parseInt(pr.Value, 0, 1)
		p.cfg.JobRequeue = n == 1
		return err
	})
	add("EnforcePartLimits", func(p *parser, pr pair) error {
		switch strings.ToUpper(pr.Value) {
		case "NO", "0":
			p.cfg.EnforcePartLimits = EnforcePartNo
		case "ANY":
			p.cfg.EnforcePartLimits = EnforcePartAny
		case "ALL", "YES", "1":
			p.cfg.EnforcePartLimits = EnforcePartAll
		default:
			return fmt.Errorf("invalid value %s (NO, ANY or ALL)", quote(pr.Value))
		}
		return nil
	})
	add("DefMemPerCPU", int64Key(0, 1<<50, func(c *Config) *int64 { return &c.DefMemPerCPU }))
	add("DefMemPerNode", int64Key(0, 1<<50, func(c *Config) *int64 { return &c.DefMemPerNode }))
	add("MaxMemPerCPU", int64Key(0, 1<<50, func(c *Config) *int64 { return &c.MaxMemPerCPU }))
	add("MaxMemPerNode", int64Key(0, 1<<50, func(c *Config) *int64 { return &c.MaxMemPerNode }))
	add("DefMemPerGPU", int64Key(0, 1<<50, func(c *Config) *int64 { return &c.DefMemPerGPU }))
	add("DefCpuPerGPU", intKey(0, 1<<20, func(c *Config) *int { return &c.DefCpuPerGPU }))
	add("MaxTasksPerNode", intKey(1, 65533, func(c *Config) *int { return &c.MaxTasksPerNode }))
	add("MaxStepCount", intKey(1, 1<<31, func(c *Config) *int { return &c.MaxStepCount }))
	add("Licenses", func(p *parser, pr pair) error {
		l, err := parseLicenses(pr.Value)
		p.cfg.Licenses = l
		return err
	})
	add("JobSubmitPlugins", func(p *parser, pr pair) error {
		p.cfg.JobSubmitPlugins = splitList(pr.Value)
		if len(p.cfg.JobSubmitPlugins) > 0 {
			p.warnf(pr, "job_submit plugins are not run by Sluice")
		}
		return nil
	})
	add("TmpFS", strKey(func(c *Config) *string { return &c.TmpFS }))
	add("DisableRootJobs", boolKey(func(c *Config) *bool { return &c.DisableRootJobs }))
	add("TrackWCKey", boolKey(func(c *Config) *bool { return &c.TrackWCKey }))
	add("Prolog", strKey(func(c *Config) *string { return &c.Prolog }))
	add("Epilog", strKey(func(c *Config) *string { return &c.Epilog }))
	add("PrologSlurmctld", strKey(func(c *Config) *string { return &c.PrologSlurmctld }))
	add("EpilogSlurmctld", strKey(func(c *Config) *string { return &c.EpilogSlurmctld }))
	add("TaskProlog", strKey(func(c *Config) *string { return &c.TaskProlog }))
	add("TaskEpilog", strKey(func(c *Config) *string { return &c.TaskEpilog }))
	add("PrologEpilogTimeout", intKey(0, 65535, func(c *Config) *int { return &c.PrologEpilogTimeout }))
	add("MailProg", strKey(func(c *Config) *string { return &c.MailProg }))
	add("MetricsType", strKey(func(c *Config) *string { return &c.MetricsType }))
	add("PrivateData", listKey(func(c *Config) *[]string { return &c.PrivateData }))
	return clusterKeys
}

func addPriorityKeys(add func(string, setter)) {
	w := func(f func(*PriorityConfig) *int64) setter {
		return func(p *parser, pr pair) error {
			n, err := parseInt(pr.Value, 0, 1<<32-1)
			*f(&p.cfg.Priority) = n
			return err
		}
	}
	add("PriorityType", func(p *parser, pr pair) error {
		v := strings.ToLower(pr.Value)
		if v != "priority/multifactor" && v != "priority/basic" {
			return fmt.Errorf("invalid value %s (priority/multifactor or priority/basic)", quote(pr.Value))
		}
		p.cfg.Priority.Type = v
		return nil
	})
	add("PriorityWeightAge", w(func(c *PriorityConfig) *int64 { return &c.WeightAge }))
	add("PriorityWeightAssoc", w(func(c *PriorityConfig) *int64 { return &c.WeightAssoc }))
	add("PriorityWeightFairshare", w(func(c *PriorityConfig) *int64 { return &c.WeightFairshare }))
	add("PriorityWeightJobSize", w(func(c *PriorityConfig) *int64 { return &c.WeightJobSize }))
	add("PriorityWeightPartition", w(func(c *PriorityConfig) *int64 { return &c.WeightPartition }))
	add("PriorityWeightQOS", w(func(c *PriorityConfig) *int64 { return &c.WeightQOS }))
	add("PriorityWeightTRES", func(p *parser, pr pair) error {
		wt, err := parseWeights(pr.Value)
		p.cfg.Priority.WeightTRESSpec, p.cfg.Priority.WeightTRES = pr.Value, wt
		return err
	})
	pt := func(f func(*PriorityConfig) *time.Duration) setter {
		return func(p *parser, pr pair) error {
			d, err := parseTime(pr.Value)
			*f(&p.cfg.Priority) = d
			return err
		}
	}
	add("PriorityDecayHalfLife", pt(func(c *PriorityConfig) *time.Duration { return &c.DecayHalfLife }))
	add("PriorityCalcPeriod", pt(func(c *PriorityConfig) *time.Duration { return &c.CalcPeriod }))
	add("PriorityMaxAge", pt(func(c *PriorityConfig) *time.Duration { return &c.MaxAge }))
	add("PriorityFavorSmall", func(p *parser, pr pair) error {
		b, err := parseBool(pr.Value)
		p.cfg.Priority.FavorSmall = b
		return err
	})
	add("PriorityUsageResetPeriod", func(p *parser, pr pair) error {
		u, err := parseUsageReset(pr.Value)
		p.cfg.Priority.UsageResetPeriod = u
		return err
	})
	add("PriorityFlags", func(p *parser, pr pair) error {
		f, err := parsePriorityFlags(pr.Value)
		p.cfg.Priority.Flags = f
		return err
	})
	add("PriorityParameters", func(p *parser, pr pair) error { p.cfg.Priority.Parameters = pr.Value; return nil })
	add("PrioritySiteFactorPlugin", func(p *parser, pr pair) error {
		p.cfg.Priority.SiteFactorPlugin = pr.Value
		if !strings.EqualFold(pr.Value, "site_factor/none") && pr.Value != "" {
			p.warnf(pr, "site factor plugins are not run by Sluice")
		}
		return nil
	})
	add("PrioritySiteFactorParameters", func(p *parser, pr pair) error { p.cfg.Priority.SiteFactorParameters = pr.Value; return nil })
	add("FairShareDampeningFactor", func(p *parser, pr pair) error {
		n, err := parseInt(pr.Value, 1, 65535)
		p.cfg.Priority.FairShareDampeningFactor = int(n)
		return err
	})
}

func addPreemptKeys(add func(string, setter)) {
	add("PreemptType", func(p *parser, pr pair) error {
		v := strings.ToLower(pr.Value)
		switch v {
		case "preempt/none", "preempt/partition_prio", "preempt/qos":
		default:
			return fmt.Errorf("invalid value %s (preempt/none, preempt/partition_prio or preempt/qos)", quote(pr.Value))
		}
		p.cfg.Preempt.Type = v
		p.preemptTypePos = pr.Pos
		return nil
	})
	add("PreemptMode", func(p *parser, pr pair) error {
		m, err := ParsePreemptMode(pr.Value)
		p.cfg.Preempt.Mode = m
		p.preemptModePos, p.preemptModeBad = pr.Pos, err != nil
		return err
	})
	add("PreemptExemptTime", func(p *parser, pr pair) error {
		d, err := parseTime(pr.Value)
		if d == infinite {
			d = 0 // -1 disables the option, equivalent to 0 (slurm.conf(5))
		}
		p.cfg.Preempt.ExemptTime = d
		return err
	})
	add("PreemptParameters", func(p *parser, pr pair) error { p.cfg.Preempt.Parameters = pr.Value; return nil })
}

func addAccountingKeys(add func(string, setter)) {
	a := func(p *parser) *AccountingConfig { return &p.cfg.Accounting }
	add("AccountingStorageType", func(p *parser, pr pair) error {
		return a(p).setStorageType(pr.Value, func(m string) { p.warnf(pr, "%s", m) })
	})
	add("AccountingStorageLoc", func(p *parser, pr pair) error {
		a(p).Loc, a(p).locSet = pr.Value, true
		return nil
	})
	add("AccountingStorageHost", func(p *parser, pr pair) error { a(p).Host = pr.Value; return nil })
	add("AccountingStorageBackupHost", func(p *parser, pr pair) error { a(p).BackupHost = pr.Value; return nil })
	add("AccountingStorageUser", func(p *parser, pr pair) error { a(p).User = pr.Value; return nil })
	add("AccountingStoragePass", func(p *parser, pr pair) error { a(p).Pass = pr.Value; return nil })
	add("AccountingStoragePort", func(p *parser, pr pair) error {
		n, err := parseInt(pr.Value, 1, 65535)
		a(p).Port = int(n)
		return err
	})
	add("AccountingStorageEnforce", func(p *parser, pr pair) error {
		e, err := parseEnforce(pr.Value)
		a(p).Enforce = e
		return err
	})
	add("AccountingStorageTRES", func(p *parser, pr pair) error {
		t, err := parseTrackedTRES(pr.Value)
		a(p).TRES = t
		return err
	})
	add("AccountingStoreFlags", func(p *parser, pr pair) error { a(p).StoreFlags = splitList(pr.Value); return nil })
}

// parseControllerHost reads "name" or "name(addr)".
func parseControllerHost(v string) (ControllerHost, error) {
	name, rest, paren := strings.Cut(v, "(")
	if name == "" {
		return ControllerHost{}, fmt.Errorf("empty host name")
	}
	if !paren {
		return ControllerHost{Name: name, Addr: name}, nil
	}
	addr, ok := strings.CutSuffix(rest, ")")
	if !ok || addr == "" || strings.ContainsAny(addr, "()") {
		return ControllerHost{}, fmt.Errorf("invalid host %s (expected name or name(address))", quote(v))
	}
	return ControllerHost{Name: name, Addr: addr}, nil
}

// parseLicenses reads "matlab:4,ansys:2,foo" (count 1 when omitted).
// Slurm also accepts "name*count".
func parseLicenses(v string) ([]License, error) {
	var out []License
	for _, w := range splitList(v) {
		name, cnt, found := strings.Cut(w, ":")
		if !found {
			name, cnt, found = strings.Cut(w, "*")
		}
		l := License{Name: name, Count: 1}
		if name == "" {
			return nil, fmt.Errorf("invalid license %s", quote(w))
		}
		if found {
			n, err := parseInt(cnt, 0, 1<<31)
			if err != nil {
				return nil, fmt.Errorf("license %s: %v", name, err)
			}
			l.Count = n
		}
		out = append(out, l)
	}
	return out, nil
}

// parseGatherFrequency reads JobAcctGatherFrequency: a number of seconds
// (the task period) or a list of type=seconds items of which Sluice uses
// task (energy, network and filesystem are not gathered).
func parseGatherFrequency(v string) (time.Duration, error) {
	d := 30 * time.Second
	for _, item := range splitList(v) {
		k, n, ok := strings.Cut(item, "=")
		if !ok {
			k, n = "task", item
		}
		sec, err := strconv.Atoi(n)
		if err != nil || sec < 0 {
			return d, fmt.Errorf("invalid JobAcctGatherFrequency %q", v)
		}
		switch strings.ToLower(k) {
		case "task":
			d = time.Duration(sec) * time.Second
		case "energy", "network", "filesystem":
		default:
			return d, fmt.Errorf("invalid JobAcctGatherFrequency %q (types: task, energy, network, filesystem)", v)
		}
	}
	return d, nil
}
