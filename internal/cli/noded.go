package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/noded"
)

func init() {
	Register(Command{Name: "noded", Summary: "run a node agent (slurmd): sluice noded --name NODE --controller URL", Run: runNoded})
	Register(Command{Name: noded.ShimCommandName, Summary: "internal: the node's resident job supervisor started by sluice noded", Run: runNodedShim})
}

const nodedUsage = `Usage: sluice noded --name NODE --controller URL [--spool DIR] [--key FILE] [options]

Runs the node agent of one node (Slurm's slurmd): registers the node's CPUs,
memory and GPUs with the controller, runs the jobs it is given as their users
and reports how they end. Jobs keep running if the agent stops; a restarted
agent on the same spool re-attaches to them.

  --name NODE          node name as in slurm.conf (default: short host name)
  --controller URL     controller address for agents (http://host:port; the
                       agent joins with the key and then speaks https to it)
  --spool DIR          state directory (default /var/spool/sluice/NODE as root,
                       ~/.sluice/spool/NODE otherwise)
  --key FILE           cluster key (default /var/lib/sluice/cluster.key as
                       root, ~/.sluice/cluster.key otherwise)
  --listen ADDR        address of the agent's API (default :6818)
  --advertise URL      URL the controller should use to reach this agent
  --cpus N             CPUs to offer (default: detected)
  --memory MB          memory to offer in MB (default: detected)
  --gres-conf FILE     gres.conf: use its Name=gpu lines instead of detection
  --cgroup DIR|none    cgroup v2 directory for jobs (default: detected, root only)
  -v, --verbose        debug logging
`

type nodedFlags struct {
	name, controller, spool, key, listen, advertise, gresConf, cgroup string
	cpus                                                              int
	memory                                                            int64
	verbose, help                                                     bool
}

func parseNodedFlags(env *Env, args []string) (*nodedFlags, error) {
	f := &nodedFlags{}
	fs := pflag.NewFlagSet("noded", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.name, "name", "", "")
	fs.StringVar(&f.controller, "controller", "", "")
	fs.StringVar(&f.spool, "spool", "", "")
	fs.StringVar(&f.key, "key", "", "")
	fs.StringVar(&f.listen, "listen", ":6818", "")
	fs.StringVar(&f.advertise, "advertise", "", "")
	fs.StringVar(&f.gresConf, "gres-conf", "", "")
	fs.StringVar(&f.cgroup, "cgroup", "", "")
	fs.IntVar(&f.cpus, "cpus", 0, "")
	fs.Int64Var(&f.memory, "memory", 0, "")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "")
	fs.BoolVarP(&f.help, "help", "h", false, "")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if f.name == "" {
		host, _ := os.Hostname()
		f.name, _, _ = strings.Cut(host, ".")
	}
	root := env.UID == 0
	home := env.Getenv("HOME")
	if f.spool == "" {
		if root {
			f.spool = filepath.Join("/var/spool/sluice", f.name)
		} else {
			f.spool = filepath.Join(home, ".sluice", "spool", f.name)
		}
	}
	if f.key == "" {
		if root {
			f.key = filepath.Join("/var/lib/sluice", api.ClusterKeyFile)
		} else {
			f.key = filepath.Join(home, ".sluice", api.ClusterKeyFile)
		}
	}
	if f.cpus < 0 || f.memory < 0 {
		return nil, fmt.Errorf("--cpus and --memory must not be negative")
	}
	return f, nil
}

func runNoded(ctx context.Context, env *Env, args []string) int {
	f, err := parseNodedFlags(env, args)
	if err != nil {
		return Errorf(env, "noded", "%v", err)
	}
	if f.help {
		fmt.Fprint(env.Stdout, nodedUsage)
		return 0
	}
	if f.controller == "" {
		return Errorf(env, "noded", "--controller URL is required")
	}
	key, err := api.LoadClusterKey(f.key)
	if err != nil {
		return Errorf(env, "noded", "%v", err)
	}
	cfg := noded.Config{
		Name: f.name, ControllerURL: f.controller, Spool: f.spool, Key: key,
		Listen: f.listen, Advertise: f.advertise, CPUs: f.cpus, MemoryMB: f.memory,
		CgroupBase: f.cgroup, Version: Version,
	}
	if f.gresConf != "" {
		data, err := os.ReadFile(f.gresConf)
		if err != nil {
			return Errorf(env, "noded", "%v", err)
		}
		cfg.GPUs.Static = string(data)
	}
	level := slog.LevelInfo
	if f.verbose {
		level = slog.LevelDebug
	}
	stderr := &SyncWriter{W: env.Stderr}
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	agent, err := noded.New(cfg)
	if err != nil {
		return Errorf(env, "noded", "%v", err)
	}
	if err := agent.Start(ctx); err != nil {
		return Errorf(env, "noded", "%v", err)
	}
	res := agent.Info().Resources
	fmt.Fprintf(stderr, "sluice noded: node %s (CPUs=%d RealMemory=%d GPUs=%d) serving %s, controller %s\n",
		f.name, res.CPUs, res.RealMemoryMB, len(res.GPUs), agent.Addr(), f.controller)
	<-ctx.Done()
	closed := make(chan struct{})
	go func() { agent.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
	}
	return 0
}

func runNodedShim(_ context.Context, _ *Env, args []string) int {
	return noded.ShimMain(args)
}
