package recordio

import (
	"bytes"
	"slices"
	"testing"

	"github.com/recfs/recfs/codec"
)

// makeRio writes a file of items with the writer.
func makeRio(t testing.TB, items [][]byte, o WriterOptions, trailer []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := NewWriter(&out, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if _, err := w.Append(it); err != nil {
			t.Fatal(err)
		}
	}
	if trailer != nil {
		if err := w.SetTrailer(trailer); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// rioScanAll reads every item of data strictly and returns them with the
// trailer (nil if none).
func rioScanAll(t testing.TB, data []byte) ([][]byte, []byte) {
	t.Helper()
	s, _, items := rioReadAll(t, data, Options{Strict: true})
	loc, ok, err := s.Trailer()
	if err != nil {
		t.Fatalf("trailer: %v", err)
	}
	if !ok {
		return items, nil
	}
	rd, _ := NewReader(bytes.NewReader(data), int64(len(data)), codec.RecordIO, s.Transformers(), Options{}, 1)
	tb := make([]byte, loc.Len)
	if _, err := rd.ReadItem(loc, tb, 0); err != nil && loc.Len > 0 {
		t.Fatalf("trailer read: %v", err)
	}
	return items, tb
}

func equalItems(a, b [][]byte) bool {
	return slices.EqualFunc(a, b, func(x, y []byte) bool { return bytes.Equal(x, y) })
}
