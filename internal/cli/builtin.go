package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Version is the release printed by `sluice version`; set at link time with
// -ldflags "-X github.com/sluice-hpc/sluice/internal/cli.Version=...".
var Version = "0.1.0-dev"

func init() {
	Register(Command{Name: "version", Summary: "print the sluice version", Run: runVersion})
	Register(Command{Name: "install-links", Summary: "install sbatch, squeue, ... as links to this binary in DIR", Run: runInstallLinks})
}

func runVersion(_ context.Context, env *Env, _ []string) int {
	fmt.Fprintf(env.Stdout, "sluice %s\n", Version)
	return 0
}

// runInstallLinks creates one symlink per Slurm command pointing at the
// running binary, so users keep typing `sbatch` and `squeue`.
func runInstallLinks(_ context.Context, env *Env, args []string) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(env.Stdout, "usage: sluice install-links DIR (links the Slurm command names in DIR to this binary)")
		return 0
	}
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		// An option is never taken for a directory name.
		return Errorf(env, "install-links", "usage: sluice install-links DIR")
	}
	dir := args[0]
	self, err := os.Executable()
	if err != nil {
		return Errorf(env, "install-links", "cannot find own executable: %v", err)
	}
	if self, err = filepath.EvalSymlinks(self); err != nil {
		return Errorf(env, "install-links", "%v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Errorf(env, "install-links", "%v", err)
	}
	for _, c := range Commands() {
		if !c.Link {
			continue
		}
		link := filepath.Join(dir, c.Name)
		_ = os.Remove(link)
		if err := os.Symlink(self, link); err != nil {
			return Errorf(env, "install-links", "%v", err)
		}
		fmt.Fprintf(env.Stdout, "%s -> %s\n", link, self)
	}
	return 0
}
