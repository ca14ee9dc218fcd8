package oracle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/testusers"
)

// Target is one side of the comparison: real Slurm (the oracle) or Sluice.
type Target interface {
	// Name says which side it is ("oracle", "sluice").
	Name() string
	// Up starts a fresh cluster with the scenario's configuration.
	Up(ctx context.Context, sc *Scenario) error
	// Exec runs a command line through sh -c as a user.
	Exec(ctx context.Context, user, cmd string) Result
	// REST sends a request to the cluster's REST API as a user.
	REST(ctx context.Context, user, method, path, body string) Result
	// Normalizer rewrites this side's paths and names.
	Normalizer() Normalizer
	// Source names the software for golden files.
	Source(ctx context.Context) string
	// Down stops the cluster and everything it started.
	Down()
}

// Users are the accounts every scenario may run commands as, created on the
// host for Sluice (the oracle creates them in its chroot with the same ids).
var Users = testusers.Names

// MergeConf merges a scenario's lines into the base slurm.conf with the
// rules of oracle.sh --conf-extra, so that both sides run one configuration:
// a Key=Value line replaces base lines with that key (case-insensitive), any
// PartitionName line replaces the base partitions, NodeName=nK replaces the
// base line of node nK, and the extra lines are appended.
func MergeConf(base string, extra []string) string {
	if len(extra) == 0 {
		return base
	}
	dropParts := false
	dropNode, dropKey := map[string]bool{}, map[string]bool{}
	for _, l := range extra {
		l = strings.TrimSpace(strings.SplitN(l, "#", 2)[0])
		if l == "" {
			continue
		}
		switch first := firstKey(l); first {
		case "partitionname":
			dropParts = true
		case "nodename":
			dropNode[nodeName(l)] = true
		default:
			for _, f := range strings.Fields(l) {
				if k, _, ok := strings.Cut(f, "="); ok {
					dropKey[strings.ToLower(k)] = true
				}
			}
		}
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(base, "\n"), "\n") {
		keep := true
		if l != "" && !strings.HasPrefix(l, "#") {
			switch first := firstKey(l); first {
			case "partitionname":
				keep = !dropParts
			case "nodename":
				keep = !dropNode[nodeName(l)]
			default:
				keep = !dropKey[first]
			}
		}
		if keep {
			b.WriteString(l + "\n")
		}
	}
	b.WriteString("# ---- from the scenario\n")
	for _, l := range extra {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// WithNodes gives the base configuration n nodes, as oracle.sh up --nodes
// does: the line of n1 repeated for n1..nN (name, host name and port).
func WithNodes(base string, n int) string {
	var b strings.Builder
	done := false
	for _, l := range strings.SplitAfter(base, "\n") {
		if !strings.HasPrefix(l, "NodeName=n") {
			b.WriteString(l)
			continue
		}
		if done || !strings.HasPrefix(l, "NodeName=n1 ") {
			continue
		}
		done = true
		for i := 1; i <= n; i++ {
			k := strconv.Itoa(i)
			b.WriteString(strings.NewReplacer("NodeName=n1 ", "NodeName=n"+k+" ", "NodeHostname=n1 ", "NodeHostname=n"+k+" ",
				"Port=18001 ", "Port="+strconv.Itoa(18000+i)+" ").Replace(l))
		}
	}
	return b.String()
}

func firstKey(l string) string {
	k, _, _ := strings.Cut(l, "=")
	return strings.ToLower(strings.TrimSpace(k))
}

func nodeName(l string) string {
	f := strings.FieldsFunc(l, func(r rune) bool { return r == ' ' || r == '\t' || r == '=' })
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

// runCmd runs a prepared command and returns its three outputs.
func runCmd(c *exec.Cmd) Result {
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else {
			code = -1
			errb.WriteString(err.Error())
		}
	}
	return Result{Stdout: out.String(), Stderr: errb.String(), Exit: code}
}

// cleanEnv is the environment of a command: nothing of the caller's
// Slurm variables leaks into a scenario.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "SLURM_") || strings.HasPrefix(k, "SBATCH_") || strings.HasPrefix(k, "SRUN_") ||
			strings.HasPrefix(k, "SALLOC_") || strings.HasPrefix(k, "SQUEUE_") || strings.HasPrefix(k, "SINFO_") ||
			strings.HasPrefix(k, "SACCT") || strings.HasPrefix(k, "SPRIO_") || strings.HasPrefix(k, "SSHARE_") ||
			strings.HasPrefix(k, "SREPORT_") || strings.HasPrefix(k, "SCONTROL_") || strings.HasPrefix(k, "SCANCEL_") ||
			k == "TZ" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// OracleTarget plays scenarios on real Slurm through shared/oracle/oracle.sh.
type OracleTarget struct {
	Script string // path of oracle.sh (or a wrapper setting ORACLE_* variables)
	State  string // its ORACLE_STATE (default /var/tmp/slurm-oracle)
	tmp    string
	rest   restClient
}

// Name implements Target.
func (o *OracleTarget) Name() string { return "oracle" }

// Up implements Target: a fresh oracle with the scenario's lines as a
// --conf-extra file.
func (o *OracleTarget) Up(ctx context.Context, sc *Scenario) error {
	args := []string{"up", "--nodes", strconv.Itoa(sc.Nodes)}
	if len(sc.Conf) > 0 {
		dir, err := os.MkdirTemp("", "oracle-conf-")
		if err != nil {
			return err
		}
		o.tmp = dir
		f := filepath.Join(dir, sc.Name+".conf")
		if err := os.WriteFile(f, []byte(strings.Join(sc.Conf, "\n")+"\n"), 0o644); err != nil {
			return err
		}
		args = append(args, "--conf-extra", f)
	}
	o.rest = restClient{token: o.token}
	r := runCmd(o.cmd(ctx, args...))
	if r.Exit != 0 {
		return fmt.Errorf("oracle.sh up: exit %d: %s", r.Exit, lastLines(r.Stderr+r.Stdout, 15))
	}
	if o.State == "" {
		// The state directory is where its slurm.conf lives: STATE/etc.
		conf := strings.TrimSpace(o.Exec(ctx, "root", "echo $SLURM_CONF").Stdout)
		o.State = filepath.Dir(filepath.Dir(conf))
	}
	return nil
}

func (o *OracleTarget) cmd(ctx context.Context, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, o.Script, args...)
	c.Env = cleanEnv()
	return c
}

// Exec implements Target.
func (o *OracleTarget) Exec(ctx context.Context, user, cmd string) Result {
	return runCmd(o.cmd(ctx, "exec", "--user", user, "--", "sh", "-c", cmd))
}

// REST implements Target: slurmrestd of the oracle, with a token from
// oracle.sh token USER.
func (o *OracleTarget) REST(ctx context.Context, user, method, path, body string) Result {
	return o.rest.do(ctx, user, method, path, body)
}

// token runs oracle.sh token USER: SLURM_JWT=..., SLURM_REST_URL=...
func (o *OracleTarget) token(ctx context.Context, user string) (jwt, url string, err error) {
	r := runCmd(o.cmd(ctx, "token", user))
	if r.Exit != 0 {
		return "", "", fmt.Errorf("oracle.sh token %s: exit %d: %s", user, r.Exit, r.Stderr)
	}
	vars := envLines(r.Stdout)
	return vars["SLURM_JWT"], vars["SLURM_REST_URL"], nil
}

// Normalizer implements Target.
func (o *OracleTarget) Normalizer() Normalizer {
	h, _ := os.Hostname()
	st := o.State
	if st == "" {
		st = DefaultOracleState
	}
	return Normalizer{State: st, Host: h}
}

// Source implements Target.
func (o *OracleTarget) Source(ctx context.Context) string {
	return strings.TrimSpace(o.Exec(ctx, "root", "sinfo --version").Stdout)
}

// Down implements Target.
func (o *OracleTarget) Down() {
	runCmd(o.cmd(context.Background(), "down"))
	if o.tmp != "" {
		os.RemoveAll(o.tmp)
	}
}

// SluiceTarget plays scenarios on `sluice up` with the oracle's base
// configuration plus the scenario's lines.
type SluiceTarget struct {
	Binary   string // the sluice binary
	BaseConf string // base.conf's text
	// Log receives sluice up's output when set.
	Log   func(string)
	state string
	conf  string
	up    *exec.Cmd
	out   bytes.Buffer
	rest  restClient
}

// Name implements Target.
func (s *SluiceTarget) Name() string { return "sluice" }

// Up implements Target: a state directory in /tmp laid out as the
// oracle's (jobs/ 1777 as the commands' working directory, fake GPU
// devices, gres.conf), then `sluice up` until every node is idle.
func (s *SluiceTarget) Up(ctx context.Context, sc *Scenario) error {
	dir, err := os.MkdirTemp("", "sluice-diff-"+sc.Name+"-")
	if err != nil {
		return err
	}
	s.state = dir
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	for _, d := range []string{"etc", "jobs", "fakedev", "bin", "spool/ctld"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	if err := os.Chmod(filepath.Join(dir, "jobs"), 0o1777); err != nil {
		return err
	}
	for g := 0; g < 4; g++ {
		if err := os.WriteFile(filepath.Join(dir, "fakedev", "nvidia"+strconv.Itoa(g)), nil, 0o666); err != nil {
			return err
		}
	}
	port, err := api.FreePort()
	if err != nil {
		return err
	}
	text := strings.NewReplacer("@STATE@", dir, "@PORT@", strconv.Itoa(port)).Replace(MergeConf(WithNodes(s.BaseConf, sc.Nodes), sc.Conf))
	s.conf = filepath.Join(dir, "etc", "slurm.conf")
	if err := os.WriteFile(s.conf, []byte(text), 0o644); err != nil {
		return err
	}
	gres := "Name=gpu File=" + filepath.Join(dir, "fakedev") + "/nvidia[0-3]\n"
	if err := os.WriteFile(filepath.Join(dir, "etc", "gres.conf"), []byte(gres), 0o644); err != nil {
		return err
	}
	if r := runCmd(exec.CommandContext(ctx, s.Binary, "install-links", filepath.Join(dir, "bin"))); r.Exit != 0 {
		return fmt.Errorf("install-links: %s", r.Stderr)
	}
	args := []string{"up", "--conf", s.conf, "--state", filepath.Join(dir, "spool", "ctld")}
	s.rest = restClient{token: s.token}
	if sc.REST() {
		// The REST API on a port of its own, as slurmrestd beside slurmctld.
		rp, err := api.FreePort()
		if err != nil {
			return err
		}
		s.rest.url = "http://127.0.0.1:" + strconv.Itoa(rp)
		args = append(args, "--rest-listen", "127.0.0.1:"+strconv.Itoa(rp))
	}
	s.up = exec.Command(s.Binary, args...)
	s.up.Env = cleanEnv()
	s.up.Stdout, s.up.Stderr = &s.out, &s.out
	s.up.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.up.Start(); err != nil {
		return err
	}
	return s.waitIdle(ctx)
}

// waitIdle waits until sinfo lists every node idle.
func (s *SluiceTarget) waitIdle(ctx context.Context) error {
	deadline := time.Now().Add(40 * time.Second)
	var r Result
	for time.Now().Before(deadline) {
		r = s.Exec(ctx, "root", "sinfo -h -N -o %T")
		if r.Exit == 0 && allIdle(r.Stdout) {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("sluice up: nodes not idle within 40 s (sinfo: exit %d %q %q); its output:\n%s",
		r.Exit, r.Stdout, r.Stderr, lastLines(s.out.String(), 20))
}

// allIdle says whether every line of sinfo's state column is idle.
func allIdle(out string) bool {
	lines := strings.Fields(out)
	for _, l := range lines {
		if l != "idle" {
			return false
		}
	}
	return len(lines) > 0
}

// Exec implements Target: the command runs with the oracle's clean
// environment, as the user (credentials set by the kernel, no PAM), in the
// jobs directory.
func (s *SluiceTarget) Exec(ctx context.Context, name, cmd string) Result {
	u, err := user.Lookup(name)
	if err != nil {
		return Result{Stderr: err.Error(), Exit: -1}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	c := exec.CommandContext(ctx, "/bin/sh", "-c", cmd)
	c.Dir = filepath.Join(s.state, "jobs")
	c.Env = []string{"PATH=" + filepath.Join(s.state, "bin") + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + u.HomeDir,
		"USER=" + name, "LOGNAME=" + name, "LANG=C.UTF-8", "SLURM_CONF=" + s.conf}
	if uid != os.Getuid() {
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	return runCmd(c)
}

// REST implements Target: the API `sluice up --rest-listen` serves, with a
// token from Sluice's scontrol token.
func (s *SluiceTarget) REST(ctx context.Context, user, method, path, body string) Result {
	return s.rest.do(ctx, user, method, path, body)
}

// token runs scontrol token username=USER as root.
func (s *SluiceTarget) token(ctx context.Context, user string) (jwt, url string, err error) {
	r := s.Exec(ctx, "root", "scontrol token username="+user)
	if r.Exit != 0 {
		return "", "", fmt.Errorf("scontrol token username=%s: exit %d: %s", user, r.Exit, r.Stderr)
	}
	return envLines(r.Stdout)["SLURM_JWT"], s.rest.url, nil
}

// Normalizer implements Target.
func (s *SluiceTarget) Normalizer() Normalizer {
	h, _ := os.Hostname()
	return Normalizer{State: s.state, Host: h}
}

// Source implements Target.
func (s *SluiceTarget) Source(ctx context.Context) string {
	return strings.TrimSpace(s.Exec(ctx, "root", "sinfo --version").Stdout)
}

// Down implements Target: cancel every job (as oracle.sh down does), stop
// sluice up, then end any process still working below the state directory
// (job supervisors run in their own sessions).
func (s *SluiceTarget) Down() {
	if s.up != nil && s.up.Process != nil {
		s.Exec(context.Background(), "root", "scancel --user=alice,bob,charlie,dave,root >/dev/null 2>&1")
		_ = syscall.Kill(-s.up.Process.Pid, syscall.SIGINT)
		done := make(chan struct{})
		go func() { s.up.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-s.up.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	if s.state != "" {
		killBelow(s.state)
		if s.Log != nil {
			s.Log(s.out.String())
		}
		os.RemoveAll(s.state)
	}
}

// killBelow kills every process whose working directory or command line
// is below dir.
func killBelow(dir string) {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, _ := os.Readlink(filepath.Join(p, "cwd"))
		cmdline, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		if strings.HasPrefix(cwd, dir) || bytes.Contains(cmdline, []byte(dir)) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
