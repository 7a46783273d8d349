package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/tfrecord"
)

// passLogs are leveldb logs clean and damaged every way a pass must
// report as a table does: flipped bytes, a torn end, a zeroed run, and a
// recycled file whose previous life follows the live log (a stale tail).
func passLogs(t *testing.T) map[string][]byte {
	data, _ := genLog(t, 11, 4000, 3000)
	logs := map[string][]byte{"clean": data, "empty": nil}
	for _, at := range []int64{5 * blockSize, 200123, int64(len(data)) / 2, int64(len(data)) - 40000} {
		d := bytes.Clone(data)
		d[at] ^= 0x55
		logs[fmt.Sprint("flip-", at)] = d
	}
	zeroed := bytes.Clone(data)
	clear(zeroed[300000:370000])
	logs["zeroed"] = zeroed
	logs["torn"] = data[:len(data)-1234]
	var old, live bytes.Buffer
	w := leveldb.NewWriter(&old, leveldb.WriterOptions{Recyclable: true, LogNum: 6})
	for i := 0; old.Len() < 3*blockSize; i++ {
		if _, err := w.WriteRecord(codectest.Records(1, 2000, byte(i))[0]); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	w = leveldb.NewWriter(&live, leveldb.WriterOptions{Recyclable: true, LogNum: 7})
	for i := range 30 {
		if _, err := w.WriteRecord(codectest.Records(1, 100+i, byte(i))[0]); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	recycled := old.Bytes()
	copy(recycled, live.Bytes())
	logs["recycled"] = recycled
	return logs
}

// TestPassMatchesTable: a pass over a log finds the records a table built
// from it holds (payloads, count) and the same damage, reading the file
// once; built tables are made in parallel parts, as cat's are.
func TestPassMatchesTable(t *testing.T) {
	old := minPartBytes
	defer func() { minPartBytes = old }()
	minPartBytes = 64 << 10 // parallel builds of these small logs
	ctx := context.Background()
	for name, data := range passLogs(t) {
		tb, err := Build(ctx, bytes.NewReader(data), int64(len(data)), Options{CacheDir: "-"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := readAll(t, tb)
		src := codectest.Counting(data)
		p, err := NewPass(ctx, src, int64(len(data)), Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got [][]byte
		for p.Next() {
			if p.N() != int64(len(got)) || p.Size() != int64(len(want[min(len(got), len(want)-1)])) {
				t.Fatalf("%s: record %d of size %d, want %d", name, p.N(), p.Size(), len(got))
			}
			b, err := p.Payload()
			if err != nil {
				t.Fatalf("%s: record %d: %v", name, p.N(), err)
			}
			got = append(got, bytes.Clone(b))
		}
		if !p.Done() || p.Err() != nil || p.Format() != codec.LevelDB {
			t.Fatalf("%s: done %v, err %v, format %v", name, p.Done(), p.Err(), p.Format())
		}
		if !equalItems(got, want) || p.Len() != tb.Len() {
			t.Fatalf("%s: the pass found %d records (%d), the table %d", name, len(got), p.Len(), tb.Len())
		}
		if fmt.Sprint(p.Damage()) != fmt.Sprint(tb.Damage()) {
			t.Fatalf("%s: damage %v, the table's %v", name, p.Damage(), tb.Damage())
		}
		if p.MaxLen() < p.Len() {
			t.Fatalf("%s: MaxLen %d < %d records", name, p.MaxLen(), p.Len())
		}
		// Read once: the scan's reads and the few records spanning two of
		// them, read again (at most one per window of 256 KiB).
		det := codectest.Counting(data)
		if len(data) > 0 {
			Detect(det, int64(len(data)))
		}
		if n := src.Bytes.Load() - det.Bytes.Load(); n > int64(len(data))+int64(len(data))/(256<<10)*(96<<10) {
			t.Errorf("%s: read %d bytes of a %d-byte file", name, n, len(data))
		}
		tb.Close()
	}
}

// TestPassEnds: a pass stops where its reads fail (a source failing
// midway, a context done) with the error, not Done; it covers the size it
// was given, not bytes appended since; and it refuses what needs a table.
func TestPassEnds(t *testing.T) {
	t.Parallel()
	data, recs := genLog(t, 12, 3000, 2000)
	ctx := context.Background()

	src := codectest.Counting(data)
	src.FailAt = int64(len(data)) / 2
	p, err := NewPass(ctx, src, int64(len(data)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for p.Next() {
	}
	if !errors.Is(p.Err(), codectest.ErrInjected) || p.Done() || p.Len() == 0 || p.Len() >= int64(len(recs)) {
		t.Fatalf("failing source: err %v, done %v, %d records", p.Err(), p.Done(), p.Len())
	}

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p, err = NewPass(cctx, bytes.NewReader(data), int64(len(data)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for p.Next() {
		if p.N() == 10 {
			cancel()
		}
	}
	if !errors.Is(p.Err(), context.Canceled) || p.Done() || p.Len() >= int64(len(recs)) {
		t.Fatalf("canceled: err %v, done %v, %d records", p.Err(), p.Done(), p.Len())
	}

	// Records appended after the pass began are not read: the file as it
	// was when it was opened (its size then).
	short, _ := genLog(t, 12, 1000, 2000)
	grown := append(bytes.Clone(short), data[len(short):]...)
	p, err = NewPass(ctx, bytes.NewReader(grown), int64(len(short)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for p.Next() {
	}
	if !p.Done() || p.Len() != 1000 {
		t.Fatalf("grown file: done %v, %d records, want 1000", p.Done(), p.Len())
	}

	for _, o := range []Options{{Strict: true}, {Format: codec.TFRecord}} {
		if _, err := NewPass(ctx, bytes.NewReader(data), int64(len(data)), o); !errors.Is(err, ErrNoPass) {
			t.Errorf("%+v: %v, want ErrNoPass", o, err)
		}
	}
	var tf []byte
	for _, r := range recs[:5] {
		tf = tfrecord.AppendRecord(tf, r)
	}
	if _, err := NewPass(ctx, bytes.NewReader(tf), int64(len(tf)), Options{}); !errors.Is(err, ErrNoPass) {
		t.Errorf("TFRecord file: %v, want ErrNoPass", err)
	}
}
