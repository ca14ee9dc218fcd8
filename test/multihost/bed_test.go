package multihost

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// nsPrefix starts the name of every namespace and directory a bed makes;
// the test binary's pid follows, so that leftovers of a crashed run are
// recognised (their pid is gone) and never those of a run still going.
const nsPrefix = "sluicemh-"

// ctlPort is the controller's SlurmctldPort on the ctl host.
const ctlPort = 6817

// bin is the sluice binary shared by every bed (built once by TestMain).
var bin string

var (
	buildOnce sync.Once
	buildErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	rc := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(rc)
}

// buildSluice builds cmd/sluice once, outside /tmp (each host gets a
// private /tmp) into a directory every host sees.
func buildSluice(t *testing.T) string {
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("/run", nsPrefix+strconv.Itoa(os.Getpid())+"-bin-")
		if buildErr != nil {
			return
		}
		// Users' commands run from it too.
		if buildErr = os.Chmod(binDir, 0o755); buildErr != nil {
			return
		}
		bin = filepath.Join(binDir, "sluice")
		out, err := exec.Command("go", "build", "-o", bin, "github.com/sluice-hpc/sluice/cmd/sluice").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		if out, err := exec.Command(bin, "install-links", binDir).CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("install-links: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bin
}

// requireRoot skips the test, saying why, where namespaces cannot be made.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("multi-host test bed skipped: it needs root (network and mount namespaces, veth pairs); make test as root (CI) runs it")
	}
	for _, tool := range []string{"ip", "unshare", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("multi-host test bed skipped: %s is not installed (iproute2, util-linux)", tool)
		}
	}
}

// Bed is one multi-host cluster: a controller host, node hosts and a
// login host, each its own network, mount and UTS namespace.
type Bed struct {
	t      *testing.T
	name   string // namespace name prefix: sluicemh-PID-TEST
	dir    string // BED: shared/ and hosts/H/
	conf   string // slurm.conf (same path on every host)
	token  string // SLURM_JWT for root, used on the login host
	hosts  map[string]*Host
	order  []string
	mu     sync.Mutex
	daemon []*exec.Cmd
	named  map[string]*exec.Cmd
}

// Host is one machine of a bed.
type Host struct {
	Name, Addr string
	ns         string // network namespace
	link       string // its veth end in the switch namespace
	pid        int    // holder of its mount and UTS namespaces
	bed        *Bed
}

// hostAddrs are the bed's machines and their addresses.
var hostAddrs = []struct{ name, addr string }{
	{"ctl", "10.200.0.2"}, {"n1", "10.200.0.11"}, {"n2", "10.200.0.12"}, {"n3", "10.200.0.13"}, {"login", "10.200.0.100"},
}

// NewBed builds a bed and starts the controller and node agents; extra
// lines go into slurm.conf. Everything is removed when the test ends.
func NewBed(t *testing.T, extra string) *Bed {
	requireRoot(t)
	buildSluice(t)
	removeLeftovers(t)
	short := strings.ToLower(strings.TrimPrefix(t.Name(), "TestMultiHost"))
	if len(short) > 12 {
		short = short[:12]
	}
	b := &Bed{t: t, name: fmt.Sprintf("%s%d-%s", nsPrefix, os.Getpid(), short), hosts: map[string]*Host{},
		named: map[string]*exec.Cmd{}}
	var err error
	if b.dir, err = os.MkdirTemp("/run", b.name+"-"); err != nil {
		t.Fatal(err)
	}
	must(t, os.Chmod(b.dir, 0o755)) // users read slurm.conf in it
	t.Cleanup(b.destroy)
	b.network()
	b.writeConf(extra)
	for _, h := range hostAddrs {
		b.startHost(h.name, h.addr)
	}
	b.startCluster()
	return b
}

// sh runs an administrative command in the test's own namespaces.
func (b *Bed) sh(args ...string) {
	b.t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		b.t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// network makes the switch namespace with its bridge and, for each host,
// a namespace joined to the bridge by a veth pair.
func (b *Bed) network() {
	sw := b.name + "-sw"
	b.sh("ip", "netns", "add", sw)
	b.sh("ip", "-n", sw, "link", "add", "br0", "type", "bridge")
	b.sh("ip", "-n", sw, "link", "set", "br0", "up")
	for _, h := range hostAddrs {
		ns := b.name + "-" + h.name
		link := "v-" + h.name
		b.sh("ip", "netns", "add", ns)
		b.sh("ip", "-n", sw, "link", "add", link, "type", "veth", "peer", "name", "eth0", "netns", ns)
		b.sh("ip", "-n", sw, "link", "set", link, "master", "br0", "up")
		b.sh("ip", "-n", ns, "addr", "add", h.addr+"/24", "dev", "eth0")
		b.sh("ip", "-n", ns, "link", "set", "eth0", "up")
		b.sh("ip", "-n", ns, "link", "set", "lo", "up")
		b.hosts[h.name] = &Host{Name: h.name, Addr: h.addr, ns: ns, link: link, bed: b}
		b.order = append(b.order, h.name)
	}
}

func (b *Bed) writeConf(extra string) {
	shared := filepath.Join(b.dir, "shared")
	local := filepath.Join(b.dir, "local")
	for _, d := range []string{shared, local} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.t.Fatal(err)
		}
	}
	var hosts, nodes strings.Builder
	hosts.WriteString("127.0.0.1 localhost\n")
	for _, h := range hostAddrs {
		fmt.Fprintf(&hosts, "%s %s\n", h.addr, h.name)
		if strings.HasPrefix(h.name, "n") {
			fmt.Fprintf(&nodes, "NodeName=%s NodeAddr=%s CPUs=2 RealMemory=1000 State=UNKNOWN\n", h.name, h.addr)
		}
	}
	conf := fmt.Sprintf(`# Multi-host test bed: every host reads this file; BED/local is a
# different directory on each host.
ClusterName=mh
SlurmctldHost=ctl(10.200.0.2)
SlurmctldPort=%d
SlurmUser=root
StateSaveLocation=%s/state
SlurmdSpoolDir=%s/spool
AccountingStorageType=accounting_storage/sqlite
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=1
SlurmdTimeout=10
KillWait=2
MinJobAge=300
%sPartitionName=debug Nodes=n[1-3] Default=YES MaxTime=INFINITE State=UP
%s`, ctlPort, local, local, nodes.String(), extra)
	b.conf = filepath.Join(shared, "slurm.conf")
	must(b.t, os.WriteFile(b.conf, []byte(conf), 0o644))
	must(b.t, os.WriteFile(filepath.Join(shared, "hosts"), []byte(hosts.String()), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// holderScript makes a host's mount and UTS namespaces what a separate
// machine would have: its name, a private /tmp, BED/local bound to its own
// directory and the other hosts' directories hidden.
const holderScript = `set -e
hostname "$1"
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount --bind "$2/hosts/$1" "$2/local"
mount -t tmpfs tmpfs "$2/hosts"
mount --bind "$2/shared/hosts" /etc/hosts
echo ready
exec sleep 1000000
`

// startHost starts the holder of host name's mount and UTS namespaces
// inside its network namespace.
func (b *Bed) startHost(name, addr string) {
	h := b.hosts[name]
	must(b.t, os.MkdirAll(filepath.Join(b.dir, "hosts", name), 0o755))
	cmd := exec.Command("ip", "netns", "exec", h.ns, "unshare", "--mount", "--uts", "--propagation", "private",
		"sh", "-c", holderScript, "holder", name, b.dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	must(b.t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	must(b.t, cmd.Start())
	b.track(cmd)
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		cmd.Wait()
		b.t.Fatalf("host %s: namespace holder failed: %s", name, stderr.String())
	}
	h.pid = cmd.Process.Pid
}

func (b *Bed) track(cmd *exec.Cmd) {
	b.mu.Lock()
	b.daemon = append(b.daemon, cmd)
	b.mu.Unlock()
}

// Command is a command to run on host h (in its namespaces).
func (h *Host) Command(env []string, args ...string) *exec.Cmd {
	full := append([]string{"-t", strconv.Itoa(h.pid), "-m", "-u", "-n", "--"}, args...)
	cmd := exec.Command("nsenter", full...)
	cmd.Dir = "/"
	cmd.Env = append([]string{"PATH=" + binDir + ":/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root",
		"SLURM_CONF=" + h.bed.conf}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// Processes are the command lines of the processes running on host h
// (found by network namespace: there is no PID namespace).
func (h *Host) Processes() []string {
	out, _ := exec.Command("ip", "netns", "pids", h.ns).Output()
	var cmds []string
	for _, p := range strings.Fields(string(out)) {
		if data, err := os.ReadFile("/proc/" + p + "/cmdline"); err == nil && len(data) > 0 {
			cmds = append(cmds, strings.TrimSuffix(strings.ReplaceAll(string(data), "\x00", " "), " "))
		}
	}
	return cmds
}

// Result is what a command printed and its exit code.
type Result struct {
	Out, Err string
	Code     int
}

// Run runs a shell command line on host h and waits for it (at most
// limit); env adds variables.
func (h *Host) Run(limit time.Duration, env []string, script string) Result {
	cmd := h.Command(env, "sh", "-c", script)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		h.bed.t.Fatalf("%s: %s: %v", h.Name, script, err)
	}
	var timedOut atomic.Bool
	timer := time.AfterFunc(limit, func() {
		timedOut.Store(true)
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	err := cmd.Wait()
	timer.Stop()
	r := Result{Out: out.String(), Err: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	case err != nil:
		h.bed.t.Fatalf("%s: %s: %v", h.Name, script, err)
	}
	if timedOut.Load() {
		r.Code = -1
		r.Err += fmt.Sprintf("\n(killed after %v)", limit)
	}
	return r
}

// Login runs a command line on the login host as a user of the cluster
// would: slurm.conf there, root's token, no controller socket, in /tmp
// (the login host's own: jobs write their default output files in the
// same directory on their node host).
func (b *Bed) Login(limit time.Duration, script string) Result {
	return b.hosts["login"].Run(limit, []string{"SLURM_JWT=" + b.token}, "cd /tmp && "+script)
}

// LoginAs runs a command line on the login host as user (with a token for
// user that root takes on ctl).
func (b *Bed) LoginAs(user string, limit time.Duration, script string) Result {
	b.t.Helper()
	tok := b.hosts["ctl"].Run(10*time.Second, nil, "scontrol token username="+user+" lifespan=3600")
	if tok.Code != 0 {
		b.t.Fatalf("scontrol token username=%s: %s", user, tok.Err)
	}
	jwt := strings.TrimSpace(tok.Out)
	return b.hosts["login"].Run(limit, []string{jwt}, "cd /tmp && setpriv --reuid="+user+" --regid="+user+
		" --init-groups sh -c "+shellQuote(script))
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Host returns host name.
func (b *Bed) Host(name string) *Host { return b.hosts[name] }

// Daemon starts a long-running command on host h, its output going to
// BED/logs/NAME.log, stopped when the test ends.
func (h *Host) Daemon(name string, args ...string) *exec.Cmd {
	b := h.bed
	logs := filepath.Join(b.dir, "logs")
	must(b.t, os.MkdirAll(logs, 0o755))
	f, err := os.Create(filepath.Join(logs, name+".log"))
	must(b.t, err)
	defer f.Close()
	cmd := h.Command(nil, args...)
	cmd.Stdout, cmd.Stderr = f, f
	must(b.t, cmd.Start())
	b.track(cmd)
	b.mu.Lock()
	b.named[name] = cmd
	b.mu.Unlock()
	go cmd.Wait()
	return cmd
}

// KillDaemon kills daemon name (its process group) with SIGKILL.
func (b *Bed) KillDaemon(name string) {
	b.mu.Lock()
	cmd := b.named[name]
	b.mu.Unlock()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// Log returns what daemon name has printed so far.
func (b *Bed) Log(name string) string {
	data, _ := os.ReadFile(filepath.Join(b.dir, "logs", name+".log"))
	return string(data)
}

// startCluster starts the controller on ctl, copies its cluster key to the
// node hosts (as an administrator installs it), starts one agent per node
// host, takes a token for the login host and waits for three idle nodes.
func (b *Bed) startCluster() {
	ctl := b.hosts["ctl"]
	ctl.Daemon("ctld", bin, "ctld", "--conf", b.conf)
	keyPath := filepath.Join(b.dir, "hosts", "ctl", "state", "cluster.key")
	var key []byte
	b.waitFor(15*time.Second, "the controller's cluster key", func() bool {
		var err error
		key, err = os.ReadFile(keyPath)
		return err == nil && len(key) > 0
	})
	for _, n := range []string{"n1", "n2", "n3"} {
		h := b.hosts[n]
		must(b.t, os.WriteFile(filepath.Join(b.dir, "hosts", n, "cluster.key"), key, 0o600))
		h.Daemon("noded-"+n, bin, "noded", "--name", n, "--controller", fmt.Sprintf("http://10.200.0.2:%d", ctlPort),
			"--spool", filepath.Join(b.dir, "local", "spool"), "--key", filepath.Join(b.dir, "local", "cluster.key"),
			"--listen", h.Addr+":6818", "--cgroup", "none")
	}
	var tok Result
	b.waitFor(15*time.Second, "scontrol token on ctl", func() bool {
		tok = ctl.Run(10*time.Second, nil, "scontrol token username=root lifespan=3600")
		return tok.Code == 0
	})
	b.token = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(tok.Out), "SLURM_JWT="))
	var r Result
	b.waitFor(30*time.Second, "three idle nodes seen from the login host", func() bool {
		r = b.Login(10*time.Second, "sinfo -h -N -o '%N %t'")
		return r.Code == 0 && strings.Count(r.Out, " idle") == 3
	})
}

// waitFor polls cond every 200 ms until it holds, failing the test
// (with the daemons' logs) after limit.
func (b *Bed) waitFor(limit time.Duration, what string, cond func() bool) {
	b.t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			b.t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// logs is every daemon's log, for a failure message.
func (b *Bed) logs() string {
	var s strings.Builder
	for _, n := range []string{"ctld", "ctld-2", "noded-n1", "noded-n2", "noded-n3"} {
		l := b.Log(n)
		if len(l) > 4000 {
			l = "...\n" + l[len(l)-4000:]
		}
		fmt.Fprintf(&s, "--- %s log:\n%s", n, l)
	}
	return s.String()
}

// LinkDown cuts host name off the network: its end of the veth pair, in
// the switch namespace, goes down (as a cable pulled out).
func (b *Bed) LinkDown(name string) {
	b.sh("ip", "-n", b.name+"-sw", "link", "set", b.hosts[name].link, "down")
}

// LinkUp reconnects host name.
func (b *Bed) LinkUp(name string) {
	b.sh("ip", "-n", b.name+"-sw", "link", "set", b.hosts[name].link, "up")
}

// destroy kills every process of the bed (the holders, daemons, the jobs
// and supervisors they started, wherever they went) and deletes its
// namespaces and directory.
func (b *Bed) destroy() {
	if b.t.Failed() {
		b.t.Logf("daemon logs:\n%s", b.logs())
	}
	b.mu.Lock()
	for _, c := range b.daemon {
		if c.Process != nil {
			syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		}
	}
	b.mu.Unlock()
	removeNamespaces(func(ns string) bool { return strings.HasPrefix(ns, b.name+"-") })
	os.RemoveAll(b.dir)
}

// removeNamespaces kills the processes in, and deletes, the network
// namespaces match selects.
func removeNamespaces(match func(string) bool) (removed []string) {
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !match(f[0]) {
			continue
		}
		// A job's supervisor leaves the agent's process group on
		// purpose: find every process by its namespace.
		for i := 0; i < 50; i++ {
			pids, _ := exec.Command("ip", "netns", "pids", f[0]).Output()
			if len(strings.Fields(string(pids))) == 0 {
				break
			}
			for _, p := range strings.Fields(string(pids)) {
				if pid, err := strconv.Atoi(p); err == nil {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		exec.Command("ip", "netns", "delete", f[0]).Run()
		removed = append(removed, f[0])
	}
	return removed
}

// removeLeftovers deletes the namespaces and directories of earlier runs
// whose test binary is gone (a crashed or killed run).
func removeLeftovers(t *testing.T) {
	dead := func(name string) bool {
		rest, ok := strings.CutPrefix(name, nsPrefix)
		if !ok {
			return false
		}
		pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
		if err != nil || pid == os.Getpid() {
			return false
		}
		return syscall.Kill(pid, 0) == syscall.ESRCH
	}
	if ns := removeNamespaces(dead); len(ns) > 0 {
		t.Logf("removed network namespaces left by an earlier run: %s", strings.Join(ns, " "))
	}
	entries, _ := os.ReadDir("/run")
	for _, e := range entries {
		if dead(e.Name()) {
			t.Logf("removing /run/%s, left by an earlier run", e.Name())
			os.RemoveAll(filepath.Join("/run", e.Name()))
		}
	}
}
