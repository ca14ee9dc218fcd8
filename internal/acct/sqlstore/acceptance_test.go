package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-hpc/sluice/internal/acct"
)

const fixtureDir = "../../../../shared/fixtures"

// fixtureCluster is the ClusterName of each script's slurm.conf.
var fixtureCluster = map[string]string{
	"gpu-cluster.sacctmgr":  "gpu-cluster",
	"qos-demo.sacctmgr":     "slurm-qos-demo",
	"queue-design.sacctmgr": "queue-design",
}

// runScript runs a sacctmgr script line by line; every line must succeed.
func (s *session) runScript(path string) {
	s.t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		s.t.Skipf("fixture %s not available: %v", path, err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		if words, _ := acct.ScriptArgs(line); len(words) == 0 {
			continue
		}
		if _, err := s.try(line); err != nil {
			s.t.Fatalf("%s:%d: %s: %v", filepath.Base(path), i+1, line, err)
		}
	}
}

// TestFixtureScriptsRunOnBothStores runs every shared *.sacctmgr script
// and checks that show prints what the script set.
func TestFixtureScriptsRunOnBothStores(t *testing.T) {
	scripts, _ := filepath.Glob(filepath.Join(fixtureDir, "*.sacctmgr"))
	if len(scripts) == 0 {
		t.Skip("shared fixtures not available")
	}
	want := map[string][]string{
		"qos-demo.sacctmgr": {
			"normal|0||||",
			"research|10000||3-00:00:00||batch-lowprio",
			"interactive|5000|gres/gpu=4|01:00:00|2|batch-lowprio",
			"batch-lowprio|100||1-00:00:00|10|",
			"debug-partition|15000||00:30:00||",
		},
		"gpu-cluster.sacctmgr": {
			"normal|0||||", "urgent|10000||04:00:00||", "standard|1000||3-00:00:00||", "research|100||7-00:00:00||",
		},
		"queue-design.sacctmgr": {
			// the preempt list by name (oracle: Preempt=zeta,alpha
			// prints alpha,zeta)
			"normal|10|||10|", "group_standard|15|||30|normal", "priority_user|30|||50|group_standard,normal",
		},
	}
	for _, path := range scripts {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			forEachStore(t, func(t *testing.T, s *Store) {
				ss := newSession(t, s, fixtureCluster[name])
				ss.runScript(path)
				got := ss.run("show qos format=Name,Priority,GrpTRES,MaxWall,MaxJobsPU,Preempt%30 -P -n")
				if w, ok := want[name]; ok && got != strings.Join(w, "\n")+"\n" {
					t.Errorf("show qos:\n%s\nwant:\n%s", got, strings.Join(w, "\n"))
				}
				t.Logf("show qos:\n%s", got)
			})
		})
	}
}

func TestQOSDemoAssociations(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ss := newSession(t, s, "slurm-qos-demo")
		ss.runScript(filepath.Join(fixtureDir, "qos-demo.sacctmgr"))
		got := ss.run("show associations format=Cluster,Account,User,Partition,Share,QOS%40 -P")
		want := `Cluster|Account|User|Partition|Share|QOS
slurm-qos-demo|root|||1|normal
slurm-qos-demo|root|root||1|normal
slurm-qos-demo|batch|||100|batch-lowprio,interactive,normal
slurm-qos-demo|batch|charlie||1|batch-lowprio,interactive,normal
slurm-qos-demo|research|||500|interactive,normal,research
slurm-qos-demo|research|alice||1|interactive,normal,research
slurm-qos-demo|research|bob||1|interactive,normal,research
`
		if got != want {
			t.Errorf("show associations:\n%s\nwant:\n%s", got, want)
		}
	})
}

func TestGPUClusterLimitsAreInherited(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ss := newSession(t, s, "gpu-cluster")
		ss.runScript(filepath.Join(fixtureDir, "gpu-cluster.sacctmgr"))
		got := ss.run("show assoc where account=ml-research,data-science format=Account,User,Share,MaxJobs,MaxTRES,MaxSubmit -P -n")
		want := "data-science||20||gres/gpu:h100=8|\nml-research||40|20|gres/gpu=64|50\nml-research|alice|1|5|gres/gpu=16|50\n"
		if got != want {
			t.Errorf("got:\n%s\nwant:\n%s", got, want)
		}
	})
}

// TestUBCCRScriptLoads runs the medium cluster trace's 337-line script
// (the simulator loads it) and checks its tree.
func TestUBCCRScriptLoads(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ss := newSession(t, s, "ubhpc")
		ss.runScript(filepath.Join(fixtureDir, "../traces/ubccr-medium-cluster/sacctmgr.script"))
		st, err := s.Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		p := acct.NewPolicy(st)
		if p.QOS("normal") != nil {
			t.Errorf("normal QOS still exists after 'remove QOS where Name=normal'")
		}
		u := p.UserAssoc("ubhpc", "user065", "account045", "")
		if u == nil {
			u = p.UserAssocs("ubhpc", "user065")[0]
		}
		if got := strings.Join(p.Effective(u).QOS, ","); got != "debug,general-compute,priority" {
			t.Errorf("user065 QOS = %s", got)
		}
		if a := p.User("admin"); a == nil || a.AdminLevel != acct.AdminAdministrator {
			t.Errorf("admin = %+v", a)
		}
		if got := len(p.Associations()); got < 150 {
			t.Errorf("only %d associations", got)
		}
		t.Logf("%d associations, %d users, %d accounts", len(p.Associations()), len(st.Users), len(st.Accounts))
	})
}

// TestDumpLoadReproducesShow dumps every fixture's cluster, loads the
// file into an empty store and compares every show output.
func TestDumpLoadReproducesShow(t *testing.T) {
	shows := []string{"show qos", "show assoc", "show user", "show account", "show cluster",
		"show assoc format=Account,User,Share,GrpTRES,MaxTRES,MaxWall,QOS,DefaultQOS,Priority -P tree"}
	for name, cluster := range fixtureCluster {
		t.Run(name, func(t *testing.T) {
			forEachStore(t, func(t *testing.T, s *Store) {
				ss := newSession(t, s, cluster)
				ss.runScript(filepath.Join(fixtureDir, name))
				ss.run("modify user alice set MaxWall=90 GrpTRES=cpu=8 Priority=3")
				file := filepath.Join(t.TempDir(), "dump.cfg")
				ss.run("dump " + cluster + " file=" + file)
				fresh := newSession(t, openTestSQLite(t), cluster)
				fresh.run("load " + file)
				for _, sh := range shows {
					if a, b := ss.run(sh), fresh.run(sh); a != b {
						t.Errorf("%s differs after dump/load:\n%s\nwant:\n%s", sh, b, a)
					}
				}
			})
		})
	}
}

// TestParallelWriters runs 8 writers x 1,000 mixed commands (adds,
// modifies and deletes that partly collide and partly fail) and checks
// the stored tree is consistent and equal to a fresh read.
func TestParallelWriters(t *testing.T) {
	writers, perWriter := 8, 1000
	if testing.Short() || raceEnabled {
		// The race detector checks the same interleavings at a fraction
		// of the volume; 8x1,000 under -race would take minutes on 2 cores.
		perWriter = 150
	}
	forEachStore(t, func(t *testing.T, s *Store) {
		newSession(t, s, "c1").run("add cluster c1")
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				ss := newSession(t, s, "c1")
				rng := rand.New(rand.NewSource(int64(w) + 1))
				for i := 0; i < perWriter; i++ {
					line := mixedCommand(rng, w)
					if _, err := ss.try(line); err != nil {
						var ae *acct.Error
						if !errors.As(err, &ae) {
							errs <- fmt.Errorf("writer %d: %s: %w", w, line, err)
							return
						}
					}
				}
			}(w)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		cached, err := s.Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := cached.Check(); err != nil {
			t.Fatalf("inconsistent tree: %v", err)
		}
		s.mu.Lock()
		s.cache, s.cacheVer = nil, -1
		s.mu.Unlock()
		fresh, err := s.Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		assertSameState(t, cached, fresh)
		t.Logf("%d associations, %d QOS after %d commands", len(fresh.Assocs), len(fresh.QOS), writers*perWriter)
	})
}

// mixedCommand draws one command; names overlap between writers so they
// contend for the same rows.
func mixedCommand(rng *rand.Rand, w int) string {
	acct := fmt.Sprintf("a%d", rng.Intn(12))
	sub := fmt.Sprintf("s%d", rng.Intn(6))
	user := fmt.Sprintf("u%d_%d", w%4, rng.Intn(10))
	qos := fmt.Sprintf("q%d", rng.Intn(5))
	switch rng.Intn(12) {
	case 0, 1:
		return "add account " + acct + " Fairshare=" + fmt.Sprint(1+rng.Intn(100))
	case 2:
		return "add account " + sub + " Parent=" + acct
	case 3, 4:
		return "add user " + user + " Account=" + acct
	case 5:
		return "add qos " + qos + " Priority=" + fmt.Sprint(rng.Intn(1000))
	case 6:
		return "modify account " + acct + " set qos+=" + qos + " MaxJobs=" + fmt.Sprint(rng.Intn(50))
	case 7:
		return "modify user " + user + " set MaxTRES=cpu=" + fmt.Sprint(1+rng.Intn(64)) + " GrpJobs=-1"
	case 8:
		return "modify qos " + qos + " set preempt+=q" + fmt.Sprint(rng.Intn(5)) + " MaxWall=" + fmt.Sprint(rng.Intn(600))
	case 9:
		return "delete user " + user + " where account=" + acct
	case 10:
		return "delete account " + sub
	default:
		return "delete qos " + qos
	}
}

// TestStoresAgreeWithMemStore replays one random command sequence on the
// in-memory store and on each SQL store: every command must succeed or
// fail alike, and the final states must be equal.
func TestStoresAgreeWithMemStore(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		mem := newSession(t, acct.NewMemStore(), "c1")
		sql := newSession(t, s, "c1")
		rng := rand.New(rand.NewSource(42))
		for i := 0; i < 400; i++ {
			line := mixedCommand(rng, i%8)
			_, errMem := mem.try(line)
			_, errSQL := sql.try(line)
			if (errMem == nil) != (errSQL == nil) {
				t.Fatalf("%s: memory store error %v, SQL store error %v", line, errMem, errSQL)
			}
		}
		want, _ := mem.store.Load(context.Background())
		got, err := s.Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		assertSameState(t, want, got)
	})
}
