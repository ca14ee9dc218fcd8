package cli

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/sluice-hpc/sluice/internal/conf"
)

// allocHold is how salloc (and srun outside an allocation) holds its
// allocation across hosts: the allocation's batch script, on the job's
// first node, connects back to salloc over TCP, proves it is that job's
// with a secret, and waits. salloc writes its command's exit code on the
// connection to release the allocation (the script exits with it, so the
// job ends COMPLETED or FAILED with that code, as Slurm records an
// salloc job); if salloc dies, even by SIGKILL, the kernel closes the
// connection and the script ends the allocation at once. Nothing is
// shared between the submit host and the node but the network.
type allocHold struct {
	ln     net.Listener
	addr   string // HOST:PORT the script connects to
	secret string

	mu   sync.Mutex
	conn net.Conn      // the script's latest connection
	got  chan struct{} // closed at the first one
}

// holdConnectTries is how many times (a second apart) the script tries to
// reach salloc before it gives the allocation up.
const holdConnectTries = 30

// newAllocHold listens on every address of this host; the script is told
// the address this host uses towards the controller (SlurmctldHost), the
// one the nodes can reach it on.
func newAllocHold(env *Env) (*allocHold, error) {
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		return nil, err
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		ln.Close()
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	h := &allocHold{ln: ln, addr: net.JoinHostPort(holdHost(env), strconv.Itoa(port)),
		secret: hex.EncodeToString(b), got: make(chan struct{})}
	go h.accept()
	return h, nil
}

// holdHost is this host's address on the route to the controller (no
// packet is sent: a UDP "connection" only picks the route), 127.0.0.1
// when the controller is here or unknown.
func holdHost(env *Env) string {
	cfg, _, err := conf.Load(confPath(env))
	if err != nil {
		return "127.0.0.1"
	}
	c, err := net.Dial("udp", controllerAddr(cfg))
	if err != nil {
		return "127.0.0.1"
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String()
}

// Script is the allocation's batch script: bash's /dev/tcp connects to
// salloc; the code read back is the job's exit code, none (salloc gone)
// ends it with 1. Its first lines are what the controller knows an
// allocation by (ctld's allocationMarker: no batch step in sacct).
func (h *allocHold) Script(me string) string {
	host, port, _ := net.SplitHostPort(h.addr)
	return fmt.Sprintf(`#!/bin/sh
# %s allocation: held until the command exits (%s at %s)
exec /bin/bash <<'EOF'
for i in $(seq %d); do
  exec 3<>/dev/tcp/%s/%s && break
  sleep 1
done 2>/dev/null
echo %s >&3 || exit 1
read -r code <&3
exit ${code:-1}
EOF
`, me, me, h.addr, holdConnectTries, host, port, h.secret)
}

// accept takes the script's connections; one that does not say the
// secret within 10 s is closed.
func (h *allocHold) accept() {
	for {
		c, err := h.ln.Accept()
		if err != nil {
			return
		}
		go h.check(c)
	}
}

func (h *allocHold) check(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != h.secret+"\n" {
		c.Close()
		return
	}
	c.SetReadDeadline(time.Time{})
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn == nil {
		close(h.got)
	} else {
		h.conn.Close() // a requeued job's new run replaces the old one
	}
	h.conn = c
}

// Release hands the exit code to the script (waiting up to limit for it
// to connect) and stops listening.
func (h *allocHold) Release(rc int, limit time.Duration) {
	select {
	case <-h.got:
	case <-time.After(limit):
	}
	h.mu.Lock()
	if h.conn != nil {
		fmt.Fprintf(h.conn, "%d\n", rc&0xff)
	}
	h.mu.Unlock()
	h.Close()
}

// Close stops listening and drops the script's connection (which ends
// the allocation).
func (h *allocHold) Close() {
	h.ln.Close()
	h.mu.Lock()
	if h.conn != nil {
		h.conn.Close()
	}
	h.mu.Unlock()
}
