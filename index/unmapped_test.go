package index

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/wlog"
)

// countingMap is a mapped file that counts the bytes handed out through
// its map (Slice) and read through its ReadAt, and reads by pread through
// Unmapped.
type countingMap struct {
	b                []byte
	sliced, readAt   atomic.Int64
	unmappedReadings atomic.Int64
}

func (m *countingMap) ReadAt(p []byte, off int64) (int, error) {
	m.readAt.Add(int64(len(p)))
	return bytes.NewReader(m.b).ReadAt(p, off)
}

func (m *countingMap) Slice(off, n int64) ([]byte, error) {
	m.sliced.Add(n)
	return m.b[off : off+n], nil
}

func (m *countingMap) Unmapped() io.ReaderAt { return preader{m} }

type preader struct{ m *countingMap }

func (p preader) ReadAt(b []byte, off int64) (int, error) {
	p.m.unmappedReadings.Add(int64(len(b)))
	return bytes.NewReader(p.m.b).ReadAt(b, off)
}

// TestPrometheusBuildUnmapped: the build of a mapped Prometheus segment
// reads every byte by pread (Unmapped), none through the map, with a
// context that can be cancelled (interruptible's wrapper) or not.
func TestPrometheusBuildUnmapped(t *testing.T) {
	t.Parallel()
	var recs [][]byte
	for i := range 3000 {
		recs = append(recs, fmt.Appendf(nil, "record %d %s", i, bytes.Repeat([]byte{byte(i)}, i%300)))
	}
	seg := promSegment(t, recs, wlog.Snappy)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for name, ctx := range map[string]context.Context{"plain": context.Background(), "cancellable": ctx} {
		t.Run(name, func(t *testing.T) {
			m := &countingMap{b: seg}
			tb, err := Build(ctx, m, int64(len(seg)), Options{Format: codec.PrometheusWAL, CacheDir: "-"})
			if err != nil {
				t.Fatal(err)
			}
			if tb.Len() != int64(len(recs)) {
				t.Fatalf("%d records, want %d", tb.Len(), len(recs))
			}
			if s, r := m.sliced.Load(), m.readAt.Load(); s != 0 || r != 0 {
				t.Errorf("the build read %d bytes through the map (Slice) and %d by its ReadAt, want 0", s, r)
			}
			if u := m.unmappedReadings.Load(); u < int64(len(seg)) {
				t.Errorf("the build read %d bytes by pread, want the segment's %d", u, len(seg))
			}
		})
	}
}
