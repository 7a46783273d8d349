package e2e

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// pacer holds reads of a source until the test lets them through (step),
// or until open is called. A recfs process that indexes a paced source gets
// exactly as far as the test allows, however fast or slow the machine:
// tests of what happens during a long build (progress, interruption) use
// one instead of a file big enough to be slow.
type pacer struct {
	what     string         // the source, for messages
	size     int64          // its bytes
	reads    chan pacedRead // a read waiting to be let through
	free     chan struct{}  // closed by open: reads no longer wait
	freeOnce sync.Once
	released atomic.Int64 // bytes of the reads step let through
}

// pacedRead is one read of a paced source.
type pacedRead struct{ off, n int64 }

func newPacer(what string, size int64) *pacer {
	return &pacer{what: what, size: size, reads: make(chan pacedRead), free: make(chan struct{})}
}

// wait holds the read r until the test lets it through; false when ctx
// ended first.
func (p *pacer) wait(ctx context.Context, r pacedRead) bool {
	select {
	case <-p.free:
	case p.reads <- r:
	case <-ctx.Done():
		return false
	}
	return true
}

// step lets the next read through, waiting for one (with a bound), and
// returns it.
func (p *pacer) step(t *testing.T) pacedRead {
	t.Helper()
	select {
	case r := <-p.reads:
		p.released.Add(r.n)
		return r
	case <-time.After(mountTimeout):
		t.Fatalf("no read of %s in %v (%d of %d bytes let through)", p.what, mountTimeout, p.released.Load(), p.size)
		return pacedRead{}
	}
}

// stepUntil lets reads through, one at a time, until at least n bytes of
// the source went out through step.
func (p *pacer) stepUntil(t *testing.T, n int64) {
	t.Helper()
	for p.released.Load() < n {
		p.step(t)
	}
}

// open lets every read through from now on.
func (p *pacer) open() { p.freeOnce.Do(func() { close(p.free) }) }

// pacedFile is a read-only file served by a FUSE file system that runs in
// the test process; every READ the kernel sends for it waits for the test.
// It is served with direct I/O (see Open).
type pacedFile struct {
	*pacer
	path string
}

// servePaced mounts a FUSE file system holding one file, name, with data,
// whose reads wait for the test. Cleanup lets every read through and
// unmounts it.
func servePaced(t *testing.T, name string, data []byte) *pacedFile {
	t.Helper()
	needFUSE(t)
	dir := filepath.Join(t.TempDir(), "paced")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := &pacedFile{pacer: newPacer(name, int64(len(data))), path: filepath.Join(dir, name)}
	root := &pacedRoot{name: name, file: &pacedNode{p: p.pacer, data: data, mtime: time.Now()}}
	hour := time.Hour
	srv, err := fs.Mount(dir, root, &fs.Options{
		MountOptions: fuse.MountOptions{FsName: "paced", Name: "paced"},
		EntryTimeout: &hour, AttrTimeout: &hour,
	})
	if err != nil {
		t.Fatalf("mount the paced file system: %v", err)
	}
	t.Cleanup(func() {
		p.open()
		if err := srv.Unmount(); err != nil {
			// A process of the test still holds the file: detach.
			_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		}
		srv.Wait()
	})
	return p
}

// pacedRoot is the file system's root directory.
type pacedRoot struct {
	fs.Inode
	name string
	file *pacedNode
}

var _ fs.NodeOnAdder = (*pacedRoot)(nil)

func (r *pacedRoot) OnAdd(ctx context.Context) {
	ch := r.NewPersistentInode(ctx, r.file, fs.StableAttr{Mode: syscall.S_IFREG, Ino: 2})
	r.AddChild(r.name, ch, false)
}

// pacedNode is the file.
type pacedNode struct {
	fs.Inode
	p     *pacer
	data  []byte
	mtime time.Time
}

var (
	_ fs.NodeGetattrer = (*pacedNode)(nil)
	_ fs.NodeOpener    = (*pacedNode)(nil)
	_ fs.NodeReader    = (*pacedNode)(nil)
)

func (n *pacedNode) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = syscall.S_IFREG | 0o444
	out.Size = uint64(len(n.data))
	out.Nlink = 1
	out.SetTimes(nil, &n.mtime, &n.mtime)
	return 0
}

func (n *pacedNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&(syscall.O_WRONLY|syscall.O_RDWR) != 0 {
		return nil, 0, syscall.EROFS
	}
	// Direct I/O: every read(2) is a READ here, and the file cannot be
	// mapped (recfs then reads it as it reads any file it cannot map). A
	// mapped file would not do: a recfs thread waiting in a page fault
	// on a held READ keeps its Go scheduler slot, and the next garbage
	// collection, which must stop every slot, freezes the whole process
	// (the bar with it) until the READ returns.
	return nil, fuse.FOPEN_DIRECT_IO, 0
}

func (n *pacedNode) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	end := min(off+int64(len(dest)), int64(len(n.data)))
	if off >= end {
		return fuse.ReadResultData(nil), 0
	}
	if !n.p.wait(ctx, pacedRead{off, end - off}) {
		return nil, syscall.EINTR
	}
	return fuse.ReadResultData(n.data[off:end]), 0
}
