package sched

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// oracleGPUConf is the oracle's cluster: four nodes of 8 CPUs and 4 GPUs,
// accounting limits enforced.
const oracleGPUConf = `ClusterName=o
SlurmctldHost=h
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
GresTypes=gpu
AccountingStorageEnforce=associations,limits,qos
AccountingStorageTRES=gres/gpu
NodeName=n[1-4] CPUs=8 RealMemory=64000 Gres=gpu:4
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE
`

// TestDenyOnLimitGRES: with DenyOnLimit a GPU request over a QOS limit is
// rejected with the limit's reason even when no node could hold it
// either: slurmctld checks the limits before the node configuration
// (checked on Slurm 24.11: `sbatch --gres=gpu:5` with GrpTRES=gres/gpu=4
// prints "QOSGrpGRES", not "Requested node configuration is not
// available"). Each family of GRES limit names its own reason.
func TestDenyOnLimitGRES(t *testing.T) {
	limits := []struct{ qos, limit, reason string }{
		{"grp", "GrpTRES=gres/gpu=4", "QOSGrpGRES"},
		{"mpj", "MaxTRESPerJob=gres/gpu=4", "QOSMaxGRESPerJob"},
		{"mpu", "MaxTRESPerUser=gres/gpu=4", "QOSMaxGRESPerUser"},
		{"mpa", "MaxTRESPerAccount=gres/gpu=4", "MaxGRESPerAccount"},
	}
	for _, l := range limits {
		for _, opts := range []string{"--gpus=5", "--gres=gpu:5", "-N 2 --gres=gpu:3", "--gpus=9",
			"--gres=gpu:5 -N 9", "--gres=gpu:5 --mem=999999", "--gres=gpu:5 -c 9", "--gres=gpu:5 -d afterok:999"} {
			t.Run(l.qos+" "+opts, func(t *testing.T) {
				h := gpuLimitHarness(t, l.qos, l.limit)
				next := h.st.NextJobID
				_, err := h.submit("alice", "-q "+l.qos+" "+opts)
				var se *SubmitError
				if !errors.As(err, &se) || string(se.Reason) != l.reason || !errors.Is(err, ErrAccountingPolicy) {
					t.Fatalf("err %v, want %s", err, l.reason)
				}
				if h.st.NextJobID != next || len(h.st.Jobs()) != 0 {
					t.Fatalf("a limit rejection used a job id or left a job")
				}
			})
		}
	}
}

// TestDenyOnLimitMaxGRESPerNode: MaxTRESPerNode counts the GPUs on each
// node, so --gpus=4 over two nodes passes where --gpus=3 on one does not.
func TestDenyOnLimitMaxGRESPerNode(t *testing.T) {
	for _, c := range []struct {
		opts   string
		reject bool
	}{
		{"--gres=gpu:3", true}, {"--gpus=3", true}, {"--gres=gpu:5", true},
		{"-N 2 --gpus=4", false}, {"--gres=gpu:2", false},
	} {
		h := gpuLimitHarness(t, "mpn", "MaxTRESPerNode=gres/gpu=2")
		_, err := h.submit("alice", "-q mpn "+c.opts)
		var se *SubmitError
		if c.reject != (err != nil) || c.reject && (!errors.As(err, &se) || se.Reason != "QOSMaxGRESPerNode") {
			t.Errorf("%s: err %v, want reject %v", c.opts, err, c.reject)
		}
	}
}

func gpuLimitHarness(t *testing.T, qos, limit string) *harness {
	h := newHarness(t, oracleGPUConf)
	h.sacctmgr(fmt.Sprintf(`sacctmgr -i add account research
sacctmgr -i add user alice Account=research
sacctmgr -i add qos %s Flags=DenyOnLimit %s
sacctmgr -i modify user alice set QOS+=%s`, qos, limit, qos))
	return h
}

// TestSubmitJobIDUse follows slurmctld 24.11 (checked on the oracle):
// rejections found before the job record exists use no job id (bad
// partition, feature, GRES name, limits); a bad reservation or dependency
// uses one up and leaves nothing; a request no node can satisfy uses one
// and stays FAILED with Reason=BadConstraints and exit code 1, with
// slurmctld's explanation for one node's CPUs or memory.
func TestSubmitJobIDUse(t *testing.T) {
	for _, c := range []struct {
		opts   string
		want   error
		used   JobID
		kept   bool
		detail string
	}{
		{"-p nosuch", ErrInvalidPartition, 0, false, "invalid partition specified: nosuch"},
		{"-C nofeat", ErrInvalidFeature, 0, false, ""},
		{"--gres=foo:1", ErrInvalidGres, 0, false, ""},
		{"--gres=bar:1", ErrNodeConfig, 1, true, ""}, // in GresTypes, on no node
		{"--gres=gpu:a100:1", ErrNodeConfig, 1, true, ""},
		{"--gpus=a100:1", ErrNodeConfig, 1, true, ""},
		{"-q grp --gres=gpu:5 -N 9", ErrAccountingPolicy, 0, false, ""},
		{"-d afterok:999", ErrDependency, 1, false, ""},
		{"-d afterok:abc", ErrDependency, 1, false, ""},
		{"-N 9", ErrNodeConfig, 1, true, ""},
		{"--gres=gpu:9", ErrNodeConfig, 1, true, ""},
		{"--gpus=17", ErrNodeConfig, 1, true, ""},
		{"-c 9", ErrNodeConfig, 1, true, "CPU count per node can not be satisfied"},
		{"--mem=999999", ErrNodeConfig, 1, true, "Memory specification can not be satisfied"},
		{"--mem-per-cpu=70000", ErrNodeConfig, 1, true, "Memory specification can not be satisfied"},
	} {
		h := gpuLimitHarness(t, "grp", "GrpTRES=gres/gpu=4")
		h.st.Config.GresTypes = []string{"gpu", "bar"}
		next := h.st.NextJobID
		spec, _ := h.parseOpts(c.opts)
		spec.User = "alice"
		req, err := RequestFromSpec(&spec, h.now, time.UTC, &h.st.Config)
		if err != nil {
			t.Fatalf("%s: %v", c.opts, err)
		}
		j, err := h.st.Submit(req, Submitter{User: "alice"}, h.now)
		var se *SubmitError
		if !errors.Is(err, c.want) || !errors.As(err, &se) || se.Detail != c.detail || se.ClientSide != (c.want == ErrInvalidGres) {
			t.Errorf("%s: err %v (%+v), want %v %q", c.opts, err, se, c.want, c.detail)
			continue
		}
		if got := h.st.NextJobID - next; got != c.used {
			t.Errorf("%s: used %d job ids, want %d", c.opts, got, c.used)
		}
		if kept := len(h.st.Jobs()) == 1; kept != c.kept || kept && (j != h.st.Jobs()[0] ||
			j.State != JobFailed || j.Reason != ReasonBadConstraints || j.ExitCode != 1 || j.ID != next) {
			t.Errorf("%s: jobs %v, returned %+v", c.opts, h.st.Jobs(), j)
		}
	}
}

// TestAccountNamesCaseInsensitive: as in Slurm, -A Proj, -A PROJ and -q
// NORMAL name the account proj and the QOS normal (sacctmgr stores names
// lowercase), and the job shows them lowercase.
func TestAccountNamesCaseInsensitive(t *testing.T) {
	h := newHarness(t, oracleGPUConf)
	h.sacctmgr("sacctmgr -i add account Proj\nsacctmgr -i add user bob Account=Proj")
	for _, opts := range []string{"-A Proj", "-A proj", "-A PROJ", "-A Proj -q NORMAL", ""} {
		j, err := h.submit("bob", opts)
		if err != nil || j.Account != "proj" || j.QOS != "normal" {
			t.Fatalf("%q: err %v, job %+v", opts, err, j)
		}
	}
}

// TestHeldNeverRunnable: slurmctld does not test a held job against the
// nodes at submission; released, a job no node can run pends with
// PartitionNodeLimit (more nodes than the partition has), PartitionConfig
// (more CPUs) or BadConstraints (checked on Slurm 24.11).
func TestHeldNeverRunnable(t *testing.T) {
	for _, c := range []struct {
		opts string
		want Reason
	}{
		{"-N 9", ReasonPartitionNodeLimit}, {"-n 20 -c 2", ReasonPartitionConfig},
		{"--mem=999999", ReasonBadConstraints}, {"-c 9", ReasonBadConstraints},
		{"--gres=gpu:5", ReasonBadConstraints}, {"--gpus=17", ReasonBadConstraints},
	} {
		h := gpuLimitHarness(t, "grp", "GrpTRES=gres/gpu=100")
		j, err := h.submit("alice", "-H "+c.opts)
		if err != nil {
			t.Fatalf("-H %s: %v", c.opts, err)
		}
		h.expectState(j.ID, JobPending, ReasonJobHeldUser)
		if err := h.st.Release(j.ID, false); err != nil {
			t.Fatal(err)
		}
		h.schedule()
		h.expectState(j.ID, JobPending, c.want)
	}
}
