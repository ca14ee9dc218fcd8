package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/acct"
	"github.com/sluice-hpc/sluice/internal/api"
)

// sacctmgr through the controller. When a controller answers on the
// cluster's socket (or at SlurmctldPort with $SLURM_JWT), a sacctmgr
// command line is sent to it: the controller runs it against its
// accounting store as the caller its peer credentials (or token)
// identify, and refreshes its live policy (limits, QOS, fair-share tree)
// at once, as slurmctld does when slurmdbd pushes an update. Without a
// controller, the direct-store path of sacctmgr.go is used.
//
// The routing wraps the registered sacctmgr command (sacctmgr.go, owned
// by the accounting CLI, initialises first: files initialise in name
// order) instead of editing it; sacctmgr.go can call
// sacctmgrViaController itself and this init can go.
func init() {
	regMu.Lock()
	defer regMu.Unlock()
	c, ok := registry["sacctmgr"]
	if !ok {
		return
	}
	direct := c.Run
	c.Run = func(ctx context.Context, env *Env, args []string) int {
		if rc, handled := sacctmgrViaController(ctx, env, args); handled {
			return rc
		}
		return direct(ctx, env, args)
	}
	registry["sacctmgr"] = c
}

// sacctmgrLocalVerbs are run by the direct path even with a controller.
var sacctmgrLocalVerbs = map[string]bool{"help": true, "version": true, "exit": true, "quit": true}

// sacctmgrViaController sends one command line to a running controller.
// Without a command, the lines of stdin are sent one by one (interactive
// mode). handled is false when the direct path should run it (a local
// verb, or no controller answering).
func sacctmgrViaController(ctx context.Context, env *Env, args []string) (rc int, handled bool) {
	path, rest, err := sacctmgrConfFlag(args)
	if err != nil || env.Getenv == nil {
		return 0, false
	}
	verb := ""
	for _, a := range rest {
		if a == "-h" || a == "--help" || a == "-V" || a == "--version" {
			return 0, false
		}
		if !strings.HasPrefix(a, "-") {
			verb = strings.ToLower(a)
			break
		}
	}
	if sacctmgrLocalVerbs[verb] {
		return 0, false
	}
	cenv := *env
	if path != "" {
		get := env.Getenv
		abs := absFrom(env, path)
		cenv.Getenv = func(k string) string {
			if k == "SLURM_CONF" {
				return abs
			}
			return get(k)
		}
	}
	cl, err := controllerClient(&cenv)
	if err != nil {
		return 0, false
	}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	_, err = cl.Ping(pctx)
	cancel()
	if err != nil {
		return 0, false
	}
	if verb == "" {
		return sacctmgrLinesViaController(ctx, env, cl, rest), true
	}
	return sacctmgrOneViaController(ctx, env, cl, rest), true
}

// sacctmgrLinesViaController is interactive mode (commands on stdin, one
// per line, until exit or quit) through the controller.
func sacctmgrLinesViaController(ctx context.Context, env *Env, cl *api.Client, opts []string) int {
	rc := 0
	sc := bufio.NewScanner(env.Stdin)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
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
		if sacctmgrOneViaController(ctx, env, cl, append(append([]string{}, opts...), words...)) != 0 {
			rc = 1
		}
	}
	return rc
}

// sacctmgrOneViaController runs one command line on the controller.
func sacctmgrOneViaController(ctx context.Context, env *Env, cl *api.Client, rest []string) int {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req := api.SacctmgrRequest{Args: rest}
	if _, words, err := acct.ParseOptions(rest); err == nil {
		if cmd, err := acct.Parse(words); err == nil && cmd.Verb == acct.VerbLoad && cmd.File != "" {
			data, err := os.ReadFile(absFrom(env, cmd.File))
			if err != nil {
				return Errorf(env, "sacctmgr", "%v", err)
			}
			req.Files = map[string][]byte{cmd.File: data}
		}
	}
	res, err := cl.Sacctmgr(ctx, req)
	for _, w := range res.Warnings {
		fmt.Fprintf(env.Stderr, "sacctmgr: warning: %s\n", w)
	}
	if err != nil {
		var ae *api.Error
		if errors.As(err, &ae) {
			return sacctmgrFailed(env, ae.Message)
		}
		return clientError(env, "sacctmgr", err)
	}
	for name, data := range res.Files {
		if err := os.WriteFile(absFrom(env, name), data, 0o644); err != nil {
			return Errorf(env, "sacctmgr", "%v", err)
		}
	}
	fmt.Fprint(env.Stdout, res.Out)
	return 0
}
