package wlog

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// TestRoundTrip: records of every size class around page and header
// boundaries, in each compression, come back whole from a scan (Decode)
// and piecewise (ReadRecord), at the offsets the writer reported, in the
// writer's layout (no explicit fragment list).
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	const per = PageSize - HeaderSize
	sets := map[string][][]byte{
		"empty":        {{}},
		"one byte":     {{7}},
		"fills a page": {sized(per, 1)},
		"page plus 1":  {sized(per+1, 2)},
		"7 left":       {sized(per-HeaderSize, 3), sized(100, 4)},
		"6 left":       {sized(per-HeaderSize-1, 3), sized(100, 4)},
		"three pages":  {sized(3*per+5, 5), {1, 2, 3}},
		"many small":   codecRecords(300, 40),
		"noise":        {noisy(70000, 3), noisy(10, 4), noisy(PageSize, 5)},
	}
	for name, recs := range sets {
		for _, c := range []Compression{None, Snappy, Zstd} {
			for _, closed := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%v/closed=%v", name, c, closed), func(t *testing.T) {
					t.Parallel()
					b := segment(t, recs, c, closed)
					if closed && len(b)%PageSize != 0 {
						t.Fatalf("closed segment of %d bytes is not whole pages", len(b))
					}
					got, locs, dmg, err := scanAll(t, b, Options{Strict: true})
					if err != nil || len(dmg) > 0 {
						t.Fatalf("scan: %v, damage %v", err, dmg)
					}
					if len(got) != len(recs) {
						t.Fatalf("%d records, want %d", len(got), len(recs))
					}
					for i := range recs {
						if !bytes.Equal(got[i], recs[i]) {
							t.Fatalf("record %d: %d bytes differ from the %d written", i, len(got[i]), len(recs[i]))
						}
						if locs[i].Frags != nil {
							t.Fatalf("record %d: explicit fragments %v for the writer's layout", i, locs[i].Frags)
						}
						if c == None {
							if p := readPieces(t, bytes.NewReader(b), locs[i], 1000); !bytes.Equal(p, recs[i]) {
								t.Fatalf("record %d read in pieces differs", i)
							}
						}
					}
				})
			}
		}
	}
}

// codecRecords returns n records of about size bytes.
func codecRecords(n, size int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = sized(size+i%13, byte(i))
	}
	return out
}

// TestCompressedSizes: a scan knows each compressed record's decoded size
// without decompressing, and counts the records of each compression.
func TestCompressedSizes(t *testing.T) {
	t.Parallel()
	recs := [][]byte{sized(5000, 1), noisy(300, 2), sized(90000, 3)}
	for _, c := range []Compression{Snappy, Zstd} {
		b := segment(t, recs, c, false)
		sc := NewScanner(bytes.NewReader(b), int64(len(b)), Options{})
		var sizes []int64
		var comps []Compression
		for sc.Next() {
			sizes = append(sizes, sc.Record().Size)
			comps = append(comps, sc.Record().Comp)
		}
		want := []int64{5000, 300, 90000}
		if fmt.Sprint(sizes) != fmt.Sprint(want) {
			t.Fatalf("%v: sizes %v, want %v", c, sizes, want)
		}
		// The noise does not compress: Prometheus's writer stores it as is.
		if comps[0] != c || comps[1] != None || comps[2] != c {
			t.Fatalf("%v: compressions %v", c, comps)
		}
		in := sc.Info()
		if in.Records != 3 || (c == Snappy && in.Snappy != 2) || (c == Zstd && in.Zstd != 2) {
			t.Fatalf("%v: info %+v", c, in)
		}
	}
}

// TestStart: a scan from the end of an intact record finds exactly the
// records after it, as a grown live segment is taken in.
func TestStart(t *testing.T) {
	t.Parallel()
	recs := codecRecords(50, 3000)
	b := segment(t, recs, None, false)
	_, locs, _, _ := scanAll(t, b, Options{})
	for _, k := range []int{0, 1, 17, 49} {
		start := locs[k].End()
		got, _, dmg, err := scanAll(t, b, Options{Start: start})
		if err != nil || len(dmg) > 0 {
			t.Fatalf("start after record %d: %v, %v", k, dmg, err)
		}
		codectest.SamePayloads(t, fmt.Sprintf("start after record %d", k), got, recs[k+1:])
	}
	if _, _, _, err := scanAll(t, b, Options{Start: int64(len(b)) + 1}); err == nil {
		t.Fatal("a start past the end: no error")
	}
}

// TestProbe: segments of every compression are recognised, other bytes
// are not.
func TestProbe(t *testing.T) {
	t.Parallel()
	for _, c := range []Compression{None, Snappy, Zstd} {
		b := segment(t, codecRecords(3, 100), c, false)
		if !Probe(bytes.NewReader(b), int64(len(b))) {
			t.Errorf("%v segment not recognised", c)
		}
	}
	// A segment whose first page is damaged is still recognised by its second.
	b := segment(t, codecRecords(40, 2000), None, false)
	b[10] ^= 0xff
	if !Probe(bytes.NewReader(b), int64(len(b))) {
		t.Error("segment with a damaged first page not recognised")
	}
	for name, b := range map[string][]byte{
		"empty":        nil,
		"zeros":        make([]byte, 3*PageSize),
		"text":         []byte("hello, this is not a write-ahead log at all"),
		"empty record": {kindFull, 0, 0, 0, 0, 0, 0, 'x'},
		"bad type":     append([]byte{5, 0, 1, 0, 0, 0, 0}, 'x'),
	} {
		if Probe(bytes.NewReader(b), int64(len(b))) {
			t.Errorf("%s taken for a segment", name)
		}
	}
}

// TestNoHeaderAcrossPages: the writer never starts a header in the last 6
// bytes of a page.
func TestNoHeaderAcrossPages(t *testing.T) {
	t.Parallel()
	for pad := range 10 {
		recs := [][]byte{sized(PageSize-2*HeaderSize-pad, 1), {1, 2, 3}}
		b := segment(t, recs, None, false)
		_, locs, dmg, err := scanAll(t, b, Options{Strict: true})
		if err != nil || len(dmg) > 0 || len(locs) != 2 {
			t.Fatalf("pad %d: %v %v", pad, dmg, err)
		}
		if room := PageSize - locs[1].Off%PageSize; room < HeaderSize {
			t.Fatalf("pad %d: second record at %d leaves a header across the page end", pad, locs[1].Off)
		}
	}
}

// TestStrictError: a strict scan ends at the first damage with a
// *codec.CorruptError of this format.
func TestStrictError(t *testing.T) {
	t.Parallel()
	b := segment(t, codecRecords(40, 2000), None, false)
	b[PageSize+100] ^= 1
	_, _, _, err := scanAll(t, b, Options{Strict: true})
	var ce *codec.CorruptError
	if !errors.As(err, &ce) || ce.Format != codec.PrometheusWAL || !errors.Is(err, codec.ErrCorrupt) {
		t.Fatalf("strict scan of a damaged segment: %v", err)
	}
}
