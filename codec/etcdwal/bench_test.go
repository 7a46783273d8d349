package etcdwal

import (
	"bytes"
	"testing"
)

// BenchmarkScan: the scan that builds a table (parse and chain every
// record), per byte of a file of small entries with 1 MiB preallocated.
func BenchmarkScan(b *testing.B) {
	f, _ := walFile(b, 0, entries(20000, 150), 1<<20)
	r := bytes.NewReader(f)
	b.SetBytes(int64(len(f)))
	for b.Loop() {
		sc := NewScanner(r, int64(len(f)), Options{})
		for sc.Next() {
		}
		if sc.Err() != nil || len(sc.Damage()) > 0 {
			b.Fatal(sc.Err(), sc.Damage())
		}
	}
}

// BenchmarkRead: reading every record back, verified, per payload byte.
func BenchmarkRead(b *testing.B) {
	f, _ := walFile(b, 0, entries(20000, 150), 0)
	r := bytes.NewReader(f)
	var recs []Record
	var n int64
	sc := NewScanner(r, int64(len(f)), Options{})
	for sc.Next() {
		recs = append(recs, sc.Record())
		n += sc.Record().Len
	}
	b.SetBytes(n)
	var buf []byte
	for b.Loop() {
		for _, rec := range recs {
			var err error
			if buf, err = Read(r, rec, buf[:0]); err != nil {
				b.Fatal(err)
			}
		}
	}
}
