package index

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"

	"github.com/recfs/recfs/codec/codectest/recfile"
)

// FuzzBuild builds tables of arbitrary bytes: no panic; a parallel build
// equals the sequential one; every record reads back whole with exactly
// its Size; the table survives a save/load round trip through the cache
// encoding, and the decoder rejects (never panics on) the input itself.
func FuzzBuild(f *testing.F) {
	for _, dir := range []string{"leveldb", "grailbio"} {
		for _, p := range recfile.Vectors(f, dir+"/*") {
			if filepath.Ext(p) == ".json" {
				continue
			}
			if b, err := os.ReadFile(p); err == nil && len(b) <= 40<<10 {
				f.Add(b)
			}
		}
	}
	tfr, _ := filepath.Glob(filepath.Join("..", "codec", "tfrecord", "testdata", "*.tfrecord*"))
	for _, p := range tfr {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	old := minPartBytes
	f.Cleanup(func() { minPartBytes = old })
	minPartBytes = 32768
	f.Fuzz(func(t *testing.T, data []byte) {
		d := decoder{b: data}
		d.snapshot()
		// Decoding as a stream, in small windows, reads the same.
		sd := streamDecoder(iotest.OneByteReader(bytes.NewReader(data)), int64(len(data)))
		sd.snapshot()
		if (d.err == nil) != (sd.err == nil) || d.err == nil && int64(len(d.b)) != sd.remaining() {
			t.Fatalf("stream decoding: err %v, %d left; in memory: err %v, %d left", sd.err, sd.remaining(), d.err, len(d.b))
		}
		ctx := context.Background()
		seq, err := Build(ctx, bytes.NewReader(data), int64(len(data)), Options{Parallel: 1})
		if err != nil {
			return
		}
		par, err := Build(ctx, bytes.NewReader(data), int64(len(data)), Options{Parallel: 3})
		if err != nil {
			t.Fatalf("parallel build failed where sequential succeeded: %v", err)
		}
		if !sameTable(seq.s(), par.s()) {
			t.Fatalf("parallel table differs:\nseq %v\npar %v", seq.Damage(), par.Damage())
		}
		for n := range seq.Len() {
			size := seq.Size(n)
			if size < 0 || size > int64(len(data))*64+1<<20 {
				t.Fatalf("record %d: size %d from %d input bytes", n, size, len(data))
			}
			p := make([]byte, size)
			if k, err := seq.ReadAt(n, p, 0); err != nil || int64(k) != size {
				t.Fatalf("record %d: read %d of %d: %v", n, k, size, err)
			}
		}
		var e encoder
		e.snapshot(seq.s())
		back := (&decoder{b: e.b}).snapshot()
		back.source, back.elapsed = seq.s().source, seq.s().elapsed
		if !sameTable(seq.s(), back) {
			t.Fatalf("cache round trip changed the table")
		}
		sback := streamDecoder(bytes.NewReader(e.b), int64(len(e.b))).snapshot()
		sback.source, sback.elapsed = seq.s().source, seq.s().elapsed
		if !sameTable(seq.s(), sback) {
			t.Fatalf("cache round trip through a stream changed the table")
		}
	})
}
