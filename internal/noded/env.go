package noded

import (
	"fmt"
	"os/user"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// ExportSpec is sbatch's --export value parsed: ALL, NONE, or a list of
// variables (NAME to pass the submission value, NAME=VALUE to set one),
// optionally after ALL.
type ExportSpec struct {
	All  bool
	None bool
	Vars []ExportVar
}

// ExportVar is one variable named by --export.
type ExportVar struct {
	Name     string
	Value    string
	HasValue bool
}

// ParseExport parses a --export value. The empty string means ALL, Slurm's
// default.
func ParseExport(s string) (ExportSpec, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "ALL") {
		return ExportSpec{All: true}, nil
	}
	if strings.EqualFold(s, "NONE") || strings.EqualFold(s, "NIL") {
		return ExportSpec{None: true}, nil
	}
	var spec ExportSpec
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
			continue
		case strings.EqualFold(item, "ALL"):
			spec.All = true
			continue
		case strings.EqualFold(item, "NONE"):
			return ExportSpec{}, fmt.Errorf("--export=%s: NONE cannot be combined with variables", s)
		}
		name, value, has := strings.Cut(item, "=")
		if !validEnvName(name) {
			return ExportSpec{}, fmt.Errorf("--export=%s: invalid variable name %q", s, name)
		}
		spec.Vars = append(spec.Vars, ExportVar{Name: name, Value: value, HasValue: has})
	}
	return spec, nil
}

func validEnvName(n string) bool {
	if n == "" {
		return false
	}
	for i, c := range n {
		ok := c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (i > 0 && c >= '0' && c <= '9')
		if !ok {
			return false
		}
	}
	return true
}

// exportedEnv applies spec to the submission environment, following
// sbatch(1): SLURM_* variables always pass; ALL passes everything and, for
// ALL,NAME=VALUE, the submission value of NAME wins over the one given;
// without ALL only the named variables pass.
func exportedEnv(submit []string, spec ExportSpec) map[string]string {
	in := envMap(submit)
	out := map[string]string{}
	for k, v := range in {
		if spec.All || strings.HasPrefix(k, "SLURM_") {
			out[k] = v
		}
	}
	for _, ev := range spec.Vars {
		cur, inSubmit := in[ev.Name]
		switch {
		case spec.All && inSubmit:
			// The caller's environment takes precedence under ALL.
		case ev.HasValue:
			out[ev.Name] = ev.Value
		case inSubmit:
			out[ev.Name] = cur
		}
	}
	return out
}

func envMap(list []string) map[string]string {
	m := make(map[string]string, len(list))
	for _, kv := range list {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			m[k] = v
		}
	}
	return m
}

// jobEnvContext is what BuildJobEnv needs besides the launch request.
type jobEnvContext struct {
	Node      string
	WorkDir   string
	StartTime time.Time
}

// BuildJobEnv returns the batch script's environment (sorted KEY=VALUE):
// the exported submission environment, overlaid with the variables
// slurmstepd sets for a batch job.
func BuildJobEnv(req *api.LaunchRequest, node string, start time.Time) ([]string, error) {
	spec, err := ParseExport(req.Export)
	if err != nil {
		return nil, err
	}
	env := exportedEnv(req.Environment, spec)
	for k, v := range slurmVars(req, node, start) {
		env[k] = v
	}
	if req.JobToken != "" {
		env[api.JobTokenEnv] = req.JobToken
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out, nil
}

func itoa[T ~int | ~int64 | ~uint32](v T) string { return strconv.FormatInt(int64(v), 10) }

// slurmVars are the SLURM_* (and GPU) variables of a batch job, see the
// OUTPUT ENVIRONMENT VARIABLES section of sbatch(1).
func slurmVars(req *api.LaunchRequest, node string, start time.Time) map[string]string {
	id := itoa(req.JobID)
	nnodes, ntasks, cpus := max(req.NNodes, 1), max(req.NTasks, 1), max(req.CPUs, 1)
	nodelist := req.NodeList
	if nodelist == "" {
		nodelist = node
	}
	v := map[string]string{
		"ENVIRONMENT":             "BATCH",
		"SLURM_JOB_ID":            id,
		"SLURM_JOBID":             id,
		"SLURM_JOB_NAME":          req.Name,
		"SLURM_JOB_NODELIST":      nodelist,
		"SLURM_NODELIST":          nodelist,
		"SLURM_NNODES":            itoa(nnodes),
		"SLURM_JOB_NUM_NODES":     itoa(nnodes),
		"SLURM_NTASKS":            itoa(ntasks),
		"SLURM_NPROCS":            itoa(ntasks),
		"SLURM_CPUS_ON_NODE":      itoa(cpus),
		"SLURM_JOB_CPUS_PER_NODE": itoa(cpus),
		"SLURM_JOB_PARTITION":     req.Partition,
		"SLURM_JOB_ACCOUNT":       req.Account,
		"SLURM_JOB_QOS":           req.QOS,
		"SLURM_SUBMIT_DIR":        req.SubmitDir,
		"SLURM_SUBMIT_HOST":       req.SubmitHost,
		"SLURM_JOB_USER":          req.User,
		"SLURM_JOB_UID":           itoa(req.UID),
		"SLURM_JOB_GID":           itoa(req.GID),
		"SLURMD_NODENAME":         node,
		"SLURM_TOPOLOGY_ADDR":     node,
		"SLURM_NODEID":            "0",
		"SLURM_PROCID":            "0",
		"SLURM_LOCALID":           "0",
		"SLURM_GTIDS":             "0",
		"SLURM_TASKS_PER_NODE":    itoa(ntasks),
		"SLURM_JOB_START_TIME":    itoa(start.Unix()),
	}
	if req.CPUsPerNode != "" {
		v["SLURM_JOB_CPUS_PER_NODE"], v["SLURM_TASKS_PER_NODE"] = req.CPUsPerNode, req.TasksPerNode
	}
	if req.Group != "" {
		v["SLURM_JOB_GROUP"] = req.Group
	} else if g, err := user.LookupGroupId(itoa(req.GID)); err == nil {
		v["SLURM_JOB_GROUP"] = g.Name
	}
	if req.ClusterName != "" {
		v["SLURM_CLUSTER_NAME"] = req.ClusterName
	}
	if req.Export != "" {
		v["SLURM_EXPORT_ENV"] = req.Export
	}
	if req.CPUsPerTask > 0 {
		v["SLURM_CPUS_PER_TASK"] = itoa(req.CPUsPerTask)
	}
	if req.MemoryMB > 0 {
		v["SLURM_MEM_PER_NODE"] = itoa(req.MemoryMB)
	}
	if req.TimeLimitSec > 0 {
		v["SLURM_JOB_END_TIME"] = itoa(start.Unix() + req.TimeLimitSec)
	}
	if req.RestartCount > 0 {
		v["SLURM_RESTART_COUNT"] = itoa(req.RestartCount)
	}
	if req.ArrayJobID != 0 {
		v["SLURM_ARRAY_JOB_ID"] = itoa(req.ArrayJobID)
		v["SLURM_ARRAY_TASK_ID"] = itoa(req.ArrayTaskID)
		v["SLURM_ARRAY_TASK_COUNT"] = itoa(req.ArrayTaskCount)
		v["SLURM_ARRAY_TASK_MIN"] = itoa(req.ArrayTaskMin)
		v["SLURM_ARRAY_TASK_MAX"] = itoa(req.ArrayTaskMax)
		v["SLURM_ARRAY_TASK_STEP"] = itoa(max(req.ArrayTaskStep, 1))
	}
	if len(req.GPUs) > 0 {
		ids := make([]string, len(req.GPUs))
		for i, g := range req.GPUs {
			ids[i] = strconv.Itoa(g)
		}
		list := strings.Join(ids, ",")
		v["CUDA_VISIBLE_DEVICES"] = list
		v["GPU_DEVICE_ORDINAL"] = list
		v["SLURM_JOB_GPUS"] = list
		v["SLURM_GPUS_ON_NODE"] = itoa(len(req.GPUs))
	}
	return v
}
