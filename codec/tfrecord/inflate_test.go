package tfrecord

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/gzip"
)

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

func TestInflatedScanAndRandomReads(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	recs := randomRecords(rng, 400, 5000)
	file, _ := writeAll(t, recs)
	// Two gzip members, as concatenated .gz files are.
	half := len(file) / 3
	_, hOffs := writeAll(t, recs)
	cut := 0
	for _, o := range hOffs {
		if o >= int64(half) {
			cut = int(o)
			break
		}
	}
	z := append(gz(t, file[:cut]), gz(t, file[cut:])...)
	c, err := Detect(bytes.NewReader(z), int64(len(z)))
	if err != nil || c != Gzip {
		t.Fatalf("Detect = %v, %v", c, err)
	}
	in, err := NewInflated(bytes.NewReader(z), int64(len(z)), c)
	if err != nil {
		t.Fatal(err)
	}
	size, err := in.Size()
	if err != nil || size != int64(len(file)) {
		t.Fatalf("Size = %d, %v; want %d", size, err, len(file))
	}
	data, got, dmg, err := scanAll(t, in, size, Options{Window: 8192})
	if err != nil || len(dmg) > 0 || len(data) != len(recs) {
		t.Fatalf("scan: %d records, %v, %v", len(data), dmg, err)
	}
	for _, i := range []int{399, 0, 200, 201, 5} { // backwards reads restart the stream
		b := make([]byte, got[i].Len)
		if _, err := ReadRecord(in, got[i], b, 0); err != nil || !bytes.Equal(b, recs[i]) {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	// A cut-off stream (a file still being written) yields the records
	// before the cut and a truncated tail.
	cutZ := z[:len(z)-len(z)/4]
	in2, _ := NewInflated(bytes.NewReader(cutZ), int64(len(cutZ)), Gzip)
	size2, err := in2.Size()
	if err != nil {
		t.Fatal(err)
	}
	data2, _, dmg2, err := scanAll(t, in2, size2, Options{})
	if err != nil || len(data2) == 0 || len(data2) >= len(recs) {
		t.Fatalf("cut stream: %d records, %v", len(data2), err)
	}
	for i := range data2 {
		if data2[i] != string(recs[i]) {
			t.Fatalf("cut stream: record %d differs", i)
		}
	}
	if size2 != got[len(data2)].Off && (len(dmg2) != 1 || dmg2[0].Off != got[len(data2)].Off) {
		t.Fatalf("cut stream: damage %v, size %d", dmg2, size2)
	}
}

func ExampleInflated() {
	var plain, z bytes.Buffer
	w := NewWriter(&plain, WriterOptions{})
	w.WriteRecord([]byte("compressed record"))
	w.Close()
	zw := gzip.NewWriter(&z)
	zw.Write(plain.Bytes())
	zw.Close()
	src := bytes.NewReader(z.Bytes())
	c, _ := Detect(src, src.Size())
	in, _ := NewInflated(src, src.Size(), c)
	size, _ := in.Size()
	s := NewScanner(in, size, Options{})
	for s.Next() {
		b := make([]byte, s.Record().Len)
		ReadRecord(in, s.Record(), b, 0)
		fmt.Printf("%v: %q\n", c, b)
	}
	// Output: gzip: "compressed record"
}
