package gofuse

import (
	"context"
	"io"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
)

// TestWriteNodes drives a writable mount through the go-fuse bridge: create,
// write, flush (the append), release, and the cache timeouts of what
// changes.
func TestWriteNodes(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "w.log")
	tb, err := index.Create(ctx, p, codec.LevelDB, false, index.Options{CacheDir: "-", Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	lg := logrus.New()
	lg.SetOutput(io.Discard)
	tr, err := fs.NewFile(p, tb, fs.Options{ReadWrite: true, Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	o := fs.MountOptions{ReadWrite: true}
	opts := Options(tr, o)
	if opts.MountOptions.DirectMountFlags&syscall.MS_RDONLY != 0 {
		t.Error("writable mount is mounted read-only")
	}
	if *opts.NegativeTimeout > time.Millisecond {
		t.Errorf("negative timeout %v in a writable mount", *opts.NegativeTimeout)
	}
	raw := fusefs.NewNodeFS(NewRoot(tr, o), opts)
	hdr := func(id uint64) fuse.InHeader { return fuse.InHeader{NodeId: id} }
	short := func(what string, d time.Duration) {
		if d <= 0 || d > time.Millisecond {
			t.Errorf("%s timeout %v, want a tiny non-zero one", what, d)
		}
	}

	var cout fuse.CreateOut
	if st := raw.Create(nil, &fuse.CreateIn{InHeader: hdr(1), Flags: syscall.O_WRONLY | syscall.O_CREAT}, "new.txt", &cout); st != fuse.OK {
		t.Fatalf("create: %v", st)
	}
	short("pending entry", cout.EntryTimeout())
	short("pending attr", cout.AttrTimeout())
	if cout.OpenFlags&fuse.FOPEN_NOFLUSH != 0 {
		t.Error("write handle without FLUSH: close could return before the append")
	}
	id, fh := cout.NodeId, cout.Fh
	// A flush before any write (a shell's dup+close) appends nothing.
	if st := raw.Flush(nil, &fuse.FlushIn{InHeader: hdr(id), Fh: fh}); st != fuse.OK || tb.Len() != 0 {
		t.Fatalf("early flush: %v, %d records", st, tb.Len())
	}
	data := []byte("hello through go-fuse")
	if n, st := raw.Write(nil, &fuse.WriteIn{InHeader: hdr(id), Fh: fh, Size: uint32(len(data))}, data); st != fuse.OK || int(n) != len(data) {
		t.Fatalf("write: %d, %v", n, st)
	}
	// cp -p's chmod/utimes on the pending file are accepted.
	var aout fuse.AttrOut
	in := &fuse.SetAttrIn{SetAttrInCommon: fuse.SetAttrInCommon{InHeader: hdr(id), Valid: fuse.FATTR_MODE, Mode: 0o600}}
	if st := raw.SetAttr(nil, in, &aout); st != fuse.OK || aout.Size != uint64(len(data)) {
		t.Errorf("setattr of pending: %v, size %d", st, aout.Size)
	}
	if st := raw.Flush(nil, &fuse.FlushIn{InHeader: hdr(id), Fh: fh}); st != fuse.OK {
		t.Fatalf("flush: %v", st)
	}
	if tb.Len() != 1 || tb.Size(0) != int64(len(data)) {
		t.Fatalf("after flush: %d records", tb.Len())
	}
	raw.Release(nil, &fuse.ReleaseIn{InHeader: hdr(id), Fh: fh})
	var eout fuse.EntryOut
	h := hdr(1)
	if st := raw.Lookup(nil, &h, "new.txt", &eout); st == fuse.OK && eout.NodeId != 0 {
		t.Error("created name still resolves after release")
	}
	// The record directory and .recfs change: short attribute timeouts.
	if st := raw.GetAttr(nil, &fuse.GetAttrIn{InHeader: hdr(1)}, &aout); st != fuse.OK {
		t.Fatal(st)
	}
	short("record dir attr", aout.Timeout())
	if st := raw.Lookup(nil, &h, fs.InfoName, &eout); st != fuse.OK {
		t.Fatal(st)
	}
	short(".recfs attr", eout.AttrTimeout())
	// An existing record refuses writes with EPERM.
	if st := raw.Lookup(nil, &h, "0", &eout); st != fuse.OK {
		t.Fatal(st)
	}
	if st := raw.Open(nil, &fuse.OpenIn{InHeader: hdr(eout.NodeId), Flags: syscall.O_WRONLY}, &fuse.OpenOut{}); st != fuse.Status(syscall.EPERM) {
		t.Errorf("open record for writing: %v, want EPERM", st)
	}
	if st := raw.Unlink(nil, &h, "0"); st != fuse.Status(syscall.EPERM) {
		t.Errorf("unlink record: %v, want EPERM", st)
	}
}
