package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/recordio"
	"github.com/recfs/recfs/codec/tfrecord"
)

// cancelAfter is an io.ReaderAt that cancels its context at its after-th
// read and counts the reads that reach it once it did.
type cancelAfter struct {
	r      io.ReaderAt
	after  int64
	cancel context.CancelFunc
	reads  atomic.Int64
	late   atomic.Int64
}

func (c *cancelAfter) ReadAt(p []byte, off int64) (int, error) {
	switch n := c.reads.Add(1); {
	case n == c.after:
		c.cancel()
	case n > c.after:
		c.late.Add(1)
	}
	return c.r.ReadAt(p, off)
}

// TestBuildStopsOnCancel: a build of every format, over records or over
// nothing but damage, reads at most one more window per scanning goroutine
// once its context is cancelled, and fails with context.Canceled.
func TestBuildStopsOnCancel(t *testing.T) {
	t.Parallel()
	recs := make([][]byte, 400000)
	for i := range recs {
		recs[i] = fmt.Appendf(nil, "record %d %s", i, bytes.Repeat([]byte("x"), i%50))
	}
	logb, _ := recfile.LogBytes(t, recs, leveldb.WriterOptions{})
	var tfr []byte
	for _, r := range recs {
		tfr = tfrecord.AppendRecord(tfr, r)
	}
	rio := recfile.RIOBytes(t, recs, recordio.WriterOptions{MaxItems: 100}, nil)
	var kaf []byte
	val := bytes.Repeat([]byte("v"), 1024)
	for off := int64(0); len(kaf) < 24<<20; off += 100 {
		rs := make([]codectest.KafkaRecord, 100)
		for i := range rs {
			rs[i] = codectest.KafkaRecord{Key: fmt.Appendf(nil, "k%d", off+int64(i)), Value: val}
		}
		kaf = append(kaf, codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: off, Records: rs, ProducerID: -1})...)
	}
	garbage := make([]byte, 24<<20)
	rand.NewChaCha8([32]byte{1}).Read(garbage)
	for _, c := range []struct {
		name string
		data []byte
		f    codec.Format
	}{
		{"leveldb", logb, codec.LevelDB}, {"leveldb damage", garbage, codec.LevelDB},
		{"tfrecord", tfr, codec.TFRecord}, {"tfrecord damage", garbage, codec.TFRecord},
		{"recordio", rio, codec.RecordIO}, {"recordio damage", garbage, codec.RecordIO},
		{"legacy damage", garbage, codec.RecordIOLegacy},
		{"kafka", kaf, codec.Kafka},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := &cancelAfter{r: bytes.NewReader(c.data), after: 8, cancel: cancel}
			_, err := Build(ctx, r, int64(len(c.data)), Options{Format: c.f, Parallel: 2})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("build: %v after %d reads, want context.Canceled", err, r.reads.Load())
			}
			if late := r.late.Load(); late > 2 {
				t.Errorf("%d reads after the cancellation (of %d), want at most one per part", late, r.reads.Load())
			}
		})
	}
}

// TestLoadStopsOnCancel: loading a saved table stops at the first window
// read once its context is done, without decoding the table.
func TestLoadStopsOnCancel(t *testing.T) {
	recs := make([][]byte, 1000000)
	for i := range recs {
		recs[i] = []byte("r")
	}
	path, cache := filepath.Join(t.TempDir(), "f"), t.TempDir()
	recfile.WriteLog(t, path, recs)
	tb, err := Open(context.Background(), path, Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	tb.Close()
	s := builtSnapshot(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = loadCache(ctx, cacheFileOf(t, cache, path), s.id, Options{})
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a cancelled load loaded")
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 2<<20 {
		t.Errorf("a cancelled load allocated %d bytes (the table is 12 MB)", got)
	}
	if _, err := loadCache(context.Background(), cacheFileOf(t, cache, path), s.id, Options{}); err != nil {
		t.Fatalf("the same load, not cancelled: %v", err)
	}
}
