package cli

import (
	"slices"
	"strings"
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

// oracleClusterAt is when sinfo ran for TestSinfoOracleCluster.
var oracleClusterAt = time.Date(2026, 11, 26, 22, 52, 11, 0, time.Local)

// oracleClusterFixture is the cluster Slurm 24.11 had when
// TestSinfoOracleCluster's expectations were recorded (the queue of
// oracleQueueFixture, job 7 held): partitions debug (n[1-4], MaxTime=60,
// default) and gpu (n[5-6]); train's 16 CPUs on n[1-2], two 1-CPU array
// tasks on n3, n4 idle, n5 drained by
//
//	scontrol update nodename=n5 state=drain reason="bad disk"
//
// and n6's slurmd stopped (SlurmdTimeout=10) until slurmctld set it DOWN*.
func oracleClusterFixture() (api.NodesResponse, api.PartitionsResponse) {
	n := func(name, state, short, long string, alloc int, part string) api.NodeRecord {
		return api.NodeRecord{Name: name, State: state, StateShort: short, StateLong: long, CPUs: 8, AllocCPUs: alloc,
			AllocMem: int64(alloc) * 1000, Sockets: 1, Cores: 8, Threads: 1, RealMemory: 64000, Weight: 1, Gres: "gpu:4",
			GresUsed: "gpu:0", Jobs: min(alloc, 1), Partitions: []string{part}, CfgTRES: "cpu=8,mem=62.50G,billing=8,gres/gpu=4"}
	}
	nodes := []api.NodeRecord{n("n1", "ALLOCATED", "alloc", "allocated", 8, "debug"),
		n("n2", "ALLOCATED", "alloc", "allocated", 8, "debug"), n("n3", "MIXED", "mix", "mixed", 2, "debug"),
		n("n4", "IDLE", "idle", "idle", 0, "debug"), n("n5", "IDLE+DRAIN", "drain", "drained", 0, "gpu"),
		n("n6", "DOWN+NOT_RESPONDING", "down*", "down*", 0, "gpu")}
	nodes[2].Jobs = 2
	for i := range nodes {
		nodes[i].Addr, nodes[i].Hostname, nodes[i].Version = "127.0.0.1", nodes[i].Name, "24.11.5"
		nodes[i].Arch, nodes[i].OS = "x86_64", "Linux 6.18.44-fc-v657 #1 SMP PREEMPT_DYNAMIC @0"
		nodes[i].BootTime, nodes[i].LastHeard = oracleClock(16, 30, 10), oracleClock(22, 50, 29)
	}
	nodes[4].LoadKnown, nodes[4].CPULoad, nodes[4].FreeMem = true, 3.15, 16620
	nodes[4].Reason, nodes[4].ReasonUser, nodes[4].ReasonTime = "bad disk", "root", oracleClock(22, 50, 34)
	nodes[5].Reason, nodes[5].ReasonUser, nodes[5].ReasonTime = "Not responding", "root", oracleClock(22, 51, 3)
	p := func(name string, def bool, maxTime int64, nodes string, names ...string) api.PartitionRecord {
		return api.PartitionRecord{Name: name, Default: def, State: "UP", MaxTimeSec: maxTime, Nodes: nodes,
			NodeNames: names, TotalNodes: len(names), TotalCPUs: 8 * int64(len(names)), MaxNodes: -1,
			MaxCPUsPerNode: -1, OverSubscribe: "NO", AllowAccounts: "ALL", AllowQOS: "ALL", AllowGroups: "ALL",
			PriorityJobFactor: 1, PriorityTier: 1, PreemptMode: "REQUEUE"}
	}
	parts := []api.PartitionRecord{p("debug", true, 3600, "n[1-4]", "n1", "n2", "n3", "n4"),
		p("gpu", false, api.TimeInfinite, "n[5-6]", "n5", "n6")}
	parts[0].TRES, parts[1].TRES = "cpu=32,mem=250G,node=4,billing=32,gres/gpu=16", "cpu=16,mem=125G,node=2,billing=16,gres/gpu=8"
	return api.NodesResponse{Now: oracleClusterAt, Nodes: nodes}, api.PartitionsResponse{Now: oracleClusterAt, Partitions: parts}
}

// TestSinfoOracleCluster: sinfo's layouts and filters on
// oracleClusterFixture, each expectation what Slurm 24.11's sinfo printed
// for the same command.
func TestSinfoOracleCluster(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"default", nil, "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\ndebug*       up    1:00:00      1    mix n3\n" +
			"debug*       up    1:00:00      2  alloc n[1-2]\ndebug*       up    1:00:00      1   idle n4\n" +
			"gpu          up   infinite      1  down* n6\ngpu          up   infinite      1  drain n5\n"},
		{"node", []string{"-N"}, "NODELIST   NODES PARTITION STATE \nn1             1    debug* alloc \n" +
			"n2             1    debug* alloc \nn3             1    debug* mix   \n" +
			"n4             1    debug* idle  \nn5             1       gpu drain \n" +
			"n6             1       gpu down* \n"},
		{"node-long", []string{"-N", "-l"}, "Thu Nov 26 22:52:11 2026\n" +
			"NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT AVAIL_FE REASON              \n" +
			"n1             1    debug*   allocated 8       1:8:1  64000        0      1   (null) none                \n" +
			"n2             1    debug*   allocated 8       1:8:1  64000        0      1   (null) none                \n" +
			"n3             1    debug*       mixed 8       1:8:1  64000        0      1   (null) none                \n" +
			"n4             1    debug*        idle 8       1:8:1  64000        0      1   (null) none                \n" +
			"n5             1       gpu     drained 8       1:8:1  64000        0      1   (null) bad disk            \n" +
			"n6             1       gpu       down* 8       1:8:1  64000        0      1   (null) Not responding      \n"},
		{"long", []string{"-l"}, "Thu Nov 26 22:52:11 2026\n" +
			"PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE RESERVATION NODELIST\n" +
			"debug*       up    1:00:00 1-infinite   no       NO        all      1       mixed             n3\n" +
			"debug*       up    1:00:00 1-infinite   no       NO        all      2   allocated             n[1-2]\n" +
			"debug*       up    1:00:00 1-infinite   no       NO        all      1        idle             n4\n" +
			"gpu          up   infinite 1-infinite   no       NO        all      1       down*             n6\n" +
			"gpu          up   infinite 1-infinite   no       NO        all      1     drained             n5\n"},
		{"summarize", []string{"-s"}, "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n" +
			"debug*       up    1:00:00          3/1/0/4 n[1-4]\n" +
			"gpu          up   infinite          0/0/2/2 n[5-6]\n"},
		{"reasons", []string{"-R"}, "REASON               USER      TIMESTAMP           NODELIST\n" +
			"Not responding       root      2026-11-26T22:51:03 n6\n" +
			"bad disk             root      2026-11-26T22:50:34 n5\n"},
		{"format", []string{"-o", "%N %P %T %G %C %m"}, "NODELIST PARTITION STATE GRES CPUS(A/I/O/T) MEMORY\nn3 debug* mixed gpu:4 2/6/0/8 64000\n" +
			"n[1-2] debug* allocated gpu:4 16/0/0/16 64000\nn4 debug* idle gpu:4 0/8/0/8 64000\n" +
			"n6 gpu down* gpu:4 0/0/8/8 64000\nn5 gpu drained gpu:4 0/0/8/8 64000\n"},
		{"partition", []string{"-p", "gpu"}, "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\ngpu          up   infinite      1  down* n6\n" +
			"gpu          up   infinite      1  drain n5\n"},
		{"states", []string{"-t", "idle,mix"}, "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\ndebug*       up    1:00:00      1    mix n3\n" +
			"debug*       up    1:00:00      1   idle n4\ngpu          up   infinite      1  drain n5\n"},
		{"noheader", []string{"-h"}, "debug*       up    1:00:00      1    mix n3\ndebug*       up    1:00:00      2  alloc n[1-2]\n" +
			"debug*       up    1:00:00      1   idle n4\ngpu          up   infinite      1  down* n6\n" +
			"gpu          up   infinite      1  drain n5\n"},
		{"nodes", []string{"-n", "n[3-5]", "-N"}, "NODELIST   NODES PARTITION STATE \nn3             1    debug* mix   \n" +
			"n4             1    debug* idle  \nn5             1       gpu drain \n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseSinfo(c.args)
			if err != nil {
				t.Fatal(err)
			}
			nodes, parts := oracleClusterFixture()
			out, err := RenderSinfo(nodes, parts, o)
			if err != nil {
				t.Fatal(err)
			}
			if out != c.want {
				t.Errorf("sinfo %q:\n%s\nwant (Slurm 24.11):\n%s", c.args, out, c.want)
			}
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

// TestSinfoStates: -t matches base states and flags (drain covers
// drained and draining; resv and maint the reservation states), ','
// means any, '&' all, and a bad state is refused with sinfo's message.
// Slurm 24.11 with n3 draining (mixed), n5 drained (idle): sinfo -N -h
// -o %N -t idle printed n4 n5, -t alloc n1 n2 n3 (n3 mixed or
// draining), -t mix n3, -t mix&drain n3, -t idle&drain n5.
func TestSinfoStates(t *testing.T) {
	nodes, parts := nodeFixture()
	extra := []api.NodeRecord{
		{Name: "n7", State: "MIXED+DRAIN", StateShort: "drng", StateLong: "draining", Partitions: []string{"gpu"}},
		{Name: "n8", State: "RESERVED", StateShort: "resv", StateLong: "reserved", Partitions: []string{"gpu"}},
		{Name: "n9", State: "MAINT", StateShort: "maint", StateLong: "maintenance", Partitions: []string{"gpu"}},
		{Name: "n10", State: "ALLOCATED+RESERVED", StateShort: "alloc", StateLong: "allocated", Partitions: []string{"gpu"}},
	}
	nodes.Nodes = append(nodes.Nodes, extra...)
	parts.Partitions[1].NodeNames = append(parts.Partitions[1].NodeNames, "n7", "n8", "n9", "n10")
	cases := []struct{ states, want string }{
		{"idle", "n3 n5 n8 n9"},
		{"IDLE", "n3 n5 n8 n9"},
		{"alloc", "n1 n2 n4 n7 n10"},
		{"allocated,mix", "n1 n2 n4 n7 n10"},
		{"mixed", "n4 n7"},
		{"drain", "n5 n7"},
		{"drained", "n5"},
		{"draining", "n7"},
		{"down", "n6"},
		{"no_respond", "n6"},
		{"resv", "n8 n10"},
		{"reserved&alloc", "n10"},
		{"maint", "n9"},
		{"drained&no_respond", ""},
		{"drain&mix", "n7"},
		{"idle&drain", "n5"},
		{"cloud,power_down", ""},
		{"all", "n1 n2 n3 n4 n5 n6 n7 n8 n9 n10"},
	}
	for _, tc := range cases {
		o, err := parseSinfo([]string{"-N", "-h", "-o", "%N", "-t", tc.states})
		if err != nil {
			t.Fatalf("-t %s: %v", tc.states, err)
		}
		out, err := RenderSinfo(nodes, parts, o)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		seen := map[string]bool{}
		for _, f := range strings.Fields(out) {
			if !seen[f] {
				seen[f] = true
				got = append(got, f)
			}
		}
		slices.SortFunc(got, cmpNodeName)
		if strings.Join(got, " ") != tc.want {
			t.Errorf("-t %s: %q, want %q", tc.states, strings.Join(got, " "), tc.want)
		}
	}
	if _, err := parseSinfo([]string{"-t", "idle,sleepy"}); err == nil || !strings.HasPrefix(err.Error(), `Bad state string: "sleepy"`) {
		t.Errorf("bad state: %v", err)
	}
}

// cmpNodeName orders n2 before n10.
func cmpNodeName(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// FuzzSinfoStates checks that no -t value makes sinfo panic.
func FuzzSinfoStates(f *testing.F) {
	for _, s := range []string{"idle", "drain&mix", "ALLOC,resv", "", "&", ",,", "no_respond&down"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		nodes, parts := nodeFixture()
		if err := checkSinfoStates(s); err == nil {
			RenderSinfo(nodes, parts, &sinfoOpts{states: s})
		}
	})
}

// oracleSinfoFixture is the sinfo-formats scenario's cluster in Slurm
// 24.11 (test/oracle/golden/sinfo-formats.golden): four 8-CPU nodes, a
// 16-CPU job on n[1-2], a 3-CPU job on n3 (DefMemPerCPU=1000).
func oracleSinfoFixture() (api.NodesResponse, api.PartitionsResponse) {
	n := func(name, state, short, long string, alloc int) api.NodeRecord {
		return api.NodeRecord{Name: name, State: state, StateShort: short, StateLong: long, CPUs: 8, AllocCPUs: alloc,
			AllocMem: int64(alloc) * 1000, Sockets: 1, Cores: 8, Threads: 1, RealMemory: 64000, Weight: 1, Gres: "gpu:4",
			GresUsed: "gpu:0", Jobs: min(alloc, 1)}
	}
	nodes := []api.NodeRecord{n("n1", "ALLOCATED", "alloc", "allocated", 8), n("n2", "ALLOCATED", "alloc", "allocated", 8),
		n("n3", "MIXED", "mix", "mixed", 3), n("n4", "IDLE", "idle", "idle", 0)}
	part := api.PartitionRecord{Name: "main", Default: true, State: "UP", MaxTimeSec: api.TimeInfinite,
		NodeNames: []string{"n1", "n2", "n3", "n4"}, Nodes: "n[1-4]", MaxNodes: -1, MaxCPUsPerNode: -1}
	return api.NodesResponse{Now: fixtureNow, Nodes: nodes}, api.PartitionsResponse{Now: fixtureNow, Partitions: []api.PartitionRecord{part}}
}

// TestSinfoOracleLayouts: Slurm 24.11's sinfo sorts partition rows by
// decreasing node state (mix, alloc, idle; drain and idle* first), keeps
// the padding of the last field, sizes -N's node list and right-justifies
// its partition, prints "none" for no reason, and -O fields 20 wide.
func TestSinfoOracleLayouts(t *testing.T) {
	cases := []struct {
		name string
		args []string
		edit func(*api.NodesResponse)
		want string
	}{
		{"default", nil, nil, "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n" +
			"main*        up   infinite      1    mix n3\nmain*        up   infinite      2  alloc n[1-2]\n" +
			"main*        up   infinite      1   idle n4\n"},
		{"drained first", nil, func(r *api.NodesResponse) {
			r.Nodes[3].State, r.Nodes[3].StateShort, r.Nodes[3].Reason = "IDLE+DRAIN", "drain", "maintenance"
		}, "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n" +
			"main*        up   infinite      1  drain n4\nmain*        up   infinite      1    mix n3\n" +
			"main*        up   infinite      2  alloc n[1-2]\n"},
		{"not responding first", []string{"-h", "-o", "%P %a %l %D %t %N"}, func(r *api.NodesResponse) {
			r.Nodes[3].State, r.Nodes[3].StateShort = "IDLE+NOT_RESPONDING", "idle*"
		}, "main* up infinite 1 idle* n4\nmain* up infinite 1 mix n3\nmain* up infinite 2 alloc n[1-2]\n"},
		{"node", []string{"-N"}, nil, "NODELIST   NODES PARTITION STATE \n" +
			"n1             1     main* alloc \nn2             1     main* alloc \n" +
			"n3             1     main* mix   \nn4             1     main* idle  \n"},
		{"node long reason", []string{"-N", "-l", "-n", "n4"}, nil, "Fri Jan 02 10:00:00 2026\n" +
			"NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT AVAIL_FE REASON              \n" +
			"n4             1     main*        idle 8       1:8:1  64000        0      1   (null) none                \n"},
		{"summarize", []string{"-s"}, nil, "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n" +
			"main*        up   infinite          3/1/0/4 n[1-4]\n"},
		{"Format", []string{"-h", "-O", "NodeList,StateLong,CPUsState,Memory,AllocMem"}, nil,
			"n3                  mixed               3/5/0/8             64000               3000                \n" +
				"n[1-2]              allocated           16/0/0/16           64000               8000                \n" +
				"n4                  idle                0/8/0/8             64000               0                   \n"},
		{"Format sized", []string{"-O", "NodeList:5,StateLong:.12x,nodes:3|,GresUsed", "-n", "n1"}, nil,
			"NODEL       STATExNOD|GRES_USED           \nn1      allocatedx1  |gpu:0               \n"},
		{"all", []string{"-a", "-h", "-o", "%P %a"}, nil, "main* up\n"},
		{"host load unknown", []string{"-N", "-h", "-o", "%N %O %e", "-n", "n1"}, nil, "n1 N/A N/A\n"},
		{"host load", []string{"-N", "-h", "-o", "%N %O %e", "-n", "n1"}, func(r *api.NodesResponse) {
			r.Nodes[0].CPULoad, r.Nodes[0].FreeMem, r.Nodes[0].LoadKnown = 2.67, 16665, true
		}, "n1 2.67 16665\n"},
		// sinfo -N -S -N on the oracle: n4, n3, n2, n1.
		{"sort descending", []string{"-N", "-h", "-S", "-N"}, nil,
			"n4             1     main* idle  \nn3             1     main* mix   \nn2             1     main* alloc \nn1             1     main* alloc \n"},
		{"sort by count then state", []string{"-h", "-o", "%D %t", "-S", "+D,-t"}, nil, "1 mix\n1 idle\n2 alloc\n"},
		{"unknown sort letter ignored", []string{"-h", "-o", "%D %t", "-S", "bogus"}, nil, "1 mix\n2 alloc\n1 idle\n"},
		// sinfo.1 -e: without it, nodes of one partition and state group
		// whatever their CPUs and memory, shown as the least with "+".
		{"grouped sizes", []string{"-h", "-o", "%D %t %c %m"}, func(r *api.NodesResponse) {
			r.Nodes[1].CPUs, r.Nodes[1].RealMemory = 16, 128000
		}, "1 mix 8 64000\n2 alloc 8+ 64000+\n1 idle 8 64000\n"},
		{"exact sizes", []string{"-e", "-h", "-o", "%D %t %c %m"}, func(r *api.NodesResponse) {
			r.Nodes[1].CPUs, r.Nodes[1].RealMemory = 16, 128000
		}, "1 mix 8 64000\n1 alloc 8 64000\n1 alloc 16 128000\n1 idle 8 64000\n"},
		{"not responding counts idle", []string{"-h", "-o", "%t %F %C %A"}, func(r *api.NodesResponse) {
			r.Nodes = r.Nodes[3:]
			r.Nodes[0].State, r.Nodes[0].StateShort = "IDLE+NOT_RESPONDING", "idle*"
		}, "idle* 0/1/0/1 0/8/0/8 0/1\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseSinfo(c.args)
			if err != nil {
				t.Fatal(err)
			}
			nodes, parts := oracleSinfoFixture()
			if c.edit != nil {
				c.edit(&nodes)
			}
			got, err := RenderSinfo(nodes, parts, o)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("sinfo %q:\n%s\nwant:\n%s", c.args, got, c.want)
			}
		})
	}
}

// TestSinfoHidden: Slurm 24.11's sinfo lists a Hidden partition to
// alice only with -a or -p naming it (root sees it always).
func TestSinfoHidden(t *testing.T) {
	nodes, parts := oracleSinfoFixture()
	secret := parts.Partitions[0]
	secret.Name, secret.Default, secret.Hidden = "secret", false, true
	parts.Partitions = append(parts.Partitions, secret)
	for _, c := range []struct {
		args []string
		uid  int
		want string
	}{
		{nil, 1000, "main*\n"},
		{[]string{"-a"}, 1000, "main*\nsecret\n"},
		{[]string{"-p", "secret"}, 1000, "secret\n"},
		{nil, 0, "main*\nsecret\n"},
	} {
		o, err := parseSinfo(append([]string{"-h", "-o", "%P"}, c.args...))
		if err != nil {
			t.Fatal(err)
		}
		o.forUser(c.uid)
		if got, _ := RenderSinfo(nodes, parts, o); got != c.want {
			t.Errorf("uid %d sinfo %q: %q, want %q", c.uid, c.args, got, c.want)
		}
	}
}

// TestSinfoFormatUnknownField: sinfo -O reports an unknown name and
// prints the other fields.
func TestSinfoFormatUnknownField(t *testing.T) {
	o, err := parseSinfo([]string{"-h", "-O", "foo,nodes:3"})
	if err != nil {
		t.Fatal(err)
	}
	nodes, parts := oracleSinfoFixture()
	got, _ := RenderSinfo(nodes, parts, o)
	if got != "4  \n" || !slices.Equal(o.badFields, []string{"foo"}) {
		t.Errorf("got %q, bad %q", got, o.badFields)
	}
}

// TestSinfoDeadResponding: -d lists only the nodes not responding (a '*'
// state), -r only the others.
func TestSinfoDeadResponding(t *testing.T) {
	nodes, parts := nodeFixture()
	for _, c := range []struct{ flag, want string }{
		{"-d", "n6"},
		{"--responding", "n1 n2 n3 n4 n5"},
	} {
		o, err := parseSinfo([]string{"-N", "-h", "-o", "%N", c.flag})
		if err != nil {
			t.Fatal(err)
		}
		out, err := RenderSinfo(nodes, parts, o)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range strings.Fields(out) {
			if !slices.Contains(got, f) {
				got = append(got, f)
			}
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("sinfo %s: %v, want %s", c.flag, got, c.want)
		}
	}
}

// TestSinfoJSONStates: sinfo --json -t drain keeps the drained and
// draining nodes only (oracle, json-nodes: n2 draining and n3 drained,
// not n1 mixed nor n4 down).
func TestSinfoJSONStates(t *testing.T) {
	nodes := []api.NodeRecord{{Name: "n1", State: "MIXED"}, {Name: "n2", State: "ALLOCATED+DRAIN"},
		{Name: "n3", State: "IDLE+DRAIN"}, {Name: "n4", State: "DOWN"}}
	var got []string
	for _, n := range sinfoStateNodes(nodes, "drain") {
		got = append(got, n.Name)
	}
	if strings.Join(got, ",") != "n2,n3" {
		t.Errorf("sinfo --json -t drain: nodes %v, want n2,n3", got)
	}
	if n := len(sinfoStateNodes(nodes, "")); n != 4 {
		t.Errorf("without -t: %d nodes", n)
	}
}

// TestSinfoNodeFilterEmptyPartition: a partition none of whose nodes -n
// names still prints, with no nodes and state n/a (oracle: sinfo-filters).
func TestSinfoNodeFilterEmptyPartition(t *testing.T) {
	nodes := api.NodesResponse{Nodes: []api.NodeRecord{{Name: "n1", StateShort: "idle", StateLong: "idle", CPUs: 8}}}
	parts := api.PartitionsResponse{Partitions: []api.PartitionRecord{{Name: "main", Default: true, State: "UP", MaxTimeSec: -1, NodeNames: []string{"n1"}}}}
	o, err := parseSinfo([]string{"-h", "-n", "n9", "-o", "%P %D %t"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := RenderSinfo(nodes, parts, o)
	if err != nil {
		t.Fatal(err)
	}
	if out != "main* 0 n/a\n" {
		t.Errorf("sinfo -n n9: %q, want %q", out, "main* 0 n/a\n")
	}
}
