package leveldb

import (
	"bytes"
	"os"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
)

// checkPayloads scans data and checks that every payload Scanner.Payload
// hands over is the record's bytes as ReadRecord reads them; it returns
// how many records it served and how many it left to ReadRecord.
func checkPayloads(t *testing.T, data []byte, o Options) (served, left int) {
	t.Helper()
	s := NewScanner(bytes.NewReader(data), int64(len(data)), o)
	dst := make([]byte, 0, 1<<20)
	for s.Next() {
		r := s.Record()
		got, ok := s.Payload(dst)
		if !ok {
			left++
			continue
		}
		served++
		if want := logReadWholeOpt(t, data, r, o); !bytes.Equal(got, want) {
			t.Fatalf("record %+v: Payload gives %d bytes unlike ReadRecord's %d", r, len(got), len(want))
		}
	}
	return served, left
}

// TestScannerPayload: the scanner hands over each record's payload from
// the bytes it scanned (a record of many chunks copied), equal to what
// ReadRecord reads; only a record whose chunks span two of its reads is
// left to ReadRecord.
func TestScannerPayload(t *testing.T) {
	t.Parallel()
	recs := [][]byte{}
	for i, n := range []int{0, 3, 100, 32754, 32761, 5, 40000, 200000, 300000, 7, 1 << 20, 11} {
		recs = append(recs, codectest.VectorPayload(i, n))
	}
	for i := range 3000 {
		recs = append(recs, codectest.VectorPayload(i, i%300))
	}
	big, _ := writeLog(t, recs, WriterOptions{})
	recycled, _ := writeLog(t, recs[:40], WriterOptions{Recyclable: true, LogNum: 9})
	cases := []struct {
		name     string
		data     []byte
		minShare float64 // of the records served from the scan's bytes
	}{
		{"many sizes", big, 0.9},
		{"recyclable", recycled, 0.5},
	}
	for _, v := range codectest.Vectors(t, "leveldb/*.log", writeVector) {
		b, err := os.ReadFile(v)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name     string
			data     []byte
			minShare float64
		}{v, b, 0})
	}
	for _, c := range cases {
		served, left := checkPayloads(t, c.data, Options{})
		if float64(served) < c.minShare*float64(served+left) {
			t.Errorf("%s: %d records served from the scan's bytes, %d left", c.name, served, left)
		}
		if len(c.data) <= logWindowBlocks*logBlockSize && left > 0 {
			t.Errorf("%s: a file of one window left %d records to ReadRecord", c.name, left)
		}
	}
}

// FuzzLogScanPayload: on any input, a payload the scanner hands over is
// the one ReadRecord reads, and a file of one window has every record
// served.
func FuzzLogScanPayload(f *testing.F) {
	addLogSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		_, left := checkPayloads(t, data, Options{})
		if len(data) <= logWindowBlocks*logBlockSize && left > 0 {
			t.Fatalf("a file of one window left %d records to ReadRecord", left)
		}
	})
}
