package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/tfrecord"
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
	tree := openFileTree(t, path) // closed after the handle, by a later cleanup
	bg := context.Background()
	n, h := openRecordFile(t, tree, "1")
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

// openRecordFile looks name up in tree's root and opens it, closing the
// handle when the test ends.
func openRecordFile(t *testing.T, tree *Tree, name string) (Node, Handle) {
	t.Helper()
	n, err := tree.Lookup(context.Background(), tree.Root(), name)
	if err != nil {
		t.Fatal(err)
	}
	h, err := tree.Open(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return n, h
}

// stoppingRecords is a fakeRecords whose reads with a context can stop: the
// first blocks until its ctx is done (as a long inflate would run on),
// telling started when it begins; later ones read the record.
type stoppingRecords struct {
	*fakeRecords
	started  chan struct{}
	blocked  atomic.Bool // the first read with a context has begun
	ctxReads atomic.Int64
}

func (s *stoppingRecords) ReadAtContext(ctx context.Context, n int64, p []byte, off int64) (int, error) {
	s.ctxReads.Add(1)
	if !s.blocked.Swap(true) {
		close(s.started)
		<-ctx.Done()
		return 0, ctx.Err()
	}
	return s.ReadAt(n, p, off)
}

func (s *stoppingRecords) ReadAtGenerationContext(ctx context.Context, _ uint64, n int64, p []byte, off int64) (int, error) {
	return s.ReadAtContext(ctx, n, p, off)
}

// cancelledAtRead returns a request's context that is cancelled as soon
// as src's first read with a context begins: the request interrupted
// mid-read.
func cancelledAtRead(t *testing.T, src *stoppingRecords) context.Context {
	gone, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		select {
		case <-src.started:
			cancel()
		case <-gone.Done():
		}
	}()
	return gone
}

// viewedRecord makes a tree of a stoppingRecords of two records seen
// through upperView (calls counts its renders) and looks up record 0.
func viewedRecord(t *testing.T) (*Tree, Node, *stoppingRecords, *atomic.Int64) {
	t.Helper()
	src := &stoppingRecords{fakeRecords: &fakeRecords{recs: [][]byte{[]byte("abc"), []byte("de")}}, started: make(chan struct{})}
	calls := new(atomic.Int64)
	tree, _ := newFileTree(t, View(src, upperView(calls), ""))
	t.Cleanup(func() { tree.Close() })
	n, err := tree.Lookup(context.Background(), tree.Root(), RecordName(0, src.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return tree, n, src, calls
}

// TestViewReadContext: a read of a --decode view's record whose request
// is cancelled while the record is read from the source stops that read
// and fails with EINTR, not part of the text; the failed render is not
// cached, so the next read (with a live context) renders the record.
func TestViewReadContext(t *testing.T) {
	t.Parallel()
	src := &stoppingRecords{fakeRecords: &fakeRecords{recs: [][]byte{[]byte("abc"), []byte("de")}}, started: make(chan struct{})}
	var calls atomic.Int64
	tree, _ := newFileTree(t, View(src, upperView(&calls), ""))
	t.Cleanup(func() { tree.Close() }) // after the handle, closed by a later cleanup
	bg := context.Background()
	n, h := openRecordFile(t, tree, RecordName(0, src.Len()))
	gone := cancelledAtRead(t, src)
	buf := make([]byte, 64)
	if k, err := ReadHandle(gone, h, buf, 0); k != 0 || !errors.Is(err, context.Canceled) || Errno(err) != syscall.EINTR {
		t.Fatalf("read of a cancelled request: %d bytes %q, %v (%v); want 0, EINTR", k, buf[:k], err, Errno(err))
	}
	if calls.Load() != 0 {
		t.Fatalf("the decoder ran %d times on a record whose read was given up", calls.Load())
	}
	live, stop := context.WithCancel(bg)
	defer stop()
	const want = "<ABC>\n"
	if k, err := ReadHandle(live, h, buf, 0); string(buf[:k]) != want || err != nil && err != io.EOF {
		t.Fatalf("read after it: %q, %v; want %q", buf[:k], err, want)
	}
	if got := src.ctxReads.Load(); got < 2 {
		t.Fatalf("%d reads of the source with a context, want the record read again after the cancelled one", got)
	}
	if a, err := tree.Getattr(bg, n); err != nil || a.Size != int64(len(want)) {
		t.Fatalf("size after it: %d, %v; want %d", a.Size, err, len(want))
	}
}

// TestViewSizeContext: the first render of a --decode view's record
// usually sizes it, for a LOOKUP or GETATTR (ls -l, stat). A Getattr
// whose request is cancelled while that render reads the record from
// the source stops the read and fails with EINTR, never a size; nothing
// is remembered, so the next Getattr (with a live context) renders the
// record again and gives its size, and a read then returns the text.
func TestViewSizeContext(t *testing.T) {
	t.Parallel()
	tree, n, src, calls := viewedRecord(t)
	bg := context.Background()
	gone := cancelledAtRead(t, src)
	if a, err := tree.Getattr(gone, n); !errors.Is(err, context.Canceled) || Errno(err) != syscall.EINTR {
		t.Fatalf("getattr of a cancelled request: size %d, %v (%v); want EINTR", a.Size, err, Errno(err))
	}
	if calls.Load() != 0 {
		t.Fatalf("the decoder ran %d times on a record whose read was given up", calls.Load())
	}
	live, stop := context.WithCancel(bg)
	defer stop()
	const want = "<ABC>\n"
	if a, err := tree.Getattr(live, n); err != nil || a.Size != int64(len(want)) {
		t.Fatalf("getattr after it: size %d, %v; want %d", a.Size, err, len(want))
	}
	if got := src.ctxReads.Load(); got < 2 {
		t.Fatalf("%d reads of the source with a context, want the record read again after the cancelled one", got)
	}
	_, h := openRecordFile(t, tree, RecordName(0, src.Len()))
	buf := make([]byte, 64)
	if k, err := ReadHandle(live, h, buf, 0); string(buf[:k]) != want || err != nil && err != io.EOF {
		t.Fatalf("read after it: %q, %v; want %q", buf[:k], err, want)
	}
	if c := calls.Load(); c != 1 {
		t.Fatalf("the decoder ran %d times, want once (the size's rendering kept for the read)", c)
	}
}

// TestViewXattrsContext: a --decode view's record's user.recfs.length is
// its rendered size, sized as Getattr sizes it. Xattrs (getfattr,
// listxattr: cp -a, rsync -X) whose request is cancelled while that
// render reads the record stops the read and fails with EINTR, never a
// length; the next call renders the record again. A record that cannot
// be rendered gives an error, not a length of 0.
func TestViewXattrsContext(t *testing.T) {
	t.Parallel()
	tree, n, src, calls := viewedRecord(t)
	bg := context.Background()
	gone := cancelledAtRead(t, src)
	if xs, err := tree.Xattrs(gone, n); !errors.Is(err, context.Canceled) || Errno(err) != syscall.EINTR {
		t.Fatalf("xattrs of a cancelled request: %q, %v (%v); want EINTR", xs, err, Errno(err))
	}
	if calls.Load() != 0 {
		t.Fatalf("the decoder ran %d times on a record whose read was given up", calls.Load())
	}
	live, stop := context.WithCancel(bg)
	defer stop()
	const want = "<ABC>\n"
	xs, err := tree.Xattrs(live, n)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, x := range xs {
		got[x.Name] = string(x.Value)
	}
	if got["user.recfs.length"] != fmt.Sprint(len(want)) || got["user.recfs.offset"] != "1000" {
		t.Fatalf("xattrs after it: %q; want length %d, offset 1000", xs, len(want))
	}
	if got := src.ctxReads.Load(); got < 2 {
		t.Fatalf("%d reads of the source with a context, want the record read again after the cancelled one", got)
	}

	bad := &fakeRecords{recs: [][]byte{[]byte("abc")}, bad: map[int64]error{0: errors.New("disk on fire")}}
	tree, _ = newFileTree(t, View(bad, upperView(calls), ""))
	t.Cleanup(func() { tree.Close() })
	n, err = tree.Lookup(bg, tree.Root(), RecordName(0, bad.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if xs, err := tree.Xattrs(bg, n); err == nil || Errno(err) == 0 {
		t.Fatalf("xattrs of a record that cannot be rendered: %q, %v; want an error", xs, err)
	}
}
