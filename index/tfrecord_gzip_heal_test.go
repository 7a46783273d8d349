package index

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// TestTFRecordGzipDamagedWindowHeals: a sealed table (believed without a
// proof) whose stored checkpoint window is wrong or missing — replaced by
// other bytes inflating to the same window, a byte flipped, or the cache
// file cut short in place under the open table — is the saved table's
// fault, not the source's: the read that meets it drops the table and
// scans the source afresh. Reading every record backwards then gives each
// record's right bytes after at most one ErrChanged (never a corruption
// error, never other bytes), and the next open loads the good table saved
// in its place.
func TestTFRecordGzipDamagedWindowHeals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		damage  func(t *testing.T, f savedGzipTable, at int64, w []byte) []byte // the cache file's new bytes
		inPlace bool                                                            // damaged once the table is open
	}{
		{"redeflated", func(t *testing.T, f savedGzipTable, at int64, w []byte) []byte {
			return append(append(bytes.Clone(f.b[:at]), codectest.Redeflated(t, w)...), f.b[at+int64(len(w)):]...)
		}, false},
		{"byte flipped", func(t *testing.T, f savedGzipTable, at int64, w []byte) []byte {
			b := bytes.Clone(f.b)
			b[at+int64(len(w))/2] ^= 0x04
			return b
		}, false},
		{"cut in place", func(t *testing.T, f savedGzipTable, at int64, w []byte) []byte {
			return f.b[:at]
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := savedGzip(t, "mem://heal.tfrecord.gz")
			at := int64(len(f.b)) - cacheTrailer - f.blob
			for _, p := range f.x.Points[:f.k] {
				at += int64(len(p.Window))
			}
			w := f.x.Points[f.k].Window
			bad := tc.damage(t, f, at, w)
			if !tc.inPlace {
				if err := os.WriteFile(f.cf, bad, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tb, err := OpenSource(context.Background(), &countedSource{data: f.src.data, key: f.src.key}, f.o)
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			if tb.Info().Loaded != "cached" || tb.s().proof != nil {
				t.Fatalf("%s table, proof %v: want the sealed table believed", tb.Info().Loaded, tb.s().proof)
			}
			if tc.inPlace {
				if err := os.WriteFile(f.cf, bad, 0o644); err != nil { // same inode: truncated, rewritten short
					t.Fatal(err)
				}
			}
			recs := gzipFixture().recs
			changedErrs := 0
			for n := tb.Len() - 1; n >= 0; n-- {
				got := make([]byte, tb.Size(n))
				_, err := tb.ReadAt(n, got, 0)
				if errors.Is(err, ErrChanged) && changedErrs == 0 {
					changedErrs++
					got = make([]byte, tb.Size(n))
					_, err = tb.ReadAt(n, got, 0)
				}
				if err != nil {
					t.Fatalf("record %d: %v (corrupt: %v)", n, err, errors.Is(err, codec.ErrCorrupt))
				}
				if !bytes.Equal(got, recs[n]) {
					t.Fatalf("record %d gave other bytes", n)
				}
			}
			if tb.Info().Loaded != "built" {
				t.Fatalf("%s table after the damage was met: want it scanned afresh", tb.Info().Loaded)
			}
			tb.Close()
			again, err := OpenSource(context.Background(), &countedSource{data: f.src.data, key: f.src.key}, f.o)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if again.Info().Loaded != "cached" {
				t.Fatalf("next open: %s table, want the good table saved in place of the damaged one", again.Info().Loaded)
			}
			if n := readRightOrRefused(t, again, 1); n != 0 {
				t.Fatalf("next open: %d records refused", n)
			}
		})
	}
}
