package interop

import (
	"bytes"
	"testing"
)

// TestRecordIOLostHeader writes files with grailbio's writer (every
// transformer, with and without a trailer), damages the header block and
// compares: grailbio's scanner returns no item and an error; recfs returns
// every item grailbio wrote (and the trailer), reporting the header block as
// damage.
func TestRecordIOLostHeader(t *testing.T) {
	checked := 0
	for _, seed := range testSeeds(t, 6) {
		for _, xf := range [][]string{nil, {"zstd"}, {"flate"}} {
			c := newRioCase(seed, xf, seed%2 == 0)
			b, err := writeGrail(c.items, c.spec)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 2*32768 {
				continue
			}
			checked++
			bad := bytes.Clone(b)
			bad[28] ^= 0x10 // the first payload byte of the header chunk

			g := readGrailBytes(bad, false)
			if len(g.Items) != 0 || g.Err == nil {
				t.Errorf("seed %d %v: grailbio read %d items, err %v; expected nothing and an error", seed, xf, len(g.Items), g.Err)
			}
			r := recfsReadRioBytes(bad, false)
			if r.Err != nil {
				t.Fatalf("seed %d %v: recfs: %v", seed, xf, r.Err)
			}
			if d := diffRecords(c.items, r.Items); d != "" {
				t.Errorf("seed %d %v: recfs: %s", seed, xf, d)
			}
			if c.spec.Trailer != nil && !bytes.Equal(r.Trailer, c.spec.Trailer) {
				t.Errorf("seed %d %v: trailer of %d bytes, want %d", seed, xf, len(r.Trailer), len(c.spec.Trailer))
			}
			if len(r.Damage) != 1 || r.Damage[0].Off != 0 || r.Damage[0].Len != 32768 {
				t.Errorf("seed %d %v: damage %v, want the header chunk", seed, xf, r.Damage)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no file had a body block")
	}
}
