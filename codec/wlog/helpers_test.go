package wlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// segment frames recs with a Writer of compression c; closed zero-fills
// the last page.
func segment(t testing.TB, recs [][]byte, c Compression, closed bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, WriterOptions{Compression: c})
	for _, r := range recs {
		if _, err := w.WriteRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if closed {
		err = w.ClosePage()
	} else {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// scanAll scans b and returns the records' payloads (decoded), the
// records, the damage and the scan's error.
func scanAll(t testing.TB, b []byte, o Options) ([][]byte, []Record, []codec.Damage, error) {
	t.Helper()
	r := bytes.NewReader(b)
	return codectest.ScanAll(t, NewScanner(r, int64(len(b)), o), func(rec *Record) ([]byte, error) {
		if rec.Frags != nil {
			rec.Frags = append([]Fragment(nil), rec.Frags...)
		}
		p, err := Decode(r, *rec, nil, o)
		if err == nil && int64(len(p)) != rec.Size {
			err = fmt.Errorf("decoded %d bytes, size says %d", len(p), rec.Size)
		}
		return p, err
	})
}

// readPieces reads rec through ReadRecord in pieces of n bytes.
func readPieces(t testing.TB, r io.ReaderAt, rec Record, n int) []byte {
	t.Helper()
	var out []byte
	p := make([]byte, n)
	for off := int64(0); ; off += int64(n) {
		k, err := ReadRecord(r, rec, p, off, Options{})
		out = append(out, p[:k]...)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("ReadRecord at %d: %v", off, err)
		}
		if k == 0 {
			return out
		}
	}
}

// sized returns n bytes of a pattern that compresses (runs of one byte).
func sized(n int, tag byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = tag + byte(i/97)
	}
	return b
}

// noisy returns n bytes that do not compress.
func noisy(n int, seed uint32) []byte {
	b := make([]byte, n)
	x := seed | 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}
