package pmi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Exchange publishes a node's pairs put since the previous fence and
// returns every pair the step's tasks put before this fence (all nodes).
// seq numbers the fences from 1.
type Exchange func(ctx context.Context, seq int, local map[string]string) (map[string]string, error)

// Config describes one node's part of a step.
type Config struct {
	// JobID names the step's key-value space (PMI_JOBID, the PMI-1
	// kvsname): "JOB.STEP" as Slurm's.
	JobID string
	// Size is the step's task count; Ranks are the global ranks run on
	// this node.
	Size  int
	Ranks []int
	// Mapping is PMI_process_mapping (Mapping).
	Mapping string
	// Exchange is the fence's exchange between nodes.
	Exchange Exchange
	// Abort is told of a task's PMI abort (the step is to be killed).
	Abort func(rank, code int, msg string)
}

// Limits announced to PMI-1 clients (get_maxes), as Slurm's plugin.
const (
	kvsNameMax = 256
	keyLenMax  = 256
	valLenMax  = 1024
)

// Server answers one node's tasks.
type Server struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	kvs     map[string]string // visible to every task: after a fence
	pending map[string]string // this node's puts since the last fence
	node    map[string]string // PMI-2 node attributes
	nodeCh  chan struct{}     // closed and replaced at each node put
	fence   *fenceRound
	seq     int
	conns   []*os.File
}

// fenceRound is the fence the node's tasks are entering.
type fenceRound struct {
	in   int
	done chan struct{}
	err  error
}

// NewServer starts a node's server; Close ends it.
func NewServer(cfg Config) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{cfg: cfg, ctx: ctx, cancel: cancel, kvs: map[string]string{}, pending: map[string]string{},
		node: map[string]string{}, nodeCh: make(chan struct{})}
}

// Attach creates rank's connection: the returned file is the task's end
// (give it to the task as a file descriptor, named by PMI_FD in Env).
func (s *Server) Attach(rank int) (*os.File, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("pmi: socketpair: %w", err)
	}
	ours := os.NewFile(uintptr(fds[0]), "pmi-server")
	theirs := os.NewFile(uintptr(fds[1]), "pmi-task")
	s.mu.Lock()
	s.conns = append(s.conns, ours)
	s.mu.Unlock()
	go s.serve(rank, ours)
	return theirs, nil
}

// Env is the PMI environment of rank whose connection is descriptor fd.
func (s *Server) Env(rank, fd int) []string {
	return []string{"PMI_FD=" + strconv.Itoa(fd), "PMI_RANK=" + strconv.Itoa(rank), "PMI_SIZE=" + strconv.Itoa(s.cfg.Size),
		"PMI_JOBID=" + s.cfg.JobID}
}

// Close ends every connection and any fence in progress.
func (s *Server) Close() {
	s.cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Close()
	}
}

// serve speaks with one task until it finalizes or goes.
func (s *Server) serve(rank int, c *os.File) {
	defer c.Close()
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return
	}
	req := parseV1(line)
	if req["cmd"] != "init" {
		fmt.Fprintf(c, "cmd=response_to_init rc=-1 msg=expected_init\n")
		return
	}
	if req["pmi_version"] == "2" {
		fmt.Fprintf(c, "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n")
		s.serveV2(rank, r, c)
		return
	}
	fmt.Fprintf(c, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n")
	s.serveV1(rank, r, c)
}

// put records a task's pair for the next fence.
func (s *Server) put(key, value string) {
	s.mu.Lock()
	s.pending[key] = value
	s.mu.Unlock()
}

// get reads a pair: a job attribute, or one published by a fence.
func (s *Server) get(key string) (string, bool) {
	if key == "PMI_process_mapping" {
		return s.cfg.Mapping, s.cfg.Mapping != ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.kvs[key]
	return v, ok
}

// enterFence blocks until every task of the node entered the fence and
// the exchange with the other nodes is done.
func (s *Server) enterFence() error {
	s.mu.Lock()
	if s.fence == nil {
		s.fence = &fenceRound{done: make(chan struct{})}
	}
	f := s.fence
	f.in++
	if f.in == len(s.cfg.Ranks) {
		s.fence, s.seq = nil, s.seq+1
		local, seq := s.pending, s.seq
		s.pending = map[string]string{}
		s.mu.Unlock()
		go s.exchange(f, seq, local)
	} else {
		s.mu.Unlock()
	}
	select {
	case <-f.done:
		return f.err
	case <-s.ctx.Done():
		return errors.New("step ended")
	}
}

func (s *Server) exchange(f *fenceRound, seq int, local map[string]string) {
	all, err := s.cfg.Exchange(s.ctx, seq, local)
	s.mu.Lock()
	for k, v := range all {
		s.kvs[k] = v
	}
	s.mu.Unlock()
	f.err = err
	close(f.done)
}

// abort reports a task's abort.
func (s *Server) abort(rank, code int, msg string) {
	if s.cfg.Abort != nil {
		s.cfg.Abort(rank, code, msg)
	}
}

// Mapping is PMI_process_mapping for a block distribution of perNode
// tasks over the step's nodes in order: "(vector,(0,3,2))" for 2 tasks on
// each of 3 nodes; a run of equal counts is one triple (first node,
// nodes, tasks each).
func Mapping(perNode []int) string {
	var b strings.Builder
	b.WriteString("(vector")
	for i := 0; i < len(perNode); {
		j := i
		for j < len(perNode) && perNode[j] == perNode[i] {
			j++
		}
		fmt.Fprintf(&b, ",(%d,%d,%d)", i, j-i, perNode[i])
		i = j
	}
	b.WriteString(")")
	return b.String()
}
