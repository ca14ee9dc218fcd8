package dataparser

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestReservationFromText checks a reservation read back from scontrol's
// one-line record (oracle: scontrol -o show res and show res --json).
func TestReservationFromText(t *testing.T) {
	line := "ReservationName=r1 StartTime=2026-11-26T23:47:18 EndTime=2026-11-27T00:47:18 Duration=01:00:00 Nodes=n4 NodeCnt=1 CoreCnt=8 Features=(null) PartitionName=(null) Flags=SPEC_NODES TRES=cpu=8 Users=alice Groups=(null) Accounts=(null) Licenses=(null) State=INACTIVE BurstBuffer=(null) MaxStartDelay=(null)"
	r := Reservations(Records(line), time.Now()).Get("reservations").([]any)[0].(Obj)
	want := time.Date(2026, 11, 26, 23, 47, 18, 0, time.Local).Unix()
	for key, v := range map[string]any{"name": "r1", "node_list": "n4", "core_count": int64(8), "tres": "cpu=8",
		"users": "alice", "accounts": "", "partition": "", "start_time": N(want)} {
		if got := r.Get(key); got != v {
			t.Errorf("%s = %v, want %v", key, got, v)
		}
	}
	if got := string(JSON(r.Get("flags"))); got != "[\n  \"SPEC_NODES\"\n]\n" {
		t.Errorf("flags = %s", got)
	}
}

// TestSharesFromRows checks the share tree read from sshare's parsable
// rows: parents from the indentation, users typed USER, root's shares unset.
func TestSharesFromRows(t *testing.T) {
	rows := "1|oracle|root||||0.000000|0||1.000000|0.000000||cpu=0,mem=0|cpu=0,mem=0\n" +
		"3|oracle| research|||1|0.500000|0|0.000000|0.000000|0.000000|inf|cpu=0,mem=0|cpu=0,mem=0\n" +
		"4|oracle|  research|alice||1|0.500000|0|0.000000|0.000000|1.000000|inf|cpu=0,mem=0|cpu=0,mem=0\n"
	list := Shares(rows).Get("shares").(Obj).Get("shares").([]any)
	var got []string
	for _, e := range list {
		o := e.(Obj)
		got = append(got, o.Get("name").(string)+"<"+o.Get("parent").(string)+">"+o.Get("type").([]any)[0].(string))
	}
	if s := strings.Join(got, " "); s != "root<>ASSOCIATION research<root>ASSOCIATION alice<research>USER" {
		t.Errorf("tree = %s", s)
	}
	if sh := list[0].(Obj).Get("shares"); sh != Unset() {
		t.Errorf("root shares = %v", sh)
	}
}

// TestTRESList checks TRES entries as slurmdbd records them (oracle sacct
// --json): id order, memory in MB, energy -2 in an allocation, GRES typed
// "gres" and named.
func TestTRESList(t *testing.T) {
	got := string(JSON(TRESList("cpu=4,mem=4000M,node=1,billing=4,gres/gpu=2", true)))
	for _, want := range []string{`"type": "mem",` + "\n" + `    "name": "",` + "\n" + `    "id": 2,` + "\n" + `    "count": 4000`,
		`"type": "energy",` + "\n" + `    "name": "",` + "\n" + `    "id": 3,` + "\n" + `    "count": -2`,
		`"type": "gres",` + "\n" + `    "name": "gpu",` + "\n" + `    "id": 1001,`} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if n := tresNumber("mem", "62.50G"); n != 64000 {
		t.Errorf("62.50G = %d MB", n)
	}
}

// TestSinfoGroups checks sinfo --json's grouping: nodes alike in one
// record, groups by decreasing state rank (drained before mixed before
// idle, oracle), counts of allocated/idle/other nodes and CPUs.
func TestSinfoGroups(t *testing.T) {
	nodes := []api.NodeRecord{
		{Name: "n1", State: "MIXED", CPUs: 8, AllocCPUs: 4, RealMemory: 64000, AllocMem: 4000},
		{Name: "n2", State: "IDLE", CPUs: 8, RealMemory: 64000},
		{Name: "n3", State: "IDLE+DRAIN", CPUs: 8, RealMemory: 64000, Reason: "maint"},
		{Name: "n4", State: "IDLE", CPUs: 8, RealMemory: 64000},
	}
	parts := []api.PartitionRecord{{Name: "main", State: "UP", NodeNames: []string{"n1", "n2", "n3", "n4"}}}
	rank := map[string]uint32{"MIXED": 5, "IDLE": 2, "IDLE+DRAIN": 0x202}
	list := Sinfo(nodes, parts, func(n *api.NodeRecord) uint32 { return rank[n.State] }).Get("sinfo").([]any)
	var got []string
	for _, e := range list {
		o := e.(Obj)
		n, c := o.Get("nodes").(Obj), o.Get("cpus").(Obj)
		got = append(got, strings.TrimSpace(string(JSON(n.Get("nodes"))))+
			" A"+itoa(n.Get("allocated"))+" I"+itoa(n.Get("idle"))+" O"+itoa(n.Get("other"))+
			" cpus "+itoa(c.Get("allocated"))+"/"+itoa(c.Get("idle"))+"/"+itoa(c.Get("other")))
	}
	want := []string{`["n3"] A0 I0 O1 cpus 0/0/8`, `["n1"] A1 I0 O0 cpus 4/4/0`, `["n2","n4"] A0 I2 O0 cpus 0/16/0`}
	for i := range want {
		g := strings.Join(strings.Fields(strings.ReplaceAll(got[i], "\n", "")), "")
		w := strings.Join(strings.Fields(want[i]), "")
		if g != w {
			t.Errorf("group %d = %s, want %s", i, got[i], want[i])
		}
	}
}

func itoa(v any) string { return strings.TrimSpace(string(JSON(v))) }

// TestPartitionMemPerCPUWord checks the raw memory_per_cpu of a partition
// with DefMemPerCPU=500: the value with slurmctld's MEM_PER_CPU flag, as
// Slurm 24.11 printed it (json-partitions), and 0 without a value.
func TestPartitionMemPerCPUWord(t *testing.T) {
	out := string(JSON(Partitions([]api.PartitionRecord{{Name: "lim", DefMemPerCPU: 500}, {Name: "main"}}, time.Unix(0, 0))))
	for _, want := range []string{`"memory_per_cpu": -9223372036854775308,`, `"memory_per_cpu": 0,`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in\n%s", want, out)
		}
	}
}

// TestSinfoDrainingCPUs: a draining node keeps its allocated CPUs as
// allocated, only the rest are other (oracle, json-nodes: n2 draining with
// 8 of 8 CPUs allocated prints cpus allocated 8, other 0).
func TestSinfoDrainingCPUs(t *testing.T) {
	for _, c := range []struct {
		n    api.NodeRecord
		want string
	}{
		{api.NodeRecord{Name: "n2", State: "ALLOCATED+DRAIN", CPUs: 8, AllocCPUs: 8}, "8/0/0"},
		{api.NodeRecord{Name: "n2", State: "MIXED+DRAIN", CPUs: 8, AllocCPUs: 2}, "2/0/6"},
		{api.NodeRecord{Name: "n4", State: "DOWN", CPUs: 8}, "0/0/8"},
	} {
		cpus := sinfoRecord([]*api.NodeRecord{&c.n}, &api.PartitionRecord{Name: "main"}).Get("cpus").(Obj)
		if got := itoa(cpus.Get("allocated")) + "/" + itoa(cpus.Get("idle")) + "/" + itoa(cpus.Get("other")); got != c.want {
			t.Errorf("%s %s: cpus %s, want %s", c.n.Name, c.n.State, got, c.want)
		}
	}
}

// TestSharesParentOutsideRows: sshare --json -A physics names the parent
// of physics from the whole tree (oracle, json-sshare-tree: "science").
func TestSharesParentOutsideRows(t *testing.T) {
	row := func(id, acct, user string) string {
		return id + "|oracle|" + acct + "|" + user + "||1|0.5|0|0|0|0|inf|cpu=0|cpu=0\n"
	}
	tree := row("1", "root", "") + row("2", " science", "") + row("3", "  physics", "") + row("4", "   physics", "alice")
	for _, rows := range []string{row("3", "  physics", "") + row("4", "   physics", "alice"),
		row("3", "physics", "") + row("4", " physics", "alice")} {
		list := SharesIn(rows, tree).Get("shares").(Obj).Get("shares").([]any)
		if p := list[0].(Obj).Get("parent"); p != "science" {
			t.Errorf("rows %q: physics's parent %q, want science", rows, p)
		}
		if p := list[1].(Obj).Get("parent"); p != "physics" {
			t.Errorf("alice's parent %q", p)
		}
	}
}
