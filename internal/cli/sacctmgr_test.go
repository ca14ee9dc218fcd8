package cli

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-hpc/sluice/internal/acct"
	"github.com/sluice-hpc/sluice/internal/pgtest"
)

// acctCluster is a throwaway cluster config whose SQLite store lives in a
// temporary StateSaveLocation.
type acctCluster struct {
	t    *testing.T
	conf string
}

func newAcctCluster(t *testing.T, name string) *acctCluster {
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	text := "ClusterName=" + name + "\nSlurmctldHost=head\nStateSaveLocation=" + filepath.Join(dir, "state") +
		"\nAccountingStorageTRES=gres/gpu\nNodeName=n1 CPUs=4\nPartitionName=p Nodes=n1 Default=YES\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return &acctCluster{t: t, conf: conf}
}

// sacctmgr runs `sluice sacctmgr ARGS` in-process as uid, with stdin.
func (c *acctCluster) sacctmgr(uid int, tty bool, stdin string, args ...string) (int, string, string) {
	c.t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, UID: uid, IsTerminal: tty,
		Getenv: func(k string) string {
			if k == "SLURM_CONF" {
				return c.conf
			}
			return ""
		}}
	cmd, ok := Lookup("sacctmgr")
	if !ok {
		c.t.Fatal("sacctmgr not registered")
	}
	code := cmd.Run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

// root runs a command as root without a terminal and requires success.
func (c *acctCluster) root(args ...string) string {
	c.t.Helper()
	code, out, errs := c.sacctmgr(0, false, "", args...)
	if code != 0 {
		c.t.Fatalf("sacctmgr %v: exit %d: %s", args, code, errs)
	}
	return out
}

func TestSacctmgrQOSDemoScript(t *testing.T) {
	c := newAcctCluster(t, "slurm-qos-demo")
	data, err := os.ReadFile("../../../shared/fixtures/qos-demo.sacctmgr")
	if err != nil {
		t.Skip(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		words, _ := acct.ScriptArgs(line)
		if len(words) == 0 {
			continue
		}
		c.root(words...)
	}
	got := c.root("show", "qos", "format=Name,Priority,GrpTRES,MaxWall,MaxJobsPU,Preempt%30", "-P")
	want := "Name|Priority|GrpTRES|MaxWall|MaxJobsPU|Preempt\nnormal|0||||\nresearch|10000||3-00:00:00||batch-lowprio\n" +
		"interactive|5000|gres/gpu=4|01:00:00|2|batch-lowprio\nbatch-lowprio|100||1-00:00:00|10|\ndebug-partition|15000||00:30:00||\n"
	if got != want {
		t.Errorf("show qos:\n%s\nwant:\n%s", got, want)
	}
	t.Logf("\n%s", c.root("show", "qos", "format=Name,Priority,GrpTRES,MaxWall,MaxJobsPU,Preempt%30"))
}

func TestSacctmgrErrorExitsOneAndChangesNothing(t *testing.T) {
	c := newAcctCluster(t, "c1")
	c.root("-i", "add", "account", "physics")
	before := c.root("show", "assoc", "-P")
	// The texts, streams and exit codes are Slurm 24.11's.
	for _, tt := range []struct {
		args      []string
		out, errs string
	}{
		{[]string{"add", "user", "bob", "Account=nosuch"}, "No account nosuch on cluster c1, skipping.\nNothing added.\n" +
			"Make sure the accounts requested here have been added to the system/cluster. (sacctmgr add account...)\n", ""},
		{[]string{"-i", "delete", "qos", "nosuch"}, " Nothing deleted\n", ""},
		{[]string{"-i", "modify", "user", "nobody", "set", "maxjobs=2"}, "",
			"sacctmgr: error: Request didn't affect anything\n Error with request: Data has not changed since time specified\n"},
		{[]string{"show", "banana"}, "", "No valid entity in list command\n" +
			"Input line must include \"Account\", \"Association\", \"Cluster\", \"Configuration\",\n" +
			"\"Event\", \"Federation\", \"Problem\", \"QOS\", \"Resource\", \"Reservation\",\n" +
			"\"RunAwayJobs\", \"Stats\", \"Transaction\", \"TRES\", \"User\", or \"WCKey\"\n"},
	} {
		code, out, errs := c.sacctmgr(0, false, "", tt.args...)
		if code != 1 || out != tt.out || errs != tt.errs {
			t.Errorf("%v: exit %d stdout %q stderr %q\nwant stdout %q stderr %q", tt.args, code, out, errs, tt.out, tt.errs)
		}
	}
	if after := c.root("show", "assoc", "-P"); after != before {
		t.Errorf("store changed:\n%s", after)
	}
}

// TestSacctmgrConfirmation: on a terminal without -i the change is shown
// and committed only on "y"; without a terminal it is committed at once.
func TestSacctmgrConfirmation(t *testing.T) {
	c := newAcctCluster(t, "c1")
	code, out, _ := c.sacctmgr(0, true, "n\n", "add", "account", "physics")
	if code != 0 || !strings.Contains(out, "Would you like to commit changes? (You have 30 seconds to decide)") || !strings.Contains(out, "Changes Discarded") {
		t.Fatalf("exit %d, out %q", code, out)
	}
	if got := c.root("show", "account", "physics", "-P", "-n"); got != "" {
		t.Fatalf("discarded change was stored: %q", got)
	}
	if code, out, _ = c.sacctmgr(0, true, "y\n", "add", "account", "physics"); code != 0 || strings.Contains(out, "Discarded") {
		t.Fatalf("exit %d, out %q", code, out)
	}
	if got := c.root("show", "account", "physics", "format=Account", "-P", "-n"); got != "physics\n" {
		t.Fatalf("confirmed change missing: %q", got)
	}
	if code, out, _ = c.sacctmgr(0, false, "", "add", "account", "chem"); code != 0 || strings.Contains(out, "Would you like") {
		t.Fatalf("non-tty: exit %d, out %q", code, out)
	}
	if code, out, _ = c.sacctmgr(0, true, "", "-i", "add", "account", "bio"); code != 0 || strings.Contains(out, "Would you like") {
		t.Fatalf("-i on tty: exit %d, out %q", code, out)
	}
	if got := c.root("show", "account", "format=Account", "-P", "-n"); got != "bio\nchem\nphysics\nroot\n" {
		t.Errorf("accounts = %q", got)
	}
}

func TestSacctmgrUnprivilegedUser(t *testing.T) {
	c := newAcctCluster(t, "c1")
	// Slurm 24.11 prints the QOS it would add, then slurmdbd's refusal.
	code, out, errs := c.sacctmgr(4242, false, "", "add", "qos", "mine")
	if code != 1 || out != " Adding QOS(s)\n  mine\n Settings\n  Description    = mine\n" || errs != " Problem adding QOS: Access/permission denied\n" {
		t.Errorf("exit %d stdout %q stderr %q", code, out, errs)
	}
	code, out, errs = c.sacctmgr(4242, false, "", "add", "account", "mine")
	if code != 1 || out != "" || errs != " error: Only admins/operators/coordinators can add accounts\n" {
		t.Errorf("add account: exit %d stdout %q stderr %q", code, out, errs)
	}
	if code, out, _ := c.sacctmgr(4242, false, "", "show", "qos", "format=Name", "-n", "-P"); code != 0 || out != "normal\n" {
		t.Errorf("show as user: exit %d out %q", code, out)
	}
}

func TestSacctmgrInteractiveDumpAndLoad(t *testing.T) {
	c := newAcctCluster(t, "c1")
	script := "add account physics Fairshare=10\nadd user alice Account=physics MaxJobs=3\nadd qos high Priority=5\nexit\nadd account never\n"
	if code, _, errs := c.sacctmgr(0, false, script); code != 0 {
		t.Fatalf("interactive: exit %d %s", code, errs)
	}
	dump := filepath.Join(t.TempDir(), "c1.cfg")
	c.root("dump", "c1", "file="+dump)
	other := newAcctCluster(t, "c1")
	other.root("load", dump)
	for _, show := range [][]string{{"show", "assoc"}, {"show", "qos"}, {"show", "account"}} {
		if a, b := c.root(show...), other.root(show...); a != b {
			t.Errorf("%v differs after dump/load:\n%s\nwant\n%s", show, b, a)
		}
	}
	if got := c.root("show", "account", "never", "-n"); got != "" {
		t.Errorf("command after exit ran: %q", got)
	}
}

// TestSacctmgrPostgresStore runs sacctmgr against accounting_storage/pgsql
// named in slurm.conf, in a schema of its own on SLUICE_TEST_PG_DSN.
func TestSacctmgrPostgresStore(t *testing.T) {
	dsn, schema := pgtest.Schema(t, "sluice_cli")
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := newAcctCluster(t, "pgc")
	text, _ := os.ReadFile(c.conf)
	text = append(text, []byte("AccountingStorageType=accounting_storage/pgsql\nAccountingStorageLoc="+dsn+"\n")...)
	if err := os.WriteFile(c.conf, text, 0o644); err != nil {
		t.Fatal(err)
	}
	c.root("-i", "add", "account", "physics", "Fairshare=7")
	if got := c.root("show", "assoc", "format=Cluster,Account,Share", "-P", "-n"); got != "pgc|root|1\npgc|root|1\npgc|physics|7\n" {
		t.Errorf("show assoc = %q", got)
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM " + schema + ".accounts WHERE name = 'physics'").Scan(&n); err != nil || n != 1 {
		t.Errorf("physics rows in %s.accounts = %d, %v", schema, n, err)
	}
}
