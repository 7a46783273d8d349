package bazil

import (
	"context"
	"fmt"
	"io"
	"syscall"
	"unsafe"

	"bazil.org/fuse"
	bazilfs "bazil.org/fuse/fs"
)

// pollFileName is a hidden file of the root that exists only while Mount
// turns POLL off: opening it gives a handle whose Poll answers ENOSYS. It
// is never listed, and looking it up afterwards gives ENOENT.
const pollFileName = ".recfs-bazil-poll-hack"

// pollFile is the node of pollFileName, an empty read-only file. Nothing
// but disablePoll's open, poll and close reaches it; any other request
// gets bazil's answer for a node without that method.
type pollFile struct{ m *mount }

var _ bazilfs.NodeOpener = pollFile{}

// Attr reports an empty read-only file, not cached.
func (pollFile) Attr(_ context.Context, a *fuse.Attr) error {
	a.Mode, a.Valid = 0o444, 0
	return nil
}

// Open opens the empty file; its handle's Poll turns POLL off.
func (p pollFile) Open(context.Context, *fuse.OpenRequest, *fuse.OpenResponse) (bazilfs.Handle, error) {
	return &fileHandle{m: p.m, h: emptyHandle{}}, nil
}

// emptyHandle is the contents of the pollFileName file.
type emptyHandle struct{}

func (emptyHandle) ReadAt([]byte, int64) (int, error) { return 0, io.EOF }
func (emptyHandle) Close() error                      { return nil }

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
