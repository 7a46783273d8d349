package index

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec/wlog"
)

// BenchmarkPrometheusOpen: the index build of a segment of 64 MiB of
// samples records (snappy), per stored byte.
func BenchmarkPrometheusOpen(b *testing.B) {
	// A scrape of 20,000 series every 15 s, as Prometheus logs it: one
	// samples record per scrape (ref, time and value deltas).
	var recs [][]byte
	for n, t := 0, int64(1_700_000_000_000); n < 64<<20; t += 15000 {
		r := []byte{2}
		r = binary.BigEndian.AppendUint64(r, 1)
		r = binary.BigEndian.AppendUint64(r, uint64(t))
		for i := range int64(20000) {
			r = binary.AppendVarint(r, i)
			r = binary.AppendVarint(r, i%100)
			r = binary.BigEndian.AppendUint64(r, math.Float64bits(float64((t-1_700_000_000_000)/1000+i%7)))
		}
		recs = append(recs, r)
		n += len(r)
	}
	path := filepath.Join(b.TempDir(), "00000000")
	seg := promSegment(b, recs, wlog.Snappy)
	if err := os.WriteFile(path, seg, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(seg)))
	for b.Loop() {
		t, err := Open(context.Background(), path, Options{CacheDir: "-"})
		if err != nil || t.Len() != int64(len(recs)) {
			b.Fatal(err, t.Len())
		}
		t.Close()
	}
}
