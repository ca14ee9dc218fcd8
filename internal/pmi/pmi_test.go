package pmi

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// step is a step of several nodes in one process: each node's Server
// exchanges through one Fence, as the node agents do through srun.
type step struct {
	servers []*Server
	ranks   map[int]*Server
}

func newStep(t *testing.T, perNode ...int) *step {
	t.Helper()
	size := 0
	for _, n := range perNode {
		size += n
	}
	fence := NewFence(len(perNode))
	var mu sync.Mutex
	waiters := map[int][]chan map[string]string{}
	st := &step{ranks: map[int]*Server{}}
	rank := 0
	for range perNode {
		ranks := []int{}
		for i := 0; i < perNode[len(st.servers)]; i++ {
			ranks = append(ranks, rank)
			rank++
		}
		s := NewServer(Config{JobID: "7.0", Size: size, Ranks: ranks, Mapping: Mapping(perNode),
			Exchange: func(ctx context.Context, seq int, local map[string]string) (map[string]string, error) {
				ch := make(chan map[string]string, 1)
				mu.Lock()
				waiters[seq] = append(waiters[seq], ch)
				all, done := fence.Add(seq, local)
				if done {
					for _, w := range waiters[seq] {
						w <- all
					}
					delete(waiters, seq)
				}
				mu.Unlock()
				select {
				case all := <-ch:
					return all, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}})
		t.Cleanup(s.Close)
		st.servers = append(st.servers, s)
		for _, r := range ranks {
			st.ranks[r] = s
		}
	}
	return st
}

// conn is a task's end of its PMI connection.
func (st *step) conn(t *testing.T, rank int) (*os.File, *bufio.Reader) {
	f, err := st.ranks[rank].Attach(rank)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, bufio.NewReader(f)
}

// v1 is a PMI-1 task: it sends each line and returns the replies.
func v1(f *os.File, r *bufio.Reader, lines ...string) []string {
	var out []string
	for _, l := range lines {
		fmt.Fprintf(f, "%s\n", l)
		if strings.HasPrefix(l, "cmd=abort") {
			continue
		}
		reply, err := r.ReadString('\n')
		if err != nil {
			return append(out, "error: "+err.Error())
		}
		out = append(out, strings.TrimSuffix(reply, "\n"))
	}
	return out
}

// TestPMI1AcrossNodes: six ranks on three nodes, as MPICH's simple PMI
// client speaks: each puts its business card, meets the others at the
// barrier, and then reads every rank's card and the process mapping.
func TestPMI1AcrossNodes(t *testing.T) {
	st := newStep(t, 2, 2, 2)
	var wg sync.WaitGroup
	got := make([][]string, 6)
	for rank := 0; rank < 6; rank++ {
		f, r := st.conn(t, rank)
		wg.Add(1)
		go func() {
			defer wg.Done()
			lines := []string{"cmd=init pmi_version=1 pmi_subversion=1", "cmd=get_maxes", "cmd=get_appnum",
				"cmd=get_my_kvsname", fmt.Sprintf("cmd=put kvsname=7.0 key=card-%d value=addr%d", rank, rank),
				"cmd=barrier_in"}
			for peer := 0; peer < 6; peer++ {
				lines = append(lines, fmt.Sprintf("cmd=get kvsname=7.0 key=card-%d", peer))
			}
			lines = append(lines, "cmd=get kvsname=7.0 key=PMI_process_mapping", "cmd=get kvsname=7.0 key=nothing", "cmd=finalize")
			got[rank] = v1(f, r, lines...)
		}()
	}
	wg.Wait()
	for rank, replies := range got {
		want := []string{"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0",
			"cmd=maxes rc=0 kvsname_max=256 keylen_max=256 vallen_max=1024", "cmd=appnum rc=0 appnum=0",
			"cmd=my_kvsname rc=0 kvsname=7.0", "cmd=put_result rc=0", "cmd=barrier_out rc=0"}
		for peer := 0; peer < 6; peer++ {
			want = append(want, fmt.Sprintf("cmd=get_result rc=0 value=addr%d", peer))
		}
		want = append(want, "cmd=get_result rc=0 value=(vector,(0,3,2))", "cmd=get_result rc=-1 msg=key_nothing_not_found",
			"cmd=finalize_ack rc=0")
		if strings.Join(replies, "\n") != strings.Join(want, "\n") {
			t.Errorf("rank %d:\n%s\nwant:\n%s", rank, strings.Join(replies, "\n"), strings.Join(want, "\n"))
		}
	}
}

// v2 sends one PMI-2 message and reads the reply.
func v2(t *testing.T, f *os.File, r *bufio.Reader, pairs ...string) map[string]string {
	t.Helper()
	f.Write(formatV2(pairs...))
	m, err := readV2(r)
	if err != nil {
		t.Fatalf("%v: %v", pairs, err)
	}
	return m
}

// TestPMI2AcrossNodes: the PMI-2 conversation of MPICH's pmi2 client:
// init asking for version 2, fullinit, job attributes, put, fence, get
// (values with ';' survive the escaping), node attributes, finalize.
func TestPMI2AcrossNodes(t *testing.T) {
	st := newStep(t, 3, 1)
	var wg sync.WaitGroup
	for rank := 0; rank < 4; rank++ {
		f, r := st.conn(t, rank)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fmt.Fprintf(f, "cmd=init pmi_version=2 pmi_subversion=0\n")
			if l, _ := r.ReadString('\n'); l != "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n" {
				t.Errorf("rank %d init: %q", rank, l)
				return
			}
			m := v2(t, f, r, "cmd", "fullinit", "pmirank", fmt.Sprint(rank), "threaded", "FALSE")
			if m["cmd"] != "fullinit-response" || m["rc"] != "0" || m["rank"] != fmt.Sprint(rank) || m["size"] != "4" {
				t.Errorf("rank %d fullinit: %v", rank, m)
			}
			if m := v2(t, f, r, "cmd", "info-getjobattr", "key", "PMI_process_mapping"); m["value"] != "(vector,(0,1,3),(1,1,1))" || m["found"] != "TRUE" {
				t.Errorf("rank %d mapping: %v", rank, m)
			}
			v2(t, f, r, "cmd", "kvs-put", "key", fmt.Sprint("k", rank), "value", fmt.Sprintf("v;%d", rank))
			if m := v2(t, f, r, "cmd", "kvs-fence"); m["rc"] != "0" {
				t.Errorf("rank %d fence: %v", rank, m)
			}
			for peer := 0; peer < 4; peer++ {
				if m := v2(t, f, r, "cmd", "kvs-get", "jobid", "7.0", "key", fmt.Sprint("k", peer)); m["value"] != fmt.Sprintf("v;%d", peer) {
					t.Errorf("rank %d get k%d: %v", rank, peer, m)
				}
			}
			if rank == 0 {
				v2(t, f, r, "cmd", "info-putnodeattr", "key", "shm", "value", "seg0")
			}
			if rank < 3 { // node 0's ranks wait for rank 0's attribute
				if m := v2(t, f, r, "cmd", "info-getnodeattr", "key", "shm", "wait", "TRUE"); m["value"] != "seg0" {
					t.Errorf("rank %d node attribute: %v", rank, m)
				}
			}
			if m := v2(t, f, r, "cmd", "finalize"); m["cmd"] != "finalize-response" {
				t.Errorf("rank %d finalize: %v", rank, m)
			}
		}()
	}
	wg.Wait()
}

// TestPMIAbort: a task's abort reaches the node (which kills the step).
func TestPMIAbort(t *testing.T) {
	aborted := make(chan int, 1)
	s := NewServer(Config{JobID: "1.0", Size: 1, Ranks: []int{0}, Abort: func(rank, code int, _ string) { aborted <- code }})
	defer s.Close()
	f, err := s.Attach(0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v1(f, bufio.NewReader(f), "cmd=init pmi_version=1 pmi_subversion=1", "cmd=abort exitcode=3")
	if code := <-aborted; code != 3 {
		t.Errorf("abort code %d", code)
	}
}

func TestMapping(t *testing.T) {
	for _, c := range []struct {
		per  []int
		want string
	}{{[]int{2, 2, 2}, "(vector,(0,3,2))"}, {[]int{3, 3, 2}, "(vector,(0,2,3),(2,1,2))"}, {[]int{1}, "(vector,(0,1,1))"}} {
		if got := Mapping(c.per); got != c.want {
			t.Errorf("Mapping(%v) = %s, want %s", c.per, got, c.want)
		}
	}
}

// FuzzPMI2Message: any bytes give a message or an error, never a panic,
// and a formatted message reads back the same.
func FuzzPMI2Message(f *testing.F) {
	f.Add([]byte("18    cmd=kvs-get;key=a;"), "a;b")
	f.Add([]byte("999999x"), "")
	f.Fuzz(func(t *testing.T, raw []byte, value string) {
		readV2(strings.NewReader(string(raw)))
		parseV1(string(raw))
		m, err := readV2(strings.NewReader(string(formatV2("cmd", "kvs-put", "value", value))))
		if err != nil || m["value"] != value {
			t.Errorf("round trip of %q: %v %v", value, m, err)
		}
	})
}
