package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"golang.org/x/sys/unix"
)

// Env is everything a command may touch of the outside world. Commands take
// it as an argument instead of reaching for os.Stdout or os.Getenv, so tests
// run them in-process with buffers and a fake environment.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads an environment variable (os.Getenv in production).
	Getenv func(string) string
	// LookupEnv reads a variable and says whether it is set at all
	// (os.LookupEnv in production): sbatch's flag variables such as
	// SBATCH_REQUEUE are enabled by an empty value. Nil falls back to
	// Getenv, an empty value counting as unset.
	LookupEnv func(string) (string, bool)
	// UID and GID are the invoking user's ids.
	UID, GID int
	// Cwd is the working directory the command was started in.
	Cwd string
	// IsTerminal reports whether stdin is a terminal (sacctmgr asks for
	// confirmation only then, as Slurm does).
	IsTerminal bool
}

// OSEnv returns the Env of the running process.
func OSEnv() *Env {
	cwd, _ := os.Getwd()
	return &Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getenv: os.Getenv, LookupEnv: os.LookupEnv, UID: os.Getuid(), GID: os.Getgid(), Cwd: cwd,
		IsTerminal: isTerminal(os.Stdin),
	}
}

// lookupEnv is env.LookupEnv, or Getenv where the Env has none.
func (env *Env) lookupEnv() func(string) (string, bool) {
	if env.LookupEnv != nil {
		return env.LookupEnv
	}
	if env.Getenv == nil {
		return nil
	}
	return func(k string) (string, bool) {
		v := env.Getenv(k)
		return v, v != ""
	}
}

func isTerminal(f *os.File) bool {
	// A terminal answers the termios ioctl; /dev/null, also a character
	// device, does not (sbatch </dev/null reads an empty script).
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// Command is one user-facing command of the sluice binary.
type Command struct {
	// Name is what the user types: "sbatch", "squeue", "conf".
	Name string
	// Summary is the one line shown by `sluice --help`.
	Summary string
	// Link marks Slurm commands that `sluice install-links` installs as
	// links, so that `sbatch` works as well as `sluice sbatch`.
	Link bool
	// Run executes the command and returns the process exit status.
	Run func(ctx context.Context, env *Env, args []string) int
}

var (
	regMu    sync.Mutex
	registry = map[string]Command{}
)

// Register adds a command; each command file registers itself from init.
func Register(c Command) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[c.Name]; dup {
		panic("cli: command registered twice: " + c.Name)
	}
	registry[c.Name] = c
}

// Lookup finds a registered command by name.
func Lookup(name string) (Command, bool) {
	regMu.Lock()
	defer regMu.Unlock()
	c, ok := registry[name]
	return c, ok
}

// Commands lists every registered command sorted by name.
func Commands() []Command {
	regMu.Lock()
	defer regMu.Unlock()
	out := make([]Command, 0, len(registry))
	for _, c := range registry {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Errorf prints "<command>: error: <message>" to stderr, Slurm's shape for
// every client error, and returns exit status 1 so callers can
// `return Errorf(...)`.
func Errorf(env *Env, command, format string, a ...any) int {
	fmt.Fprintf(env.Stderr, "%s: error: %s\n", command, fmt.Sprintf(format, a...))
	return 1
}

// SyncWriter serialises writes to an underlying writer. Daemons started from
// a command (noded, up, ctld) log from several goroutines into env.Stderr,
// which may be a plain buffer in tests.
type SyncWriter struct {
	mu sync.Mutex
	W  io.Writer
}

// Write writes p to the underlying writer under the lock.
func (s *SyncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.W.Write(p)
}
