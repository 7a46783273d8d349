package fs

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/recfs/recfs/codec/leveldb"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/source/local"
)

func TestErrno(t *testing.T) {
	corrupt := &codec.CorruptError{Format: codec.LevelDB, Off: 7, Reason: "checksum mismatch", Err: codec.ErrCorrupt}
	for _, tc := range []struct {
		err  error
		want syscall.Errno
	}{
		{nil, 0},
		{iofs.ErrNotExist, syscall.ENOENT},
		{os.ErrNotExist, syscall.ENOENT},
		{index.ErrRange, syscall.ENOENT},
		{fmt.Errorf("x: %w", index.ErrRange), syscall.ENOENT},
		{iofs.ErrPermission, syscall.EACCES},
		{ErrReadOnly, syscall.EROFS},
		{iofs.ErrExist, syscall.EEXIST},
		{iofs.ErrInvalid, syscall.EINVAL},
		{context.Canceled, syscall.EINTR},
		{context.DeadlineExceeded, syscall.EINTR},
		{ErrNotSupported, syscall.ENOTSUP},
		{corrupt, syscall.EIO},
		{&OpError{Op: "read", Record: 3, Off: 0, Err: corrupt}, syscall.EIO},
		{codec.ErrTruncated, syscall.EIO},
		{codec.ErrLimit, syscall.EIO},
		{codec.ErrUnsupported, syscall.EIO},
		{errors.New("anything else"), syscall.EIO},
		{syscall.EPERM, syscall.EPERM},
		{fmt.Errorf("index: append to x: %w", leveldb.ErrClosedLog), syscall.EPERM},
		{leveldb.ErrRecycledTail, syscall.EPERM},
		{&local.DBLockError{Lock: "/db/LOCK", Kind: "flock"}, syscall.EBUSY},
		{&os.PathError{Op: "open", Path: "/x", Err: syscall.EACCES}, syscall.EACCES},
		{&OpError{Op: "lookup", Record: -1, Off: -1, Err: &os.PathError{Op: "lstat", Err: syscall.ENAMETOOLONG}}, syscall.ENAMETOOLONG},
	} {
		if got := Errno(tc.err); got != tc.want {
			t.Errorf("Errno(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestOpErrorText(t *testing.T) {
	e := &OpError{Op: "read", Path: "/data/x.log", Record: 12, Off: 4096, Err: codec.ErrCorrupt}
	want := "fs: read /data/x.log record 12 offset 4096: codec: corrupt data"
	if e.Error() != want {
		t.Errorf("got %q, want %q", e.Error(), want)
	}
	if !errors.Is(e, codec.ErrCorrupt) {
		t.Error("OpError does not unwrap")
	}
}

func TestReadOnly(t *testing.T) {
	tr, path := newFileTree(t, &fakeRecords{recs: records(3)})
	n, _ := tr.Lookup(context.Background(), tr.Root(), "2")
	err := tr.ReadOnly("write", n)
	var oe *OpError
	if Errno(err) != syscall.EROFS || !errors.As(err, &oe) || oe.Path != path || oe.Name != "2" || oe.Op != "write" {
		t.Errorf("ReadOnly: %v (errno %v)", err, Errno(err))
	}
}
