package index

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/tfrecord"
)

// cursorLog is a leveldb log of n records of 50 to 1,049 bytes, with a
// record of 100,000 bytes (four chunks) at 1000: recs are the payloads.
func cursorLog(t *testing.T, n int) (log []byte, recs [][]byte) {
	var buf bytes.Buffer
	w := leveldb.NewWriter(&buf, leveldb.WriterOptions{})
	for i := range n {
		r := fmt.Appendf(nil, "record %d %s", i, bytes.Repeat([]byte{'a' + byte(i%26)}, 50+i%1000))
		if i == 1000 {
			r = bytes.Repeat([]byte("long"), 25000)
		}
		recs = append(recs, r)
		if _, err := w.WriteRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), recs
}

// TestCursorReadsOnce: a cursor over every record of a leveldb log hands
// out each payload intact while reading the source once, in reads of a
// megabyte (not one per record); records past the limit or the end, or of
// a format without the capability are left to ReadAt.
func TestCursorReadsOnce(t *testing.T) {
	t.Parallel()
	log, recs := cursorLog(t, 20000)
	src := codectest.Counting(log)
	tb, err := Build(context.Background(), src, int64(len(log)), Options{Format: codec.LevelDB, CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if tb.Len() != int64(len(recs)) {
		t.Fatalf("%d records, want %d", tb.Len(), len(recs))
	}
	src.Reads.Store(0)
	src.Bytes.Store(0)
	c := tb.Cursor()
	for n, want := range recs {
		got, ok := c.Payload(int64(n), 1<<20)
		if !ok || !bytes.Equal(got, want) {
			t.Fatalf("record %d: %d bytes, ok %v; want %d bytes", n, len(got), ok, len(want))
		}
	}
	size := int64(len(log))
	if b := src.Bytes.Load(); b > size+cursorWindow {
		t.Errorf("the cursor read %d bytes of a %d-byte log: more than once over", b, size)
	}
	if r, most := src.Reads.Load(), size/(cursorWindow/2)+2; r > most {
		t.Errorf("the cursor made %d reads for %d records (at most %d)", r, len(recs), most)
	}
	if _, ok := c.Payload(1000, 99999); ok {
		t.Error("served a record past the limit")
	}
	if _, ok := c.Payload(int64(len(recs)), 1<<20); ok {
		t.Error("served a record past the end")
	}
	var nilc *Cursor
	if _, ok := nilc.Payload(0, 1<<20); ok {
		t.Error("a nil cursor served a record")
	}
	// A format without the capability: every record is left to ReadAt.
	tf := tfrecord.AppendRecord(nil, []byte("one"))
	tt, err := Build(context.Background(), bytes.NewReader(tf), int64(len(tf)), Options{Format: codec.TFRecord, CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tt.Close()
	if _, ok := tt.Cursor().Payload(0, 1<<20); ok || tt.Len() != 1 {
		t.Errorf("a TFRecord cursor served a record (%d records)", tt.Len())
	}
}

// TestCursorRefusesDamage: a record whose bytes changed after the build
// is not served (ReadAt then reports it); the others still are.
func TestCursorRefusesDamage(t *testing.T) {
	t.Parallel()
	log, recs := cursorLog(t, 3000)
	file := bytes.Clone(log)
	src := codectest.Counting(file)
	tb, err := Build(context.Background(), src, int64(len(log)), Options{Format: codec.LevelDB, CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	bad := int64(1500)
	file[tb.Offset(bad)+leveldbHdr+3] ^= 1
	c := tb.Cursor()
	for n := range int64(len(recs)) {
		got, ok := c.Payload(n, 1<<20)
		if n == bad {
			if ok {
				t.Fatalf("record %d served with a flipped byte", n)
			}
			if _, err := tb.ReadAt(n, make([]byte, tb.Size(n)), 0); err == nil {
				t.Fatalf("record %d: ReadAt does not see the flipped byte", n)
			}
			continue
		}
		if !ok || !bytes.Equal(got, recs[n]) {
			t.Fatalf("record %d: ok %v", n, ok)
		}
	}
}

// leveldbHdr is the header size of the records cursorLog writes.
const leveldbHdr = 7
