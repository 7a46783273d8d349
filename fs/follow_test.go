package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/leveldb"

	"github.com/recfs/recfs/index"
)

// appendRecords appends recs to the log at path with the codec writer, as
// another process would.
func appendRecords(t *testing.T, path string, recs ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	w := leveldb.NewWriter(f, leveldb.WriterOptions{Offset: fi.Size()})
	for _, r := range recs {
		if _, err := w.WriteRecord([]byte(r)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// newLiveTree writes recs as a leveldb log and returns its path and a file
// tree of it (see openFileTree).
func newLiveTree(t *testing.T, recs ...string) (string, *Tree) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "live.log")
	appendRecords(t, path, recs...)
	return path, openFileTree(t, path)
}

// openFileTree returns a file tree of the record file at path (no saved
// index), closed when the test ends.
func openFileTree(t *testing.T, path string) *Tree {
	t.Helper()
	tbl, err := index.Open(context.Background(), path, index.Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := NewFile(path, tbl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tree.Close() })
	return tree
}

func TestFollow(t *testing.T) {
	path, tree := newLiveTree(t, "a", "b")
	var mu sync.Mutex
	var changes []Change
	first := make(chan struct{}, 1)
	stop := tree.Follow(10*time.Millisecond, func(c Change) {
		mu.Lock()
		changes = append(changes, c)
		mu.Unlock()
		select {
		case first <- struct{}{}:
		default:
		}
	})
	ctx := context.Background()
	info := func() string {
		h, err := tree.Open(ctx, Node{Kind: KindInfo, rd: tree.Root().rd})
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 4096)
		n, _ := h.ReadAt(b, 0)
		return string(b[:n])
	}
	if !strings.Contains(info(), "records: 2") {
		t.Fatalf(".recfs before: %s", info())
	}
	appendRecords(t, path, "c", "d", "e")
	select {
	case <-first:
	case <-time.After(5 * time.Second):
		t.Fatal("no change reported")
	}
	stop()
	c := changes[0]
	if c.OldLen != 2 || c.NewLen != 5 || c.Dir != tree.Root() || c.Info.Kind != KindInfo {
		t.Fatalf("change %+v", c)
	}
	if got := strings.Join(c.Names(), ","); got != "000002,000003,000004" {
		t.Fatalf("new names %s", got)
	}
	if got := strings.Join(c.names(1), ","); got != "000002" {
		t.Fatalf("capped names %s", got)
	}
	n, err := tree.Lookup(ctx, tree.Root(), "000004")
	if err != nil {
		t.Fatal(err)
	}
	h, err := tree.Open(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 10)
	if k, _ := h.ReadAt(b, 0); string(b[:k]) != "e" {
		t.Fatalf("new record reads %q", b[:k])
	}
	if s := info(); !strings.Contains(s, "records: 5") {
		t.Fatalf(".recfs not refreshed: %s", s)
	}
	// After stop, nothing more is reported. Instead of sleeping for a
	// while, wait for a second follower to see the next append: the first
	// one, had it still been polling, would have seen it as early.
	appendRecords(t, path, "f")
	seen := make(chan Change, 1)
	stop2 := tree.Follow(10*time.Millisecond, func(c Change) {
		select {
		case seen <- c:
		default:
		}
	})
	defer stop2()
	select {
	case c := <-seen:
		if c.OldLen != 5 || c.NewLen != 6 {
			t.Fatalf("second follower: change %+v", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("second follower saw no change")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(changes) != 1 {
		t.Fatalf("%d changes, want 1: %v", len(changes), fmt.Sprint(changes))
	}
}

// TestFollowRewrite: a followed source rewritten in place is reported as
// Rewritten, and a record file opened before the rewrite fails its reads
// (one version per open) while a new open reads the new record.
func TestFollowRewrite(t *testing.T) {
	path, tree := newLiveTree(t, "old-a", "old-b")
	changes := make(chan Change, 10)
	stop := tree.Follow(5*time.Millisecond, func(c Change) { changes <- c })
	defer stop()
	ctx := context.Background()
	open := func() Handle {
		n, err := tree.Lookup(ctx, tree.Root(), "000001")
		if err != nil {
			t.Fatal(err)
		}
		h, err := tree.Open(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	before := open()
	b := make([]byte, 16)
	if k, _ := before.ReadAt(b, 0); string(b[:k]) != "old-b" {
		t.Fatalf("before: %q", b[:k])
	}
	os.Remove(path)
	appendRecords(t, path+".new", "NEW-A", "NEW-B", "NEW-C")
	os.Rename(path+".new", path)
	select {
	case c := <-changes:
		if !c.Rewritten || c.OldLen != 2 || c.NewLen != 3 {
			t.Fatalf("change %+v, want a rewrite from 2 to 3 records", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no change reported")
	}
	if k, err := before.ReadAt(b, 0); !errors.Is(err, index.ErrChanged) || Errno(err) != syscall.EIO {
		t.Fatalf("record opened before the rewrite: %q, %v; want EIO (index.ErrChanged)", b[:k], err)
	}
	if k, _ := open().ReadAt(b, 0); string(b[:k]) != "NEW-B" {
		t.Fatalf("record opened after the rewrite: %q", b[:k])
	}
}
