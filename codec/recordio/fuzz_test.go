package recordio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec"
)

// addSeeds adds every grailbio vector file (and a short prefix of the big
// ones) to the corpus.
func addSeeds(f *testing.F, match string, max int) {
	paths, _ := filepath.Glob(filepath.Join(vectorDir, match))
	for _, p := range paths {
		if filepath.Ext(p) == ".json" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		// Keep seeds small so mutation stays fast; the scanner is
		// chunk-periodic, so three chunks exercise every path.
		f.Add(b[:min(len(b), max)])
	}
}

// checkScan scans data leniently and strictly and checks the invariants:
// no panic, bounded work, every returned item readable, damage ranges inside
// the file and in order, strict stops with a classified error.
func checkScan(t *testing.T, data []byte, f codec.Format, o Options) {
	o.MaxBlockSize = 4 << 20
	size := int64(len(data))
	s, err := NewScanner(bytes.NewReader(data), size, f, o)
	if err != nil {
		if !errors.Is(err, codec.ErrCorrupt) && !errors.Is(err, codec.ErrFormat) && !errors.Is(err, codec.ErrUnsupported) &&
			!errors.Is(err, codec.ErrTruncated) {
			t.Fatalf("open error not classified: %v", err)
		}
		return
	}
	rd, err := NewReader(bytes.NewReader(data), size, s.Format(), s.Transformers(), o, 2)
	if err != nil {
		t.Fatalf("reader: %v", err)
	}
	n := 0
	for s.Next() {
		loc := s.Item()
		if loc.Len < 0 || loc.Off < 0 || loc.Block < 0 || loc.Block >= size {
			t.Fatalf("bad location %+v", loc)
		}
		if loc.Len > 8<<20 {
			t.Fatalf("item of %d bytes from a %d-byte file", loc.Len, size)
		}
		buf := make([]byte, loc.Len+1)
		m, err := rd.ReadItem(loc, buf, 0)
		if int64(m) != loc.Len || err != io.EOF {
			t.Fatalf("ReadItem(%+v) = %d, %v", loc, m, err)
		}
		n++
		if n > len(data)+1 {
			t.Fatalf("%d items from %d bytes", n, len(data))
		}
	}
	if s.Err() != nil && !o.Strict {
		t.Fatalf("lenient scan error: %v", s.Err())
	}
	prev := int64(0)
	for _, d := range s.Damage() {
		if d.Off < prev || d.Len <= 0 || d.Off+d.Len > size {
			t.Fatalf("bad damage %v after %d in %d bytes", d, prev, size)
		}
		prev = d.Off + d.Len
		if d.Err == nil {
			t.Fatalf("unclassified damage %v", d)
		}
	}
	if s.Format() == codec.RecordIO {
		s.Trailer() // must not panic
	}
}

func FuzzRecordIOScan(f *testing.F) {
	addSeeds(f, "*.rio", 3*chunkSize)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkScan(t, data, codec.Unknown, Options{})
		checkScan(t, data, codec.RecordIO, Options{Strict: true})
	})
}

func FuzzRecordIOLegacyScan(f *testing.F) {
	addSeeds(f, "*.grail-*", 2000)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkScan(t, data, codec.RecordIOLegacy, Options{})
		checkScan(t, data, codec.RecordIOLegacy, Options{LegacyTransform: "flate"})
	})
}

// FuzzRecordIOReadItem reads arbitrary locations: errors are fine, panics and
// reads past the item are not.
func FuzzRecordIOReadItem(f *testing.F) {
	for _, name := range []string{"plain-small.rio", "flate.rio", "legacy-packed.grail-rpk"} {
		b, err := os.ReadFile(filepath.Join(vectorDir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 3*chunkSize)], int64(32768), int64(3), int64(5), int64(0), false)
	}
	// Items larger than a chunk, as in the large-items vector (not kept in
	// testdata for its size).
	big := makeRio(f, [][]byte{bytes.Repeat([]byte("L"), 3*maxChunkPayload), bytes.Repeat([]byte("M"), maxChunkPayload+1)}, WriterOptions{}, nil)
	f.Add(big[:min(len(big), 3*chunkSize)], int64(32768), int64(3), int64(5), int64(0), false)
	f.Fuzz(func(t *testing.T, data []byte, block, off, ln, at int64, legacy bool) {
		fm, xf := codec.RecordIO, []string(nil)
		if legacy {
			fm = codec.RecordIOLegacy
		} else if s, err := NewScanner(bytes.NewReader(data), int64(len(data)), codec.RecordIO, Options{}); err == nil {
			xf = s.Transformers()
		}
		rd, err := NewReader(bytes.NewReader(data), int64(len(data)), fm, xf, Options{MaxBlockSize: 1 << 20}, 2)
		if err != nil {
			return
		}
		ln = ln % (1 << 20)
		buf := make([]byte, 64)
		n, err := rd.ReadItem(ItemLoc{Block: block, Off: off, Len: ln}, buf, at)
		if n < 0 || n > len(buf) || (at >= 0 && int64(n) > max(ln-at, 0)) {
			t.Fatalf("ReadItem returned %d bytes (len %d at %d)", n, ln, at)
		}
		if err == nil && n != len(buf) {
			t.Fatalf("short read %d without error", n)
		}
	})
}
