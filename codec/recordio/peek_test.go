package recordio

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// TestPeekLyingHeader: a compressed block whose chunks pass their CRCs but
// whose raw block holds fewer bytes than its item sizes claim. The default
// scan reads only the header, so it lists the items; reading them must
// fail with ErrCorrupt, never return wrong bytes. VerifyBlocks reports the
// block as damage at scan time.
func TestPeekLyingHeader(t *testing.T) {
	t.Parallel()
	for _, xf := range []string{"zstd", "flate"} {
		t.Run(xf, func(t *testing.T) {
			chain, err := parseTransformers([]string{xf}, false)
			if err != nil {
				t.Fatal(err)
			}
			raw := []byte{2, 5, 5, 'a', 'b', 'c'} // claims 10 body bytes, holds 3
			stored, err := applyTransformers(chain, raw)
			if err != nil {
				t.Fatal(err)
			}
			data := slices.Concat(emptyHeader(t, []string{xf}), codectest.RIOChunk(bodyMagic, uint32(len(stored)), 1, 0, stored))
			s, err := NewScanner(bytes.NewReader(data), int64(len(data)), codec.RecordIO, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var locs []ItemLoc
			for s.Next() {
				locs = append(locs, s.Item())
			}
			if len(locs) != 2 {
				t.Fatalf("header-only scan: %d items, want the 2 claimed", len(locs))
			}
			rd, err := NewReader(bytes.NewReader(data), int64(len(data)), codec.RecordIO, []string{xf}, Options{}, 4)
			if err != nil {
				t.Fatal(err)
			}
			for _, loc := range locs {
				p := make([]byte, loc.Len)
				if _, err := rd.ReadItem(loc, p, 0); !errors.Is(err, codec.ErrCorrupt) {
					t.Fatalf("item %d: read error %v, want ErrCorrupt", loc.Item, err)
				}
			}
			s, err = NewScanner(bytes.NewReader(data), int64(len(data)), codec.RecordIO, Options{VerifyBlocks: true})
			if err != nil {
				t.Fatal(err)
			}
			for s.Next() {
				t.Fatalf("VerifyBlocks scan returned an item of the lying block")
			}
			if d := s.Damage(); len(d) != 1 || !errors.Is(d[0], codec.ErrCorrupt) {
				t.Fatalf("VerifyBlocks damage %v", d)
			}
		})
	}
}
