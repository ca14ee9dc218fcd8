// Command oracle-diff plays the differential suite's scenarios (test/oracle)
// on real Slurm and on Sluice.
//
//	oracle-diff record [-only a,b]   play on the oracle, rewrite the golden files
//	oracle-diff live   [-only a,b]   play on both at once and compare
//	oracle-diff check  [-only a,b]   play on Sluice and compare with the golden files
//
// The oracle is ../shared/oracle/oracle.sh (ORACLE_SH overrides); Sluice is
// the binary given by -sluice (default bin/sluice). It needs root: it brings
// clusters up and runs commands as the scenario users.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/sluice-hpc/sluice/test/oracle"
)

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "record" && os.Args[1] != "live" && os.Args[1] != "check") {
		fmt.Fprintln(os.Stderr, "usage: oracle-diff record|live|check [-only NAME,...] [-dir test/oracle] [-sluice bin/sluice] [-parallel N]")
		os.Exit(2)
	}
	mode := os.Args[1]
	fs := flag.NewFlagSet(mode, flag.ExitOnError)
	only := fs.String("only", "", "comma-separated scenario names (default: all)")
	dir := fs.String("dir", "test/oracle", "the suite's directory")
	bin := fs.String("sluice", "bin/sluice", "the sluice binary")
	parallel := fs.Int("parallel", 3, "scenarios played on Sluice at once (check)")
	stale := fs.Bool("stale", false, "record: only scenarios whose golden file is missing or from another version of the scenario")
	_ = fs.Parse(os.Args[2:])

	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "oracle-diff: must run as root (it starts clusters and runs commands as alice, bob, charlie and dave)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var names []string
	if *only != "" {
		names = strings.Split(*only, ",")
	}
	suite, err := oracle.LoadSuite(*dir, names)
	if err != nil {
		fail(err)
	}
	scripts := os.Getenv("ORACLE_SH")
	if scripts == "" {
		scripts = "../shared/oracle/oracle.sh"
	}
	// ORACLE_SH may name several oracles (scripts setting their own
	// ORACLE_ROOT, ORACLE_STATE and ports), comma-separated: they play
	// scenarios in parallel.
	var orcs []oracle.Target
	for _, sc := range strings.Split(scripts, ",") {
		orcs = append(orcs, &oracle.OracleTarget{Script: sc})
	}
	newSluice := func() oracle.Target { return &oracle.SluiceTarget{Binary: *bin, BaseConf: suite.BaseConf} }
	if mode != "record" {
		if err := oracle.EnsureUsers(); err != nil {
			fail(err)
		}
	}
	var outs []oracle.Outcome
	switch mode {
	case "record":
		if *stale {
			suite.Scenarios = suite.Stale()
		}
		if err := suite.Record(ctx, orcs, os.Stdout); err != nil {
			fail(err)
		}
		fmt.Printf("recorded %d scenarios into %s/golden\n", len(suite.Scenarios), *dir)
		return
	case "live":
		outs = suite.Live(ctx, orcs, newSluice, os.Stdout)
	case "check":
		outs = suite.CheckGolden(ctx, newSluice, *parallel, os.Stdout)
	}
	_, unexpected, equalNow := oracle.Report(os.Stdout, outs, suite.Known)
	for _, s := range equalNow {
		fmt.Printf("differential: listed in differences.txt but now equal: %s\n", s)
	}
	for _, o := range outs {
		if o.Err != nil {
			os.Exit(1)
		}
	}
	if len(unexpected) > 0 {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "oracle-diff:", err)
	os.Exit(1)
}
