package index

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/tfrecord"
)

// seekFixture is a small gzipped TFRecord file, its records and its
// checkpoints (closely spaced).
var seekFixture = sync.OnceValue(func() (f struct {
	recs [][]byte
	z    []byte
	locs []tfrecord.Record
	x    *tfrecord.SeekIndex
}) {
	f.recs = textPayloads(60, 4000)
	f.z = gzipRecords(f.recs)
	res, err := tfrecord.IndexCompressed(context.Background(), bytes.NewReader(f.z), int64(len(f.z)), tfrecord.Gzip,
		tfrecord.IndexOptions{Spacing: 16 << 10}, func(r tfrecord.Record) bool { f.locs = append(f.locs, r); return true })
	if err != nil {
		panic(err)
	}
	f.x = res.Index
	return f
})

// blobOf returns the blob region the encoder e would write after its body
// (cache_blob.go).
func blobOf(t testing.TB, e *encoder) []byte {
	var b []byte
	for _, p := range e.blobs {
		piece, err := p.get()
		if err != nil || len(piece) != p.n {
			t.Fatalf("blob piece of %d bytes: %d, %v", p.n, len(piece), err)
		}
		b = append(b, piece...)
	}
	return b
}

// FuzzTFRecordCheckpoints decodes arbitrary bytes as the checkpoints of a
// saved table, what follows them as its blob region (the windows): the
// decoder never panics nor allocates beyond its input, and checkpoints
// that pass their check never make a read return other bytes than the
// file's (a read through a wrong one, or through a window that does not
// match its digest, fails with a corruption error or, for the window,
// tfrecord.ErrStoredWindow).
func FuzzTFRecordCheckpoints(f *testing.F) {
	fx := seekFixture()
	var e encoder
	e.seek(fx.x)
	blob := blobOf(f, &e)
	body := bytes.Clone(e.b)
	f.Add(append(bytes.Clone(body), blob...))
	f.Add(body[:len(body)/2])
	moved := bytes.Clone(body)
	moved[4+minCheckpoint+len(fx.x.Points[0].Sums)*4+4] ^= 1 // the second checkpoint's bit
	f.Add(append(moved, blob...))
	swapped := bytes.Clone(blob) // a window's bytes changed under its digest
	swapped[len(swapped)/2] ^= 0x40
	f.Add(append(bytes.Clone(body), swapped...))
	f.Fuzz(func(t *testing.T, b []byte) {
		d := &decoder{b: b}
		x := d.seek(tfrecord.Gzip)
		if d.err != nil {
			return
		}
		if d.blob != nil {
			d.blob.attach(bytes.NewReader(d.b), 0, nil)
		}
		x.Size = fx.x.Size
		if x.Check(int64(len(fx.z))) != nil {
			return
		}
		in, err := tfrecord.NewInflated(bytes.NewReader(fx.z), int64(len(fx.z)), x, tfrecord.InflatedOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := len(fx.locs) - 1; i >= 0; i-- {
			got := make([]byte, fx.locs[i].Len)
			_, err := tfrecord.ReadRecord(in, fx.locs[i], got, 0)
			if err == nil && !bytes.Equal(got, fx.recs[i]) {
				t.Fatalf("record %d read other bytes through the checkpoints", i)
			}
			if err != nil && !errors.Is(err, codec.ErrCorrupt) && !errors.Is(err, tfrecord.ErrStoredWindow) {
				t.Fatalf("record %d: %v", i, err)
			}
		}
	})
}
