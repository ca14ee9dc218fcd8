package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/acct"
	"github.com/sluice-hpc/sluice/internal/acct/sqlstore"
	"github.com/sluice-hpc/sluice/internal/conf"
)

func init() {
	Register(Command{Name: "sacctmgr", Link: true, Summary: "view and modify accounting: accounts, users, associations, QOS, limits", Run: runSacctmgr})
}

// sacctmgrConfirmTimeout is how long sacctmgr waits for an answer.
const sacctmgrConfirmTimeout = 30 * time.Second

// runSacctmgr runs one sacctmgr command line, or every line read from
// stdin when none is given (sacctmgr's interactive mode), against the
// store named by slurm.conf ($SLURM_CONF or --conf FILE).
func runSacctmgr(ctx context.Context, env *Env, args []string) int {
	confPath, args, err := sacctmgrConfFlag(args)
	if err != nil {
		return Errorf(env, "sacctmgr", "%v", err)
	}
	for _, a := range args {
		switch a {
		case "-h", "--help", "help":
			fmt.Fprint(env.Stdout, sacctmgrUsage)
			return 0
		case "-V", "--version", "version":
			fmt.Fprintf(env.Stdout, "sluice %s\n", Version)
			return 0
		}
	}
	cfg, store, err := openAcctStore(ctx, env, confPath)
	if err != nil {
		return Errorf(env, "sacctmgr", "%v", err)
	}
	defer store.Close()
	renv := sacctmgrRunEnv(env, cfg)
	if len(args) == 0 || onlyOptions(args) {
		return sacctmgrInteractive(ctx, env, store, renv, args)
	}
	return sacctmgrOne(ctx, env, store, renv, args)
}

const sacctmgrUsage = `Usage: sacctmgr [-i] [-n] [-p|-P] [-Q] [-s] [--conf FILE] COMMAND
  add|create    cluster|account|user|qos NAME [SPEC=VALUE ...]
  modify|update cluster|account|user|qos|association [where SPECS] set SPECS
  delete|remove cluster|account|user|qos|association where SPECS
  show|list     cluster|account|user|qos|association|tres [SPECS] [format=COL[%N],...] [tree]
  dump CLUSTER [file=FILE]      load FILE [cluster=NAME] [clean]
With no COMMAND, commands are read from standard input, one per line.
`

// sacctmgrConfFlag extracts --conf FILE / --conf=FILE.
func sacctmgrConfFlag(args []string) (string, []string, error) {
	path := ""
	rest := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--conf":
			if i+1 >= len(args) {
				return "", nil, errors.New("option '--conf' requires an argument")
			}
			path = args[i+1]
			i++
		case strings.HasPrefix(a, "--conf="):
			path = strings.TrimPrefix(a, "--conf=")
		default:
			rest = append(rest, a)
		}
	}
	return path, rest, nil
}

func onlyOptions(args []string) bool {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return false
		}
	}
	return true
}

// openAcctStore loads slurm.conf and opens the accounting store it names
// (AccountingStorageType / AccountingStorageLoc).
func openAcctStore(ctx context.Context, env *Env, path string) (*conf.Config, acct.Store, error) {
	if path == "" && env.Getenv != nil {
		path = env.Getenv("SLURM_CONF")
	}
	if path == "" {
		path = defaultSlurmConf
	}
	path = absFrom(env, path)
	cfg, _, err := conf.Load(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%v", err)
	}
	a := cfg.Accounting
	if a.Store == conf.StoreSQLite || a.Store == "" {
		if err := os.MkdirAll(filepath.Dir(a.Loc), 0o755); err != nil {
			return nil, nil, fmt.Errorf("accounting store: %v", err)
		}
	}
	store, err := sqlstore.Open(ctx, string(a.Store), a.Loc)
	if err != nil {
		return nil, nil, err
	}
	return cfg, store, nil
}

func absFrom(env *Env, p string) string {
	if filepath.IsAbs(p) || env.Cwd == "" {
		return p
	}
	return filepath.Join(env.Cwd, p)
}

// sacctmgrRunEnv builds the library's environment: who runs the command
// (identified by uid, never by a claimed name), the configured cluster,
// file access for dump/load and, on a terminal, the confirmation prompt.
func sacctmgrRunEnv(env *Env, cfg *conf.Config) acct.RunEnv {
	renv := acct.RunEnv{ExecEnv: acct.ExecEnv{
		Actor:          acct.Actor{Name: userName(env.UID), UID: env.UID},
		DefaultCluster: cfg.ClusterName,
		ReadFile:       func(name string) ([]byte, error) { return os.ReadFile(absFrom(env, name)) },
	}}
	renv.WriteFile = func(name string, data []byte) error { return os.WriteFile(absFrom(env, name), data, 0o644) }
	if env.IsTerminal {
		renv.Confirm = func(summary string) bool { return sacctmgrConfirm(env, summary) }
	}
	return renv
}

// userName returns the login name of uid ("root" for 0).
func userName(uid int) string {
	if uid == 0 {
		return "root"
	}
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	return strconv.Itoa(uid)
}

// sacctmgrConfirm prints the pending change and asks, as sacctmgr does on
// a terminal; no answer within 30 seconds means no.
func sacctmgrConfirm(env *Env, summary string) bool {
	fmt.Fprint(env.Stdout, summary)
	fmt.Fprint(env.Stdout, "Would you like to commit changes? (You have 30 seconds to decide)\n(N/y): ")
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(env.Stdin).ReadString('\n')
		answer <- line
	}()
	select {
	case line := <-answer:
		return strings.HasPrefix(strings.TrimSpace(strings.ToLower(line)), "y")
	case <-time.After(sacctmgrConfirmTimeout):
		fmt.Fprintln(env.Stdout)
		return false
	}
}

// sacctmgrOne runs one command and prints its output or error.
func sacctmgrOne(ctx context.Context, env *Env, store acct.Store, renv acct.RunEnv, args []string) int {
	out, warns, err := acct.Run(ctx, store, args, renv)
	for _, w := range warns {
		fmt.Fprintf(env.Stderr, "sacctmgr: warning: %s\n", w)
	}
	if err != nil {
		return sacctmgrFailed(env, err.Error())
	}
	fmt.Fprint(env.Stdout, out)
	return 0
}

// sacctmgrFailed prints a failed command as sacctmgr does: most errors as
// `sacctmgr: error: ...`, some on stdout or on stderr without the prefix
// (acct.ErrorOutput decides), and exits 1.
func sacctmgrFailed(env *Env, text string) int {
	stdout, stderr := acct.ErrorOutput(text)
	fmt.Fprint(env.Stdout, stdout)
	fmt.Fprint(env.Stderr, stderr)
	return 1
}

// sacctmgrInteractive reads commands from stdin (one per line, `exit` or
// `quit` ends); the exit status is 1 if any command failed.
func sacctmgrInteractive(ctx context.Context, env *Env, store acct.Store, renv acct.RunEnv, opts []string) int {
	renv.Confirm = nil // stdin carries the commands, not the answers
	rc := 0
	sc := bufio.NewScanner(env.Stdin)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	prompt := func() {
		if env.IsTerminal {
			fmt.Fprint(env.Stdout, "sacctmgr: ")
		}
	}
	for prompt(); sc.Scan(); prompt() {
		words, err := acct.ScriptArgs(sc.Text())
		if err != nil {
			rc = Errorf(env, "sacctmgr", "%v", err)
			continue
		}
		if len(words) == 0 {
			continue
		}
		if w := strings.ToLower(words[0]); w == "exit" || w == "quit" {
			break
		}
		if sacctmgrOne(ctx, env, store, renv, append(append([]string{}, opts...), words...)) != 0 {
			rc = 1
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return Errorf(env, "sacctmgr", "%v", err)
	}
	return rc
}
