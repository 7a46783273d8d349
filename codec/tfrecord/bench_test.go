package tfrecord

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
)

// benchFile returns a TFRecord file of n records of recLen random bytes.
func benchFile(b *testing.B, n, recLen int) ([]byte, []Record) {
	rng := rand.New(rand.NewPCG(13, 14))
	payload := make([]byte, recLen)
	for i := range payload {
		payload[i] = byte(rng.Uint32())
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, WriterOptions{})
	recs := make([]Record, n)
	for i := range recs {
		payload[0] = byte(i)
		off, _ := w.WriteRecord(payload)
		recs[i] = Record{off, int64(recLen)}
	}
	w.Close()
	return buf.Bytes(), recs
}

// BenchmarkScan scans 64 MiB of 1 KiB records, verifying both checksums.
func BenchmarkScan(b *testing.B) {
	file, _ := benchFile(b, 64<<10, 1024)
	r := bytes.NewReader(file)
	b.SetBytes(int64(len(file)))
	for b.Loop() {
		s := NewScanner(r, int64(len(file)), Options{})
		n := 0
		for s.Next() {
			n++
		}
		if n != 64<<10 || s.Err() != nil {
			b.Fatal(n, s.Err())
		}
	}
}

// BenchmarkReadRecord reads whole 1 KiB records at random.
func BenchmarkReadRecord(b *testing.B) {
	file, recs := benchFile(b, 4096, 1024)
	r := bytes.NewReader(file)
	p := make([]byte, 1024)
	rng := rand.New(rand.NewPCG(1, 1))
	b.SetBytes(1024)
	for b.Loop() {
		if _, err := ReadRecord(r, recs[rng.IntN(len(recs))], p, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWrite writes 1 KiB records.
func BenchmarkWrite(b *testing.B) {
	p := make([]byte, 1024)
	w := NewWriter(io.Discard, WriterOptions{})
	b.SetBytes(1024)
	for b.Loop() {
		if _, err := w.WriteRecord(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIndexCompressed indexes a gzip-compressed file of 16 MiB of
// 1 KiB records (bytes are decompressed bytes): one pass that decompresses,
// finds the records and makes checkpoints.
func BenchmarkIndexCompressed(b *testing.B) {
	file, _ := benchFile(b, 16<<10, 1024)
	z := codectest.Gzip(file)
	b.SetBytes(int64(len(file)))
	for b.Loop() {
		n := 0
		_, err := IndexCompressed(context.Background(), bytes.NewReader(z), int64(len(z)), Gzip, IndexOptions{}, func(Record) bool { n++; return true })
		if err != nil || n != 16<<10 {
			b.Fatal(n, err)
		}
	}
}

// BenchmarkInflatedLastRecord reads the last record of a gzip-compressed
// file of 64 MiB (decompressed) of 1 KiB records through a fresh Inflated,
// as the first read of that record after an open does: it decompresses
// from the checkpoint before the record (bytes/s counts the record).
func BenchmarkInflatedLastRecord(b *testing.B) {
	file, recs := benchFile(b, 64<<10, 1024)
	z := codectest.Gzip(file)
	res, err := IndexCompressed(context.Background(), bytes.NewReader(z), int64(len(z)), Gzip, IndexOptions{}, func(Record) bool { return true })
	if err != nil {
		b.Fatal(err)
	}
	last := recs[len(recs)-1]
	p := make([]byte, last.Len)
	b.SetBytes(last.Len)
	for b.Loop() {
		in, _ := NewInflated(bytes.NewReader(z), int64(len(z)), res.Index, InflatedOptions{})
		if _, err := ReadRecord(in, last, p, 0); err != nil {
			b.Fatal(err)
		}
	}
}
