package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/tfrecord"
)

// tfrBytes encodes recs as a TFRecord file.
func tfrBytes(recs [][]byte) []byte {
	var b []byte
	for _, r := range recs {
		b = tfrecord.AppendRecord(b, r)
	}
	return b
}

func TestTFRecordOpenReadCache(t *testing.T) {
	dir, cache := t.TempDir(), t.TempDir()
	recs := append(codectest.Records(300, 5000, 'a'), []byte{}, bytes.Repeat([]byte("z"), 200000))
	path := filepath.Join(dir, "a.tfrecord")
	recfile.WriteFile(t, path, tfrBytes(recs))
	checkBuiltThenCached(t, path, cache, codec.TFRecord, recs, nil)
	if f, err := codec.ParseFormat("tfrecord"); err != nil || f != codec.TFRecord || f.String() != "tfrecord" {
		t.Fatalf("ParseFormat: %v %v", f, err)
	}
}

// TestTFRecordParallelBuild: a file large enough for parallel parts, with
// damage and with nested TFRecord records (where parts may sync falsely),
// indexes exactly as a sequential build does.
func TestTFRecordParallelBuild(t *testing.T) {
	defer func(v int64) { minPartBytes = v }(minPartBytes)
	minPartBytes = 64 << 10
	ctx := context.Background()
	var recs [][]byte
	for i := range 400 {
		if i%3 == 0 {
			recs = append(recs, tfrBytes(codectest.Records(5, 300, byte('a'+i%26))))
		} else {
			recs = append(recs, bytes.Repeat([]byte{byte(i)}, 100+i*7))
		}
	}
	file := tfrBytes(recs)
	file[len(file)/3] ^= 0x40
	file[len(file)/2] ^= 0x40
	r := bytes.NewReader(file)
	seq, err := Build(ctx, r, int64(len(file)), Options{Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	par, err := Build(ctx, r, int64(len(file)), Options{Parallel: 8})
	if err != nil {
		t.Fatal(err)
	}
	if seq.Len() != par.Len() || seq.Len() < 390 || fmt.Sprint(seq.Damage()) != fmt.Sprint(par.Damage()) {
		t.Fatalf("sequential %d records %v, parallel %d %v", seq.Len(), seq.Damage(), par.Len(), par.Damage())
	}
	for i := range seq.Len() {
		if seq.Offset(i) != par.Offset(i) || seq.Size(i) != par.Size(i) {
			t.Fatalf("record %d differs", i)
		}
	}
}

func TestTFRecordAppendAndTornTail(t *testing.T) {
	ctx := context.Background()
	dir, cache := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "a.tfrecord")
	base := codectest.Records(4, 1000, 'a')
	good := tfrBytes(base)
	torn := tfrecord.AppendRecord(nil, bytes.Repeat([]byte("T"), 5000))[:3000]
	recfile.WriteFile(t, path, append(bytes.Clone(good), torn...))
	tb, err := Open(ctx, path, Options{CacheDir: cache}) // not Writable: the append itself repairs
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if d := tb.Damage(); len(d) != 1 || d[0].Off != int64(len(good)) || !errors.Is(d[0].Err, codec.ErrTruncated) {
		t.Fatalf("torn tail: damage %v", d)
	}
	more := [][]byte{[]byte("x"), {}, bytes.Repeat([]byte("y"), 100000)}
	first, err := tb.Append(ctx, more, AppendOptions{Sync: true})
	if err != nil || first != 4 {
		t.Fatalf("append: first %d, %v", first, err)
	}
	got, _ := os.ReadFile(path)
	if want := tfrBytes(append(append([][]byte{}, base...), more...)); !bytes.Equal(got, want) {
		t.Fatal("appended file differs from a one-session write")
	}
	if tb.Len() != 7 || len(tb.Damage()) != 0 || !bytes.Equal(readRecord(t, tb, 6), more[2]) {
		t.Fatalf("after append: %d records, damage %v", tb.Len(), tb.Damage())
	}
	saved, _ := filepath.Glob(filepath.Join(cache, "torn", "a.tfrecord.*"))
	if len(saved) != 1 {
		t.Fatalf("torn bytes not saved aside: %v", saved)
	}
	if b, _ := os.ReadFile(saved[0]); !bytes.Equal(b, torn) {
		t.Fatal("saved torn bytes differ")
	}
	// A writer outside grows the file: Refresh extends the table.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write(tfrecord.AppendRecord(nil, []byte("outside")))
	f.Close()
	if _, err := tb.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if tb.Len() != 8 || string(readRecord(t, tb, 7)) != "outside" {
		t.Fatalf("after refresh: %d records", tb.Len())
	}
}

func TestTFRecordWritableOpenRepairsTornTail(t *testing.T) {
	ctx := context.Background()
	dir, cache := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "a.tfrecord")
	good := tfrBytes(codectest.Records(3, 100, 'a'))
	recfile.WriteFile(t, path, append(bytes.Clone(good), tfrecord.AppendRecord(nil, []byte("half"))[:14]...))
	tb, err := Open(ctx, path, Options{CacheDir: cache, Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if got, _ := os.ReadFile(path); !bytes.Equal(got, good) || len(tb.Damage()) != 0 || tb.Len() != 3 {
		t.Fatalf("writable open left %d bytes (want %d), damage %v", len(got), len(good), tb.Damage())
	}
}

func TestTFRecordCompressed(t *testing.T) {
	ctx := context.Background()
	dir, cache := t.TempDir(), t.TempDir()
	recs := codectest.Records(200, 3000, 'c')
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(tfrBytes(recs))
	zw.Close()
	path := filepath.Join(dir, "a.tfrecord.gz")
	recfile.WriteFile(t, path, z.Bytes())
	for _, want := range []string{"built", "cached"} {
		tb, err := Open(ctx, path, Options{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		if tb.Format() != codec.TFRecord || tb.Len() != int64(len(recs)) || tb.Info().Loaded != want {
			t.Fatalf("%s: %v, %d records, %s", want, tb.Format(), tb.Len(), tb.Info().Flavor)
		}
		for _, i := range []int64{199, 0, 100, 101} {
			if !bytes.Equal(readRecord(t, tb, i), recs[i]) {
				t.Fatalf("record %d differs", i)
			}
		}
		_, err = tb.Append(ctx, [][]byte{[]byte("no")}, AppendOptions{})
		if !errors.Is(err, codec.ErrUnsupported) {
			t.Fatalf("append to a compressed file: %v", err)
		}
		tb.Close()
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, z.Bytes()) {
		t.Fatal("refused append changed the file")
	}
}

// TestTFRecordExtendCompletesTornRecord: a record still being written (a
// torn tail when the table was built) is found whole once its writer
// finishes it, by an extension that scans from the last intact record; the
// torn-tail damage goes away and the generation stays (a pure append).
func TestTFRecordExtendCompletesTornRecord(t *testing.T) {
	ctx := context.Background()
	good := tfrBytes(codectest.Records(3, 100, 'a'))
	rec := tfrecord.AppendRecord(nil, bytes.Repeat([]byte("w"), 4000))
	tb, path := openNamed(t, "a.tfrecord", append(bytes.Clone(good), rec[:1000]...), Options{CacheDir: "-"})
	gen := tb.Generation()
	if tb.Len() != 3 || len(tb.Damage()) != 1 {
		t.Fatalf("before: %d records, damage %v", tb.Len(), tb.Damage())
	}
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write(rec[1000:])
	f.Close()
	if _, err := tb.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if tb.Len() != 4 || len(tb.Damage()) != 0 || tb.Generation() != gen || !bytes.Equal(readRecord(t, tb, 3), bytes.Repeat([]byte("w"), 4000)) {
		t.Fatalf("after: %d records, damage %v, generation %d (was %d)", tb.Len(), tb.Damage(), tb.Generation(), gen)
	}
}
