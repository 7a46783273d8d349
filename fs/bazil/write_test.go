//go:build linux

package bazil

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"syscall"
	"testing"

	"bazil.org/fuse"
	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
)

// TestWriteNodes drives a writable tree through the bazil nodes: create,
// write, flush (the append), release, and the cache validity of what
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
	r, _ := NewFS(tr, o).Root()
	root := r.(node)

	cresp := &fuse.CreateResponse{}
	cresp.EntryValid = 1 << 40 // bazil's default is non-zero; Create must clear it
	cn, ch, err := root.Create(ctx, &fuse.CreateRequest{Name: "new.txt", Flags: fuse.OpenWriteOnly | fuse.OpenCreate}, cresp)
	if err != nil {
		t.Fatal(err)
	}
	if cresp.EntryValid != 0 {
		t.Errorf("pending entry valid for %v", cresp.EntryValid)
	}
	var a fuse.Attr
	if err := cn.Attr(ctx, &a); err != nil || a.Valid != 0 {
		t.Errorf("pending attr valid %v (%v)", a.Valid, err)
	}
	wh := ch.(*writeHandle)
	if err := wh.Flush(ctx, &fuse.FlushRequest{}); err != nil || tb.Len() != 0 {
		t.Fatalf("early flush: %v, %d records", err, tb.Len())
	}
	data := []byte("hello through bazil")
	wresp := &fuse.WriteResponse{}
	if err := wh.Write(ctx, &fuse.WriteRequest{Data: data}, wresp); err != nil || wresp.Size != len(data) {
		t.Fatalf("write: %d, %v", wresp.Size, err)
	}
	sresp := &fuse.SetattrResponse{}
	if err := cn.(node).Setattr(ctx, &fuse.SetattrRequest{Valid: fuse.SetattrMode, Mode: 0o600}, sresp); err != nil || sresp.Attr.Size != uint64(len(data)) {
		t.Errorf("setattr of pending: %v, size %d", err, sresp.Attr.Size)
	}
	if err := wh.Flush(ctx, &fuse.FlushRequest{}); err != nil {
		t.Fatal(err)
	}
	if tb.Len() != 1 || tb.Size(0) != int64(len(data)) {
		t.Fatalf("after flush: %d records", tb.Len())
	}
	if err := wh.Release(ctx, &fuse.ReleaseRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := lookup(t, root, "new.txt"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("created name after release: %v", err)
	}
	// The record directory and .recfs change: not cached.
	if err := root.Attr(ctx, &a); err != nil || a.Valid != 0 {
		t.Errorf("record dir attr valid %v (%v)", a.Valid, err)
	}
	info, _, err := lookup(t, root, fs.InfoName)
	if err != nil {
		t.Fatal(err)
	}
	if err := info.Attr(ctx, &a); err != nil || a.Valid != 0 {
		t.Errorf(".recfs attr valid %v (%v)", a.Valid, err)
	}
	// Existing records refuse changes with EPERM.
	rec, _, err := lookup(t, root, "0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Open(ctx, &fuse.OpenRequest{Flags: fuse.OpenWriteOnly}, &fuse.OpenResponse{}); !errors.Is(err, syscall.EPERM) {
		t.Errorf("open record for writing: %v, want EPERM", err)
	}
	if err := root.Remove(ctx, &fuse.RemoveRequest{Name: "0"}); !errors.Is(err, syscall.EPERM) {
		t.Errorf("remove record: %v, want EPERM", err)
	}
	if err := rec.Setattr(ctx, &fuse.SetattrRequest{Valid: fuse.SetattrSize}, &fuse.SetattrResponse{}); !errors.Is(err, syscall.EPERM) {
		t.Errorf("truncate record: %v, want EPERM", err)
	}
}
