package fs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/tfrecord"
	"github.com/recfs/recfs/index"
)

// TestReadHandleContext: a read of a record file through ReadHandle, or
// through Tree.ReadAt (no-open mounts), whose request was cancelled (a
// FUSE INTERRUPT) stops the record's decompression and gives EINTR; the
// same handle then reads the record's bytes. The record is the last 4 KiB
// of 32 MiB of zeros in a gzip TFRecord file: one checkpoint, so the read
// would otherwise decompress all of it.
func TestReadHandleContext(t *testing.T) {
	t.Parallel()
	const size = 32 << 20
	path := filepath.Join(t.TempDir(), "zeros.tfrecord.gz")
	file := tfrecord.AppendRecord(tfrecord.AppendRecord(nil, []byte("before")), make([]byte, size))
	if err := os.WriteFile(path, codectest.Gzip(file), 0o644); err != nil {
		t.Fatal(err)
	}
	tbl, err := index.Open(context.Background(), path, index.Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := NewFile(path, tbl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	bg := context.Background()
	n, err := tree.Lookup(bg, tree.Root(), "1")
	if err != nil {
		t.Fatal(err)
	}
	h, err := tree.Open(bg, n)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	gone, cancel := context.WithCancel(bg)
	cancel()
	tail := make([]byte, 4096)
	if _, err := ReadHandle(gone, h, tail, size-4096); !errors.Is(err, context.Canceled) || Errno(err) != syscall.EINTR {
		t.Fatalf("read of a cancelled request: %v (%v), want EINTR", err, Errno(err))
	}
	if _, err := tree.ReadAt(gone, n, tail, size-8192); !errors.Is(err, context.Canceled) {
		t.Fatalf("no-open read of a cancelled request: %v, want context.Canceled", err)
	}
	if k, err := ReadHandle(bg, h, tail, size-4096); err != nil || k != len(tail) || !bytes.Equal(tail, make([]byte, 4096)) {
		t.Fatalf("read after it: %d, %v", k, err)
	}
}
