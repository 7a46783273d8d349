package tfrecord

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
)

// FuzzScanner feeds arbitrary bytes to the scanner (with a small window,
// so records span windows) and checks that it does not panic, that records
// and damage tile the file exactly in order, that every record reads back
// with both checksums verified, that strict mode stops at the first
// damage, and that Detect and the compressed path survive the input too.
func FuzzScanner(f *testing.F) {
	for _, b := range craftedVectors() {
		f.Add(b)
	}
	f.Add(AppendRecord(AppendRecord(nil, []byte("seed")), bytes.Repeat([]byte{7}, 300)))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		size := int64(len(b))
		s := NewScanner(r, size, Options{Window: 64})
		pos := int64(0)
		di := 0
		for s.Next() {
			rec := s.Record()
			for di < len(s.Damage()) && s.Damage()[di].Off == pos {
				pos += s.Damage()[di].Len
				di++
			}
			if rec.Off != pos || rec.Len < 0 || rec.End() > size {
				t.Fatalf("record %+v at scan position %d (size %d)", rec, pos, size)
			}
			got := make([]byte, rec.Len)
			if _, err := ReadRecord(r, rec, got, 0); err != nil {
				t.Fatalf("ReadRecord(%+v): %v", rec, err)
			}
			if !bytes.Equal(got, b[rec.DataOff():rec.DataOff()+rec.Len]) {
				t.Fatal("ReadRecord bytes differ from the file")
			}
			pos = rec.End()
		}
		if s.Err() != nil {
			t.Fatalf("Err on an in-memory file: %v", s.Err())
		}
		for ; di < len(s.Damage()); di++ {
			d := s.Damage()[di]
			if d.Off != pos || d.Len <= 0 {
				t.Fatalf("damage %+v at scan position %d", d, pos)
			}
			pos += d.Len
		}
		if pos != size {
			t.Fatalf("records and damage cover %d of %d bytes", pos, size)
		}
		strict := NewScanner(r, size, Options{Strict: true, Window: 64})
		for strict.Next() {
		}
		if (strict.Err() != nil) != (len(s.Damage()) > 0) {
			t.Fatalf("strict Err %v with %d damage", strict.Err(), len(s.Damage()))
		}
		c, err := Detect(r, size)
		if err == nil && c != None {
			fuzzCompressed(t, r, size, c)
		}
	})
}

// fuzzCompressed indexes a compressed input and reads back every record it
// found through the checkpoints: the index passes its own check and every
// record reads.
func fuzzCompressed(t *testing.T, r io.ReaderAt, size int64, c Compression) {
	var recs []Record
	res, err := IndexCompressed(context.Background(), r, size, c, IndexOptions{}, func(rec Record) bool {
		recs = append(recs, rec)
		return len(recs) < 1<<16
	})
	if err != nil {
		t.Fatalf("IndexCompressed of an in-memory file: %v", err)
	}
	if err := res.Index.Check(size); err != nil {
		t.Fatalf("index fails its check: %v", err)
	}
	in, err := NewInflated(r, size, res.Index, InflatedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if _, err := ReadRecord(in, rec, make([]byte, rec.Len), 0); err != nil {
			t.Fatalf("record %+v: %v", rec, err)
		}
	}
}

// FuzzIndexCompressed feeds arbitrary bytes to the compressed-stream pass
// as GZIP and as ZLIB (member headers, trailers, padding, damage and
// resynchronisation): it never panics, its index passes its own check, and
// every record it found reads back through the checkpoints.
func FuzzIndexCompressed(f *testing.F) {
	file := AppendRecord(AppendRecord(nil, []byte("first")), bytes.Repeat([]byte("zz"), 3000))
	one := codectest.Gzip(file)
	f.Add(one)
	f.Add(append(append(bytes.Clone(one), one...), make([]byte, 9)...))
	f.Add(one[:len(one)-7])
	f.Add(zz(f, file))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, c := range []Compression{Gzip, Zlib} {
			var recs []Record
			r := bytes.NewReader(b)
			res, err := IndexCompressed(context.Background(), r, int64(len(b)), c, IndexOptions{Spacing: 1 << 10},
				func(rec Record) bool { recs = append(recs, rec); return len(recs) < 1<<12 })
			if err != nil {
				t.Fatalf("%v: %v", c, err)
			}
			if err := res.Index.Check(int64(len(b))); err != nil {
				t.Fatalf("%v: index fails its check: %v", c, err)
			}
			in, _ := NewInflated(r, int64(len(b)), res.Index, InflatedOptions{})
			for _, rec := range recs {
				if _, err := ReadRecord(in, rec, make([]byte, rec.Len), 0); err != nil {
					t.Fatalf("%v: record %+v: %v", c, rec, err)
				}
			}
		}
	})
}
