package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sluice-hpc/sluice/internal/api"
)

func init() {
	Register(Command{Name: "sprio", Summary: "factors of pending jobs' priorities (multifactor)", Link: true, Run: runSprio})
}

const sprioUsage = `Usage: sprio [-j JOBS] [-u USERS] [-p PARTITIONS] [-l | -n | -w] [-o FORMAT] [-S SORT] [-h]
Shows the priority factors of pending jobs, computed by the controller
from its live fair-share tree and configuration (priority/multifactor).
`

// parseSprio reads sprio's options into the request the controller renders.
func parseSprio(args []string) (api.SprioRequest, bool, error) {
	var req api.SprioRequest
	fs := pflag.NewFlagSet("sprio", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVarP(&req.Long, "long", "l", false, "")
	fs.BoolVarP(&req.Norm, "norm", "n", false, "")
	fs.BoolVarP(&req.Weights, "weights", "w", false, "")
	fs.BoolVarP(&req.NoHeader, "noheader", "h", false, "")
	fs.StringVarP(&req.Format, "format", "o", "", "")
	jobs := fs.StringSliceP("jobs", "j", nil, "")
	fs.StringSliceVarP(&req.Users, "user", "u", nil, "")
	fs.StringSliceVar(&req.Users, "users", nil, "")
	fs.StringSliceVarP(&req.Partitions, "partition", "p", nil, "")
	fs.StringVarP(&req.Sort, "sort", "S", "", "")
	fs.StringP("cluster", "M", "", "")
	help := fs.Bool("help", false, "")
	usage := fs.Bool("usage", false, "")
	fs.CountP("verbose", "v", "") // no debug output to give
	if err := fs.Parse(args); err != nil {
		return req, false, err
	}
	if fs.NArg() > 0 {
		return req, false, fmt.Errorf("unrecognized argument %q", fs.Arg(0))
	}
	for _, j := range *jobs {
		n, err := strconv.ParseUint(strings.TrimSpace(j), 10, 32)
		if err != nil {
			return req, false, fmt.Errorf("Invalid job id: %s", j)
		}
		req.Jobs = append(req.Jobs, uint32(n))
	}
	return req, *help || *usage, nil
}

func runSprio(ctx context.Context, env *Env, args []string) int {
	req, help, err := parseSprio(args)
	if err != nil {
		return OptionError(env, "sprio", err)
	}
	if help {
		fmt.Fprint(env.Stdout, sprioUsage)
		return 0
	}
	cl, err := controllerClient(env)
	if err != nil {
		return clientError(env, "sprio", err)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	text, err := cl.Sprio(ctx, req)
	var ae *api.Error
	if errors.As(err, &ae) && ae.Status == 404 {
		// "Unable to find jobs matching user/id(s) specified": sprio
		// prints it on stdout and exits 1.
		fmt.Fprintln(env.Stdout, ae.Message)
		return 1
	}
	if err != nil {
		return clientError(env, "sprio", err)
	}
	fmt.Fprint(env.Stdout, text)
	return 0
}
