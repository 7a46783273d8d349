package fs

import (
	"context"
	"testing"
)

// BenchmarkLookupGetattr is the per-entry cost of ls -l: a name parse and
// an attribute fill. Bytes are record-name bytes.
func BenchmarkLookupGetattr(b *testing.B) {
	src := &fakeRecords{recs: records(1 << 16)}
	tr, _ := newFileTree(b, src)
	ctx := context.Background()
	names := make([]string, 1<<16)
	for i := range names {
		names[i] = RecordName(int64(i), src.Len())
	}
	b.SetBytes(int64(len(names[0])))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		n, err := tr.Lookup(ctx, tr.Root(), names[i&(1<<16-1)])
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tr.Getattr(ctx, n); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadDir streams a listing of a million records; bytes are the
// names produced.
func BenchmarkReadDir(b *testing.B) {
	const count = 1 << 20
	src := &fakeRecords{recs: make([][]byte, count)}
	tr, _ := newFileTree(b, src)
	ctx := context.Background()
	b.SetBytes(count * int64(NameWidth(count)))
	b.ReportAllocs()
	for b.Loop() {
		d, err := tr.OpenDir(ctx, tr.Root())
		if err != nil {
			b.Fatal(err)
		}
		k := 0
		for _, ok := d.Next(); ok; _, ok = d.Next() {
			k++
		}
		if k != count+1 {
			b.Fatalf("%d entries", k)
		}
	}
}

// BenchmarkRead reads one 4 KiB record through a handle.
func BenchmarkRead(b *testing.B) {
	rec := make([]byte, 4096)
	src := &fakeRecords{recs: [][]byte{rec}}
	tr, _ := newFileTree(b, src)
	ctx := context.Background()
	n, _ := tr.Lookup(ctx, tr.Root(), "0")
	h, err := tr.Open(ctx, n)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 4096)
	b.SetBytes(4096)
	for b.Loop() {
		if _, err := h.ReadAt(buf, 0); err != nil {
			b.Fatal(err)
		}
	}
}
