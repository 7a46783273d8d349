package bazil

import (
	"fmt"
	"syscall"
	"unsafe"
)

// pollFd is struct pollfd of poll(2).
type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

// disablePoll opens the file at path, which must be on the mount, and polls
// it once. The kernel sends one FUSE POLL request; the server answers
// ENOSYS and the kernel never polls this mount again.
//
// This must happen before any goroutine of the serving process opens a file
// on the mount with package os: Go adds such files to its netpoller, whose
// epoll_ctl and epoll_wait calls keep the scheduler's P while they wait, so
// with one P (or every P polling) the POLL request they trigger could never
// be served. The ppoll here is an ordinary blocking system call (not
// syscall.EpollCtl, which is a raw one), during which other goroutines run.
func disablePoll(path string) error {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bazil: mount does not answer: %w", err)
	}
	defer syscall.Close(fd)
	p := pollFd{fd: int32(fd), events: 0x1 | 0x4} // POLLIN|POLLOUT
	var zero syscall.Timespec
	_, _, e := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&p)), 1, uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
	if e != 0 {
		return fmt.Errorf("bazil: poll on the mount: %w", e)
	}
	return nil
}
