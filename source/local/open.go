package local

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// OpenPath opens the record file at path: read-write when writable (a
// table that will take appends), read-only otherwise or when the file may
// not be written (its appends will then fail, as they would have). A writable
// source must be a regular file. reopen refuses a symlink at path, and
// anything but a regular file: the file that replaced the source is taken
// only if it is a file in its own right, writable or not.
func OpenPath(path string, writable, reopen bool) (*os.File, error) {
	if !writable && !reopen {
		return os.Open(path)
	}
	flag := syscall.O_NONBLOCK
	if reopen {
		flag |= syscall.O_NOFOLLOW
	}
	var (
		f   *os.File
		err error
	)
	if writable {
		f, err = os.OpenFile(path, flag|os.O_RDWR, 0)
	}
	if !writable || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EPERM) {
		f, err = os.OpenFile(path, flag|os.O_RDONLY, 0)
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("local: %s is not a regular file", path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// SameFile reports whether a and b are descriptors of one file.
func SameFile(a, b *os.File) bool {
	ai, err := a.Stat()
	if err != nil {
		return false
	}
	bi, err := b.Stat()
	return err == nil && os.SameFile(ai, bi)
}

// ReadWrite reports whether f was opened for reading and writing.
func ReadWrite(f *os.File) bool {
	sc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var flags uintptr
	var errno syscall.Errno
	if err := sc.Control(func(fd uintptr) {
		flags, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	}); err != nil || errno != 0 {
		return false
	}
	return flags&syscall.O_ACCMODE == syscall.O_RDWR
}
