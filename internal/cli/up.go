package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/ctld"
	"github.com/sluice-hpc/sluice/internal/hostlist"
	"github.com/sluice-hpc/sluice/internal/noded"
)

func init() {
	Register(Command{Name: "up", Summary: "start a whole cluster on this machine (controller + node agents)", Run: runUp})
}

const upUsage = `Usage: sluice up [--nodes N] [--state DIR] [--conf FILE] [-v]

Starts an all-in-one cluster in the foreground: the controller, its SQLite
store in the state directory, and one node agent per node running real
processes on this machine. Without --conf a slurm.conf is generated in the
state directory (N nodes sharing this machine's CPUs and memory, one
partition "debug"). Ctrl-C stops the cluster; running it again recovers
every job.

  --nodes N      number of nodes of the generated configuration (default 4)
  --state DIR    state directory (default ~/.sluice, /var/lib/sluice for root)
  --conf FILE    use this slurm.conf (every node runs here)
  --rest-listen ADDR  also serve slurmrestd's REST API on ADDR (host:port or unix:/path)
  -v, --verbose  debug logging
`

type upFlags struct {
	nodes         int
	state, conf   string
	restListen    string
	verbose, help bool
}

func runUp(ctx context.Context, env *Env, args []string) int {
	f, err := parseUpFlags(env, args)
	if err != nil {
		return Errorf(env, "up", "%v", err)
	}
	if f.help {
		fmt.Fprint(env.Stdout, upUsage)
		return 0
	}
	path := f.conf
	if path == "" {
		if path, err = ensureGeneratedConf(env, f.state, f.nodes); err != nil {
			return Errorf(env, "up", "%v", err)
		}
	}
	if path, err = filepath.Abs(path); err != nil {
		return Errorf(env, "up", "%v", err)
	}
	cfg, _, err := conf.Load(path)
	if err != nil {
		return Errorf(env, "up", "%v", err)
	}
	if f.conf != "" && f.state != "" {
		cfg.StateSaveLocation = f.state
	}
	log, level := newLogger(env, f.verbose)
	listen := net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.SlurmctldPort))
	var agents []*noded.Agent
	restSet, restStop, err := restInProcess(f.restListen, log)
	if err != nil {
		return Errorf(env, "up", "%v", err)
	}
	defer restStop()
	// The agents are started once: a reconfigure keeps the controller's
	// address and cluster key, and they register again with the next one.
	err = serveReconfigurable(ctx, cfg, ctld.Options{Listen: listen, Logger: log, LogLevel: level, BatchCadence: true}, func(c *ctld.Controller, first bool) error {
		restSet(c)
		if !first {
			return nil
		}
		var err error
		if agents, err = startLocalAgents(ctx, cfg, c, log); err != nil {
			return err
		}
		printUp(env, cfg, c, path)
		return nil
	}, func() {
		fmt.Fprintln(env.Stderr, "sluice up: stopping (running jobs keep running and are found again at the next start)")
		for _, a := range agents {
			a.Close()
		}
	})
	if err != nil {
		for _, a := range agents {
			a.Close()
		}
		return Errorf(env, "up", "%v", err)
	}
	return 0
}

func parseUpFlags(env *Env, args []string) (*upFlags, error) {
	f := &upFlags{}
	fs := pflag.NewFlagSet("up", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&f.nodes, "nodes", 4, "")
	fs.StringVar(&f.state, "state", "", "")
	fs.StringVar(&f.conf, "conf", "", "")
	fs.StringVar(&f.restListen, "rest-listen", "", "")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "")
	fs.BoolVarP(&f.help, "help", "h", false, "")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if f.nodes < 1 || f.nodes > 1024 {
		return nil, fmt.Errorf("--nodes must be between 1 and 1024")
	}
	if f.state == "" && f.conf == "" {
		f.state = defaultStateDir(env)
	}
	if f.state != "" {
		abs, err := filepath.Abs(f.state)
		if err != nil {
			return nil, err
		}
		f.state = abs
	}
	return f, nil
}

// defaultStateDir is ~/.sluice, or /var/lib/sluice for root.
func defaultStateDir(env *Env) string {
	if env.UID == 0 {
		return "/var/lib/sluice"
	}
	return filepath.Join(env.Getenv("HOME"), ".sluice")
}

// ensureGeneratedConf writes STATE/slurm.conf on the first start and
// reuses it afterwards (so that a restart recovers the same cluster).
func ensureGeneratedConf(env *Env, state string, nodes int) (string, error) {
	path := filepath.Join(state, "slurm.conf")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	// Created private (see ctld.StateDirMode): it will hold every job's
	// script and environment.
	if err := ctld.PrepareStateDir(state); err != nil {
		return "", err
	}
	port, err := api.FreePort()
	if err != nil {
		return "", err
	}
	text := GenerateConf(GenConf{State: state, Nodes: nodes, CPUs: runtime.NumCPU(), MemoryMB: hostMemoryMB(),
		Port: port, User: userName(env.UID)})
	return path, os.WriteFile(path, []byte(text), 0o644)
}

// GenConf describes the generated default cluster.
type GenConf struct {
	State    string
	Nodes    int
	CPUs     int
	MemoryMB int64
	Port     int
	User     string
}

// GenerateConf returns the slurm.conf of `sluice up`: the machine's CPUs
// and memory split between the nodes (at least one CPU each), one default
// partition, quick failure detection and a short KillWait.
func GenerateConf(g GenConf) string {
	cpus := max(g.CPUs/g.Nodes, 1)
	mem := max(g.MemoryMB/int64(g.Nodes)*9/10, 100)
	names := make([]string, g.Nodes)
	for i := range names {
		names[i] = "node" + strconv.Itoa(i+1)
	}
	nodes := hostlist.Compress(names)
	var b strings.Builder
	fmt.Fprintf(&b, `# Generated by sluice up: %d nodes on this machine. Edit freely; it is
# read again at every start.
ClusterName=sluice
SlurmctldHost=localhost
SlurmctldPort=%d
SlurmUser=%s
StateSaveLocation=%s
SlurmdSpoolDir=%s
AccountingStorageType=accounting_storage/sqlite
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=5
# Prometheus metrics on SlurmctldPort: /metrics/jobs, /metrics/nodes, ...
MetricsType=metrics/openmetrics
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightJobSize=100
ReturnToService=1
SlurmdTimeout=30
KillWait=5
MinJobAge=300
NodeName=%s CPUs=%d RealMemory=%d State=UNKNOWN
PartitionName=debug Nodes=%s Default=YES MaxTime=INFINITE State=UP
`, g.Nodes, g.Port, g.User, g.State, filepath.Join(g.State, "spool"), nodes, cpus, mem, nodes)
	return b.String()
}

// hostMemoryMB reads MemTotal from /proc/meminfo (1024 MB if unknown).
func hostMemoryMB() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 1024
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			if err == nil {
				return kb / 1024
			}
		}
	}
	return 1024
}

// startLocalAgents starts one in-process agent per node of the
// configuration, offering the configured CPUs and memory.
func startLocalAgents(ctx context.Context, cfg *conf.Config, c *ctld.Controller, log *slog.Logger) ([]*noded.Agent, error) {
	spool := cfg.SlurmdSpoolDir
	if spool == "" || spool == "/var/spool/slurmd" {
		spool = filepath.Join(cfg.StateSaveLocation, "spool")
	}
	var agents []*noded.Agent
	for _, n := range cfg.Nodes {
		a, err := noded.New(noded.Config{Name: n.Name, ControllerURL: c.URL(), Spool: filepath.Join(spool, n.Name),
			Key: c.ClusterKey(), Listen: "127.0.0.1:0", CPUs: n.CPUs, MemoryMB: n.RealMemory, Version: Version,
			HeartbeatInterval: 5 * time.Second, PollInterval: 100 * time.Millisecond, Logger: log})
		if err == nil {
			err = a.Start(ctx)
		}
		if err != nil {
			for _, o := range agents {
				o.Close()
			}
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
		agents = append(agents, a)
	}
	return agents, nil
}

func printUp(env *Env, cfg *conf.Config, c *ctld.Controller, path string) {
	names := cfg.NodeNames()
	fmt.Fprintf(env.Stdout, "sluice: cluster %q is up with %d nodes (%s)\n", cfg.ClusterName, len(names), hostlist.Compress(names))
	fmt.Fprintf(env.Stdout, "  config:     %s\n", path)
	fmt.Fprintf(env.Stdout, "  socket:     %s\n", c.Socket())
	fmt.Fprintf(env.Stdout, "  agents/API: %s\n", c.URL())
	fmt.Fprintf(env.Stdout, "  state:      %s\n", cfg.StateSaveLocation)
	fmt.Fprintf(env.Stdout, "In another shell:\n  export SLURM_CONF=%s\n  sbatch --wrap 'hostname; sleep 5'; squeue; sinfo\n", path)
	fmt.Fprintf(env.Stdout, "Ctrl-C stops the cluster; `sluice up` again recovers it.\n")
}
