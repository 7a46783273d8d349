package recordio

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// TestRecordIOLostHeader damages the header block of files of every
// transformer and checks that the body items are still returned, with the
// chain found from the blocks' content and the header block reported as
// damage; strict mode keeps the reference behaviour (no items, an error).
func TestRecordIOLostHeader(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(14))
	items := codectest.GenItems(rng, 40, maxChunkPayload)
	trailer := []byte("trailer bytes")
	cases := []struct {
		name    string
		xf      []string
		trailer bool
		damage  func(d []byte) []byte
		lost    []int // body blocks (0-based) also damaged
	}{
		{name: "plain", damage: flipAt(30)},
		{name: "zstd", xf: []string{"zstd"}, damage: flipAt(30)},
		{name: "flate", xf: []string{"flate"}, damage: flipAt(30)},
		{name: "zstd-trailer", xf: []string{"zstd"}, trailer: true, damage: flipAt(40)},
		{name: "flate-levels", xf: []string{"flate 9"}, damage: flipAt(12)},
		{name: "size-field", xf: []string{"zstd"}, damage: flipAt(17)},
		{name: "magic", xf: []string{"flate"}, damage: flipAt(2)},
		{name: "zeroed", damage: func(d []byte) []byte { clear(d[:chunkSize]); return d }},
		{name: "first-block-too", xf: []string{"zstd"}, damage: func(d []byte) []byte {
			d[30] ^= 1
			d[chunkSize+40] ^= 1
			return d
		}, lost: []int{0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := WriterOptions{MaxItems: 3, Transformers: c.xf, Trailer: c.trailer}
			var tr []byte
			if c.trailer {
				tr = trailer
			}
			good := makeRio(t, items, o, tr)
			data := c.damage(slices.Clone(good))
			f := codec.Unknown
			if got, err := detect(bytes.NewReader(data), int64(len(data))); got != codec.RecordIO || err != nil {
				t.Fatalf("Detect: %v %v", got, err)
			}
			if _, err := NewScanner(bytes.NewReader(data), int64(len(data)), f, Options{Strict: true}); !errors.Is(err, codec.ErrCorrupt) {
				t.Fatalf("strict open: %v, want ErrCorrupt", err)
			}
			s, err := NewScanner(bytes.NewReader(data), int64(len(data)), f, Options{})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			var wantXF []string
			for _, x := range c.xf {
				name, _, _ := bytes.Cut([]byte(x), []byte(" "))
				wantXF = append(wantXF, string(name))
			}
			if fmt.Sprint(s.Transformers()) != fmt.Sprint(wantXF) || len(s.Header()) != 0 || s.HasTrailer() != c.trailer {
				t.Fatalf("transformers %q (want %q), header %v, trailer %v", s.Transformers(), wantXF, s.Header(), s.HasTrailer())
			}
			rd, err := NewReader(bytes.NewReader(data), int64(len(data)), codec.RecordIO, s.Transformers(), Options{}, 2)
			if err != nil {
				t.Fatal(err)
			}
			var got [][]byte
			for s.Next() {
				loc := s.Item()
				b := make([]byte, loc.Len)
				if n, err := rd.ReadItem(loc, b, 0); int64(n) != loc.Len || (err != nil && loc.Len > 0) {
					t.Fatalf("ReadItem %+v: %d %v", loc, n, err)
				}
				got = append(got, b)
			}
			want := items
			for _, b := range c.lost {
				want = slices.Concat(want[:4*b], want[4*b+4:]) // blocks of MaxItems+1 items
			}
			if s.Err() != nil || !equalItems(got, want) {
				t.Fatalf("%d items (want %d), err %v", len(got), len(want), s.Err())
			}
			ds := s.Damage()
			// One range from 0: the header chunk, and with it the damaged
			// first body block when the resync had to pass that too.
			if len(ds) != 1 || ds[0].Off != 0 || (ds[0].Len == chunkSize) != (len(c.lost) == 0) || !errors.Is(ds[0], codec.ErrCorrupt) {
				t.Fatalf("damage %v, want the header chunk", ds)
			}
			if c.trailer {
				loc, ok, err := s.Trailer()
				b := make([]byte, loc.Len)
				if !ok || err != nil {
					t.Fatalf("trailer: %v %v", ok, err)
				}
				if _, err := rd.ReadItem(loc, b, 0); err != nil || !bytes.Equal(b, trailer) {
					t.Fatalf("trailer read: %q %v", b, err)
				}
			}
		})
	}
}

// flipAt returns a mutation flipping the low bit of byte i.
func flipAt(i int) func([]byte) []byte {
	return func(d []byte) []byte { d[i] ^= 1; return d }
}
