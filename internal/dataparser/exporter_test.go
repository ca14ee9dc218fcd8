package dataparser

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestExporterFields checks that the fields a Prometheus exporter reading
// data_parser JSON uses (rivosinc/prometheus-slurm-exporter's JSON mode:
// squeue jobs' account, job_id, end_time, job_state, partition,
// user_name, job_resources; nodes' cpus, alloc_cpus, alloc_memory,
// real_memory, cpu_load, hostname, partitions, state, weight; sdiag's
// server_thread_count, dbd_agent_queue_size and RPC tables; licenses'
// LicenseName, Total, Used, Free, Reserved, Remote) are present with the
// JSON types Slurm 24.11 gives them.
func TestExporterFields(t *testing.T) {
	now := time.Unix(1795733251, 0)
	jobs := JSON(Envelope(Jobs([]api.JobInfo{{JobID: 2, Account: "research", User: "alice", Partition: "main",
		State: "RUNNING", StartTime: now, NodeList: "n1", NumNodes: 1, NumCPUs: 4, TimeLimitSec: 600}}, now, now, Cluster{}), Meta{Release: "24.11.5"}))
	var sq struct {
		Jobs []struct {
			Account      string          `json:"account"`
			JobID        int             `json:"job_id"`
			EndTime      Num             `json:"end_time"`
			JobState     []string        `json:"job_state"`
			Partition    string          `json:"partition"`
			UserName     string          `json:"user_name"`
			JobResources json.RawMessage `json:"job_resources"`
			CPUs         Num             `json:"cpus"`
		} `json:"jobs"`
	}
	mustDecode(t, jobs, &sq)
	if j := sq.Jobs[0]; j.Account != "research" || j.JobID != 2 || j.JobState[0] != "RUNNING" || j.Partition != "main" ||
		j.UserName != "alice" || j.EndTime.N != now.Unix()+600 || j.CPUs.N != 4 || len(j.JobResources) == 0 {
		t.Errorf("job = %+v", j)
	}

	nodes := JSON(Nodes([]api.NodeRecord{{Name: "n1", State: "MIXED", CPUs: 8, AllocCPUs: 4, RealMemory: 64000, AllocMem: 4000,
		CPULoad: 0.88, LoadKnown: true, FreeMem: 100, Hostname: "n1", Partitions: []string{"main"}, Weight: 1}}, now))
	var sn struct {
		Nodes []struct {
			CPUs        int      `json:"cpus"`
			AllocCPUs   int      `json:"alloc_cpus"`
			AllocMemory int      `json:"alloc_memory"`
			RealMemory  int      `json:"real_memory"`
			CPULoad     int      `json:"cpu_load"`
			FreeMem     Num      `json:"free_mem"`
			Hostname    string   `json:"hostname"`
			Partitions  []string `json:"partitions"`
			State       []string `json:"state"`
			Weight      int      `json:"weight"`
		} `json:"nodes"`
	}
	mustDecode(t, nodes, &sn)
	if n := sn.Nodes[0]; n.CPUs != 8 || n.AllocCPUs != 4 || n.AllocMemory != 4000 || n.RealMemory != 64000 || n.CPULoad != 88 ||
		n.FreeMem.N != 100 || n.Hostname != "n1" || n.Partitions[0] != "main" || n.State[0] != "MIXED" || n.Weight != 1 {
		t.Errorf("node = %+v", n)
	}

	diag := JSON(Diag(&api.SdiagResponse{ServerThreads: 3, RPCTypes: []api.RPCStat{{Name: "REQUEST_PING", ID: 1008, Count: 2, TotalUS: 198}},
		RPCUsers: []api.RPCStat{{Name: "root", Count: 19, TotalUS: 7510}}}, 40))
	var sd struct {
		Statistics struct {
			ServerThreadCount int `json:"server_thread_count"`
			DBDAgentQueueSize int `json:"dbd_agent_queue_size"`
			RPCsByUser        []struct {
				User      string `json:"user"`
				Count     int    `json:"count"`
				TotalTime int    `json:"total_time"`
			} `json:"rpcs_by_user"`
			RPCsByMessageType []struct {
				MessageType string `json:"message_type"`
				TypeID      int    `json:"type_id"`
				Count       int    `json:"count"`
				AverageTime Num    `json:"average_time"`
				TotalTime   int    `json:"total_time"`
			} `json:"rpcs_by_message_type"`
		} `json:"statistics"`
	}
	mustDecode(t, diag, &sd)
	if s := sd.Statistics; s.ServerThreadCount != 3 || s.RPCsByUser[0].User != "root" || s.RPCsByUser[0].Count != 19 ||
		s.RPCsByMessageType[0].MessageType != "REQUEST_PING" || s.RPCsByMessageType[0].AverageTime.N != 99 {
		t.Errorf("statistics = %+v", s)
	}

	lic := JSON(Licenses(Records("LicenseName=matlab Total=2 Used=1 Free=1 Reserved=0 Remote=no LastConsumed=0 LastDeficit=0 LastUpdate=2026-11-26T23:47:18"), now))
	var sl struct {
		Licenses []struct {
			LicenseName       string
			Total, Used, Free int
			Reserved          int
			Remote            bool
		} `json:"licenses"`
	}
	mustDecode(t, lic, &sl)
	if l := sl.Licenses[0]; l.LicenseName != "matlab" || l.Total != 2 || l.Used != 1 || l.Free != 1 || l.Remote {
		t.Errorf("license = %+v", l)
	}
}

// UnmarshalJSON reads a {set, infinite, number} object.
func (n *Num) UnmarshalJSON(b []byte) error {
	var v struct {
		Set, Infinite bool
		Number        int64
	}
	err := json.Unmarshal(b, &v)
	*n = Num{Set: v.Set, Inf: v.Infinite, N: v.Number}
	return err
}

func mustDecode(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%v in\n%s", err, data)
	}
}
