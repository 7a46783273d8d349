package fs

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"sync"
	"syscall"

	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/source/local"
)

// ErrReadOnly is returned for any attempt to change the tree.
var ErrReadOnly = errors.New("fs: read-only file system")

// ErrNotSupported is returned for features designed but not built yet.
var ErrNotSupported = errors.New("fs: not supported")

// Errno maps an error from this module (or the OS) to the errno the kernel
// should see. It is the single error table of every adapter. nil maps to 0.
func Errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	if errors.Is(err, ErrStale) {
		return syscall.ESTALE // before the errno of the failed resolution it may wrap
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return en
	}
	switch {
	case errors.Is(err, iofs.ErrNotExist), errors.Is(err, index.ErrRange):
		return syscall.ENOENT
	case errors.Is(err, ErrNoXattr):
		return syscall.ENODATA
	case errors.Is(err, ErrReadOnly):
		return syscall.EROFS
	case errors.Is(err, ErrImmutable), errors.Is(err, codec.ErrSealed):
		return syscall.EPERM
	case errors.Is(err, local.ErrDBLocked):
		return syscall.EBUSY
	case errors.Is(err, ErrTooLarge):
		return syscall.EFBIG
	case errors.Is(err, iofs.ErrPermission):
		return syscall.EACCES
	case errors.Is(err, iofs.ErrExist):
		return syscall.EEXIST
	case errors.Is(err, iofs.ErrInvalid):
		return syscall.EINVAL
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return syscall.EINTR
	case errors.Is(err, ErrNotSupported), errors.Is(err, errors.ErrUnsupported):
		return syscall.ENOTSUP
	case errors.Is(err, codec.ErrCorrupt), errors.Is(err, codec.ErrTruncated),
		errors.Is(err, codec.ErrLimit), errors.Is(err, codec.ErrUnsupported),
		errors.Is(err, codec.ErrFormat):
		return syscall.EIO
	}
	return syscall.EIO
}

// OpError records an operation on the tree that failed, with where it
// happened. Record and Off are -1 when they do not apply.
type OpError struct {
	Op     string // "lookup", "read", "readdir", "open", "index"...
	Path   string // source file (or directory) the entry belongs to
	Name   string // entry name inside the mount, relative to the mount root
	Record int64  // record number, or -1
	Off    int64  // byte offset in the record, or -1
	Err    error
}

// Error describes the failure with its file, record and offset.
func (e *OpError) Error() string {
	s := fmt.Sprintf("fs: %s %s", e.Op, e.Path)
	if e.Record >= 0 {
		s += fmt.Sprintf(" record %d", e.Record)
	}
	if e.Off >= 0 {
		s += fmt.Sprintf(" offset %d", e.Off)
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *OpError) Unwrap() error { return e.Err }

// errLog logs every distinct failure once. Its memory is bounded: when it
// has seen maxLogged distinct failures it forgets them and starts over.
type errLog struct {
	log  logrus.FieldLogger
	mu   sync.Mutex
	seen map[errKey]struct{}
}

type errKey struct {
	op, path string
	record   int64
	errno    syscall.Errno
	changed  bool // index.ErrChanged: logged once per source, not per record
}

const maxLogged = 4096

// report maps err to an errno and logs it once per (op, path, record,
// errno) unless it is ENOENT or ENODATA (a missing name or attribute is an
// answer, not a failure); a changed source (index.ErrChanged) is
// logged once per (op, path), whatever the record.
func (l *errLog) report(err error) syscall.Errno {
	en := Errno(err)
	if en == 0 || en == syscall.ENOENT || en == syscall.ENODATA || l == nil || l.log == nil {
		return en
	}
	k := errKey{errno: en, record: -1}
	fields := logrus.Fields{"errno": en.Error()}
	var oe *OpError
	if errors.As(err, &oe) {
		k.op, k.path, k.record = oe.Op, oe.Path, oe.Record
		fields["op"], fields["file"] = oe.Op, oe.Path
		if oe.Name != "" {
			fields["name"] = oe.Name
		}
		if oe.Record >= 0 {
			fields["record"] = oe.Record
		}
		if oe.Off >= 0 {
			fields["offset"] = oe.Off
		}
	}
	if errors.Is(err, index.ErrChanged) {
		k.changed, k.record = true, -1
	}
	var ce *codec.CorruptError
	if errors.As(err, &ce) {
		fields["file_offset"] = ce.Off
	}
	l.mu.Lock()
	if l.seen == nil || len(l.seen) >= maxLogged {
		l.seen = make(map[errKey]struct{})
	}
	_, dup := l.seen[k]
	l.seen[k] = struct{}{}
	l.mu.Unlock()
	if !dup {
		l.log.WithFields(fields).Error(err.Error())
	}
	return en
}
