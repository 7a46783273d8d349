package tfrecord

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// randomRecords returns n payloads of random lengths up to maxLen.
func randomRecords(rng *rand.Rand, n, maxLen int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		b := make([]byte, rng.IntN(maxLen+1))
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		out[i] = b
	}
	return out
}

func writeAll(t testing.TB, recs [][]byte) ([]byte, []int64) {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, WriterOptions{})
	var offs []int64
	for _, r := range recs {
		off, err := w.WriteRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, off)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), offs
}

func TestWriterRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	recs := randomRecords(rng, 300, 3000)
	recs = append(recs, make([]byte, 200<<10)) // a record that bypasses the buffer
	file, offs := writeAll(t, recs)
	// The bytes are those of the format's definition.
	var want []byte
	for _, r := range recs {
		want = append(want, frame(string(r), nil)...)
	}
	if !bytes.Equal(file, want) {
		t.Fatal("writer bytes differ from the hand-framed encoding")
	}
	for _, window := range []int{64, 1000, 0} {
		data, got, dmg, err := scanAll(t, bytes.NewReader(file), int64(len(file)), Options{Window: window})
		if err != nil || len(dmg) > 0 {
			t.Fatalf("window %d: err %v damage %v", window, err, dmg)
		}
		if len(data) != len(recs) {
			t.Fatalf("window %d: %d records, want %d", window, len(data), len(recs))
		}
		for i := range recs {
			if data[i] != string(recs[i]) || got[i].Off != offs[i] {
				t.Fatalf("window %d: record %d differs (off %d want %d)", window, i, got[i].Off, offs[i])
			}
		}
	}
}

func TestWriteRecordFrom(t *testing.T) {
	t.Parallel()
	payload := bytes.Repeat([]byte("0123456789"), 20000)
	var a, b bytes.Buffer
	wa := NewWriter(&a, WriterOptions{Offset: 7})
	wb := NewWriter(&b, WriterOptions{})
	for _, p := range [][]byte{[]byte("x"), payload, nil} {
		offA, err := wa.WriteRecordFrom(bytes.NewReader(p), int64(len(p)))
		if err != nil {
			t.Fatal(err)
		}
		offB, _ := wb.WriteRecord(p)
		if offA != offB+7 {
			t.Fatalf("offset %d, want %d", offA, offB+7)
		}
	}
	wa.Close()
	wb.Close()
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("WriteRecordFrom bytes differ from WriteRecord's")
	}
	w := NewWriter(io.Discard, WriterOptions{})
	if _, err := w.WriteRecordFrom(bytes.NewReader([]byte("ab")), 3); !errors.Is(err, codec.ErrShortInput) {
		t.Fatalf("short input: %v", err)
	}
}

func TestReadRecordRanges(t *testing.T) {
	t.Parallel()
	big := make([]byte, VerifyWhole*3+5)
	for i := range big {
		big[i] = byte(i * 7)
	}
	file, offs := writeAll(t, [][]byte{[]byte("hello, world"), big})
	r := bytes.NewReader(file)
	recs := []Record{{offs[0], 12}, {offs[1], int64(len(big))}}
	srcs := [][]byte{[]byte("hello, world"), big}
	for i, rec := range recs {
		for _, c := range []struct{ off, n int64 }{{0, rec.Len}, {3, 4}, {rec.Len - 2, 10}, {rec.Len, 1}, {0, 0}} {
			p := make([]byte, c.n)
			n, err := ReadRecord(r, rec, p, c.off)
			end := min(c.off+c.n, rec.Len)
			wantN := int(end - c.off)
			wantEOF := c.off+c.n > rec.Len
			if n != wantN || (err == io.EOF) != wantEOF || (err != nil && err != io.EOF) {
				t.Fatalf("rec %d [%d,+%d): n=%d err=%v", i, c.off, c.n, n, err)
			}
			if !bytes.Equal(p[:n], srcs[i][c.off:end]) {
				t.Fatalf("rec %d [%d,+%d): wrong bytes", i, c.off, c.n)
			}
		}
		got, err := io.ReadAll(RecordReader(r, rec))
		if err != nil || !bytes.Equal(got, srcs[i]) {
			t.Fatalf("RecordReader rec %d: %v", i, err)
		}
	}
	// Damage under a read: the small record checks its data checksum on
	// every read, the large one when read whole and through RecordReader,
	// and both check their header always.
	bad := bytes.Clone(file)
	bad[offs[0]+HeaderSize+1] ^= 1
	bad[offs[1]+HeaderSize+VerifyWhole+9] ^= 1
	br := bytes.NewReader(bad)
	if _, err := ReadRecord(br, recs[0], make([]byte, 1), 5); !errors.Is(err, codec.ErrCorrupt) {
		t.Errorf("small record with bad data read: %v", err)
	}
	if _, err := ReadRecord(br, recs[1], make([]byte, recs[1].Len), 0); !errors.Is(err, codec.ErrCorrupt) {
		t.Errorf("whole large record with bad data read: %v", err)
	}
	if _, err := io.ReadAll(RecordReader(br, recs[1])); !errors.Is(err, codec.ErrCorrupt) {
		t.Errorf("RecordReader over bad data: %v", err)
	}
	if _, err := ReadRecord(br, Record{offs[1], recs[1].Len - 1}, make([]byte, 1), 9); !errors.Is(err, codec.ErrCorrupt) {
		t.Errorf("wrong length: %v", err)
	}
	if _, err := ReadRecord(bytes.NewReader(file[:offs[1]+100]), recs[1], make([]byte, 10), 200); !errors.Is(err, codec.ErrTruncated) {
		t.Errorf("read past a shrunk file: %v", err)
	}
}

// TestSplitScansAgree cuts a file into parts at arbitrary offsets, scans
// each part with Start/End as a parallel build does, and checks that the
// parts hand over exactly (part i's Next is part i+1's First) and together
// return the records of a whole-file scan, damaged files included.
func TestSplitScansAgree(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	file, _ := writeAll(t, randomRecords(rng, 500, 2000))
	damaged := bytes.Clone(file)
	for i := 0; i < 5; i++ {
		damaged[rng.IntN(len(damaged))] ^= 0x10
	}
	for name, f := range map[string][]byte{"clean": file, "damaged": damaged} {
		r := bytes.NewReader(f)
		size := int64(len(f))
		_, whole, wholeDmg, _ := scanAll(t, r, size, Options{})
		for _, parts := range []int{2, 3, 7} {
			var got []Record
			var gotDmg []codec.Damage
			prevNext := int64(0)
			for p := 0; p < parts; p++ {
				start, end := size*int64(p)/int64(parts), size*int64(p+1)/int64(parts)
				s := NewScanner(r, size, Options{Start: start, End: end, Window: 4096})
				for s.Next() {
					got = append(got, s.Record())
				}
				if s.Err() != nil {
					t.Fatal(s.Err())
				}
				in := s.Info()
				if p > 0 && in.First >= 0 && in.First != prevNext {
					t.Fatalf("%s/%d: part %d syncs at %d, previous part hands over at %d", name, parts, p, in.First, prevNext)
				}
				gotDmg = append(gotDmg, s.Damage()...)
				if in.First >= 0 || p == 0 {
					prevNext = in.Next
				}
			}
			if !reflect.DeepEqual(got, whole) {
				t.Fatalf("%s/%d parts: %d records, whole scan %d", name, parts, len(got), len(whole))
			}
			if !reflect.DeepEqual(gotDmg, wholeDmg) {
				t.Fatalf("%s/%d parts: damage %v, whole scan %v", name, parts, gotDmg, wholeDmg)
			}
		}
	}
}

func TestScannerShrunkFile(t *testing.T) {
	t.Parallel()
	file, _ := writeAll(t, [][]byte{[]byte("a"), []byte("b")})
	s := NewScanner(bytes.NewReader(file[:20]), int64(len(file)), Options{})
	for s.Next() {
	}
	if !errors.Is(s.Err(), codec.ErrTruncated) {
		t.Fatalf("Err = %v", s.Err())
	}
}

func TestDetectRejects(t *testing.T) {
	t.Parallel()
	for name, b := range map[string][]byte{
		"leveldb-ish": {0x12, 0x34, 0x56, 0x78, 3, 0, 1, 'a', 'b', 'c', 0, 0, 0, 0, 0, 0},
		"text":        []byte("hello world, this is text\n"),
		"zeros":       make([]byte, 4096),
		"gzip junk":   {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7},
		"gzip text":   codectest.Gzip([]byte("plain text, gzipped, not records")),
	} {
		if c, err := Detect(bytes.NewReader(b), int64(len(b))); !errors.Is(err, codec.ErrFormat) {
			t.Errorf("%s: Detect = %v, %v", name, c, err)
		}
	}
}

func ExampleScanner() {
	var buf bytes.Buffer
	w := NewWriter(&buf, WriterOptions{})
	for _, s := range []string{"alpha", "", "gamma"} {
		w.WriteRecord([]byte(s))
	}
	w.Close()
	file := bytes.NewReader(buf.Bytes())
	s := NewScanner(file, file.Size(), Options{})
	for s.Next() {
		rec := s.Record()
		data := make([]byte, rec.Len)
		ReadRecord(file, rec, data, 0)
		fmt.Printf("record at %d: %q\n", rec.Off, data)
	}
	fmt.Println(s.Err(), len(s.Damage()))
	// Output:
	// record at 0: "alpha"
	// record at 21: ""
	// record at 37: "gamma"
	// <nil> 0
}

func ExampleDetect() {
	var buf bytes.Buffer
	w := NewWriter(&buf, WriterOptions{})
	w.WriteRecord([]byte("one"))
	w.WriteRecord([]byte("two"))
	w.Close()
	c, err := Detect(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	fmt.Println(c, err)
	_, err = Detect(bytes.NewReader([]byte("not a record file")), 17)
	fmt.Println(errors.Is(err, codec.ErrFormat))
	// Output:
	// none <nil>
	// true
}

// sliceReader is a ByteSlicer over memory.
type sliceReader struct{ *bytes.Reader }

func (s sliceReader) Slice(off, n int64) ([]byte, error) {
	if off+n > s.Size() {
		return nil, io.EOF
	}
	b := make([]byte, n)
	_, err := s.ReadAt(b, off)
	return b, err
}

func TestScannerSlicer(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(15, 16))
	file, _ := writeAll(t, randomRecords(rng, 200, 3000))
	file[5000] ^= 1
	want, wantRecs, wantDmg, _ := scanAll(t, bytes.NewReader(file), int64(len(file)), Options{Window: 512})
	got, gotRecs, gotDmg, err := scanAll(t, sliceReader{bytes.NewReader(file)}, int64(len(file)), Options{Window: 512})
	if err != nil || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotRecs, wantRecs) || !reflect.DeepEqual(gotDmg, wantDmg) {
		t.Fatalf("slicer scan differs: %v", err)
	}
	s := NewScanner(sliceReader{bytes.NewReader(file[:100])}, int64(len(file)), Options{})
	for s.Next() {
	}
	if !errors.Is(s.Err(), codec.ErrTruncated) {
		t.Fatalf("shrunk slicer: %v", s.Err())
	}
}
