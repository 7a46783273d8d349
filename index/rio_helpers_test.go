package index

import (
	"bytes"
	"context"
	"io"
	"math/rand"
	"slices"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
)

// rioScanAll reads every item of the recordio file data strictly, through
// a table built over it, and returns them with the trailer (nil if none).
func rioScanAll(t testing.TB, data []byte) ([][]byte, []byte) {
	t.Helper()
	tb, err := Build(context.Background(), bytes.NewReader(data), int64(len(data)), Options{Strict: true})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	var items [][]byte
	for i := range tb.Len() {
		b := make([]byte, tb.Size(i))
		if n, err := tb.ReadAt(i, b, 0); n != len(b) || (err != nil && err != io.EOF) {
			t.Fatalf("item %d: %d bytes, %v", i, n, err)
		}
		items = append(items, b)
	}
	if !tb.HasTrailer() {
		return items, nil
	}
	tr := make([]byte, tb.TrailerSize())
	if n, err := tb.ReadTrailerAt(tr, 0); n != len(tr) || (err != nil && err != io.EOF) {
		t.Fatalf("trailer: %d bytes, %v", n, err)
	}
	return items, tr
}

// equalItems reports whether a and b hold the same items.
func equalItems(a, b [][]byte) bool {
	return slices.EqualFunc(a, b, func(x, y []byte) bool { return bytes.Equal(x, y) })
}

// genItems returns n random items of sizes around recordio's chunk edges.
func genItems(rng *rand.Rand, n int) [][]byte {
	const p = codectest.RIOMaxChunkPayload
	sizes := []int{0, 1, 2, p - 5, p - 4, p - 3, p, p + 1, 2*p - 4, 2 * p, 100, 1000}
	out := make([][]byte, n)
	for i := range out {
		sz := sizes[rng.Intn(len(sizes))]
		if rng.Intn(3) == 0 {
			sz = rng.Intn(3 * p)
		}
		b := make([]byte, sz)
		rng.Read(b)
		out[i] = b
	}
	return out
}
