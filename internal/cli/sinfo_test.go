package cli

import (
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// nodeFixture is six nodes in two partitions: two allocated, one idle,
// one mixed, one drained by an operator and one not responding.
func nodeFixture() (api.NodesResponse, api.PartitionsResponse) {
	n := func(name, state, short, long string, alloc int) api.NodeRecord {
		return api.NodeRecord{Name: name, State: state, StateShort: short, StateLong: long, CPUs: 8, AllocCPUs: alloc,
			Sockets: 2, Cores: 4, Threads: 1, RealMemory: 32000, Weight: 1, CfgTRES: "cpu=8,mem=32000M,billing=8"}
	}
	nodes := []api.NodeRecord{
		n("n1", "ALLOCATED", "alloc", "allocated", 8), n("n2", "ALLOCATED", "alloc", "allocated", 8),
		n("n3", "IDLE", "idle", "idle", 0), n("n4", "MIXED", "mix", "mixed", 2),
		n("n5", "IDLE+DRAIN", "drain", "drained", 0), n("n6", "DOWN+NOT_RESPONDING", "down*", "down*", 0),
	}
	nodes[3].Jobs, nodes[0].Jobs, nodes[1].Jobs = 1, 1, 1
	nodes[4].Reason, nodes[4].ReasonUser, nodes[4].ReasonTime = "bad disk", "root", fixtureNow.Add(-time.Hour)
	nodes[5].Reason, nodes[5].ReasonUser, nodes[5].ReasonTime = "Not responding", "slurm", fixtureNow.Add(-10*time.Minute)
	nodes[4].Gres, nodes[5].Gres = "gpu:l4:2", "gpu:l4:2"
	for i := range nodes {
		nodes[i].Partitions = []string{"debug"}
	}
	nodes[4].Partitions, nodes[5].Partitions = []string{"gpu"}, []string{"gpu"}
	p := func(name string, def bool, max int64, names ...string) api.PartitionRecord {
		return api.PartitionRecord{Name: name, Default: def, State: "UP", MaxTimeSec: max, NodeNames: names,
			TotalNodes: len(names), MaxNodes: -1, MaxCPUsPerNode: -1, OverSubscribe: "NO", AllowAccounts: "ALL",
			AllowQOS: "ALL", AllowGroups: "ALL", PriorityJobFactor: 1, PriorityTier: 1, PreemptMode: "OFF"}
	}
	parts := []api.PartitionRecord{p("debug", true, 3600, "n1", "n2", "n3", "n4"), p("gpu", false, api.TimeInfinite, "n5", "n6")}
	parts[0].Nodes, parts[1].Nodes = "n[1-4]", "n[5-6]"
	parts[0].TotalCPUs, parts[1].TotalCPUs = 32, 16
	parts[0].TRES = "cpu=32,mem=128000M,node=4,billing=32"
	return api.NodesResponse{Now: fixtureNow, Nodes: nodes}, api.PartitionsResponse{Now: fixtureNow, Partitions: parts}
}

func TestSinfoGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"default", nil},
		{"node", []string{"-N"}},
		{"node-long", []string{"-N", "-l"}},
		{"long", []string{"-l"}},
		{"summarize", []string{"-s"}},
		{"reasons", []string{"-R"}},
		{"format", []string{"-o", "%N %P %T %G %C %m"}},
		{"partition", []string{"-p", "gpu"}},
		{"states", []string{"-t", "idle,mix"}},
		{"noheader", []string{"-h"}},
		{"nodes", []string{"-n", "n[3-5]", "-N"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseSinfo(c.args)
			if err != nil {
				t.Fatal(err)
			}
			nodes, parts := nodeFixture()
			out, err := RenderSinfo(nodes, parts, o)
			if err != nil {
				t.Fatal(err)
			}
			ctlGolden(t, "sinfo", c.name, out)
		})
	}
}

// FuzzSinfoFormat checks that no format string makes sinfo panic.
func FuzzSinfoFormat(f *testing.F) {
	for _, s := range []string{sinfoDefault, sinfoLong, sinfoNodeLong, sinfoSummary, sinfoReasons, "%#", "%.#5N", "%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		nodes, parts := nodeFixture()
		RenderSinfo(nodes, parts, &sinfoOpts{format: s})
	})
}
