//go:build linux

package fs

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestDeletedSourceClosedOnForget(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		change func(t *testing.T, path string)
		closed bool
	}{
		{"kept", func(*testing.T, string) {}, false},
		{"deleted", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"replaced", func(t *testing.T, path string) {
			if err := os.WriteFile(path+".new", []byte(fakeMagic+"new\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(path+".new", path); err != nil {
				t.Fatal(err)
			}
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, op, dir := newFakeDirTree(t, map[string]string{"a.log": fakeMagic + "one\ntwo\n"})
			rdn := lookupPath(t, tr, "a.log")
			rec := lookupPath(t, tr, "a.log/1")
			tr.Hold(rdn)
			tr.Hold(rec)
			h, err := tr.Open(ctx, rec)
			if err != nil {
				t.Fatal(err)
			}
			c.change(t, filepath.Join(dir, "a.log"))
			tr.Forget(rec)
			tr.Forget(rdn)
			src := op.srcs[0]
			if src.closed {
				t.Fatal("source closed while a handle of it is open")
			}
			if got := readAll(h); got != "two" {
				t.Errorf("read through the open handle: %q", got)
			}
			h.Close()
			if src.closed != c.closed {
				t.Errorf("source closed = %v after the last handle, want %v", src.closed, c.closed)
			}
			_, err = tr.Open(ctx, rec)
			if c.closed && Errno(err) != syscall.ESTALE || !c.closed && err != nil {
				t.Errorf("open of a record afterwards: %v", err)
			}
			if c.closed {
				// The name now shows what is at the path (if anything).
				n, err := tr.Lookup(ctx, tr.Root(), "a.log")
				if c.name == "replaced" && (err != nil || n.rd == rdn.rd) || c.name == "deleted" && err == nil {
					t.Errorf("lookup after the change: %+v %v", n, err)
				}
			}
		})
	}
}

// TestReadAtHoldsSourceForTheRead: a handle-less read (no-open adapters)
// holds the record file only while it reads: afterwards a deleted source
// is closed as soon as the kernel forgets it, and further reads fail.
func TestReadAtHoldsSourceForTheRead(t *testing.T) {
	ctx := context.Background()
	tr, op, dir := newFakeDirTree(t, map[string]string{"a.log": fakeMagic + "one\ntwo\n"})
	rdn := lookupPath(t, tr, "a.log")
	rec := lookupPath(t, tr, "a.log/1")
	tr.Hold(rdn)
	tr.Hold(rec)
	buf := make([]byte, 10)
	if n, err := tr.ReadAt(ctx, rec, buf, 0); string(buf[:n]) != "two" || err != nil && err != io.EOF {
		t.Fatalf("ReadAt: %q %v", buf[:n], err)
	}
	if u := rec.rd.users; u != 0 {
		t.Fatalf("%d users of the record file after a handle-less read, want 0", u)
	}
	if err := os.Remove(filepath.Join(dir, "a.log")); err != nil {
		t.Fatal(err)
	}
	tr.Forget(rec)
	tr.Forget(rdn)
	if !op.srcs[0].closed {
		t.Error("deleted source still open after the kernel forgot it")
	}
	if _, err := tr.ReadAt(ctx, rec, buf, 0); Errno(err) != syscall.ESTALE {
		t.Errorf("read after the source was closed: %v, want ESTALE", err)
	}
}
