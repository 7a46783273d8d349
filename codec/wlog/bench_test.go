package wlog

import (
	"bytes"
	"testing"
)

// benchSegment is a segment of 4 MiB of sample-like records.
func benchSegment(b *testing.B, c Compression) []byte {
	var recs [][]byte
	for n := 0; n < 4<<20; {
		r := sized(1200+n%3000, byte(n))
		recs = append(recs, r)
		n += len(r)
	}
	return segment(b, recs, c, false)
}

// BenchmarkScan: the scan that builds a table (checksums, sizes, no
// decompression), per stored byte.
func BenchmarkScan(b *testing.B) {
	for _, c := range []Compression{None, Snappy, Zstd} {
		b.Run(c.String(), func(b *testing.B) {
			seg := benchSegment(b, c)
			r := bytes.NewReader(seg)
			b.SetBytes(int64(len(seg)))
			for b.Loop() {
				sc := NewScanner(r, int64(len(seg)), Options{})
				for sc.Next() {
				}
				if sc.Err() != nil || len(sc.Damage()) > 0 {
					b.Fatal(sc.Err(), sc.Damage())
				}
			}
		})
	}
}

// BenchmarkDecode: reading every record back whole, per stored byte.
func BenchmarkDecode(b *testing.B) {
	for _, c := range []Compression{None, Snappy, Zstd} {
		b.Run(c.String(), func(b *testing.B) {
			seg := benchSegment(b, c)
			r := bytes.NewReader(seg)
			var recs []Record
			sc := NewScanner(r, int64(len(seg)), Options{})
			for sc.Next() {
				recs = append(recs, sc.Record())
			}
			b.SetBytes(int64(len(seg)))
			var buf []byte
			for b.Loop() {
				for _, rec := range recs {
					var err error
					if buf, err = Decode(r, rec, buf[:0], Options{}); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
