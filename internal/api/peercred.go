package api

import (
	"errors"
	"net"

	"golang.org/x/sys/unix"
)

// PeerCred reads the uid and gid of the process at the other end of a
// Unix socket connection (SO_PEERCRED): the kernel's word, not the
// client's. The controller's API socket and the REST server's both
// authenticate local callers this way, as slurmrestd's local socket does.
func PeerCred(conn net.Conn) (uid, gid uint32, err error) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return 0, 0, errors.New("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, 0, err
	}
	if cerr != nil {
		return 0, 0, cerr
	}
	return cred.Uid, cred.Gid, nil
}
