package interop

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/prometheus/prometheus/tsdb/record"
	"github.com/prometheus/prometheus/tsdb/wlog"
	"github.com/prometheus/prometheus/util/compression"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	rwlog "github.com/recfs/recfs/codec/wlog"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/test/internal/engines"
)

// promRefSegment reads one segment with Prometheus's own wlog.Reader and
// returns its records until the end or the reader's first error.
func promRefSegment(t testing.TB, path string) ([][]byte, error) {
	t.Helper()
	seg, err := wlog.OpenReadSegment(path)
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	r := wlog.NewReader(seg)
	var out [][]byte
	for r.Next() {
		out = append(out, bytes.Clone(r.Record()))
	}
	return out, r.Err()
}

// recfsRecords opens path through the index (detecting its format) and
// returns every record it reads back, with the table.
func recfsRecords(t testing.TB, path string, want codec.Format) ([][]byte, *index.Table) {
	t.Helper()
	tb, err := index.Open(context.Background(), path, index.Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	if tb.Format() != want {
		t.Fatalf("%s: detected as %v, want %v", path, tb.Format(), want)
	}
	var out [][]byte
	for i := range tb.Len() {
		b := make([]byte, tb.Size(i))
		if n, err := tb.ReadAt(i, b, 0); n != len(b) || (err != nil && err != io.EOF) {
			t.Fatalf("%s: record %d: %d bytes, %v", path, i, n, err)
		}
		out = append(out, b)
	}
	return out, tb
}

// segments returns the segment files of a wal/ (or checkpoint) directory.
func segments(t testing.TB, dir string) []string {
	digits := regexp.MustCompile(`^[0-9]+$`)
	return engines.Files(t, dir, digits.MatchString)
}

// keepsReference fails t unless every record the reference read from a
// damaged copy (want) is among recfs's (got), in order, and says whether
// recfs kept more than the reference. what names the copy.
func keepsReference(t testing.TB, what string, got, want [][]byte) bool {
	t.Helper()
	j := 0
	for _, w := range want {
		for j < len(got) && !bytes.Equal(got[j], w) {
			j++
		}
		if j == len(got) {
			t.Fatalf("%s: recfs lost a record the reference reads (%d vs %d records)", what, len(got), len(want))
		}
		j++
	}
	return len(got) > len(want)
}

// TestPrometheusRealWAL: Debian's Prometheus scrapes itself every second
// for a minute (engines.Seconds), with WAL compression and without, and
// deletes a series halfway; every segment of its wal/ reads back through
// recfs exactly as Prometheus's wlog.Reader reads it, with series,
// samples and tombstones among the records.
func TestPrometheusRealWAL(t *testing.T) {
	t.Parallel()
	for _, compress := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "snappy"}[compress]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			wal := engines.RunPrometheus(t, compress)
			segs := segments(t, wal)
			if len(segs) == 0 {
				t.Fatalf("no segments in %s", wal)
			}
			types := map[record.Type]int{}
			var dec record.Decoder
			for _, seg := range segs {
				want, err := promRefSegment(t, seg)
				if err != nil {
					t.Fatalf("%s: the reference fails: %v", seg, err)
				}
				got, tb := recfsRecords(t, seg, codec.PrometheusWAL)
				codectest.SamePayloads(t, seg, got, want)
				if len(tb.Damage()) > 0 {
					t.Fatalf("%s: damage %v in a clean segment", seg, tb.Damage())
				}
				for _, r := range got {
					types[dec.Type(r)]++
				}
			}
			// A scrape a second, the first ones late on a loaded machine.
			if min := int(engines.Seconds().Seconds() / 6); types[record.Series] == 0 || types[record.Samples] < max(min, 2) || types[record.Tombstones] == 0 {
				t.Fatalf("record types %v: want series, samples of every scrape and a tombstone", types)
			}
		})
	}
}

// writeRefWAL writes recs with Prometheus's own WAL writer (segments of
// segSize bytes) in dir/wal and returns that directory.
func writeRefWAL(t testing.TB, dir string, recs [][]byte, comp compression.Type, segSize int) string {
	t.Helper()
	wdir := filepath.Join(dir, "wal")
	w, err := wlog.NewSize(nil, nil, wdir, segSize, comp)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Log(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return wdir
}

// bigPromRecords returns the records of every type plus large series and
// sample records that cross pages, and a record larger than a page.
func bigPromRecords(rng *rand.Rand) [][]byte {
	recs := promRecords(40, false)
	recs = append(recs, promRecords(3000, false)...)
	recs = append(recs, promRecords(10, true)...)
	big := make([]byte, 100000)
	rng.Read(big)
	return append(recs, append([]byte{2}, big...))
}

// TestPrometheusReferenceWriter: segments Prometheus's own writer makes,
// in every compression and across several segments, read back through
// recfs as its reader reads them.
func TestPrometheusReferenceWriter(t *testing.T) {
	t.Parallel()
	recs := bigPromRecords(rand.New(rand.NewSource(1)))
	for _, comp := range compression.Types() {
		t.Run(comp, func(t *testing.T) {
			t.Parallel()
			var all [][]byte
			for i := 0; i < 20; i++ {
				all = append(all, recs...)
			}
			wal := writeRefWAL(t, t.TempDir(), all, comp, 1<<20)
			segs := segments(t, wal)
			if len(segs) < 2 {
				t.Fatalf("%d segments, want several", len(segs))
			}
			var total int
			for _, seg := range segs {
				want, err := promRefSegment(t, seg)
				if err != nil {
					t.Fatalf("%s: %v", seg, err)
				}
				got, _ := recfsRecords(t, seg, codec.PrometheusWAL)
				codectest.SamePayloads(t, seg, got, want)
				total += len(got)
			}
			if total != len(all) {
				t.Fatalf("%d records over the segments, %d written", total, len(all))
			}
		})
	}
}

// TestPrometheusOurWriterRead: segments recfs's writer frames read back
// through Prometheus's reader as written.
func TestPrometheusOurWriterRead(t *testing.T) {
	t.Parallel()
	recs := bigPromRecords(rand.New(rand.NewSource(2)))
	for _, c := range []rwlog.Compression{rwlog.None, rwlog.Snappy, rwlog.Zstd} {
		var buf bytes.Buffer
		w := rwlog.NewWriter(&buf, rwlog.WriterOptions{Compression: c})
		for _, r := range recs {
			if _, err := w.WriteRecord(r); err != nil {
				t.Fatal(err)
			}
		}
		w.ClosePage()
		path := filepath.Join(t.TempDir(), "00000000")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := promRefSegment(t, path)
		if err != nil {
			t.Fatalf("%v: the reference fails on our segment: %v", c, err)
		}
		codectest.SamePayloads(t, c.String(), got, recs)
	}
}

// TestPrometheusDamagedCopies: in copies of a reference segment with a
// byte flipped or the tail torn off at random places, recfs keeps every
// record Prometheus's reader returns before it stops (and usually more).
func TestPrometheusDamagedCopies(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(3))
	recs := bigPromRecords(rng)
	for range 3 {
		recs = append(recs, bigPromRecords(rng)...) // pages enough for damage to leave some after it
	}
	for _, comp := range compression.Types() {
		wal := writeRefWAL(t, t.TempDir(), recs, comp, 64<<20)
		clean, err := os.ReadFile(segments(t, wal)[0])
		if err != nil {
			t.Fatal(err)
		}
		more := 0
		for i := range 40 {
			b := bytes.Clone(clean)
			if i%2 == 0 {
				b[rng.Intn(len(b))] ^= byte(1 + rng.Intn(255))
			} else {
				b = b[:rng.Intn(len(b))]
			}
			path := filepath.Join(t.TempDir(), "00000000")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			want, _ := promRefSegment(t, path)
			got, _ := recfsRecords(t, path, codec.PrometheusWAL)
			if keepsReference(t, fmt.Sprintf("%s copy %d", comp, i), got, want) {
				more++
			}
		}
		if more == 0 {
			t.Fatalf("%s (%d bytes): recfs never kept more than the reference", comp, len(clean))
		}
	}
}
