package fs

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/recfs/recfs/codec"
)

// TestPendingMemBudget: many pending files open at once hold no more than
// the tree's PendingMem in memory together; the rest spill to unlinked
// temporary files in a private directory, and every file keeps its bytes
// (read back while pending, and appended on close).
func TestPendingMemBudget(t *testing.T) {
	tmp := t.TempDir()
	const budget = 1 << 20
	tr, path := newWritableTree(t, codec.LevelDB, Options{MemLimit: 512 << 10, PendingMem: budget, TempDir: tmp})
	ctx := context.Background()
	const files = 12
	var hs []*WriteHandle
	var want [][]byte
	for i := range files {
		_, h, err := tr.Create(ctx, tr.Root(), "f"+string(rune('a'+i)))
		if err != nil {
			t.Fatal(err)
		}
		data := bytes.Repeat([]byte{byte(i + 1)}, 300<<10+i)
		for off := 0; off < len(data); off += 64 << 10 {
			if _, err := h.WriteAt(data[off:min(off+64<<10, len(data))], int64(off)); err != nil {
				t.Fatal(err)
			}
			if m := tr.pendMem.Load(); m > budget {
				t.Fatalf("pending files hold %d bytes in memory, budget %d", m, budget)
			}
		}
		hs = append(hs, h)
		want = append(want, data)
	}
	spilled := 0
	for _, h := range hs {
		if h.p.buf.spilled() {
			spilled++
		}
	}
	if spilled < files-budget/(300<<10) {
		t.Errorf("%d of %d files spilled, budget %d", spilled, files, budget)
	}
	// The private directory exists and holds no names.
	ents, _ := os.ReadDir(tmp)
	if len(ents) != 1 || !ents[0].IsDir() {
		t.Fatalf("temp dir holds %v, want one private directory", ents)
	}
	if fi, _ := os.Stat(tmp + "/" + ents[0].Name()); fi.Mode().Perm() != 0o700 {
		t.Errorf("private directory mode %v", fi.Mode())
	}
	if names, _ := os.ReadDir(tmp + "/" + ents[0].Name()); len(names) != 0 {
		t.Errorf("spill files left names: %v", names)
	}
	for i, h := range hs {
		got := make([]byte, len(want[i]))
		if n, err := h.ReadAt(got, 0); n != len(got) || (err != nil && n != len(got)) || !bytes.Equal(got, want[i]) {
			t.Fatalf("file %d read back %d bytes, %v", i, n, err)
		}
	}
	for _, h := range hs {
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if m := tr.pendMem.Load(); m != 0 {
		t.Errorf("%d bytes still counted after every file closed", m)
	}
	recs := readBack(t, path)
	if len(recs) != files {
		t.Fatalf("%d records, want %d", len(recs), files)
	}
	for i := range recs {
		if !bytes.Equal(recs[i], want[i]) {
			t.Errorf("record %d differs", i)
		}
	}
	tr.Close()
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("private directory left after Close: %v", ents)
	}
}
