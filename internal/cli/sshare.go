package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sluice-hpc/sluice/internal/api"
)

func init() {
	Register(Command{Name: "sshare", Summary: "fair-share tree: shares, usage and FairShare of accounts and users", Link: true, Run: runSshare})
}

const sshareUsage = `Usage: sshare [-a] [-A ACCOUNTS] [-u USERS] [-U] [-l] [-m] [-n] [-p | -P] [-o FIELDS]
Shows the live fair-share tree of the controller: every account row, and
your own user rows (all with -a, those named with -u).
`

func parseSshare(args []string) (api.SshareRequest, bool, error) {
	req, _, help, err := parseSshareDP(args)
	return req, help, err
}

// parseSshareDP is parseSshare with --json/--yaml (cli/dataparser.go).
func parseSshareDP(args []string) (api.SshareRequest, *dpFlags, bool, error) {
	var req api.SshareRequest
	fs := pflag.NewFlagSet("sshare", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVarP(&req.All, "all", "a", false, "")
	fs.BoolVarP(&req.Long, "long", "l", false, "")
	fs.BoolVarP(&req.UsersOnly, "Users", "U", false, "")
	fs.BoolVarP(&req.NoHeader, "noheader", "n", false, "")
	fs.BoolVarP(&req.Partition, "partition", "m", false, "")
	fs.BoolVarP(&req.Parsable, "parsable", "p", false, "")
	fs.BoolVarP(&req.Parsable2, "parsable2", "P", false, "")
	fs.StringSliceVarP(&req.Accounts, "accounts", "A", nil, "")
	fs.StringSliceVarP(&req.Users, "users", "u", nil, "")
	fs.StringSliceVarP(&req.Format, "format", "o", nil, "")
	fs.StringP("cluster", "M", "", "")
	help := fs.Bool("help", false, "")
	usage := fs.Bool("usage", false, "")
	noHeader2 := fs.BoolP("no-header", "h", false, "")
	fs.CountP("verbose", "v", "") // no debug output to give
	dp := addDataParserFlags(fs)
	if err := fs.Parse(args); err != nil {
		return req, dp, false, err
	}
	for i, a := range req.Accounts {
		req.Accounts[i] = strings.ToLower(a) // stored lowercase, as in Slurm
	}
	if fs.NArg() > 0 {
		return req, dp, false, fmt.Errorf("unrecognized argument %q", fs.Arg(0))
	}
	req.NoHeader = req.NoHeader || *noHeader2
	return req, dp, *help || *usage, nil
}

func runSshare(ctx context.Context, env *Env, args []string) int {
	req, dp, help, err := parseSshareDP(args)
	if err != nil {
		return OptionError(env, "sshare", err)
	}
	if help {
		fmt.Fprint(env.Stdout, sshareUsage)
		return 0
	}
	// An unknown data_parser makes sshare exit 253 (oracle).
	if _, ok, rc := dpStart(env, "sshare", dp, 253); ok && rc >= 0 {
		return rc
	}
	cl, err := controllerClient(env)
	if err != nil {
		return clientError(env, "sshare", err)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if f, ok := dp.format(); ok {
		return sshareDataParser(ctx, env, cl, f, req, args)
	}
	text, err := cl.Sshare(ctx, req)
	if err != nil {
		return clientError(env, "sshare", err)
	}
	fmt.Fprint(env.Stdout, text)
	return 0
}
