package interop

// The one place that calls recfs's Kafka API (codec/kafka's scanner, the
// index's table), so a rename costs one edit.

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/kafka"
	"github.com/recfs/recfs/index"
)

// kRec is one Kafka record as a writer was given it and a reader reports
// it: nil key, value or header value is null.
type kRec struct {
	Offset    int64
	Timestamp int64 // ms; -1 for v0 messages
	Key       []byte
	Value     []byte
	Headers   []kHdr
	Control   bool
}

// kHdr is one record header.
type kHdr struct {
	Key   string
	Value []byte
}

// recfsKafkaRead reads every record of the segment file with recfs's
// scanner (control records included, marked) and returns them with the
// scan's damage.
func recfsKafkaRead(t testing.TB, file []byte) ([]kRec, []codec.Damage) {
	t.Helper()
	r := bytes.NewReader(file)
	s := kafka.NewScanner(r, r.Size(), kafka.Options{})
	var out []kRec
	var data []byte
	at := int64(-1)
	for s.Next() {
		b, rec := s.Batch(), s.Record()
		if b.Off != at {
			var err error
			if data, err = kafka.ReadBatch(r, b.Off, b.Len, nil, kafka.DefaultMaxDecoded); err != nil {
				t.Fatalf("recfs ReadBatch at %d: %v", b.Off, err)
			}
			at = b.Off
		}
		hs, err := kafka.AppendHeaders(nil, data, rec)
		if err != nil {
			t.Fatalf("recfs headers at offset %d: %v", rec.Offset, err)
		}
		k := kRec{Offset: rec.Offset, Timestamp: rec.Timestamp, Key: part(data, rec.KeyOff, rec.KeyLen),
			Value: part(data, rec.ValueOff, rec.ValueLen), Control: b.Control()}
		for _, h := range hs {
			k.Headers = append(k.Headers, kHdr{Key: string(h.Key), Value: clone(h.Value)})
		}
		out = append(out, k)
	}
	if s.Err() != nil {
		t.Fatalf("recfs scan: %v", s.Err())
	}
	return out, s.Damage()
}

// part returns a copy of data[off:off+n], nil for n < 0 (null).
func part(data []byte, off, n int64) []byte {
	if n < 0 {
		return nil
	}
	return clone(data[off : off+n])
}

// clone copies b, keeping nil nil.
func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// recfsKafkaValues reads the segment through recfs's index (what cat and a
// mount serve): the values of its data records, in order.
func recfsKafkaValues(t testing.TB, file []byte) [][]byte {
	t.Helper()
	tb, err := index.Build(context.Background(), bytes.NewReader(file), int64(len(file)), index.Options{Format: codec.Kafka})
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for i := range tb.Len() {
		b := make([]byte, tb.Size(i))
		if n, err := tb.ReadAt(i, b, 0); n != len(b) || (err != nil && err != io.EOF) {
			t.Fatalf("recfs table record %d: %d bytes, %v", i, n, err)
		}
		out = append(out, b)
	}
	return out
}

// equalItems reports whether a and b hold the same byte strings.
func equalItems(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
