package leveldb

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
)

// addLogSeeds seeds f with every vector file and small writer outputs.
func addLogSeeds(f *testing.F, extra ...any) {
	for _, n := range codectest.Vectors(f, "leveldb/*.log", writeVector) {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		// Go's fuzzer crawls (minimising) on large inputs: seed the large
		// vectors by their first blocks.
		if len(b) > 110<<10 {
			b = b[:110<<10]
		}
		f.Add(append([]any{b}, extra...)...)
	}
	for _, lens := range [][]int{{0}, {3}, {100, 0, 32754}, {32761, 5}, {40000}} {
		var recs [][]byte
		for i, n := range lens {
			recs = append(recs, codectest.VectorPayload(i, n))
		}
		b, _ := writeLog(f, recs, WriterOptions{})
		f.Add(append([]any{b}, extra...)...)
	}
}

// checkLogScan runs the scanner over data and checks the properties every
// input must satisfy; it returns the records.
func checkLogScan(t *testing.T, data []byte) []Record {
	recs, s := logScanAll(t, data, Options{})
	if s.Err() != nil {
		t.Fatalf("Err on an in-memory file: %v", s.Err())
	}
	size := int64(len(data))
	for _, r := range recs {
		// Chunks lie in the file, each inside one block, in file order and
		// without overlap. Several chunks of a record may share a block: an
		// empty FIRST followed by its LAST in the same block is one record
		// to leveldb C++, goleveldb and pebble alike (seed
		// first_last_same_block).
		var total int64
		prevEnd := int64(0)
		for i := 0; ; i++ {
			c, ok := ChunkAt(r, i)
			if !ok {
				break
			}
			end := c.Off + int64(r.Hdr) + int64(c.Len)
			if c.Off < prevEnd || end > size || (end-1)/32768 != c.Off/32768 {
				t.Fatalf("record %+v: chunk %d %+v outside the file or its block, or before chunk %d's end %d", r, i, c, i-1, prevEnd)
			}
			prevEnd = end
			total += int64(c.Len)
		}
		if total != r.Len {
			t.Fatalf("record %+v: chunks carry %d bytes", r, total)
		}
		p := make([]byte, r.Len)
		if n, err := ReadRecord(bytes.NewReader(data), r, p, 0, Options{}); err != nil || int64(n) != r.Len {
			t.Fatalf("ReadRecord(%+v) = %d, %v", r, n, err)
		}
	}
	ds := s.Damage()
	for i, d := range ds {
		if d.Off < 0 || d.Len <= 0 || d.Off+d.Len > size || (i > 0 && d.Off < ds[i-1].Off) {
			t.Fatalf("bad damage list %v", ds)
		}
	}
	if cap(s.win) > logWindowBlocks*logBlockSize {
		t.Fatalf("scanner window grew to %d", cap(s.win))
	}
	return recs
}

// logScanAllocs returns the bytes a bare scan of data allocates.
func logScanAllocs(data []byte) uint64 {
	var before, after runtime.MemStats
	r := bytes.NewReader(data)
	runtime.ReadMemStats(&before)
	s := NewScanner(r, int64(len(data)), Options{})
	for s.Next() {
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func FuzzLogScan(f *testing.F) {
	addLogSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		// Memory follows the input's size, never a length field: one window,
		// one probe block, and lists of at most one entry per input chunk
		// (the worst case, alternating 8-byte FIRST and 7-byte FULL chunks,
		// allocates about 17 bytes per input byte counting slice growth; a
		// length-driven allocation would be thousands).
		if a := logScanAllocs(data); a > 1<<20+32*uint64(len(data)) {
			t.Fatalf("a scan of %d bytes allocated %d bytes", len(data), a)
		}
		checkLogScan(t, data)
		// Splitting at every block boundary and merging gives the same scan.
		cuts := logBlockCuts(len(data))
		// Also with a log number from the file's name: 7, and one above the
		// first header's (the name of a log that recycled its file).
		names := []uint32{0, 7}
		if len(data) >= logHdrRecycle {
			names = append(names, binary.LittleEndian.Uint32(data[7:])+1)
		}
		for _, num := range names {
			wr, s := logScanAll(t, data, Options{LogNum: num})
			got, gd := logSplitScanWith(t, data, cuts, Options{LogNum: num})
			if fmt.Sprint(got) != fmt.Sprint(wr) || fmt.Sprint(gd) != fmt.Sprint(s.Damage()) {
				t.Fatalf("log number %d: split scan differs: %v %v vs %v %v", num, got, gd, wr, s.Damage())
			}
		}
	})
}

func FuzzLogReadAt(f *testing.F) {
	addLogSeeds(f, uint16(0), int64(0), uint32(100))
	f.Fuzz(func(t *testing.T, data []byte, which uint16, off int64, n uint32) {
		recs, _ := logScanAll(t, data, Options{})
		if len(recs) == 0 {
			return
		}
		r := recs[int(which)%len(recs)]
		whole := logReadWhole(t, data, r)
		p := make([]byte, n%(1<<18))
		k, err := ReadRecord(bytes.NewReader(data), r, p, off, Options{})
		switch {
		case off < 0:
			if err == nil || k != 0 {
				t.Fatalf("negative offset: %d, %v", k, err)
			}
		case off >= r.Len:
			if k != 0 || (err != io.EOF && !(err == nil && len(p) == 0 && off == r.Len)) {
				t.Fatalf("read past end: %d, %v", k, err)
			}
		default:
			want := whole[off:min(int64(len(whole)), off+int64(len(p)))]
			if !bytes.Equal(p[:k], want) || k != len(want) || (k < len(p)) != (err == io.EOF) {
				t.Fatalf("read at %d len %d: %d, %v", off, len(p), k, err)
			}
		}
	})
}

func FuzzLogRoundTrip(f *testing.F) {
	f.Add([]byte("\x00\x05hello\x00\x00"), int64(0))
	f.Add(bytes.Repeat([]byte{0xff}, 300), int64(32761))
	f.Add([]byte{0x7f, 0xf9, 1, 2, 3}, int64(32763))
	f.Fuzz(func(t *testing.T, in []byte, start int64) {
		// Records: a 2-byte length (up to two blocks' worth), then that
		// many bytes of payload generated from the input position.
		var recs [][]byte
		for len(in) >= 2 && len(recs) < 16 {
			n := int(binary.BigEndian.Uint16(in))
			in = in[2:]
			recs = append(recs, codectest.VectorPayload(len(in), n))
		}
		// An earlier session wrote one record of a fuzz-chosen size (or
		// nothing); this session appends to it.
		var out bytes.Buffer
		var pre [][]byte
		if start != 0 {
			pre = [][]byte{codectest.VectorPayload(-1, int(max(0, start%(1<<18))))}
			b, _ := writeLog(t, pre, WriterOptions{})
			out.Write(b)
		}
		w := NewWriter(&out, WriterOptions{Offset: int64(out.Len())})
		offs := make([]int64, len(recs))
		for i, r := range recs {
			var err error
			if offs[i], err = w.WriteRecord(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil || w.Offset() != int64(out.Len()) {
			t.Fatalf("close: %v, offset %d, wrote %d", err, w.Offset(), out.Len())
		}
		data := out.Bytes()
		got, s := logScanAll(t, data, Options{})
		if len(got) >= len(pre) {
			got = got[len(pre):]
		}
		if len(s.Damage()) != 0 || len(got) != len(recs) {
			t.Fatalf("%d records, damage %v; wrote %d", len(got), s.Damage(), len(recs))
		}
		for i, r := range got {
			if r.Off != offs[i] || r.Chunks != nil || !bytes.Equal(logReadWhole(t, data, r), recs[i]) {
				t.Fatalf("record %d: %+v, written at %d", i, r, offs[i])
			}
		}
	})
}
