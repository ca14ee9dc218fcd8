// Command sluice is the one binary of Sluice. It dispatches on the name it
// was invoked as (sbatch, squeue, ... installed as links) or on its first
// argument (sluice sbatch ...).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/sluice-hpc/sluice/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, cli.OSEnv(), os.Args)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, env *cli.Env, argv []string) int {
	name := filepath.Base(argv[0])
	if c, ok := cli.Lookup(name); ok && c.Link {
		if cli.VersionRequested(name, argv[1:]) {
			fmt.Fprintln(env.Stdout, cli.VersionLine())
			return 0
		}
		return c.Run(ctx, env, argv[1:])
	}
	args := argv[1:]
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		usage(env)
		if len(args) == 0 {
			return 1
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-V" {
		args[0] = "version"
	}
	c, ok := cli.Lookup(args[0])
	if !ok {
		return cli.Errorf(env, "sluice", "unknown command %q; run 'sluice --help' for the list", args[0])
	}
	if c.Link && cli.VersionRequested(c.Name, args[1:]) {
		fmt.Fprintln(env.Stdout, cli.VersionLine())
		return 0
	}
	return c.Run(ctx, env, args[1:])
}

func usage(env *cli.Env) {
	fmt.Fprintln(env.Stdout, "Usage: sluice COMMAND [ARGS...]   (or invoke a Slurm command name through a link)")
	fmt.Fprintln(env.Stdout, "\nCommands:")
	for _, c := range cli.Commands() {
		fmt.Fprintf(env.Stdout, "  %-16s %s\n", c.Name, c.Summary)
	}
}
