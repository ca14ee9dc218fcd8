package ctld

import (
	"fmt"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/duration"
)

// scontrol show config prints every key Slurm 24.11 prints, in its order
// (showConfigKeys): the value slurm.conf sets, written as slurmctld
// writes it back, else the value Slurm shows for the key unset. Keys
// Sluice does not act on are shown all the same (their effect is listed
// in docs/compatibility.md), so that scripts reading a key find it.

// showConfigVersion is the release scontrol show config names.
const showConfigVersion = "24.11.5"

// configEntries renders the configuration as of now; next is the next
// job id.
func configEntries(cfg *conf.Config, boot time.Time, next uint32) []api.ConfigEntry {
	set := make(map[string]string, len(cfg.Set))
	for k, v := range cfg.Set {
		set[strings.ToLower(k)] = v
	}
	out := make([]api.ConfigEntry, 0, len(showConfigKeys))
	for _, k := range showConfigKeys {
		key, v := k.key, k.unset
		switch key {
		case "BOOT_TIME":
			v = boot.Format("2006-01-02T15:04:05")
		case "NEXT_JOB_ID":
			v = strconv.FormatUint(uint64(next), 10)
		case "SLURM_CONF":
			v = cfg.Path
		case "StateSaveLocation":
			v = cfg.StateSaveLocation
		case "SlurmctldPort":
			v = strconv.Itoa(cfg.SlurmctldPort)
		case "ClusterName":
			v = cfg.ClusterName
		case "SLURM_VERSION":
			v = showConfigVersion
		case "MaxNodeCount":
			v = strconv.Itoa(len(cfg.Nodes))
		case "SlurmctldHost[0]":
			out = append(out, controllerHosts(cfg)...)
			continue
		case "DefMemPerCPU", "MaxMemPerNode":
			key, v = memPerKey(key, set)
		default:
			if raw, ok := set[strings.ToLower(key)]; ok {
				v = showConfigValue(cfg, key, raw)
			}
		}
		out = append(out, api.ConfigEntry{Key: key, Value: v})
	}
	return out
}

// controllerHosts are the SlurmctldHost[i] lines: "name(addr)".
func controllerHosts(cfg *conf.Config) []api.ConfigEntry {
	var out []api.ConfigEntry
	for i, h := range cfg.SlurmctldHosts {
		v := h.Name
		if h.Addr != "" {
			v += "(" + h.Addr + ")"
		}
		out = append(out, api.ConfigEntry{Key: fmt.Sprintf("SlurmctldHost[%d]", i), Value: v})
	}
	return out
}

// memPerKey is the default (DefMemPer*) or maximum (MaxMemPer*) memory
// line: Slurm prints the per-CPU key when slurm.conf sets it and the
// per-node one otherwise, UNLIMITED when neither is set.
func memPerKey(key string, set map[string]string) (string, string) {
	base := strings.TrimSuffix(strings.TrimSuffix(key, "CPU"), "Node") // DefMemPer, MaxMemPer
	if v, ok := set[strings.ToLower(base+"CPU")]; ok {
		return base + "CPU", v
	}
	if v, ok := set[strings.ToLower(base+"Node")]; ok {
		return base + "Node", v
	}
	return base + "Node", "UNLIMITED"
}

// showConfigValue writes a set value back as slurmctld does: times with
// their unit, plugins of type none as (null), users with their uid.
func showConfigValue(cfg *conf.Config, key, raw string) string {
	switch key {
	case "PriorityCalcPeriod":
		return duration.Format(cfg.Priority.CalcPeriod)
	case "PriorityDecayHalfLife":
		return duration.Format(cfg.Priority.DecayHalfLife)
	case "PriorityMaxAge":
		return duration.Format(cfg.Priority.MaxAge)
	case "SlurmUser", "SlurmdUser":
		uid := "0"
		if u, err := user.Lookup(raw); err == nil {
			uid = u.Uid
		}
		return raw + "(" + uid + ")"
	case "SelectTypeParameters", "EnforcePartLimits", "PreemptMode":
		return strings.ToUpper(raw)
	case "AccountingStorageTRES":
		return accountingTRES(raw)
	}
	if raw == "none" || strings.HasSuffix(raw, "/none") {
		return "(null)"
	}
	if _, err := strconv.Atoi(raw); err == nil {
		return raw + unitOf(key)
	}
	return raw
}

// unitOf is the unit slurmctld writes after key's number, as its unset
// value shows it ("KillWait = 30 sec"): " sec", " min", " usec",
// " percent", " nodes/min", or "".
func unitOf(key string) string {
	for _, k := range showConfigKeys {
		if k.key != key {
			continue
		}
		if num, unit, ok := strings.Cut(k.unset, " "); ok {
			if _, err := strconv.Atoi(num); err == nil {
				return " " + unit
			}
		}
		break
	}
	return ""
}

// accountingTRES is AccountingStorageTRES as slurmctld shows it: the TRES
// it always records, then the configured ones; gres/gpu brings
// gres/gpumem and gres/gpuutil (oracle: "gres/gpu" shows
// "cpu,mem,energy,node,billing,fs/disk,vmem,pages,gres/gpu,gres/gpumem,gres/gpuutil").
func accountingTRES(raw string) string {
	list := []string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"}
	have := map[string]bool{}
	for _, t := range list {
		have[t] = true
	}
	add := func(t string) {
		if !have[t] {
			have[t] = true
			list = append(list, t)
		}
	}
	for _, t := range strings.Split(strings.ToLower(raw), ",") {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		add(t)
		if t == "gres/gpu" {
			add("gres/gpumem")
			add("gres/gpuutil")
		}
	}
	return strings.Join(list, ",")
}

// controllerName is the primary SlurmctldHost's name.
func controllerName(cfg *conf.Config) string {
	if len(cfg.SlurmctldHosts) > 0 {
		return cfg.SlurmctldHosts[0].Name
	}
	return "localhost"
}
