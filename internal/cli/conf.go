package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/duration"
)

func init() {
	Register(Command{Name: "conf", Summary: "check a slurm.conf: `sluice conf check [FILE]`", Run: runConf})
}

// defaultSlurmConf is where Slurm's commands look when SLURM_CONF is unset.
const defaultSlurmConf = "/etc/slurm/slurm.conf"

const confUsage = "usage: sluice conf check [FILE]   (FILE defaults to $SLURM_CONF, then " + defaultSlurmConf + ")"

// runConf dispatches the conf subcommands (only "check" so far).
func runConf(_ context.Context, env *Env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(env.Stdout, confUsage)
		if len(args) == 0 {
			return 1
		}
		return 0
	}
	if args[0] != "check" {
		return Errorf(env, "conf", "unknown subcommand %q; %s", args[0], confUsage)
	}
	if len(args) > 2 {
		return Errorf(env, "conf", "%s", confUsage)
	}
	path := ""
	if len(args) == 2 {
		path = args[1]
	} else if env.Getenv != nil {
		path = env.Getenv("SLURM_CONF")
	}
	if path == "" {
		path = defaultSlurmConf
	}
	return confCheck(env, path)
}

// confCheck loads the file and prints the summary, or every error as
// "conf: error: FILE:LINE: ..." and exit status 1.
func confCheck(env *Env, path string) int {
	cfg, warns, err := conf.Load(path)
	if err != nil {
		var list conf.ErrorList
		if errors.As(err, &list) {
			for _, e := range list {
				Errorf(env, "conf", "%s", e)
			}
			return 1
		}
		return Errorf(env, "conf", "%v", err)
	}
	printConfSummary(env.Stdout, cfg, warns)
	return 0
}

// printConfSummary writes the summary `sluice conf check` shows.
func printConfSummary(w io.Writer, c *conf.Config, warns []conf.Warning) {
	fmt.Fprintf(w, "%s: OK\n", c.Path)
	fmt.Fprintf(w, "ClusterName=%s\n", c.ClusterName)
	fmt.Fprintf(w, "Nodes=%d Partitions=%d DefaultPartition=%s\n", len(c.Nodes), len(c.Partitions), orNone(c.DefaultPartition))
	fmt.Fprintf(w, "PriorityType=%s SchedulerType=%s SelectTypeParameters=%s\n",
		c.Priority.Type, c.SchedulerType, c.SelectTypeParameters)
	fmt.Fprintf(w, "PreemptType=%s PreemptMode=%s PreemptExemptTime=%s\n", c.Preempt.Type, c.Preempt.Mode, duration.Format(c.Preempt.ExemptTime))
	fmt.Fprintf(w, "AccountingStorageType=%s AccountingStorageLoc=%s\n", c.Accounting.StorageType, redactDSN(c.Accounting.Loc))
	if c.Gres != nil {
		fmt.Fprintf(w, "GresConf=%s Lines=%d\n", c.Gres.Path, len(c.Gres.Lines))
	}
	fmt.Fprintf(w, "TRES=%s\n", c.TotalTRES())
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTITION\tNODES\tDEFAULT\tPRIORITYTIER\tPRIORITYJOBFACTOR\tMAXTIME\tSTATE\tNODELIST")
	for _, p := range c.Partitions {
		name := p.Name
		if p.Default {
			name += "*"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%s\t%s\t%s\n", name, len(p.Nodes), yesNo(p.Default),
			p.PriorityTier, p.PriorityJobFactor, duration.Format(p.MaxTime), p.State, p.NodesExpr)
	}
	tw.Flush()
	if len(warns) > 0 {
		fmt.Fprintf(w, "\nWarnings (%d):\n", len(warns))
		for _, wn := range warns {
			fmt.Fprintf(w, "  %s\n", wn)
		}
	}
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// redactDSN hides a password in a PostgreSQL URL so that conf check output
// can be pasted into a bug report.
func redactDSN(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		if at := strings.LastIndex(s, "@"); at > i {
			if c := strings.Index(s[i+3:at], ":"); c >= 0 {
				return s[:i+3+c+1] + "xxxxx" + s[at:]
			}
		}
	}
	return s
}
